#include "store_config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "postgres_model_store.h"

namespace ikd::server {

absl::StatusOr<std::string> ResolveStoreSpec(const StoreSource& source) {
  if (!source.from_env.empty() && !source.from_file.empty()) {
    return absl::InvalidArgumentError("--store_from_env and --store_from_file: give at most one");
  }
  std::string spec = source.store;
  if (!source.from_env.empty()) {
    const char* value = std::getenv(source.from_env.c_str());
    if (value == nullptr || *value == '\0') {
      return absl::InvalidArgumentError(absl::StrCat(
          "--store_from_env: environment variable ", source.from_env, " is unset or empty"));
    }
    spec = value;
  } else if (!source.from_file.empty()) {
    std::ifstream file(source.from_file);
    if (!file) {
      return absl::InvalidArgumentError(
          absl::StrCat("--store_from_file: cannot read ", source.from_file));
    }
    std::stringstream text;
    text << file.rdbuf();
    spec = text.str();
    if (absl::StripAsciiWhitespace(spec).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--store_from_file: ", source.from_file, " is empty"));
    }
  }
  spec = std::string(absl::StripAsciiWhitespace(spec));
  if (spec.empty()) return absl::InvalidArgumentError("--store must not be empty");
  return spec;
}

absl::StatusOr<std::unique_ptr<ModelStore>> OpenModelStore(const std::string& spec,
                                                           StoreOptions options) {
  if (spec == ":memory:") return NewMemoryModelStore(options);
  if (IsPostgresUri(spec)) return OpenPostgresModelStore(spec, options);
  // A mistyped URI ("postgresq://", "POSTGRESQL://") or a libpq keyword string must not become
  // a local SQLite file (replicas would silently diverge) nor echo its password in the error.
  if (absl::StrContains(spec, "://") || absl::StrContains(spec, "password=")) {
    return absl::InvalidArgumentError(
        "--store: not a file path, \":memory:\" or a postgresql:// / postgres:// URI (the "
        "value is not shown: it may hold a password)");
  }
  return OpenSqliteModelStore(spec, options);
}

}  // namespace ikd::server
