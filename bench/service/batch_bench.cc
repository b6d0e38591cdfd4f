// SolveBatch throughput (issue 18 item 2): the same poses answered one unary Solve at a time,
// by two unary callers at once, and by one SolveBatch call, against the in-process server
// (memory store, its default worker pool) over loopback gRPC. Every batch answer is checked to
// be the unary answer's bytes. Prints a Markdown table; bench/run_batch_bench.sh records it.
#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <Eigen/Geometry>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "ikd/robot/chain.h"
#include "ikd/robot/presets.h"
#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "model_store.h"
#include "server.h"

ABSL_FLAG(int, targets, 2000, "poses per case");
ABSL_FLAG(int, chunk_size, 64, "SolveBatchRequest.chunk_size");
ABSL_FLAG(std::string, cases, "",
          "run only the cases whose name contains this text (e.g. \"full pose\"); empty: all. "
          "Every case's poses are drawn either way, so a case's poses do not depend on it");

namespace ikd::bench {
namespace {

using Clock = std::chrono::steady_clock;
using server::IkdServer;

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "batch_bench: %s\n", message.c_str());
  std::exit(1);
}

v1::Vector3 Vec(const Eigen::Vector3d& p) {
  v1::Vector3 v;
  v.set_x(p.x());
  v.set_y(p.y());
  v.set_z(p.z());
  return v;
}

// The quick start's planar7 (deploy/models/planar7.json): 7 limbs of 0.2 m in the plane z = 0.3.
v1::ArmRef Planar7() {
  v1::ArmRef arm;
  v1::ArmSpec* spec = arm.mutable_spec();
  spec->set_planar(true);
  spec->mutable_base_position()->set_z(0.3);
  for (int k = 0; k < 7; ++k) {
    v1::Limb* limb = spec->add_limbs();
    limb->set_length(0.2);
    limb->set_radius(0.02);
  }
  return arm;
}

v1::ArmRef Preset(v1::RobotPreset preset) {
  v1::ArmRef arm;
  arm.mutable_spec()->mutable_robot()->set_preset(preset);
  return arm;
}

struct Case {
  std::string name;
  v1::SolveBatchRequest batch;  // the unary requests are made from it
};

// Planar7: hand targets uniform in a disc of 1.5 m about the base (some beyond its 1.4 m).
Case ChainCase(int n, std::mt19937_64& rng) {
  Case c{"planar7, position", {}};
  *c.batch.mutable_arm() = Planar7();
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  while (c.batch.targets_size() < n) {
    const Eigen::Vector3d p(1.5 * u(rng), 1.5 * u(rng), 0.3);
    if (std::hypot(p.x(), p.y()) > 1.5) continue;
    *c.batch.add_targets()->mutable_position() = Vec(p);
  }
  return c;
}

// An industrial arm at the tool poses of random joint values within +-2.5 rad (full pose) or
// their positions only. `within_limits`: the same draw mapped onto each joint's range, for an
// arm whose ranges are narrower (otherwise many poses are unreachable within its limits).
Case RobotCase(const std::string& name, v1::RobotPreset preset, const robot::ChainSpec& spec,
               bool pose, int n, std::mt19937_64& rng, bool within_limits = false) {
  Case c{name + (pose ? ", full pose" : ", position"), {}};
  *c.batch.mutable_arm() = Preset(preset);
  std::uniform_real_distribution<double> angle(-2.5, 2.5);
  for (int i = 0; i < n; ++i) {
    Eigen::VectorXd q(static_cast<Eigen::Index>(spec.joints.size()));
    for (Eigen::Index j = 0; j < q.size(); ++j) {
      q[j] = angle(rng);
      const auto& limits = spec.joints[static_cast<size_t>(j)].limits;
      if (within_limits && limits) {
        q[j] = limits->lower + (q[j] + 2.5) / 5.0 * (limits->upper - limits->lower);
      }
    }
    const Eigen::Isometry3d X = robot::ToolPose(spec, q);
    v1::BatchTarget* target = c.batch.add_targets();
    *target->mutable_position() = Vec(X.translation());
    if (pose) {
      const Eigen::Quaterniond r(X.linear());
      v1::Quaternion* o = target->mutable_orientation();
      o->set_x(r.x()), o->set_y(r.y()), o->set_z(r.z()), o->set_w(r.w());
    }
  }
  return c;
}

v1::SolveRequest UnaryOf(const v1::SolveBatchRequest& batch, int i) {
  v1::SolveRequest request;
  *request.mutable_arm() = batch.arm();
  *request.mutable_target() = batch.targets(i).position();
  if (batch.targets(i).has_orientation()) {
    *request.mutable_target_orientation() = batch.targets(i).orientation();
  }
  return request;
}

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Targets [first, end) step `stride`, one unary call at a time.
void UnaryCalls(v1::KinematicsService::Stub& stub, const v1::SolveBatchRequest& batch, int first,
                int stride, std::vector<v1::JointState>& answers) {
  for (int i = first; i < batch.targets_size(); i += stride) {
    grpc::ClientContext context;
    v1::SolveResponse response;
    const grpc::Status status = stub.Solve(&context, UnaryOf(batch, i), &response);
    if (!status.ok()) Die("Solve: " + status.error_message());
    answers[i] = response.state();
  }
}

