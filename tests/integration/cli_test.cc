// Integration tests across processes: the real `ikd` binary on a kernel-chosen port (read from
// its "ikd listening on port N" line), driven by the real `ikctl` and `mock_arm` binaries.
// Every child is killed and reaped in teardown. Models come from deploy/models (the demo arm
// reaches 1.3 m in the plane z = 0; the demo scene keeps clear of the paths used here).
#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ikd/v1/types.pb.h"

extern char** environ;

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

const std::string kIkd = IKD_BINARY;
const std::string kIkctl = IKCTL_BINARY;
const std::string kMockArm = MOCK_ARM_BINARY;
const std::string kModels = IKD_MODELS_DIR;
const std::string kDemoArm = kModels + "/demo.arm.json";
const std::string kDemoScene = kModels + "/demo.scene.json";

// ---------------------------------------------------------------------------------------------
// Child processes

// A spawned process. The destructor kills (SIGKILL) and reaps it unless it was waited for, so
// a failing test leaves nothing running.
class Child {
 public:
  // Runs argv[0] with stdout and stderr on the given descriptors (-1: inherit).
  static std::unique_ptr<Child> Spawn(const std::vector<std::string>& argv, int stdout_fd,
                                      int stderr_fd) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
    if (stderr_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stderr_fd, STDERR_FILENO);
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int error = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) return nullptr;
    return std::unique_ptr<Child>(new Child(pid));
  }

  ~Child() {
    if (!exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  void Signal(int signal) { kill(pid_, signal); }

  // The wait status once the process has exited, or nothing after `timeout`.
  std::optional<int> Wait(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (true) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return status;
      }
      if (Clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  explicit Child(pid_t pid) : pid_(pid) {}
  pid_t pid_;
  bool exited_ = false;
};

struct RunResult {
  int exit_code = -1;  // -1: killed by a signal or timed out
  std::string out;
  std::string err;
};

std::string ReadAll(FILE* file) {
  std::rewind(file);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  return text;
}

// Runs a client to completion (killed after `timeout`), capturing its output.
RunResult RunProcess(const std::vector<std::string>& argv,
              std::chrono::milliseconds timeout = std::chrono::seconds(8)) {
  RunResult result;
  FILE* out = std::tmpfile();
  FILE* err = std::tmpfile();
  {
    auto child = Child::Spawn(argv, fileno(out), fileno(err));
    if (child == nullptr) {
      result.err = "cannot spawn " + argv[0];
    } else if (auto status = child->Wait(timeout); status && WIFEXITED(*status)) {
      result.exit_code = WEXITSTATUS(*status);
    }
  }  // a child still running is killed here
  result.out = ReadAll(out);
  result.err += ReadAll(err);
  std::fclose(out);
  std::fclose(err);
  return result;
}

std::string Describe(const RunResult& result) {
  return "exit " + std::to_string(result.exit_code) + "\nstdout:\n" + result.out +
         "\nstderr:\n" + result.err;
}

// The ikd server as a child process on a port the kernel picked.
class IkdProcess {
 public:
  // Starts ikd and waits (up to 5 s) for its "ikd listening on port N" line.
  static std::unique_ptr<IkdProcess> Start(const std::string& store) {
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return nullptr;
    auto process = std::unique_ptr<IkdProcess>(new IkdProcess(pipe_fds[0]));
    process->child_ = Child::Spawn({kIkd, "--listen=127.0.0.1:0", "--store=" + store,
                                    "--threads=2", "--grace=3s"},
                                   pipe_fds[1], -1);
    close(pipe_fds[1]);
    if (process->child_ == nullptr || !process->ReadPort()) return nullptr;
    return process;
  }

  ~IkdProcess() {
    child_.reset();  // killed and reaped before its stdout pipe closes (no SIGPIPE races)
    close(stdout_fd_);
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  Child& child() { return *child_; }

 private:
  explicit IkdProcess(int stdout_fd) : stdout_fd_(stdout_fd) {}

  bool ReadPort() {
    const std::regex listening("ikd listening on port (\\d+)");
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    std::string text;
    std::smatch match;
    while (!std::regex_search(text, match, listening) || text.find('\n', match.position()) ==
                                                             std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                             Clock::now());
      pollfd descriptor{stdout_fd_, POLLIN, 0};
      if (left.count() <= 0 || poll(&descriptor, 1, static_cast<int>(left.count())) <= 0) {
        return false;
      }
      char buffer[512];
      const ssize_t n = read(stdout_fd_, buffer, sizeof buffer);
      if (n <= 0) return false;  // ikd exited before listening
      text.append(buffer, n);
    }
    port_ = std::stoi(match[1]);
    return port_ > 0;
  }

  int stdout_fd_;
  std::unique_ptr<Child> child_;
  int port_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Output parsing

template <typename Message>
Message ParseJson(const std::string& json) {
  Message message;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &message).ok()) << json;
  return message;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream stream(line);
  for (std::string cell; std::getline(stream, cell, ',');) cells.push_back(cell);
  return cells;
}

// mock_arm's summary: one key=value per line.
std::map<std::string, std::string> KeyValues(const std::string& text) {
  std::map<std::string, std::string> values;
  for (const auto& line : Lines(text)) {
    const size_t equals = line.find('=');
    if (equals != std::string::npos) values[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return values;
}

// ---------------------------------------------------------------------------------------------

class IntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern = std::string(base ? base : "/tmp") + "/ikd-integration-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }

  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  void StartServer(const std::string& store = ":memory:") {
    server_ = IkdProcess::Start(store);
    ASSERT_NE(server_, nullptr) << "ikd did not report its port";
  }

  RunResult Ikctl(std::vector<std::string> args) {
    args.insert(args.begin(), {kIkctl, "--server=" + server_->address(), "--timeout=5s"});
    return RunProcess(args);
  }

  void CreateDemoModels() {
    RunResult arm = Ikctl({"arms", "create", "demo", kDemoArm});
    ASSERT_EQ(arm.exit_code, 0) << Describe(arm);
    RunResult scene = Ikctl({"scenes", "create", "demo", kDemoScene});
    ASSERT_EQ(scene.exit_code, 0) << Describe(scene);
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  ikd::v1::Arm GetArm(const std::string& name) {
    RunResult get = Ikctl({"arms", "get", name, "--format=json"});
    EXPECT_EQ(get.exit_code, 0) << Describe(get);
    return ParseJson<ikd::v1::Arm>(get.out);
  }

  std::string dir_;
  std::unique_ptr<IkdProcess> server_;
};

// (a) create from the demo file, list, get, delete; after delete, get is NOT_FOUND (exit 1).
TEST_F(IntegrationTest, IkctlArmRoundTrip) {
  StartServer();
  RunResult health = Ikctl({"health"});
  EXPECT_EQ(health.exit_code, 0) << Describe(health);
  EXPECT_EQ(health.out, "SERVING\n");

  RunResult create = Ikctl({"arms", "create", "demo", kDemoArm});
  ASSERT_EQ(create.exit_code, 0) << Describe(create);
  const auto created = ParseJson<ikd::v1::Arm>(create.out);
  EXPECT_EQ(created.name(), "arms/demo");
  EXPECT_EQ(created.version(), 1);
  EXPECT_EQ(created.spec().limbs_size(), 4);

  RunResult list = Ikctl({"arms", "list", "--format=csv"});
  ASSERT_EQ(list.exit_code, 0) << Describe(list);
  const auto lines = Lines(list.out);
  ASSERT_EQ(lines.size(), 2u) << list.out;
  EXPECT_THAT(lines[0], StartsWith("name,version,limbs,planar"));
  EXPECT_THAT(lines[1], StartsWith("arms/demo,1,4,yes,"));

  const auto got = GetArm("demo");
  EXPECT_EQ(got.etag(), created.etag());
  EXPECT_EQ(got.spec().SerializeAsString(), created.spec().SerializeAsString());

  RunResult again = Ikctl({"arms", "create", "demo", kDemoArm});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.err, HasSubstr("ALREADY_EXISTS"));

  RunResult remove = Ikctl({"arms", "delete", "arms/demo"});
  ASSERT_EQ(remove.exit_code, 0) << Describe(remove);
  EXPECT_EQ(remove.out, "deleted arms/demo\n");
  RunResult gone = Ikctl({"arms", "get", "demo"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_THAT(gone.err, HasSubstr("NOT_FOUND"));
}

// (a) a limb of negative length: INVALID_ARGUMENT, the BadRequest field path on stderr, exit 1;
// a file that is not an arm at all: exit 2 naming the unknown field, nothing sent.
TEST_F(IntegrationTest, IkctlReportsFieldViolations) {
  StartServer();
  const std::string bad = WriteFile(
      "bad.json", R"({"spec": {"planar": true, "limbs": [{"length": 0.4}, {"length": -1}]}})");
  RunResult create = Ikctl({"arms", "create", "bad", bad});
  EXPECT_EQ(create.exit_code, 1) << Describe(create);
  EXPECT_THAT(create.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(create.err, HasSubstr("field arm.spec.limbs[1].length"));

  const std::string typo = WriteFile("typo.json", R"({"limbz": []})");
  RunResult parse = Ikctl({"arms", "create", "typo", typo});
  EXPECT_EQ(parse.exit_code, 2) << Describe(parse);
  EXPECT_THAT(parse.err, HasSubstr("limbz"));
}

// Scenes: create, edit (move an obstacle) bumps the version to 2 and moves the ball.
TEST_F(IntegrationTest, IkctlSceneEdit) {
  StartServer();
  CreateDemoModels();
  const std::string ops = WriteFile("ops.json", R"({"operations": [{"operation": "OPERATION_MOVE",
      "obstacle_id": "ball", "translation": {"x": 0.25}}]})");
  RunResult edit = Ikctl({"scenes", "edit", "demo", ops});
  ASSERT_EQ(edit.exit_code, 0) << Describe(edit);
  const auto scene = ParseJson<ikd::v1::Scene>(edit.out);
  EXPECT_EQ(scene.version(), 2);
  ASSERT_GE(scene.spec().obstacles_size(), 1);
  EXPECT_EQ(scene.spec().obstacles(0).id(), "ball");
  EXPECT_DOUBLE_EQ(scene.spec().obstacles(0).sphere().center().x(), -0.5 + 0.25);
}

// (b) models survive a SIGTERM restart (exit 0 within the grace) and a kill -9, with the same
// version and etag.
TEST_F(IntegrationTest, ModelsSurviveRestartAndKill) {
  const std::string store = dir_ + "/models.db";
  StartServer(store);
  CreateDemoModels();
  const auto before = GetArm("demo");

  server_->child().Signal(SIGTERM);
  const auto status = server_->child().Wait(std::chrono::seconds(5));
  ASSERT_TRUE(status.has_value()) << "ikd did not exit within 5 s of SIGTERM";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "wait status " << *status;

  StartServer(store);
  const auto after_restart = GetArm("demo");
  EXPECT_EQ(after_restart.version(), before.version());
  EXPECT_EQ(after_restart.etag(), before.etag());

  RunResult update = Ikctl({"arms", "update", "demo", kDemoArm, "--etag=" + before.etag()});
  ASSERT_EQ(update.exit_code, 0) << Describe(update);
  const auto updated = ParseJson<ikd::v1::Arm>(update.out);
  EXPECT_EQ(updated.version(), 2);
  server_->child().Signal(SIGKILL);
  ASSERT_TRUE(server_->child().Wait(std::chrono::seconds(5)).has_value());

  StartServer(store);
  const auto after_kill = GetArm("demo");
  EXPECT_EQ(after_kill.version(), 2);
  EXPECT_EQ(after_kill.etag(), updated.etag());
  RunResult scenes = Ikctl({"scenes", "list", "--format=csv"});
  EXPECT_THAT(scenes.out, HasSubstr("scenes/demo,1,3,"));
}

// (c) mock_arm tracks a 1 s circle at 100 Hz through Track, with an obstacle moved half way:
// 101 states, in order, exact limbs, every one REACHED; exit 0.
TEST_F(IntegrationTest, MockArmTracksCircle) {
  StartServer();
  CreateDemoModels();
  RunResult run = RunProcess({kMockArm, "--server=" + server_->address(), "--timeout=8s",
                              "--arm=demo", "--scene=demo", "--path=circle", "--center=0.7,0.2,0",
                              "--radius=0.25", "--rate_hz=100", "--duration=1",
                              "--move_obstacle=ball", "--move_by=0.6,-0.5,0",
                              "--min_reached_fraction=1"});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  auto summary = KeyValues(run.out);
  EXPECT_EQ(summary["targets_sent"], "101");
  EXPECT_EQ(summary["states_received"], "101");
  EXPECT_EQ(summary["scene_updates_sent"], "1");
  EXPECT_EQ(summary["out_of_order"], "0");
  EXPECT_EQ(summary["reached_fraction"], "1");
  EXPECT_EQ(summary["rpc_status"], "OK");
  EXPECT_EQ(summary["passed"], "true");
  EXPECT_LT(std::stod(summary["max_limb_error"]), 1e-9);
}

// (d) ikctl trajectory on a line: 1 s sampled every 0.05 s = 21 samples, each REACHED with a
// hand error below 1e-9 m, four joint columns, and a summary with fraction_reached=1.
TEST_F(IntegrationTest, IkctlTrajectoryLineEverySampleReached) {
  StartServer();
  CreateDemoModels();
  RunResult run = Ikctl({"trajectory", "--arm=demo", "--scene=demo",
                         "--line=1.1,0.3,0:0.6,0.9,0", "--duration=1", "--period=0.05"});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  const auto lines = Lines(run.out);
  ASSERT_GE(lines.size(), 2u) << run.out;
  EXPECT_EQ(lines.front(), "time,status,hand_error,min_clearance,joint_0,joint_1,joint_2,joint_3");
  int samples = 0;
  for (size_t k = 1; k + 1 < lines.size(); ++k) {
    const auto cells = SplitCsv(lines[k]);
    ASSERT_EQ(cells.size(), 8u) << lines[k];
    EXPECT_EQ(cells[1], "REACHED") << lines[k];
    EXPECT_LT(std::stod(cells[2]), 1e-9) << lines[k];
    ++samples;
  }
  EXPECT_EQ(samples, 21);
  EXPECT_THAT(lines.back(), StartsWith("# summary samples=21 fraction_reached=1 "));
}

// Unknown arm in a kinematics call: NOT_FOUND naming it, exit 1.
TEST_F(IntegrationTest, IkctlSolveUnknownArmIsNotFound) {
  StartServer();
  RunResult run = Ikctl({"solve", "--arm=nope", "--target=1,0,0"});
  EXPECT_EQ(run.exit_code, 1) << Describe(run);
  EXPECT_THAT(run.err, HasSubstr("NOT_FOUND"));
  EXPECT_THAT(run.err, HasSubstr("arms/nope"));
}

}  // namespace
