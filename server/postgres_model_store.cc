// PostgreSQL implementation of ModelStore. One connection per ikd process, guarded by a mutex
// (libpqxx connections are not thread-safe); libpqxx throws, so every call catches at this
// boundary and maps the exception to an absl::Status.
//
// Consistency across replicas: every write is one READ COMMITTED transaction that first takes
// the lock that orders it against the other replicas' writes, then reads, checks and writes:
//  - Update / Delete read the row with SELECT ... FOR UPDATE. A second writer of the same model
//    blocks there until the first commits and then reads the committed row (PostgreSQL re-reads
//    a locked row after the wait), so it sees the new etag and gets ABORTED: conditional writes
//    are exact, and unconditional ones cannot lose an update either.
//  - Create takes a transaction-scoped advisory lock on (kLockSpace, hashtext(collection)), so
//    the "id free?" and "collection full?" checks and the INSERT of one collection run one
//    replica at a time: the quota holds exactly, and a duplicate id is ALREADY_EXISTS (the
//    primary key backs this up).
//  - Get and List are single statements (autocommit) and see the last committed state.
// Locks are held only between the read and the commit of one call, never across calls, and
// each transaction takes one lock, so there is no deadlock and no SERIALIZABLE retry loop.
#include "postgres_model_store.h"

#include <algorithm>
#include <mutex>
#include <pqxx/pqxx>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace ikd::server {
namespace {

constexpr int kSchemaVersion = 1;

// First key of ikd's advisory locks ("ikd" in ASCII); the second is 0 for schema set-up and
// hashtext(collection) for the creates of a collection.
constexpr int kLockSpace = 0x696b64;

// Ids compare as bytes (COLLATE "C"), as in the SQLite store, so List pages in the same order.
constexpr char kCreateModels[] = R"sql(
CREATE TABLE IF NOT EXISTS ikd_models (
  collection     text COLLATE "C" NOT NULL,
  id             text COLLATE "C" NOT NULL,
  version        bigint NOT NULL,
  etag           text   NOT NULL,
  create_time_ns bigint NOT NULL,
  update_time_ns bigint NOT NULL,
  payload        bytea  NOT NULL,
  PRIMARY KEY (collection, id)
)
)sql";

constexpr char kSelectColumns[] =
    "SELECT id, version, etag, create_time_ns, update_time_ns, payload FROM ikd_models ";

// A statement that runs longer than this (a lock held by a hung client, an overloaded server)
// fails the call instead of stalling the worker that made it.
constexpr char kStatementTimeout[] = "SET statement_timeout = '10s'";

StoredModel ModelFromRow(const pqxx::row& row) {
  StoredModel model;
  model.id = row[0].as<std::string>();
  model.version = row[1].as<int64_t>();
  model.etag = row[2].as<std::string>();
  model.create_time_ns = row[3].as<int64_t>();
  model.update_time_ns = row[4].as<int64_t>();
  model.payload = pqxx::binarystring(row[5]).str();
  return model;
}

// A connect timeout unless the URI sets one: an unreachable host fails the call in seconds.
std::string WithConnectTimeout(const std::string& uri) {
  if (absl::StrContains(uri, "connect_timeout=")) return uri;
  return absl::StrCat(uri, absl::StrContains(uri, "?") ? "&" : "?", "connect_timeout=5");
}

// Where the passwords of a URI are: user:PASSWORD@ and ?password=PASSWORD (also the key=value
// form's password=PASSWORD), as (position, length), in order.
std::vector<std::pair<size_t, size_t>> PasswordSpans(const std::string& spec) {
  std::vector<std::pair<size_t, size_t>> spans;
  const size_t scheme_end = spec.find("://");
  if (scheme_end != std::string::npos) {
    const size_t authority = scheme_end + 3;
    const size_t authority_end = std::min(spec.find_first_of("/?", authority), spec.size());
    const size_t at = spec.rfind('@', authority_end);
    if (at != std::string::npos && at >= authority) {
      const size_t colon = spec.find(':', authority);
      if (colon != std::string::npos && colon < at) spans.emplace_back(colon + 1, at - colon - 1);
    }
  }
  for (size_t at = spec.find("password="); at != std::string::npos;
       at = spec.find("password=", at + 1)) {
    const size_t value = at + 9;
    spans.emplace_back(value, std::min(spec.find_first_of("& ", value), spec.size()) - value);
  }
  return spans;
}

