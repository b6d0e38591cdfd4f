// PostgreSQL implementation of ModelStore, for several ikd replicas sharing one database: the
// same semantics as the SQLite store (versions, etags, conditional writes, quotas, List order)
// with every read-modify-write serialized across replicas by row and advisory locks.
//
//   auto store = ikd::server::OpenPostgresModelStore("postgresql://ikd@db:5432/ikd");
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "model_store.h"

namespace ikd::server {

// Connects to `uri` (a libpq URI, postgresql://user:password@host:port/dbname?param=...),
// creates the schema if missing and checks its version. UNAVAILABLE if the server cannot be
// reached, FAILED_PRECONDITION if the schema was written by a newer ikd. Error messages never
// contain the password. A connection lost later (server restart, network) fails the call that
// met it with UNAVAILABLE and is re-opened by the next call.
absl::StatusOr<std::unique_ptr<ModelStore>> OpenPostgresModelStore(const std::string& uri,
                                                                   StoreOptions options = {});

// True for postgresql:// and postgres:// URIs.
bool IsPostgresUri(const std::string& spec);

// `spec` with the password of a URI (user:PASSWORD@ and ?password=...) replaced by "***", for
// logs and error messages.
std::string RedactPassword(const std::string& spec);

}  // namespace ikd::server
