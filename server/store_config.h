// Chooses and opens the model store from ikd's flags: a SQLite file, ":memory:", or a
// PostgreSQL URI shared by several replicas. The spec may come from an environment variable or
// a file instead of --store, so that a database password (a Kubernetes Secret, a systemd
// credential) never appears on the command line or in `ps`.
//
//   auto spec = ikd::server::ResolveStoreSpec({.store = "", .from_env = "IKD_STORE"});
//   auto store = ikd::server::OpenModelStore(*spec, options);
//   LOG(INFO) << ikd::server::RedactPassword(*spec);
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "model_store.h"

namespace ikd::server {

struct StoreSource {
  std::string store;      // --store: FILE, ":memory:", postgresql://... or postgres://...
  std::string from_env;   // --store_from_env: name of an environment variable holding the spec
  std::string from_file;  // --store_from_file: a file holding the spec (surrounding blanks cut)
};

// The spec from the environment variable or the file when one is named (at most one may be),
// else `store`. INVALID_ARGUMENT naming the flag when both are named, the variable is unset
// or empty, the file cannot be read or is empty, or the resulting spec is empty.
absl::StatusOr<std::string> ResolveStoreSpec(const StoreSource& source);

// ":memory:" -> memory store; postgresql:// or postgres:// -> PostgreSQL; else a SQLite file.
absl::StatusOr<std::unique_ptr<ModelStore>> OpenModelStore(const std::string& spec,
                                                           StoreOptions options);

}  // namespace ikd::server