// SQLSTATE classes 08 (connection exception) and 57P (server shutting down, crashed) mean the
// connection is gone: the next call opens a new one.
bool ConnectionLost(const std::string& sqlstate) {
  return absl::StartsWith(sqlstate, "08") || absl::StartsWith(sqlstate, "57P");
}

// Maps the exception being handled to a Status; sets *lost when the connection is unusable.
absl::Status StatusFromCurrentException(const std::string& what, bool* lost) {
  const std::string prefix = absl::StrCat("model store (postgresql): ", what, ": ");
  try {
    throw;
  } catch (const pqxx::in_doubt_error& e) {
    *lost = true;
    return absl::UnavailableError(
        absl::StrCat(prefix, "connection lost during commit, the write may or may not have "
                             "happened: read the model again. ",
                     e.what()));
  } catch (const pqxx::broken_connection& e) {
    *lost = true;
    return absl::UnavailableError(absl::StrCat(prefix, e.what()));
  } catch (const pqxx::sql_error& e) {
    const std::string& state = e.sqlstate();
    const std::string message = absl::StrCat(prefix, e.what(), " (SQLSTATE ", state, ")");
    if (ConnectionLost(state)) {
      *lost = true;
      return absl::UnavailableError(message);
    }
    // 57: operator intervention (statement timeout, cancel); 40: serialization failure or
    // deadlock; 53300: too many connections. Transient: the caller may retry.
    if (absl::StartsWith(state, "57") || absl::StartsWith(state, "40") || state == "53300") {
      return absl::UnavailableError(message);
    }
    if (absl::StartsWith(state, "53")) return absl::ResourceExhaustedError(message);  // disk full
    return absl::InternalError(message);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(prefix, e.what()));
  }
}

class PostgresModelStore final : public ModelStore {
 public:
  PostgresModelStore(std::string uri, StoreOptions options)
      : uri_(WithConnectTimeout(uri)), options_(options) {
    for (const auto& [at, length] : PasswordSpans(uri_)) {
      if (length > 0) passwords_.push_back(uri_.substr(at, length));
    }
  }

  // Creates the tables if missing (under an advisory lock, as replicas may start together)
  // and refuses a schema newer than this ikd's.
  absl::Status Init() {
    return Run<pqxx::work>("initialize schema", [](pqxx::work& txn) -> absl::Status {
      txn.exec_params("SELECT pg_advisory_xact_lock($1, 0)", kLockSpace);
      txn.exec("CREATE TABLE IF NOT EXISTS ikd_schema (version integer NOT NULL)");
      const pqxx::result found = txn.exec("SELECT max(version) FROM ikd_schema");
      const bool fresh = found[0][0].is_null();
      if (!fresh && found[0][0].as<int>() > kSchemaVersion) {
        return absl::FailedPreconditionError(
            absl::StrCat("model store schema version ", found[0][0].as<int>(),
                         " is newer than this ikd's ", kSchemaVersion));
      }
      txn.exec(kCreateModels);
      if (fresh) txn.exec_params("INSERT INTO ikd_schema (version) VALUES ($1)", kSchemaVersion);
      return absl::OkStatus();
    });
  }

