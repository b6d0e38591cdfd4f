#include "model_store.h"

#include <cinttypes>
#include <map>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ikd::server {
namespace internal {
namespace {

// FNV-1a, 64 bit: an etag only needs to change when the model does.
void Mix(uint64_t& hash, const std::string& bytes) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  hash ^= 0xff;  // separator, so ("ab", "c") and ("a", "bc") differ
  hash *= 0x100000001b3ULL;
}

}  // namespace

std::string ComputeEtag(const std::string& collection, const StoredModel& model) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  Mix(hash, collection);
  Mix(hash, model.id);
  Mix(hash, absl::StrCat(model.version, ":", model.create_time_ns, ":", model.update_time_ns));
  Mix(hash, model.payload);
  return absl::StrFormat("%016x", hash);
}

int64_t NowNanos() { return absl::ToUnixNanos(absl::Now()); }

absl::Status NotFound(const std::string& collection, const std::string& id) {
  return absl::NotFoundError(absl::StrCat(collection, "/", id, " not found"));
}

absl::Status AlreadyExists(const std::string& collection, const std::string& id) {
  return absl::AlreadyExistsError(absl::StrCat(collection, "/", id, " already exists"));
}

absl::Status StaleEtag(const std::string& collection, const StoredModel& current,
                       const std::string& expected_etag) {
  return absl::AbortedError(absl::StrCat(collection, "/", current.id, ": etag \"", expected_etag,
                                         "\" is stale (now version ", current.version,
                                         "); read it again and retry"));
}

absl::Status CollectionFull(const std::string& collection, int64_t max_models) {
  return absl::ResourceExhaustedError(
      absl::StrCat(collection, ": the store holds at most ", max_models, " ", collection));
}

}  // namespace internal

namespace {

class MemoryModelStore final : public ModelStore {
 public:
  explicit MemoryModelStore(StoreOptions options) : options_(options) {}

  absl::StatusOr<StoredModel> Create(const std::string& collection, const std::string& id,
                                     const std::string& payload) override {
    std::lock_guard lock(mu_);
    auto& models = collections_[collection];
    if (models.count(id) != 0) return internal::AlreadyExists(collection, id);
    if (static_cast<int64_t>(models.size()) >= options_.max_models_per_collection) {
      return internal::CollectionFull(collection, options_.max_models_per_collection);
    }
    StoredModel model{id, 1, "", internal::NowNanos(), 0, payload};
    model.update_time_ns = model.create_time_ns;
    model.etag = internal::ComputeEtag(collection, model);
    return models[id] = std::move(model);
  }

  absl::StatusOr<StoredModel> Get(const std::string& collection, const std::string& id) override {
    std::lock_guard lock(mu_);
    const StoredModel* model = Find(collection, id);
    if (model == nullptr) return internal::NotFound(collection, id);
    return *model;
  }

  absl::StatusOr<std::vector<StoredModel>> List(const std::string& collection,
                                                const std::string& after_id, int limit) override {
    std::lock_guard lock(mu_);
    std::vector<StoredModel> out;
    auto it = collections_.find(collection);
    if (it == collections_.end()) return out;
    for (auto m = it->second.upper_bound(after_id);
         m != it->second.end() && static_cast<int>(out.size()) < limit; ++m) {
      out.push_back(m->second);
    }
    return out;
  }

  absl::StatusOr<StoredModel> Update(const std::string& collection, const std::string& id,
                                     const std::string& expected_etag,
                                     const PayloadUpdate& update) override {
    std::lock_guard lock(mu_);
    StoredModel* model = Find(collection, id);
    if (model == nullptr) return internal::NotFound(collection, id);
    if (!expected_etag.empty() && expected_etag != model->etag) {
      return internal::StaleEtag(collection, *model, expected_etag);
    }
    absl::StatusOr<std::string> payload = update(*model);
    if (!payload.ok()) return payload.status();
    model->payload = *std::move(payload);
    model->version += 1;
    model->update_time_ns = internal::NowNanos();
    model->etag = internal::ComputeEtag(collection, *model);
    return *model;
  }

  absl::Status Delete(const std::string& collection, const std::string& id,
                      const std::string& expected_etag) override {
    std::lock_guard lock(mu_);
    StoredModel* model = Find(collection, id);
    if (model == nullptr) return internal::NotFound(collection, id);
    if (!expected_etag.empty() && expected_etag != model->etag) {
      return internal::StaleEtag(collection, *model, expected_etag);
    }
    collections_[collection].erase(id);
    return absl::OkStatus();
  }

 private:
  StoredModel* Find(const std::string& collection, const std::string& id) {
    auto c = collections_.find(collection);
    if (c == collections_.end()) return nullptr;
    auto m = c->second.find(id);
    return m == c->second.end() ? nullptr : &m->second;
  }

  const StoreOptions options_;
  std::mutex mu_;
  std::map<std::string, std::map<std::string, StoredModel>> collections_;
};

}  // namespace

std::unique_ptr<ModelStore> NewMemoryModelStore(StoreOptions options) {
  return std::make_unique<MemoryModelStore>(options);
}

}  // namespace ikd::server
