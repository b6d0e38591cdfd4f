// A throw-away PostgreSQL 15 server for tests: initdb into a fresh directory under /tmp, then
// `postgres` on 127.0.0.1 and a free port (trust authentication, fsync off: test data only).
// PostgreSQL refuses to run as root, and CI runs as root: then initdb and postgres run as the
// `postgres` user (Debian's postgresql package creates it; `nobody` otherwise) through
// setpriv, with the directory chowned to it. Stopped (fast shutdown) and removed on
// destruction. Binaries from /usr/lib/postgresql/15/bin (Debian 12's postgresql package,
// installed by deploy/test.sh).
//
//   std::string error;
//   auto pg = ikd::testing::PostgresServer::Start(&error);
//   ASSERT_NE(pg, nullptr) << error;
//   auto store = OpenPostgresModelStore(pg->uri());
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace ikd::testing {

class PostgresServer {
 public:
  static constexpr char kBinDir[] = "/usr/lib/postgresql/15/bin";

  // Initializes a cluster and starts it; nullptr with *error set when that fails.
  static std::unique_ptr<PostgresServer> Start(std::string* error) {
    auto server = std::unique_ptr<PostgresServer>(new PostgresServer());
    if (!server->Init(error)) return nullptr;
    // A port found free may be taken before postgres binds it: try a few.
    for (int attempt = 0; attempt < 5; ++attempt) {
      server->port_ = FreePort();
      if (server->Launch(error)) return server;
    }
    return nullptr;
  }

  ~PostgresServer() {
    Stop();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  int port() const { return port_; }

  // URI of the `postgres` database as superuser `postgres`; a password is accepted and
  // ignored (trust authentication), which lets tests check that it is never printed.
  std::string uri(const std::string& password = "") const {
    return "postgresql://postgres" + (password.empty() ? "" : ":" + password) + "@127.0.0.1:" +
           std::to_string(port_) + "/postgres";
  }

  // Fast shutdown (SIGINT: clients disconnected, running transactions rolled back); true once
  // the server has exited.
  bool Stop() {
    if (pid_ <= 0) return true;
    kill(pid_, SIGINT);
    bool exited = WaitPid(pid_, std::chrono::seconds(15));
    if (!exited) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
    return exited;
  }

  // Starts the stopped server again on the same data directory and port.
  bool Restart(std::string* error) { return pid_ <= 0 && Launch(error); }

  // Runs `sql` with psql (unaligned, tuples only) and returns its standard output, or nothing
  // when psql fails.
  std::optional<std::string> Psql(const std::string& sql) const {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
    const pid_t pid = Spawn({std::string(kBinDir) + "/psql", "-X", "-q", "-t", "-A", "-v",
                             "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", std::to_string(port_),
                             "-U", "postgres", "-d", "postgres", "-c", sql},
                            /*as_owner=*/false, fds[1]);
    close(fds[1]);
    std::string out;
    char buffer[4096];
    for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, n);
    close(fds[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      return std::nullopt;
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  }

  // The server's log so far (for failure messages).
  std::string Log() const {
    std::ifstream file(log_);
    return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  }

 private:
  PostgresServer() = default;

  bool Init(std::string* error) {
    std::string pattern = "/tmp/ikd-postgres-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) return Fail(error, "mkdtemp failed");
    dir_ = pattern;
    data_ = dir_ + "/data";
    log_ = dir_ + "/postgres.log";
    if (geteuid() == 0) {
      const passwd* user = getpwnam("postgres");
      if (user == nullptr) user = getpwnam("nobody");
      if (user == nullptr) return Fail(error, "neither user postgres nor nobody exists");
      uid_ = user->pw_uid;
      gid_ = user->pw_gid;
      if (chown(dir_.c_str(), uid_, gid_) != 0) return Fail(error, "chown " + dir_ + " failed");
    }
    const pid_t pid = Spawn({std::string(kBinDir) + "/initdb", "-D", data_, "-U", "postgres",
                             "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync",
                             "--no-instructions"},
                            /*as_owner=*/true, -1);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      return Fail(error, "initdb failed:\n" + Log());
    }
    return true;
  }

  // Starts postgres and waits (up to 30 s) until it accepts connections.
  bool Launch(std::string* error) {
    const size_t log_start = Log().size();
    pid_ = Spawn({std::string(kBinDir) + "/postgres", "-D", data_, "-p", std::to_string(port_),
                  "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c",
                  "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=40", "-c",
                  "shared_buffers=16MB"},
                 /*as_owner=*/true, -1);
    if (pid_ < 0) return Fail(error, "cannot spawn postgres");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string log = Log().substr(log_start);
      if (log.find("database system is ready to accept connections") != std::string::npos) {
        return true;
      }
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return Fail(error, "postgres exited:\n" + log);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    Stop();
    return Fail(error, "postgres did not become ready in 30 s:\n" + Log());
  }

  // Spawns argv with stdout on `stdout_fd` (-1: the log), stderr on the log and the directory
  // as working directory (its owner may not enter the caller's); as that owner (setpriv) when
  // `as_owner` and we are root. posix_spawn, not fork: the test process has threads (gRPC,
  // sanitizers), and nothing but exec may run in a forked copy of it.
  pid_t Spawn(std::vector<std::string> argv, bool as_owner, int stdout_fd) const {
    if (as_owner && geteuid() == 0) {
      argv.insert(argv.begin(), {"/usr/bin/setpriv", "--reuid=" + std::to_string(uid_),
                                 "--regid=" + std::to_string(gid_), "--clear-groups", "--"});
    }
    std::vector<char*> args;
    for (auto& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, stdout_fd >= 0 ? stdout_fd : STDERR_FILENO,
                                     STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addchdir_np(&actions, dir_.c_str());
    pid_t pid = -1;
    const int error = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return error == 0 ? pid : -1;
  }

  static bool WaitPid(pid_t pid, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid, nullptr, WNOHANG) == pid) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // A port the kernel reports free on 127.0.0.1 (postgres cannot be given port 0).
  static int FreePort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    int port = 0;
    if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      port = ntohs(address.sin_port);
    }
    close(fd);
    return port;
  }

  static bool Fail(std::string* error, const std::string& message) {
    if (error != nullptr) *error = message;
    return false;
  }

  std::string dir_, data_, log_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace ikd::testing