  absl::StatusOr<StoredModel> Create(const std::string& collection, const std::string& id,
                                     const std::string& payload) override {
    return Run<pqxx::work>("create", [&](pqxx::work& txn) -> absl::StatusOr<StoredModel> {
      txn.exec_params("SELECT pg_advisory_xact_lock($1, hashtext($2))", kLockSpace, collection);
      if (!txn.exec_params("SELECT 1 FROM ikd_models WHERE collection = $1 AND id = $2",
                           collection, id)
               .empty()) {
        return internal::AlreadyExists(collection, id);
      }
      const auto count =
          txn.exec_params1("SELECT count(*) FROM ikd_models WHERE collection = $1", collection)[0]
              .as<int64_t>();
      if (count >= options_.max_models_per_collection) {
        return internal::CollectionFull(collection, options_.max_models_per_collection);
      }
      StoredModel model{id, 1, "", internal::NowNanos(), 0, payload};
      model.update_time_ns = model.create_time_ns;
      model.etag = internal::ComputeEtag(collection, model);
      txn.exec_params(
          "INSERT INTO ikd_models (collection, id, version, etag, create_time_ns, "
          "update_time_ns, payload) VALUES ($1, $2, $3, $4, $5, $6, $7)",
          collection, id, model.version, model.etag, model.create_time_ns, model.update_time_ns,
          pqxx::binarystring(payload));
      return model;
    });
  }

  absl::StatusOr<StoredModel> Get(const std::string& collection, const std::string& id) override {
    return Run<pqxx::nontransaction>(
        "get", [&](pqxx::nontransaction& txn) -> absl::StatusOr<StoredModel> {
          const pqxx::result rows = txn.exec_params(
              absl::StrCat(kSelectColumns, "WHERE collection = $1 AND id = $2"), collection, id);
          if (rows.empty()) return internal::NotFound(collection, id);
          return ModelFromRow(rows[0]);
        });
  }

  absl::StatusOr<std::vector<StoredModel>> List(const std::string& collection,
                                                const std::string& after_id, int limit) override {
    return Run<pqxx::nontransaction>(
        "list", [&](pqxx::nontransaction& txn) -> absl::StatusOr<std::vector<StoredModel>> {
          const pqxx::result rows = txn.exec_params(
              absl::StrCat(kSelectColumns,
                           "WHERE collection = $1 AND id > $2 ORDER BY id LIMIT $3"),
              collection, after_id, std::max(limit, 0));
          std::vector<StoredModel> out;
          out.reserve(rows.size());
          for (const pqxx::row& row : rows) out.push_back(ModelFromRow(row));
          return out;
        });
  }

  absl::StatusOr<StoredModel> Update(const std::string& collection, const std::string& id,
                                     const std::string& expected_etag,
                                     const PayloadUpdate& update) override {
    return Run<pqxx::work>("update", [&](pqxx::work& txn) -> absl::StatusOr<StoredModel> {
      absl::StatusOr<StoredModel> locked = LockRow(txn, collection, id, expected_etag);
      if (!locked.ok()) return locked.status();
      StoredModel model = *std::move(locked);
      absl::StatusOr<std::string> payload = update(model);
      if (!payload.ok()) return payload.status();
      model.payload = *std::move(payload);
      model.version += 1;
      // Replicas' clocks differ a little: never let the update time run backwards.
      model.update_time_ns = std::max(internal::NowNanos(), model.update_time_ns);
      model.etag = internal::ComputeEtag(collection, model);
      txn.exec_params(
          "UPDATE ikd_models SET version = $1, etag = $2, update_time_ns = $3, payload = $4 "
          "WHERE collection = $5 AND id = $6",
          model.version, model.etag, model.update_time_ns, pqxx::binarystring(model.payload),
          collection, id);
      return model;
    });
  }

  absl::Status Delete(const std::string& collection, const std::string& id,
                      const std::string& expected_etag) override {
    return Run<pqxx::work>("delete", [&](pqxx::work& txn) -> absl::Status {
      absl::StatusOr<StoredModel> locked = LockRow(txn, collection, id, expected_etag);
      if (!locked.ok()) return locked.status();
      txn.exec_params("DELETE FROM ikd_models WHERE collection = $1 AND id = $2", collection, id);
      return absl::OkStatus();
    });
  }