double UnaryThroughput(v1::KinematicsService::Stub& stub, const v1::SolveBatchRequest& batch,
                       int callers, std::vector<v1::JointState>& answers) {
  answers.assign(batch.targets_size(), {});
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < callers; ++t) {
    threads.emplace_back([&, t] { UnaryCalls(stub, batch, t, callers, answers); });
  }
  for (std::thread& thread : threads) thread.join();
  return batch.targets_size() / Seconds(start);
}

struct BatchRun {
  double per_second = 0.0;
  double solve_seconds = 0.0;  // the workers' own per-target times, summed
  std::vector<v1::JointState> answers;
};

BatchRun BatchThroughput(v1::KinematicsService::Stub& stub, const v1::SolveBatchRequest& batch) {
  BatchRun run;
  const Clock::time_point start = Clock::now();
  grpc::ClientContext context;
  auto reader = stub.SolveBatch(&context, batch);
  v1::SolveBatchResponse message;
  while (reader->Read(&message)) {
    for (const v1::BatchResult& r : message.results()) {
      run.answers.push_back(r.state());
      run.solve_seconds += r.solve_seconds();
    }
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) Die("SolveBatch: " + status.error_message());
  run.per_second = batch.targets_size() / Seconds(start);
  return run;
}

void RunCase(v1::KinematicsService::Stub& stub, Case c, int chunk) {
  c.batch.set_chunk_size(chunk);
  std::fprintf(stderr, "%s ...\n", c.name.c_str());
  std::vector<v1::JointState> sequential, paired;
  const double one = UnaryThroughput(stub, c.batch, 1, sequential);
  const double two = UnaryThroughput(stub, c.batch, 2, paired);
  const BatchRun batch = BatchThroughput(stub, c.batch);
  int differing = 0, reached = 0;
  for (int i = 0; i < c.batch.targets_size(); ++i) {
    differing += !google::protobuf::util::MessageDifferencer::Equals(batch.answers[i], sequential[i]);
    reached += batch.answers[i].status() == v1::STEP_STATUS_REACHED;
  }
  if (differing > 0) Die(absl::StrCat(c.name, ": ", differing, " batch answers differ from Solve's"));
  std::printf("| %s | %d | %.1f%% | %.0f | %.0f | %.0f | %.2f | %.2f | %.0f |\n", c.name.c_str(),
              c.batch.targets_size(), 100.0 * reached / c.batch.targets_size(), one, two,
              batch.per_second, batch.per_second / one, batch.per_second / two,
              c.batch.targets_size() / batch.solve_seconds);
}

}  // namespace
}  // namespace ikd::bench

int main(int argc, char** argv) {
  using namespace ikd::bench;
  absl::SetProgramUsageMessage("SolveBatch throughput against unary Solve calls");
  absl::ParseCommandLine(argc, argv);
  const int n = absl::GetFlag(FLAGS_targets);
  const int chunk = absl::GetFlag(FLAGS_chunk_size);
  if (n < 1 || n > 10000) Die("--targets must be in [1, 10000]");
  std::unique_ptr<ikd::server::ModelStore> store = ikd::server::NewMemoryModelStore();
  ikd::server::ServerOptions options;
  options.listen = "127.0.0.1:0";
  auto server = IkdServer::Start(options, store.get());
  if (!server.ok()) Die(server.status().ToString());
  auto stub = ikd::v1::KinematicsService::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", (*server)->port()), grpc::InsecureChannelCredentials()));
  std::mt19937_64 rng(1);
  std::printf(
      "%d poses per case, default IkOptions, the server's default pool (%d worker threads), "
      "client and server in one process on this machine (%u hardware threads); SolveBatch "
      "chunk_size %d. Throughput in solves/s, wall time from the first request to the last "
      "answer. Every SolveBatch answer is byte-identical to the sequential Solve's (checked).\n\n",
      n, options.pool.threads, std::thread::hardware_concurrency(), chunk);
  std::printf("| case | poses | REACHED | Solve, 1 caller | Solve, 2 callers | SolveBatch | "
              "batch / 1 caller | batch / 2 callers | solver alone (1 worker) |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  const std::string only = absl::GetFlag(FLAGS_cases);
  auto run = [&](const Case& c) {
    if (c.name.find(only) != std::string::npos) RunCase(*stub, c, chunk);
  };
  run(ChainCase(n, rng));
  run(RobotCase("ur5", ikd::v1::ROBOT_PRESET_UR5, ikd::robot::presets::Ur5(), true, n, rng));
  run(RobotCase("panda", ikd::v1::ROBOT_PRESET_PANDA, ikd::robot::presets::Panda(), false, n, rng));
  run(RobotCase("irb120", ikd::v1::ROBOT_PRESET_IRB120, ikd::robot::presets::Irb120(), true, n, rng,
                /*within_limits=*/true));
  (*server)->Shutdown(absl::Seconds(1));
  return 0;
}
