// SQLite implementation of ModelStore: one connection guarded by a mutex, WAL journal with
// synchronous=FULL so that every acknowledged write survives a crash or kill -9.
#include <sqlite3.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <filesystem>

#include <mutex>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "model_store.h"

namespace ikd::server {
namespace {

constexpr int kSchemaVersion = 1;

constexpr char kCreateSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS models (
  collection     TEXT    NOT NULL,
  id             TEXT    NOT NULL,
  version        INTEGER NOT NULL,
  etag           TEXT    NOT NULL,
  create_time_ns INTEGER NOT NULL,
  update_time_ns INTEGER NOT NULL,
  payload        BLOB    NOT NULL,
  PRIMARY KEY (collection, id)
) WITHOUT ROWID;
)sql";

constexpr char kSelectColumns[] =
    "SELECT id, version, etag, create_time_ns, update_time_ns, payload FROM models ";

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool prepared() const { return rc_ == SQLITE_OK; }
  Statement& Bind(int index, const std::string& text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& BindBlob(int index, const std::string& bytes) {
    sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& Bind(int index, int64_t value) {
    sqlite3_bind_int64(stmt_, index, value);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return rc_ = sqlite3_step(stmt_); }

  std::string Text(int column) const {
    const void* data = sqlite3_column_blob(stmt_, column);
    const int size = sqlite3_column_bytes(stmt_, column);
    return data == nullptr ? std::string() : std::string(static_cast<const char*>(data), size);
  }
  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  StoredModel Model() const {
    return StoredModel{Text(0), Int(1), Text(2), Int(3), Int(4), Text(5)};
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

class SqliteModelStore final : public ModelStore {
 public:
  SqliteModelStore(sqlite3* db, std::string path, StoreOptions options)
      : db_(db), path_(std::move(path)), options_(options) {}
  ~SqliteModelStore() override { sqlite3_close_v2(db_); }

  absl::Status Init() {
    if (absl::Status s = ExecExpect("PRAGMA journal_mode=WAL", "wal"); !s.ok()) return s;
    for (const char* pragma : {"PRAGMA synchronous=FULL", "PRAGMA busy_timeout=5000"}) {
      if (absl::Status s = Exec(pragma); !s.ok()) return s;
    }
    Statement version(db_, "PRAGMA user_version");
    if (!version.prepared() || version.Step() != SQLITE_ROW) return Error("PRAGMA user_version");
    const int64_t found = version.Int(0);
    if (found > kSchemaVersion) {
      return absl::FailedPreconditionError(absl::StrCat(
          "model store schema version ", found, " is newer than this ikd's ", kSchemaVersion));
    }
    if (absl::Status s = Exec(kCreateSchema); !s.ok()) return s;
    return Exec(absl::StrCat("PRAGMA user_version=", kSchemaVersion).c_str());
  }

  absl::StatusOr<StoredModel> Create(const std::string& collection, const std::string& id,
                                     const std::string& payload) override {
    std::lock_guard lock(mu_);
    Transaction txn(this);
    if (!txn.ok()) return txn.status();
    absl::StatusOr<std::optional<StoredModel>> existing = Find(collection, id);
    if (!existing.ok()) return existing.status();
    if (existing->has_value()) return internal::AlreadyExists(collection, id);
    absl::StatusOr<int64_t> count = Count(collection);
    if (!count.ok()) return count.status();
    if (*count >= options_.max_models_per_collection) {
      return internal::CollectionFull(collection, options_.max_models_per_collection);
    }
    StoredModel model{id, 1, "", internal::NowNanos(), 0, payload};
    model.update_time_ns = model.create_time_ns;
    model.etag = internal::ComputeEtag(collection, model);
    Statement insert(db_,
                     "INSERT INTO models (collection, id, version, etag, create_time_ns, "
                     "update_time_ns, payload) VALUES (?, ?, ?, ?, ?, ?, ?)");
    if (!insert.prepared()) return Error("prepare insert");
    insert.Bind(1, collection).Bind(2, id).Bind(3, model.version).Bind(4, model.etag);
    insert.Bind(5, model.create_time_ns).Bind(6, model.update_time_ns).BindBlob(7, payload);
    if (insert.Step() != SQLITE_DONE) return Error("insert");
    if (absl::Status s = txn.Commit(); !s.ok()) return s;
    return model;
  }

  absl::StatusOr<StoredModel> Get(const std::string& collection, const std::string& id) override {
    std::lock_guard lock(mu_);
    absl::StatusOr<std::optional<StoredModel>> model = Find(collection, id);
    if (!model.ok()) return model.status();
    if (!model->has_value()) return internal::NotFound(collection, id);
    return **std::move(model);
  }

  absl::StatusOr<std::vector<StoredModel>> List(const std::string& collection,
                                                const std::string& after_id, int limit) override {
    std::lock_guard lock(mu_);
    const std::string sql =
        absl::StrCat(kSelectColumns, "WHERE collection = ? AND id > ? ORDER BY id LIMIT ?");
    Statement select(db_, sql.c_str());
    if (!select.prepared()) return Error("prepare list");
    select.Bind(1, collection).Bind(2, after_id).Bind(3, static_cast<int64_t>(limit));
    std::vector<StoredModel> out;
    int rc;
    while ((rc = select.Step()) == SQLITE_ROW) out.push_back(select.Model());
    if (rc != SQLITE_DONE) return Error("list");
    return out;
  }

  absl::StatusOr<StoredModel> Update(const std::string& collection, const std::string& id,
                                     const std::string& expected_etag,
                                     const PayloadUpdate& update) override {
    std::lock_guard lock(mu_);
    Transaction txn(this);
    if (!txn.ok()) return txn.status();
    absl::StatusOr<std::optional<StoredModel>> found = Find(collection, id);
    if (!found.ok()) return found.status();
    if (!found->has_value()) return internal::NotFound(collection, id);
    StoredModel model = **std::move(found);
    if (!expected_etag.empty() && expected_etag != model.etag) {
      return internal::StaleEtag(collection, model, expected_etag);
    }
    absl::StatusOr<std::string> payload = update(model);
    if (!payload.ok()) return payload.status();
    model.payload = *std::move(payload);
    model.version += 1;
    model.update_time_ns = internal::NowNanos();
    model.etag = internal::ComputeEtag(collection, model);
    Statement write(db_,
                    "UPDATE models SET version = ?, etag = ?, update_time_ns = ?, payload = ? "
                    "WHERE collection = ? AND id = ?");
    if (!write.prepared()) return Error("prepare update");
    write.Bind(1, model.version).Bind(2, model.etag).Bind(3, model.update_time_ns);
    write.BindBlob(4, model.payload).Bind(5, collection).Bind(6, id);
    if (write.Step() != SQLITE_DONE) return Error("update");
    if (absl::Status s = txn.Commit(); !s.ok()) return s;
    return model;
  }

  absl::Status Delete(const std::string& collection, const std::string& id,
                      const std::string& expected_etag) override {
    std::lock_guard lock(mu_);
    Transaction txn(this);
    if (!txn.ok()) return txn.status();
    absl::StatusOr<std::optional<StoredModel>> found = Find(collection, id);
    if (!found.ok()) return found.status();
    if (!found->has_value()) return internal::NotFound(collection, id);
    if (!expected_etag.empty() && expected_etag != (*found)->etag) {
      return internal::StaleEtag(collection, **found, expected_etag);
    }
    Statement remove(db_, "DELETE FROM models WHERE collection = ? AND id = ?");
    if (!remove.prepared()) return Error("prepare delete");
    remove.Bind(1, collection).Bind(2, id);
    if (remove.Step() != SQLITE_DONE) return Error("delete");
    return txn.Commit();
  }

 private:
  // BEGIN IMMEDIATE on construction (the write lock up front, so a read-modify-write cannot
  // be overtaken by another process); ROLLBACK on destruction unless committed.
  class Transaction {
   public:
    explicit Transaction(SqliteModelStore* store) : store_(store) {
      status_ = store_->Exec("BEGIN IMMEDIATE");
    }
    ~Transaction() {
      if (status_.ok() && !committed_) (void)store_->Exec("ROLLBACK");
    }
    bool ok() const { return status_.ok(); }
    const absl::Status& status() const { return status_; }
    absl::Status Commit() {
      absl::Status s = store_->Exec("COMMIT");
      committed_ = s.ok();
      return s;
    }

   private:
    SqliteModelStore* store_;
    absl::Status status_;
    bool committed_ = false;
  };

  // A full disk is RESOURCE_EXHAUSTED: SQLITE_FULL (ENOSPC), or an I/O error while the store's
  // file system has no room left or a store file has reached the process's file-size limit
  // (RLIMIT_FSIZE: such writes fail with EFBIG, which SQLite reports as an I/O error). The
  // transaction is rolled back and the stored models stay readable. Other I/O errors are
  // UNAVAILABLE (the disk may recover), a busy database too; the rest is INTERNAL.
  absl::Status Error(const std::string& what) const {
    const int code = sqlite3_errcode(db_) & 0xff;
    const std::string message = absl::StrCat("model store: ", what, ": ", sqlite3_errmsg(db_));
    if (code == SQLITE_FULL || code == SQLITE_IOERR) {
      if (std::optional<std::string> full = FullReason(); full || code == SQLITE_FULL) {
        return absl::ResourceExhaustedError(absl::StrCat(
            message, ": the model store is full (", full.value_or("no space left on device"),
            "); the write was not made, stored models can still be read"));
      }
      return absl::UnavailableError(absl::StrCat(message, ": the model store's disk failed"));
    }
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED) return absl::UnavailableError(message);
    return absl::InternalError(message);
  }

  // Why a write could not have fit, if it could not: less than 1 MiB free where the store
  // lives, or a store file within 1 MiB of the file-size limit. Only called on errors.
  std::optional<std::string> FullReason() const {
    constexpr uint64_t kSlack = 1 << 20;
    rlimit limit{};
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      for (const std::string& file : {path_, path_ + "-wal", path_ + "-journal"}) {
        struct stat info {};
        if (stat(file.c_str(), &info) == 0 &&
            static_cast<uint64_t>(info.st_size) + kSlack > limit.rlim_cur) {
          return absl::StrCat(file, " is at the file-size limit of ", limit.rlim_cur, " bytes");
        }
      }
    }
    struct statvfs fs {};
    const std::string dir = std::filesystem::path(path_).parent_path().string();
    if (statvfs(dir.empty() ? "." : dir.c_str(), &fs) == 0 &&
        static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize < kSlack) {
      return absl::StrCat("no space left on the file system of ", path_);
    }
    return std::nullopt;
  }

  absl::Status Exec(const char* sql) const {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return Error(sql);
    return absl::OkStatus();
  }

  // Runs a one-row, one-column statement and checks its text.
  absl::Status ExecExpect(const char* sql, const std::string& expected) const {
    Statement stmt(db_, sql);
    if (!stmt.prepared() || stmt.Step() != SQLITE_ROW) return Error(sql);
    if (stmt.Text(0) != expected) {
      return absl::InternalError(
          absl::StrCat("model store: ", sql, " gave \"", stmt.Text(0), "\", not ", expected));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<StoredModel>> Find(const std::string& collection,
                                                  const std::string& id) const {
    const std::string sql = absl::StrCat(kSelectColumns, "WHERE collection = ? AND id = ?");
    Statement select(db_, sql.c_str());
    if (!select.prepared()) return Error("prepare select");
    select.Bind(1, collection).Bind(2, id);
    const int rc = select.Step();
    if (rc == SQLITE_ROW) return std::optional<StoredModel>(select.Model());
    if (rc == SQLITE_DONE) return std::optional<StoredModel>();
    return Error("select");
  }

  absl::StatusOr<int64_t> Count(const std::string& collection) const {
    Statement count(db_, "SELECT COUNT(*) FROM models WHERE collection = ?");
    if (!count.prepared()) return Error("prepare count");
    count.Bind(1, collection);
    if (count.Step() != SQLITE_ROW) return Error("count");
    return count.Int(0);
  }

  sqlite3* const db_;
  const std::string path_;
  const StoreOptions options_;
  std::mutex mu_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ModelStore>> OpenSqliteModelStore(const std::string& path,
                                                                 StoreOptions options) {
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string message =
        absl::StrCat("cannot open model store \"", path,
                     "\": ", db != nullptr ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close_v2(db);
    return absl::UnavailableError(message);
  }
  auto store = std::make_unique<SqliteModelStore>(db, path, options);
  if (absl::Status s = store->Init(); !s.ok()) return s;
  return store;
}

}  // namespace ikd::server