 private:
  // Reads the row FOR UPDATE (waiting for a concurrent writer to commit) and checks the etag.
  static absl::StatusOr<StoredModel> LockRow(pqxx::work& txn, const std::string& collection,
                                             const std::string& id,
                                             const std::string& expected_etag) {
    const pqxx::result rows = txn.exec_params(
        absl::StrCat(kSelectColumns, "WHERE collection = $1 AND id = $2 FOR UPDATE"), collection,
        id);
    if (rows.empty()) return internal::NotFound(collection, id);
    StoredModel model = ModelFromRow(rows[0]);
    if (!expected_etag.empty() && expected_etag != model.etag) {
      return internal::StaleEtag(collection, model, expected_etag);
    }
    return model;
  }

  // Opens the connection if there is none (first call, or the last one was lost). Throws as
  // libpqxx does; mu_ held.
  void Connect() {
    if (connection_ != nullptr && connection_->is_open()) return;
    connection_.reset();
    auto connection = std::make_unique<pqxx::connection>(uri_);
    // No silent reconnect inside libpqxx: a lost connection fails its call (UNAVAILABLE) and
    // the next call reconnects here, so a call never half-runs on two sessions. (Deprecated in
    // libpqxx 6 because 7 drops reactivation altogether, which is this behaviour.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    connection->inhibit_reactivation(true);
#pragma GCC diagnostic pop
    pqxx::nontransaction(*connection).exec(kStatementTimeout);
    connection_ = std::move(connection);
  }

  // Runs `body` in a transaction of type Txn on the connection, commits when it returns OK
  // (rolls back otherwise) and turns every libpqxx exception into a Status.
  template <typename Txn, typename Body>
  auto Run(const char* what, Body body) -> decltype(body(std::declval<Txn&>())) {
    std::lock_guard lock(mu_);
    bool lost = false;
    absl::Status failure;
    try {
      Connect();
      Txn txn(*connection_);
      auto result = body(txn);
      if (result.ok()) txn.commit();
      return result;
    } catch (...) {
      failure = StatusFromCurrentException(what, &lost);
    }
    if (lost || (connection_ != nullptr && !connection_->is_open())) connection_.reset();
    return Scrub(failure);
  }

  // libpq's messages name host, port and user but not the password; make sure of it, as these
  // messages reach logs and clients.
  absl::Status Scrub(const absl::Status& status) const {
    std::string message(status.message());
    for (const std::string& password : passwords_) {
      message = absl::StrReplaceAll(message, {{password, "***"}});
    }
    return absl::Status(status.code(), message);
  }

  const std::string uri_;
  std::vector<std::string> passwords_;  // of uri_, scrubbed from error messages
  const StoreOptions options_;
  std::mutex mu_;
  std::unique_ptr<pqxx::connection> connection_;
};

}  // namespace

bool IsPostgresUri(const std::string& spec) {
  return absl::StartsWith(spec, "postgresql://") || absl::StartsWith(spec, "postgres://");
}

std::string RedactPassword(const std::string& spec) {
  std::string out = spec;
  // Back to front, so that earlier positions stay valid.
  std::vector<std::pair<size_t, size_t>> spans = PasswordSpans(spec);
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
    out.replace(it->first, it->second, "***");
  }
  return out;
}

absl::StatusOr<std::unique_ptr<ModelStore>> OpenPostgresModelStore(const std::string& uri,
                                                                   StoreOptions options) {
  auto store = std::make_unique<PostgresModelStore>(uri, options);
  if (absl::Status s = store->Init(); !s.ok()) {
    // libpq's messages name host and user, never the password; redact anyway, since a
    // malformed URI is echoed back by some versions.
    return absl::Status(s.code(), RedactPassword(std::string(s.message())));
  }
  return store;
}

}  // namespace ikd::server
