// Shared by the integration tests (tests/integration/*_test.cc): the real `ikd` binary on a
// kernel-chosen port (read from its "ikd listening on port N" line), driven by the real `ikctl`
// and `mock_arm` binaries, whose paths CMake passes as IKD_BINARY, IKCTL_BINARY and
// MOCK_ARM_BINARY. Every child is killed and reaped in teardown. Models come from deploy/models
// (IKD_MODELS_DIR): the demo arm reaches 1.3 m in the plane z = 0 and the demo scene keeps
// clear of the paths used here; planar7 moves in the plane z = 0.3 among the pillars scene.
#pragma once

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
#include <iterator>
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

namespace ikd::integration {

using Clock = std::chrono::steady_clock;

const std::string kIkd = IKD_BINARY;
const std::string kIkctl = IKCTL_BINARY;
const std::string kMockArm = MOCK_ARM_BINARY;
const std::string kModels = IKD_MODELS_DIR;
const std::string kDemoArm = kModels + "/demo.arm.json";
const std::string kDemoScene = kModels + "/demo.scene.json";
const std::string kPlanar7Arm = kModels + "/planar7.arm.json";
const std::string kPillarsScene = kModels + "/pillars.scene.json";

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
  pid_t pid() const { return pid_; }

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

// The whole file, read with pread: the file offset is shared with a child still writing to
// it, and must not move under the child's feet.
inline std::string ReadAll(FILE* file) {
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = pread(fileno(file), buffer, sizeof buffer, static_cast<off_t>(text.size()))) > 0) {
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

// A client left running while the test does something else; Finish() collects its exit code
// and output. Destroying it kills the client.
class BackgroundProcess {
 public:
  explicit BackgroundProcess(const std::vector<std::string>& argv)
      : out_(std::tmpfile()), err_(std::tmpfile()) {
    child_ = Child::Spawn(argv, fileno(out_), fileno(err_));
    if (child_ == nullptr) spawn_error_ = "cannot spawn " + argv[0];
  }
  ~BackgroundProcess() {
    child_.reset();
    std::fclose(out_);
    std::fclose(err_);
  }

  bool running() const { return child_ != nullptr; }
  Child& child() { return *child_; }
  // What the client has written to stdout so far.
  std::string OutputSoFar() { return ReadAll(out_); }

  // Waits up to `timeout` for the exit (then kills it: exit_code -1) and returns the output.
  RunResult Finish(std::chrono::milliseconds timeout) {
    RunResult result;
    result.err = spawn_error_;
    if (child_ != nullptr) {
      if (auto status = child_->Wait(timeout); status && WIFEXITED(*status)) {
        result.exit_code = WEXITSTATUS(*status);
      }
      child_.reset();
    }
    result.out = ReadAll(out_);
    result.err += ReadAll(err_);
    return result;
  }

 private:
  FILE* out_;
  FILE* err_;
  std::unique_ptr<Child> child_;
  std::string spawn_error_;
};

// Runs a client to completion (killed after `timeout`), capturing its output.
inline RunResult RunProcess(const std::vector<std::string>& argv,
                            std::chrono::milliseconds timeout = std::chrono::seconds(8)) {
  return BackgroundProcess(argv).Finish(timeout);
}

// CPU time (user + system) the process has used so far, in seconds; from /proc/PID/stat.
inline double CpuSeconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // Fields after the parenthesized command name: state is field 3, utime 14, stime 15.
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::vector<std::string> values;
  for (std::string field; fields >> field;) values.push_back(field);
  if (values.size() < 13) return -1;
  const double ticks = std::stod(values[11]) + std::stod(values[12]);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Polls `condition` every 10 ms for up to `timeout`.
template <typename Condition>
bool WaitUntil(Condition condition, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!condition()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

inline std::string Describe(const RunResult& result) {
  return "exit " + std::to_string(result.exit_code) + "\nstdout:\n" + result.out +
         "\nstderr:\n" + result.err;
}

// The ikd server as a child process on a port the kernel picked.
class IkdProcess {
 public:
  // Starts ikd (two threads, a 3 s grace unless `flags` say otherwise) and waits (up to 5 s)
  // for its "ikd listening on port N" line.
  static std::unique_ptr<IkdProcess> Start(const std::string& store,
                                           const std::vector<std::string>& flags = {}) {
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return nullptr;
    auto process = std::unique_ptr<IkdProcess>(new IkdProcess(pipe_fds[0]));
    std::vector<std::string> argv = {kIkd, "--listen=127.0.0.1:0", "--store=" + store,
                                     "--threads=2", "--grace=3s"};
    argv.insert(argv.end(), flags.begin(), flags.end());  // later flags win
    process->child_ = Child::Spawn(argv, pipe_fds[1], -1);
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
inline Message ParseJson(const std::string& json) {
  Message message;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &message).ok()) << json;
  return message;
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

inline std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream stream(line);
  for (std::string cell; std::getline(stream, cell, ',');) cells.push_back(cell);
  return cells;
}

// How often `needle` occurs in `text` (overlaps counted).
inline size_t CountOccurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The whole of file `path` ("" when it cannot be read).
inline std::string FileText(const std::string& path) {
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

// mock_arm's summary: one key=value per line.
inline std::map<std::string, std::string> KeyValues(const std::string& text) {
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

  void StartServer(const std::string& store = ":memory:",
                   const std::vector<std::string>& flags = {}) {
    server_ = IkdProcess::Start(store, flags);
    ASSERT_NE(server_, nullptr) << "ikd did not report its port";
  }

  RunResult Ikctl(std::vector<std::string> args) {
    args.insert(args.begin(), {kIkctl, "--server=" + server_->address(), "--timeout=5s"});
    return RunProcess(args);
  }

  // `collection` "arms" or "scenes".
  void CreateModel(const std::string& collection, const std::string& id,
                   const std::string& file) {
    RunResult created = Ikctl({collection, "create", id, file});
    ASSERT_EQ(created.exit_code, 0) << Describe(created);
  }

  void CreateDemoModels() {
    CreateModel("arms", "demo", kDemoArm);
    CreateModel("scenes", "demo", kDemoScene);
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

}  // namespace ikd::integration
