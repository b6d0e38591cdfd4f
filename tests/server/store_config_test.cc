// Store selection from ikd's flags (store_config.h): where the spec comes from (--store, an
// environment variable, a file), which errors name which flag, and which store a spec opens.
#include "store_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ikd::server {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<std::string> Resolve(const std::string& store, const std::string& from_env = "",
                                    const std::string& from_file = "") {
  return ResolveStoreSpec(StoreSource{store, from_env, from_file});
}

class StoreConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/tmp/ikd-store-config-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    unsetenv("IKD_STORE_CONFIG_TEST");
    std::filesystem::remove_all(dir_);
  }
  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

// --store alone is used as given (blanks cut); an empty one is refused naming --store.
TEST_F(StoreConfigTest, StoreFlagAlone) {
  EXPECT_EQ(*Resolve(" models.db\n"), "models.db");
  auto empty = Resolve("");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.status().message(), HasSubstr("--store"));
}

// The environment variable wins over --store; unset or empty is an error naming the flag and
// the variable.
TEST_F(StoreConfigTest, FromEnvironment) {
  setenv("IKD_STORE_CONFIG_TEST", "postgresql://ikd:pw@db/ikd", 1);
  EXPECT_EQ(*Resolve("ignored.db", "IKD_STORE_CONFIG_TEST"),
            "postgresql://ikd:pw@db/ikd");
  setenv("IKD_STORE_CONFIG_TEST", "", 1);
  auto empty = Resolve("x.db", "IKD_STORE_CONFIG_TEST");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.status().message(), HasSubstr("--store_from_env"));
  EXPECT_THAT(empty.status().message(), HasSubstr("IKD_STORE_CONFIG_TEST"));
  unsetenv("IKD_STORE_CONFIG_TEST");
  EXPECT_EQ(Resolve("", "IKD_STORE_CONFIG_TEST").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The file's content (trailing newline cut, as a mounted Secret or `echo` leaves it) wins over
// --store; a missing or blank file is an error naming --store_from_file; env and file together
// are refused.
TEST_F(StoreConfigTest, FromFile) {
  const std::string uri_file = WriteFile("uri", "postgresql://ikd:pw@db/ikd\n");
  EXPECT_EQ(*Resolve("ignored.db", "", uri_file),
            "postgresql://ikd:pw@db/ikd");
  auto blank = Resolve("", "", WriteFile("blank", " \n"));
  EXPECT_EQ(blank.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(blank.status().message(), HasSubstr("--store_from_file"));
  auto missing = Resolve("", "", dir_ + "/missing");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("--store_from_file"));
  setenv("IKD_STORE_CONFIG_TEST", "a.db", 1);
  EXPECT_EQ(Resolve("", "IKD_STORE_CONFIG_TEST", uri_file)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// ":memory:" opens the memory store (no file appears), a path opens SQLite (the file appears),
// a postgresql:// or postgres:// URI goes to PostgreSQL (nothing listens on port 1 here:
// UNAVAILABLE, and no file named after the URI is created).
TEST_F(StoreConfigTest, SpecSelectsTheStore) {
  const auto before = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  EXPECT_TRUE(OpenModelStore(":memory:", {}).ok());
  EXPECT_FALSE(std::filesystem::exists(":memory:"));
  EXPECT_TRUE(OpenModelStore(dir_ + "/models.db", {}).ok());
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/models.db"));
  for (const char* uri : {"postgresql://ikd@127.0.0.1:1/ikd", "postgres://ikd@127.0.0.1:1/ikd"}) {
    EXPECT_EQ(OpenModelStore(uri, {}).status().code(), absl::StatusCode::kUnavailable) << uri;
  }
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
    EXPECT_THAT(entry.path().string(), ::testing::Not(HasSubstr("postgres"))) << "a SQLite file";
  }
  std::filesystem::current_path(before);
}

// A mistyped URI or a libpq keyword string is INVALID_ARGUMENT without its text (it may hold a
// password), and no SQLite file is created for it.
TEST_F(StoreConfigTest, MistypedUriIsRefusedWithoutEchoingIt) {
  const auto before = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  for (const char* spec : {"postgresq://ikd:s3cret@db/ikd", "POSTGRESQL://ikd:s3cret@db/ikd",
                           "host=db user=ikd password=s3cret"}) {
    auto store = OpenModelStore(spec, {});
    EXPECT_EQ(store.status().code(), absl::StatusCode::kInvalidArgument) << spec;
    EXPECT_THAT(store.status().message(), HasSubstr("--store"));
    EXPECT_THAT(store.status().message(), ::testing::Not(HasSubstr("s3cret")));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir_)) << "a SQLite file was created";
  std::filesystem::current_path(before);
}

}  // namespace
}  // namespace ikd::server
