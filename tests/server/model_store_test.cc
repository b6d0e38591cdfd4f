// ModelStore contract, run over every implementation (memory, SQLite, PostgreSQL on a real
// server started per test): versions, etags, conditional writes, pagination order, quotas,
// concurrent writers (on PostgreSQL each writer on its own connection, as replicas are); SQLite
// durability across a close and reopen; PostgreSQL reconnection, schema check and a row-lock
// race between two stores. Not physics: each test states the invariant it checks and where it comes
// from (model_store.h, AIP-154 optimistic concurrency).
#include "model_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <latch>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "postgres_model_store.h"
#include "testing/postgres_server.h"

namespace ikd::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A fresh directory under /tmp, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/ikd-store-test-XXXXXX";
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

PayloadUpdate SetTo(const std::string& payload) {
  return [payload](const StoredModel&) -> absl::StatusOr<std::string> { return payload; };
}

enum class Backend { kMemory, kSqlite, kPostgres };
std::string BackendName(Backend backend) {
  switch (backend) {
    case Backend::kMemory: return "Memory";
    case Backend::kSqlite: return "Sqlite";
    case Backend::kPostgres: return "Postgres";
  }
  return "?";
}
void PrintTo(Backend backend, std::ostream* os) { *os << BackendName(backend); }

// Starts a PostgreSQL server for the test (it must start: deploy/test.sh installs it).
std::unique_ptr<ikd::testing::PostgresServer> StartPostgres() {
  std::string error;
  auto server = ikd::testing::PostgresServer::Start(&error);
  EXPECT_NE(server, nullptr) << error;
  return server;
}

class ModelStoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kPostgres) {
      postgres_ = StartPostgres();
      ASSERT_NE(postgres_, nullptr);
    }
  }

  std::unique_ptr<ModelStore> Open(StoreOptions options = {}) {
    if (GetParam() == Backend::kMemory) return NewMemoryModelStore(options);
    auto store = GetParam() == Backend::kSqlite
                     ? OpenSqliteModelStore(dir_.File("models.db"), options)
                     : OpenPostgresModelStore(postgres_->uri(), options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  // Another handle on the same database, as a second ikd replica has (PostgreSQL only: the
  // memory store has no database and SQLite serves one host); nullptr: share `first`.
  std::unique_ptr<ModelStore> OpenReplica() {
    return GetParam() == Backend::kPostgres ? Open() : nullptr;
  }

  TempDir dir_;
  std::unique_ptr<ikd::testing::PostgresServer> postgres_;
};

// Create -> version 1, non-empty etag, payload and times as written; Get returns the same.
TEST_P(ModelStoreTest, CreateThenGetReturnsVersionOne) {
  auto store = Open();
  auto created = store->Create("arms", "a1", "payload-1");
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->version, 1);
  EXPECT_FALSE(created->etag.empty());
  EXPECT_GT(created->create_time_ns, 0);
  EXPECT_EQ(created->update_time_ns, created->create_time_ns);
  auto got = store->Get("arms", "a1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->id, "a1");
  EXPECT_EQ(got->payload, "payload-1");
  EXPECT_EQ(got->etag, created->etag);
  EXPECT_EQ(got->create_time_ns, created->create_time_ns);
}

// Error codes: ALREADY_EXISTS on a taken id, NOT_FOUND for unknown ids (also in another
// collection: "arms/x" does not make "scenes/x").
TEST_P(ModelStoreTest, DuplicateAndMissingIds) {
  auto store = Open();
  ASSERT_TRUE(store->Create("arms", "x", "p").ok());
  EXPECT_EQ(store->Create("arms", "x", "q").status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(store->Get("scenes", "x").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->Get("arms", "y").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->Update("arms", "y", "", SetTo("p")).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store->Delete("arms", "y", "").code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store->Create("scenes", "x", "s").ok());
}

// AIP-154: an update with the current etag bumps the version by exactly 1 and changes the
// etag; the old etag then fails with ABORTED and leaves the model as it was; an empty etag is
// an unconditional write.
TEST_P(ModelStoreTest, UpdateIsConditionalOnEtag) {
  auto store = Open();
  auto v1 = store->Create("arms", "a", "one");
  ASSERT_TRUE(v1.ok());
  auto v2 = store->Update("arms", "a", v1->etag, SetTo("two"));
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ(v2->version, 2);
  EXPECT_NE(v2->etag, v1->etag);
  EXPECT_EQ(v2->payload, "two");
  EXPECT_EQ(v2->create_time_ns, v1->create_time_ns);
  EXPECT_GE(v2->update_time_ns, v1->update_time_ns);

  auto stale = store->Update("arms", "a", v1->etag, SetTo("lost"));
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(stale.status().message(), HasSubstr("stale"));
  EXPECT_EQ(store->Get("arms", "a")->payload, "two");
  EXPECT_EQ(store->Get("arms", "a")->version, 2);

  auto v3 = store->Update("arms", "a", "", SetTo("three"));
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(v3->version, 3);
}

// An error from the update function aborts the write: version and payload stay.
TEST_P(ModelStoreTest, FailedUpdateFunctionWritesNothing) {
  auto store = Open();
  ASSERT_TRUE(store->Create("scenes", "s", "kept").ok());
  auto failed =
      store->Update("scenes", "s", "", [](const StoredModel&) -> absl::StatusOr<std::string> {
        return absl::InvalidArgumentError("no");
      });
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  auto got = store->Get("scenes", "s");
  EXPECT_EQ(got->version, 1);
  EXPECT_EQ(got->payload, "kept");
}

// Delete honours the etag (ABORTED when stale); a re-created model starts at version 1 with
// an etag different from the deleted model's (a stale client cannot overwrite the new one).
TEST_P(ModelStoreTest, DeleteIsConditionalAndRecreateGetsNewEtag) {
  auto store = Open();
  auto v1 = store->Create("arms", "d", "p");
  auto v2 = store->Update("arms", "d", "", SetTo("p2"));
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(store->Delete("arms", "d", v1->etag).code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(store->Delete("arms", "d", v2->etag).ok());
  EXPECT_EQ(store->Get("arms", "d").status().code(), absl::StatusCode::kNotFound);
  auto again = store->Create("arms", "d", "p");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->version, 1);
  EXPECT_NE(again->etag, v1->etag);
  EXPECT_EQ(store->Update("arms", "d", v1->etag, SetTo("x")).status().code(),
            absl::StatusCode::kAborted);
}

// List: ids strictly after `after_id`, in byte order, at most `limit`, one collection only.
TEST_P(ModelStoreTest, ListPagesInIdOrder) {
  auto store = Open();
  for (const char* id : {"c", "a", "e", "b", "d"}) ASSERT_TRUE(store->Create("arms", id, id).ok());
  ASSERT_TRUE(store->Create("scenes", "aa", "s").ok());
  auto ids = [](const std::vector<StoredModel>& models) {
    std::vector<std::string> out;
    for (const auto& m : models) out.push_back(m.id);
    return out;
  };
  EXPECT_THAT(ids(*store->List("arms", "", 2)), ElementsAre("a", "b"));
  EXPECT_THAT(ids(*store->List("arms", "b", 2)), ElementsAre("c", "d"));
  EXPECT_THAT(ids(*store->List("arms", "d", 2)), ElementsAre("e"));
  EXPECT_TRUE(store->List("arms", "e", 2)->empty());
  EXPECT_TRUE(store->List("robots", "", 2)->empty());
}

// Quota: with max_models_per_collection = 3 the 4th create is RESOURCE_EXHAUSTED; other
// collections and freed slots are unaffected.
TEST_P(ModelStoreTest, CollectionQuota) {
  StoreOptions options;
  options.max_models_per_collection = 3;
  auto store = Open(options);
  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(store->Create("arms", id, "p").ok());
  EXPECT_EQ(store->Create("arms", "d", "p").status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(store->Create("scenes", "d", "p").ok());
  ASSERT_TRUE(store->Delete("arms", "a", "").ok());
  EXPECT_TRUE(store->Create("arms", "d", "p").ok());
}

// Concurrent writers (read, append a token, write with the etag read; retry on ABORTED):
// every acknowledged write is in the final payload exactly once, in version order (no lost
// update), versions run 2 .. 1 + writes without gaps, and each writer sees its own versions
// strictly increase.
TEST_P(ModelStoreTest, ConcurrentEtagWritersLoseNothing) {
  constexpr int kWriters = 4;
  constexpr int kWritesEach = 25;
  auto store = Open();
  ASSERT_TRUE(store->Create("arms", "hot", "").ok());
  std::vector<std::unique_ptr<ModelStore>> replicas;
  for (int w = 0; w < kWriters; ++w) replicas.push_back(OpenReplica());
  std::vector<std::vector<std::pair<int64_t, std::string>>> acked(kWriters);
  std::atomic<int> retries{0};
  std::latch start(kWriters);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      ModelStore* mine = replicas[w] != nullptr ? replicas[w].get() : store.get();
      start.arrive_and_wait();
      for (int k = 0; k < kWritesEach; ++k) {
        const std::string token = absl::StrCat("w", w, "-", k);
        while (true) {
          auto current = mine->Get("arms", "hot");
          ASSERT_TRUE(current.ok()) << current.status();
          const std::string next = current->payload + token + ";";
          auto written = mine->Update("arms", "hot", current->etag, SetTo(next));
          if (written.ok()) {
            acked[w].emplace_back(written->version, token);
            break;
          }
          ASSERT_EQ(written.status().code(), absl::StatusCode::kAborted) << written.status();
          ++retries;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  std::cout << "stale-etag retries: " << retries << "\n";

  std::map<int64_t, std::string> by_version;
  for (int w = 0; w < kWriters; ++w) {
    ASSERT_EQ(acked[w].size(), static_cast<size_t>(kWritesEach));
    for (size_t k = 1; k < acked[w].size(); ++k)
      EXPECT_GT(acked[w][k].first, acked[w][k - 1].first);
    for (const auto& [version, token] : acked[w]) {
      EXPECT_TRUE(by_version.emplace(version, token).second) << "version " << version << " twice";
    }
  }
  auto final_model = store->Get("arms", "hot");
  ASSERT_TRUE(final_model.ok());
  EXPECT_EQ(final_model->version, 1 + kWriters * kWritesEach);
  EXPECT_EQ(by_version.begin()->first, 2);
  EXPECT_EQ(by_version.rbegin()->first, 1 + kWriters * kWritesEach);
  std::vector<std::string> expected;
  for (const auto& [version, token] : by_version) expected.push_back(token);
  std::vector<std::string> stored = absl::StrSplit(final_model->payload, ';', absl::SkipEmpty());
  EXPECT_EQ(stored, expected);
}

INSTANTIATE_TEST_SUITE_P(Backends, ModelStoreTest,
                         ::testing::Values(Backend::kMemory, Backend::kSqlite,
                                           Backend::kPostgres),
                         [](const auto& info) { return BackendName(info.param); });

// Durability: models written, updated and deleted before the store is closed are exactly as
// left (payload, version, etag, times) after reopening the same file; the file is in WAL mode.
TEST(SqliteModelStoreTest, SurvivesCloseAndReopen) {
  TempDir dir;
  const std::string path = dir.File("models.db");
  StoredModel kept;
  {
    auto store = OpenSqliteModelStore(path);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->Create("arms", "kept", "v1").ok());
    ASSERT_TRUE((*store)->Create("arms", "gone", "x").ok());
    auto updated = (*store)->Update("arms", "kept", "", SetTo(std::string("v2\0bin", 6)));
    ASSERT_TRUE(updated.ok());
    kept = *updated;
    ASSERT_TRUE((*store)->Delete("arms", "gone", "").ok());
  }
  auto reopened = OpenSqliteModelStore(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  auto got = (*reopened)->Get("arms", "kept");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->payload, std::string("v2\0bin", 6));
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->etag, kept.etag);
  EXPECT_EQ(got->create_time_ns, kept.create_time_ns);
  EXPECT_EQ(got->update_time_ns, kept.update_time_ns);
  EXPECT_EQ((*reopened)->Get("arms", "gone").status().code(), absl::StatusCode::kNotFound);
  // The etag read before the restart still makes a valid conditional write.
  EXPECT_EQ((*reopened)->Update("arms", "kept", kept.etag, SetTo("v3"))->version, 3);

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close_v2(db);
}

// A store written by a newer schema is refused (FAILED_PRECONDITION), not silently misread;
// an unopenable path is UNAVAILABLE.
TEST(SqliteModelStoreTest, RefusesNewerSchemaAndBadPath) {
  TempDir dir;
  const std::string path = dir.File("models.db");
  ASSERT_TRUE(OpenSqliteModelStore(path).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close_v2(db);
  EXPECT_EQ(OpenSqliteModelStore(path).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(OpenSqliteModelStore(dir.File("missing-dir/models.db")).status().code(),
            absl::StatusCode::kUnavailable);
}

// A lost connection (the server ends the session, as on a failover) fails exactly the call
// that meets it with UNAVAILABLE; the next call reconnects and finds the data as it was.
TEST(PostgresModelStoreTest, LostConnectionIsUnavailableThenReconnects) {
  auto postgres = StartPostgres();
  ASSERT_NE(postgres, nullptr);
  auto store = OpenPostgresModelStore(postgres->uri());
  ASSERT_TRUE(store.ok()) << store.status();
  auto created = (*store)->Create("arms", "kept", "v1");
  ASSERT_TRUE(created.ok()) << created.status();
  auto killed = postgres->Psql(
      "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM pg_stat_activity "
      "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");
  ASSERT_EQ(killed, "1") << postgres->Log();
  EXPECT_EQ((*store)->Get("arms", "kept").status().code(), absl::StatusCode::kUnavailable);
  auto got = (*store)->Get("arms", "kept");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->etag, created->etag);
}

// A database restart: calls while it is down are UNAVAILABLE (no crash, no hang) with no
// password in their messages, and the first call after it is back succeeds with every
// committed write intact.
TEST(PostgresModelStoreTest, DatabaseRestartIsUnavailableThenRecovers) {
  auto postgres = StartPostgres();
  ASSERT_NE(postgres, nullptr);
  auto store = OpenPostgresModelStore(postgres->uri("pw-127.0.0.1"));
  ASSERT_TRUE(store.ok()) << store.status();
  auto v2 = (*store)->Create("arms", "a", "v1");
  ASSERT_TRUE(v2.ok());
  v2 = (*store)->Update("arms", "a", v2->etag, SetTo("v2"));
  ASSERT_TRUE(v2.ok()) << v2.status();
  ASSERT_TRUE(postgres->Stop());
  EXPECT_EQ((*store)->Get("arms", "a").status().code(), absl::StatusCode::kUnavailable);
  const absl::Status down = (*store)->Update("arms", "a", "", SetTo("lost")).status();
  EXPECT_EQ(down.code(), absl::StatusCode::kUnavailable);
  // The message names host and port (for the operator), never the password.
  EXPECT_THAT(down.message(), ::testing::Not(HasSubstr("pw-127.0.0.1"))) << down;
  EXPECT_EQ((*store)->List("arms", "", 10).status().code(), absl::StatusCode::kUnavailable);
  std::string error;
  ASSERT_TRUE(postgres->Restart(&error)) << error;
  auto got = (*store)->Get("arms", "a");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->payload, "v2");
  EXPECT_EQ(got->etag, v2->etag);
  EXPECT_EQ((*store)->Update("arms", "a", v2->etag, SetTo("v3"))->version, 3);
}

// Two replicas race a conditional update with the same etag: the first holds the row lock
// (its update function waits until the second is seen blocked on that lock in pg_stat_activity),
// the second then reads the committed row and gets ABORTED; the first write is what is stored.
TEST(PostgresModelStoreTest, RowLockMakesTheSecondConditionalWriterStale) {
  auto postgres = StartPostgres();
  ASSERT_NE(postgres, nullptr);
  auto first = OpenPostgresModelStore(postgres->uri());
  auto second = OpenPostgresModelStore(postgres->uri());
  ASSERT_TRUE(first.ok() && second.ok());
  auto v1 = (*first)->Create("scenes", "s", "v1");
  ASSERT_TRUE(v1.ok());
  std::atomic<bool> first_holds_lock{false};
  absl::StatusOr<StoredModel> first_result, second_result;
  std::thread first_writer([&] {
    first_result = (*first)->Update(
        "scenes", "s", v1->etag, [&](const StoredModel&) -> absl::StatusOr<std::string> {
          first_holds_lock = true;
          // Bounded: give up waiting after 10 s (the assertions below then fail).
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (std::chrono::steady_clock::now() < deadline &&
                 postgres->Psql("SELECT count(*) FROM pg_stat_activity "
                                "WHERE wait_event_type = 'Lock'") != "1") {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
          return std::string("first");
        });
  });
  while (!first_holds_lock) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  second_result = (*second)->Update("scenes", "s", v1->etag, SetTo("second"));
  first_writer.join();
  ASSERT_TRUE(first_result.ok()) << first_result.status();
  EXPECT_EQ(first_result->version, 2);
  EXPECT_EQ(second_result.status().code(), absl::StatusCode::kAborted) << second_result.status();
  EXPECT_EQ((*second)->Get("scenes", "s")->payload, "first");
  EXPECT_EQ((*second)->Delete("scenes", "s", v1->etag).code(), absl::StatusCode::kAborted);
}

// A schema written by a newer ikd is refused (FAILED_PRECONDITION); an unreachable server is
// UNAVAILABLE, and its message does not contain the password of the URI.
TEST(PostgresModelStoreTest, RefusesNewerSchemaAndUnreachableServer) {
  auto postgres = StartPostgres();
  ASSERT_NE(postgres, nullptr);
  ASSERT_TRUE(OpenPostgresModelStore(postgres->uri()).ok());
  ASSERT_TRUE(OpenPostgresModelStore(postgres->uri()).ok());  // a second replica: same schema
  ASSERT_EQ(postgres->Psql("SELECT version FROM ikd_schema"), "1");
  ASSERT_TRUE(postgres->Psql("UPDATE ikd_schema SET version = 99").has_value());
  EXPECT_EQ(OpenPostgresModelStore(postgres->uri()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  const std::string uri = postgres->uri("s3cret-pw");
  ASSERT_TRUE(postgres->Stop());
  auto unreachable = OpenPostgresModelStore(uri);
  EXPECT_EQ(unreachable.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(unreachable.status().message(), ::testing::Not(HasSubstr("s3cret-pw")));
}

// Redaction for logs: the password of user:password@ and of ?password= becomes ***; the rest
// (user, host, port, database, other parameters) stays readable; file names are untouched.
TEST(PostgresModelStoreTest, RedactPasswordHidesOnlyThePassword) {
  EXPECT_EQ(RedactPassword("postgresql://ikd:p@ss:w0rd@db.local:5432/ikd?sslmode=require"),
            "postgresql://ikd:***@db.local:5432/ikd?sslmode=require");
  EXPECT_EQ(RedactPassword("postgres://ikd@db/ikd?password=secret&sslmode=verify-full"),
            "postgres://ikd@db/ikd?password=***&sslmode=verify-full");
  EXPECT_EQ(RedactPassword("postgresql://db:5432/ikd"), "postgresql://db:5432/ikd");
  EXPECT_EQ(RedactPassword("/var/lib/ikd/models.db"), "/var/lib/ikd/models.db");
  EXPECT_TRUE(IsPostgresUri("postgres://db/ikd"));
  EXPECT_TRUE(IsPostgresUri("postgresql://db/ikd"));
  EXPECT_FALSE(IsPostgresUri("models.db"));
}

}  // namespace
}  // namespace ikd::server
