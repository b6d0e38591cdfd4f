// The model store: named, versioned blobs (serialized ArmSpec / SceneSpec protos) in
// collections ("arms", "scenes"). Every write bumps the version and the etag; conditional
// writes compare the etag (optimistic concurrency, AIP-154). Two implementations behind one
// interface: SQLite (durable: WAL, synchronous=FULL, survives restart and kill -9) and memory
// (tests). Both are thread-safe; every operation is atomic.
//
//   auto store = ikd::server::OpenSqliteModelStore("/var/lib/ikd/models.db");
//   auto created = (*store)->Create("arms", "planar-7", spec.SerializeAsString());
//   auto updated = (*store)->Update("arms", "planar-7", created->etag,
//                                   [&](const StoredModel&) { return new_payload; });
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ikd::server {

struct StoredModel {
  std::string id;
  int64_t version = 0;         // 1 on create, +1 per update
  std::string etag;            // changes with every write (and differs after delete + re-create)
  int64_t create_time_ns = 0;  // Unix time
  int64_t update_time_ns = 0;
  std::string payload;
};

struct StoreOptions {
  // Create fails with RESOURCE_EXHAUSTED beyond this many models in one collection.
  int64_t max_models_per_collection = 10000;
};

// Computes the new payload of an update from the stored model; an error aborts the update and
// is returned unchanged. Runs under the store's lock: keep it short, never call the store.
using PayloadUpdate = std::function<absl::StatusOr<std::string>(const StoredModel& current)>;

class ModelStore {
 public:
  virtual ~ModelStore() = default;

  // ALREADY_EXISTS if the id is taken, RESOURCE_EXHAUSTED if the collection is full.
  virtual absl::StatusOr<StoredModel> Create(const std::string& collection, const std::string& id,
                                             const std::string& payload) = 0;
  // NOT_FOUND.
  virtual absl::StatusOr<StoredModel> Get(const std::string& collection, const std::string& id) = 0;
  // Up to `limit` models with id > after_id ("" = from the start), ordered by id.
  virtual absl::StatusOr<std::vector<StoredModel>> List(const std::string& collection,
                                                        const std::string& after_id, int limit) = 0;
  // Replaces the payload with update(current) and bumps the version. NOT_FOUND; ABORTED when
  // expected_etag is non-empty and differs from the stored etag; errors of `update`.
  virtual absl::StatusOr<StoredModel> Update(const std::string& collection, const std::string& id,
                                             const std::string& expected_etag,
                                             const PayloadUpdate& update) = 0;
  // NOT_FOUND; ABORTED as for Update.
  virtual absl::Status Delete(const std::string& collection, const std::string& id,
                              const std::string& expected_etag) = 0;
};

std::unique_ptr<ModelStore> NewMemoryModelStore(StoreOptions options = {});

// Opens (creating if needed) the SQLite database at `path`. UNAVAILABLE if it cannot be
// opened, FAILED_PRECONDITION if it was written by a newer schema.
absl::StatusOr<std::unique_ptr<ModelStore>> OpenSqliteModelStore(const std::string& path,
                                                                 StoreOptions options = {});

namespace internal {
// Shared by the implementations, so both report the same errors and etags.
std::string ComputeEtag(const std::string& collection, const StoredModel& model);
int64_t NowNanos();
absl::Status NotFound(const std::string& collection, const std::string& id);
absl::Status AlreadyExists(const std::string& collection, const std::string& id);
absl::Status StaleEtag(const std::string& collection, const StoredModel& current,
                       const std::string& expected_etag);
absl::Status CollectionFull(const std::string& collection, int64_t max_models);
}  // namespace internal

}  // namespace ikd::server
