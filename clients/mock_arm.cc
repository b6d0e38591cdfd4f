// mock_arm: a simulated robot controller. It opens KinematicsService.Track, streams hand
// targets along a circle or a line at --rate_hz, and "executes" every JointState it gets back
// the way a careful controller would before moving motors:
//  - the state answers the target sent at that position in the stream;
//  - the limbs keep their lengths and the joint positions are the angles of the sites;
//  - no joint limit of the arm is exceeded, no limb penetrates an obstacle of the scene (kept
//    in step with the scene updates it sends) or another limb, computed here from the sites
//    with the mock's own geometry (mock_geometry.h: its own copy of the scene and its own
//    capsule distances, not the solver's, so that the check is a second opinion; industrial
//    arms' links against each other too where the arm checks self-collision or with
//    --check_self_collision, every non-adjacent pair except those touching in every sampled
//    configuration);
//  - nor anywhere in the motion from the previous state, the servo's commanded motion with
//    every joint interpolated linearly, sampled at least every --motion_check_step rad;
//  - a REACHED state has the hand on the target (--max_hand_error);
//  - the commanded stream keeps every declared servo limit: per joint its velocity,
//    acceleration and jerk, differenced here from the states' positions and times from rest at
//    the first state (mock_rates.h), in the arm's own joint coordinates;
//  - servo dynamics: the joints follow the commanded positions under rate, acceleration and
//    jerk limits (--max_joint_rate, --max_joint_accel, --max_joint_jerk) at the control rate,
//    and the servo's tracking error stays below --max_tracking_error; no commanded step
//    exceeds --max_joint_step.
// It prints a key=value summary.
//
//   mock_arm --arm=demo --scene=demo --path=circle --center=0.7,0.2,0 --radius=0.25
//            --rate_hz=100 --duration=2 --move_obstacle=ball --move_by=0,-0.2,0
//
// Exit status 0 only if every state arrived, in order, and every check passed; 1 if a check
// failed or the stream broke; 2 for bad flags or models.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client_util.h"
#include "connect_flags.h"
#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "ikd/v1/model_service.grpc.pb.h"
#include "mock_executor.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "ikd address, host:port");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(60), "deadline of the whole Track stream");
ABSL_FLAG(std::string, arm, "", "stored arm, \"ID\" or \"arms/ID\"");
ABSL_FLAG(std::string, arm_file, "", "inline arm from a JSON file (Arm or ArmSpec)");
ABSL_FLAG(std::string, scene, "", "stored scene, \"ID\" or \"scenes/ID\" (default: free space)");
ABSL_FLAG(std::string, scene_file, "", "inline scene from a JSON file (Scene or SceneSpec)");
ABSL_FLAG(std::string, unannounced_obstacles_file, "",
          "check: obstacles from a JSON file (Scene or SceneSpec) the controller knows of and "
          "does not send to ikd (a fixture ikd was not told about); its own checks count them");
ABSL_FLAG(std::string, path, "circle", "hand path: circle or line");
ABSL_FLAG(std::string, center, "0.7,0.2,0", "circle: centre x,y,z (m)");
ABSL_FLAG(double, radius, 0.25, "circle: radius (m)");
ABSL_FLAG(std::string, axis, "0,0,1", "circle: axis x,y,z; the circle starts on the x side");
ABSL_FLAG(double, revolution_seconds, 0, "circle: seconds per turn (0: one turn in --duration)");
ABSL_FLAG(std::string, line, "1.1,0.3,0:0.6,0.9,0", "line: x0,y0,z0:x1,y1,z1");
ABSL_FLAG(double, rate_hz, 100, "targets per second");
ABSL_FLAG(double, duration, 2, "seconds of trajectory (targets at 0, 1/rate, ..., duration)");
ABSL_FLAG(bool, realtime, true, "pace the targets at --rate_hz; false: send as fast as possible");
ABSL_FLAG(absl::Duration, deadline, absl::ZeroDuration(),
          "TrackConfig.deadline: a target not answered within this long of being sent comes "
          "back LATE, the arm braked (0: none); the config's period is 1 / --rate_hz");
ABSL_FLAG(double, min_reached_fraction, 0,
          "check: at least this fraction of states must be REACHED");
ABSL_FLAG(std::string, move_obstacle, "", "scene_update mid-stream: obstacle id to move");
ABSL_FLAG(std::string, move_by, "0,-0.2,0", "scene_update: translation x,y,z (m)");
ABSL_FLAG(double, update_at, -1, "scene_update before the first target at this time "
                                  "(s; negative: half way)");
ABSL_FLAG(uint64_t, seed, 0, "IK random seed (0: the server default)");
ABSL_FLAG(std::string, options_file, "",
          "IK options as a JSON ikd.v1.IkOptions; --seed overrides its seed when given");
ABSL_FLAG(std::string, orientation, "",
          "industrial arms: tool orientation x,y,z,w held along the path (full-pose targets)");
ABSL_FLAG(bool, approach, true,
          "before tracking, move to the path's start (KinematicsService.Solve) and start the "
          "stream from there, as a controller moves to the start of a Cartesian path first");

namespace ikd::clients {
namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Set-up: the arm (its limb lengths are needed for the checks), scene and targets.

absl::Status ResolveArm(const std::shared_ptr<grpc::Channel>& channel, MockSetup* setup) {
  const std::string name = absl::GetFlag(FLAGS_arm);
  const std::string file = absl::GetFlag(FLAGS_arm_file);
  if (name.empty() == file.empty()) {
    return absl::InvalidArgumentError("give exactly one of --arm=NAME and --arm_file=FILE");
  }
  absl::StatusOr<v1::ArmSpec> spec;
  if (!name.empty()) {
    setup->config.mutable_arm()->set_name(ResourceName("arms", name));
    spec = FetchArmSpec(channel, setup->config.arm().name(), absl::Seconds(10));
  } else {
    spec = LoadArmSpec(file);
    if (spec.ok()) *setup->config.mutable_arm()->mutable_spec() = *spec;
  }
  if (!spec.ok()) return spec.status();
  setup->arm = *spec;
  return absl::OkStatus();
}

absl::Status ResolveScene(const std::shared_ptr<grpc::Channel>& channel, MockSetup* setup) {
  const std::string name = absl::GetFlag(FLAGS_scene);
  const std::string file = absl::GetFlag(FLAGS_scene_file);
  if (!name.empty() && !file.empty()) {
    return absl::InvalidArgumentError("give at most one of --scene and --scene_file");
  }
  if (!name.empty()) {
    setup->config.mutable_scene()->set_name(ResourceName("scenes", name));
    auto spec = FetchSceneSpec(channel, setup->config.scene().name(), absl::Seconds(10));
    if (!spec.ok()) return spec.status();
    setup->scene = *spec;
  }
  if (!file.empty()) {
    auto spec = LoadSceneSpec(file);
    if (!spec.ok()) return spec.status();
    *setup->config.mutable_scene()->mutable_spec() = *spec;
    setup->scene = *spec;
  }
  if (const std::string extra = absl::GetFlag(FLAGS_unannounced_obstacles_file); !extra.empty()) {
    auto spec = LoadSceneSpec(extra);
    if (!spec.ok()) return spec.status();
    for (const v1::Obstacle& obstacle : spec->obstacles()) *setup->scene.add_obstacles() = obstacle;
  }
  return absl::OkStatus();
}

struct Vec {
  double x, y, z;
};
Vec ToVec(const v1::Vector3& v) { return {v.x(), v.y(), v.z()}; }
Vec Cross(Vec a, Vec b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
Vec Scaled(Vec a, double s) { return {a.x * s, a.y * s, a.z * s}; }
Vec Normalized(Vec a) { return Scaled(a, 1.0 / std::sqrt(a.x * a.x + a.y * a.y + a.z * a.z)); }

// Hand position at time t, a function of the --path flags.
using PathFunction = std::function<v1::Vector3(double)>;

absl::StatusOr<PathFunction> CirclePath(double duration) {
  auto center = ParseVector3(absl::GetFlag(FLAGS_center), "--center");
  if (!center.ok()) return center.status();
  auto axis_flag = ParseVector3(absl::GetFlag(FLAGS_axis), "--axis");
  if (!axis_flag.ok()) return axis_flag.status();
  const Vec axis = ToVec(*axis_flag);
  if (std::hypot(axis.x, axis.y, axis.z) < 1e-9) {
    return absl::InvalidArgumentError("--axis must not be zero");
  }
  const Vec a = Normalized(axis);
  // u: the world x axis projected onto the circle's plane (y when x is nearly along the axis).
  const Vec reference = std::abs(a.x) < 0.9 ? Vec{1, 0, 0} : Vec{0, 1, 0};
  const Vec u = Normalized(Cross(Cross(a, reference), a));
  const Vec v = Cross(a, u);
  const double radius = absl::GetFlag(FLAGS_radius);
  const double turn = absl::GetFlag(FLAGS_revolution_seconds) > 0
                          ? absl::GetFlag(FLAGS_revolution_seconds)
                          : duration;
  const Vec c = ToVec(*center);
  return PathFunction([=](double t) {
    const double phi = 2 * M_PI * t / turn;
    const double cu = radius * std::cos(phi), sv = radius * std::sin(phi);
    return MakeVector3(c.x + cu * u.x + sv * v.x, c.y + cu * u.y + sv * v.y,
                       c.z + cu * u.z + sv * v.z);
  });
}

absl::StatusOr<PathFunction> LinePath(double duration) {
  auto ends = ParseSegment(absl::GetFlag(FLAGS_line), "--line");
  if (!ends.ok()) return ends.status();
  const Vec from = ToVec(ends->first), to = ToVec(ends->second);
  return PathFunction([=](double t) {
    const double s = duration > 0 ? t / duration : 1.0;
    return MakeVector3(from.x + s * (to.x - from.x), from.y + s * (to.y - from.y),
                       from.z + s * (to.z - from.z));
  });
}

absl::Status MakeTargets(MockSetup* setup) {
  const double rate = absl::GetFlag(FLAGS_rate_hz);
  const double duration = absl::GetFlag(FLAGS_duration);
  if (!(rate > 0) || !(duration >= 0) || duration * rate > 1e6) {
    return absl::InvalidArgumentError("need --rate_hz > 0, --duration >= 0, at most 1e6 targets");
  }
  const std::string kind = absl::GetFlag(FLAGS_path);
  absl::StatusOr<PathFunction> path =
      kind == "circle" ? CirclePath(duration)
      : kind == "line" ? LinePath(duration)
                       : absl::InvalidArgumentError("--path must be circle or line");
  if (!path.ok()) return path.status();
  std::optional<v1::Quaternion> orientation;
  if (const std::string text = absl::GetFlag(FLAGS_orientation); !text.empty()) {
    auto q = ParseNumbers(text, "--orientation");
    if (!q.ok()) return q.status();
    if (q->size() != 4) return absl::InvalidArgumentError("--orientation needs x,y,z,w");
    orientation.emplace();
    orientation->set_x((*q)[0]);
    orientation->set_y((*q)[1]);
    orientation->set_z((*q)[2]);
    orientation->set_w((*q)[3]);
  }
  const int count = static_cast<int>(std::floor(duration * rate + 1e-9)) + 1;
  for (int k = 0; k < count; ++k) {
    v1::TrackTarget target;
    target.set_time(k / rate);
    *target.mutable_position() = (*path)(target.time());
    if (orientation) *target.mutable_orientation() = *orientation;
    setup->targets.push_back(target);
  }
  return absl::OkStatus();
}

absl::Status MakeSceneUpdate(MockSetup* setup) {
  const std::string obstacle = absl::GetFlag(FLAGS_move_obstacle);
  if (obstacle.empty()) return absl::OkStatus();
  auto by = ParseVector3(absl::GetFlag(FLAGS_move_by), "--move_by");
  if (!by.ok()) return by.status();
  v1::SceneUpdate update;
  v1::ObstacleOperation* move = update.add_operations();
  move->set_operation(v1::ObstacleOperation::OPERATION_MOVE);
  move->set_obstacle_id(obstacle);
  *move->mutable_translation() = *by;
  setup->scene_update = update;
  const double at = absl::GetFlag(FLAGS_update_at) >= 0 ? absl::GetFlag(FLAGS_update_at)
                                                         : absl::GetFlag(FLAGS_duration) / 2;
  setup->update_before = setup->targets.size();
  for (size_t k = 0; k < setup->targets.size(); ++k) {
    if (setup->targets[k].time() >= at) {
      setup->update_before = k;
      break;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<MockSetup> MakeSetup(const std::shared_ptr<grpc::Channel>& channel) {
  MockSetup setup;
  for (absl::Status status : {ResolveArm(channel, &setup), ResolveScene(channel, &setup),
                              MakeTargets(&setup), MakeSceneUpdate(&setup)}) {
    if (!status.ok()) return status;
  }
  const std::string options_file = absl::GetFlag(FLAGS_options_file);
  if (!options_file.empty()) {
    absl::Status loaded = LoadMessageFile(options_file, setup.config.mutable_options());
    if (!loaded.ok()) return loaded;
  }
  if (const uint64_t seed = absl::GetFlag(FLAGS_seed); seed != 0) {
    setup.config.mutable_options()->set_seed(seed);
  }
  setup.config.set_deadline(absl::ToDoubleSeconds(absl::GetFlag(FLAGS_deadline)));
  setup.config.set_period(1.0 / absl::GetFlag(FLAGS_rate_hz));
  return setup;
}

// Solves for the first target from home and makes the result the stream's start
// configuration; the stream then starts settled instead of swinging in from home.
absl::Status ApproachStart(const std::shared_ptr<grpc::Channel>& channel, MockSetup* setup) {
  if (setup->targets.empty()) return absl::OkStatus();
  auto stub = v1::KinematicsService::NewStub(channel);
  grpc::ClientContext context;
  SetTimeout(context, absl::Seconds(10));
  v1::SolveRequest request;
  *request.mutable_arm() = setup->config.arm();
  *request.mutable_scene() = setup->config.scene();
  *request.mutable_options() = setup->config.options();
  *request.mutable_target() = setup->targets.front().position();
  if (setup->targets.front().has_orientation()) {
    *request.mutable_target_orientation() = setup->targets.front().orientation();
  }
  v1::SolveResponse response;
  grpc::Status status = stub->Solve(&context, request, &response);
  if (!status.ok()) {
    return absl::UnavailableError(absl::StrCat("approach: ", DescribeRpcError(status)));
  }
  if (response.state().status() != v1::STEP_STATUS_REACHED) {
    return absl::FailedPreconditionError(
        absl::StrCat("approach: the path's start is not reachable: ",
                     StepStatusName(response.state().status())));
  }
  *setup->config.mutable_initial_positions() = response.state().positions();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// The stream: a writer thread paces the targets while this thread reads and executes states.

using TrackStream = grpc::ClientReaderWriter<v1::TrackRequest, v1::TrackResponse>;

struct SendLog {
  explicit SendLog(size_t n) : sent_ns(n) {}
  std::vector<std::atomic<int64_t>> sent_ns;  // when target k was written
  std::atomic<size_t> targets_sent{0};
  std::atomic<size_t> scene_updates_sent{0};
  std::atomic<bool> stop{false};
};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

void WriteTargets(TrackStream& stream, const MockSetup& setup, SendLog& log) {
  const bool realtime = absl::GetFlag(FLAGS_realtime);
  const Clock::time_point start = Clock::now();
  for (size_t k = 0; k < setup.targets.size() && !log.stop; ++k) {
    if (setup.scene_update && k == setup.update_before) {
      v1::TrackRequest update;
      *update.mutable_scene_update() = *setup.scene_update;
      if (!stream.Write(update)) break;
      ++log.scene_updates_sent;
    }
    if (realtime) {
      std::this_thread::sleep_until(
          start + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(setup.targets[k].time())));
    }
    v1::TrackRequest request;
    *request.mutable_target() = setup.targets[k];
    request.mutable_target()->set_sent_unix_us(absl::ToUnixMicros(absl::Now()));
    log.sent_ns[k] = NowNs();
    if (!stream.Write(request)) break;
    ++log.targets_sent;
  }
  stream.WritesDone();
}

Report RunTrack(const std::shared_ptr<grpc::Channel>& channel, const MockSetup& setup,
                Executor& executor) {
  auto stub = v1::KinematicsService::NewStub(channel);
  grpc::ClientContext context;
  SetTimeout(context, absl::GetFlag(FLAGS_timeout));
  std::unique_ptr<TrackStream> stream = stub->Track(&context);
  Report report;
  v1::TrackRequest config;
  *config.mutable_config() = setup.config;
  SendLog log(setup.targets.size());
  if (stream->Write(config)) {
    std::thread writer([&] { WriteTargets(*stream, setup, log); });
    v1::TrackResponse response;
    v1::JointState previous;
    while (stream->Read(&response)) {
      const size_t index = report.states_received++;
      // The server applied the update before this target: so does the controller's model.
      if (setup.scene_update && index == setup.update_before) {
        executor.ApplySceneUpdate(*setup.scene_update);
      }
      executor.Execute(response.state(), index == 0 ? nullptr : &previous, index, &report);
      if (index < log.sent_ns.size()) {
        report.latencies_ms.push_back((NowNs() - log.sent_ns[index]) * 1e-6);
      }
      report.held_ms.push_back(response.held_us() * 1e-3);
      if (response.state().status() == v1::STEP_STATUS_LATE) ++report.late;
      previous = response.state();
    }
    log.stop = true;  // the server ended the stream: nothing more will be answered
    writer.join();
  }
  report.rpc_status = stream->Finish();
  report.targets_sent = log.targets_sent;
  report.scene_updates_sent = log.scene_updates_sent;
  return report;
}

// ---------------------------------------------------------------------------------------------
// Summary

double Percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t index = static_cast<size_t>(std::ceil(fraction * values.size())) - 1;
  return values[std::min(index, values.size() - 1)];
}

double ReachedFraction(const Report& report) {
  return report.states_received == 0 ? 0 : double(report.reached) / report.states_received;
}

bool Passed(const Report& report, const MockSetup& setup) {
  return report.rpc_status.ok() && report.targets_sent == setup.targets.size() &&
         report.states_received == report.targets_sent && report.out_of_order == 0 &&
         report.bad_limbs == 0 && report.bad_positions == 0 && report.limit_violations == 0 &&
         report.collisions == 0 && report.motion_collisions == 0 && report.missed_targets == 0 &&
         report.joint_jumps == 0 && report.servo_overruns == 0 && report.rate_overruns == 0 &&
         ReachedFraction(report) >= absl::GetFlag(FLAGS_min_reached_fraction);
}

void PrintSummary(const Report& report, bool passed) {
  std::printf("mock_arm summary\n");
  std::printf("targets_sent=%zu\n", report.targets_sent);
  std::printf("states_received=%zu\n", report.states_received);
  std::printf("scene_updates_sent=%zu\n", report.scene_updates_sent);
  std::printf("out_of_order=%zu\n", report.out_of_order);
  std::printf("bad_limbs=%zu\n", report.bad_limbs);
  std::printf("bad_positions=%zu\n", report.bad_positions);
  std::printf("limit_violations=%zu\n", report.limit_violations);
  std::printf("collisions=%zu\n", report.collisions);
  std::printf("motion_collisions=%zu\n", report.motion_collisions);
  std::printf("missed_targets=%zu\n", report.missed_targets);
  std::printf("joint_jumps=%zu\n", report.joint_jumps);
  std::printf("servo_overruns=%zu\n", report.servo_overruns);
  std::printf("rate_overruns=%zu\n", report.rate_overruns);
  std::printf("max_velocity_ratio=%.6g\n", report.max_velocity_ratio);
  std::printf("max_acceleration_ratio=%.6g\n", report.max_acceleration_ratio);
  std::printf("max_jerk_ratio=%.6g\n", report.max_jerk_ratio);
  std::printf("reached_fraction=%.6g\n", ReachedFraction(report));
  std::printf("max_hand_error=%.3e\n", report.max_hand_error);
  std::printf("max_rotation_error=%.3e\n", report.max_rotation_error);
  std::printf("max_limb_error=%.3e\n", report.max_limb_error);
  std::printf("max_position_error=%.3e\n", report.max_position_error);
  std::printf("max_limit_violation=%.3e\n", report.max_limit_violation);
  std::printf("max_joint_step=%.6g\n", report.max_joint_step);
  std::printf("max_tracking_error=%.6g\n", report.max_tracking_error);
  if (report.min_clearance) {
    std::printf("min_clearance=%.6g\n", *report.min_clearance);
  } else {
    std::printf("min_clearance=none\n");
  }
  if (report.min_motion_clearance) {
    std::printf("min_motion_clearance=%.6g\n", *report.min_motion_clearance);
  } else {
    std::printf("min_motion_clearance=none\n");
  }
  std::printf("latency_p50_ms=%.3f\n", Percentile(report.latencies_ms, 0.50));
  std::printf("latency_p99_ms=%.3f\n", Percentile(report.latencies_ms, 0.99));
  std::printf("held_p50_ms=%.3f\n", Percentile(report.held_ms, 0.50));
  std::printf("held_p99_ms=%.3f\n", Percentile(report.held_ms, 0.99));
  std::printf("late=%zu\n", report.late);
  std::printf("rpc_status=%s\n",
              absl::StatusCodeToString(static_cast<absl::StatusCode>(
                                           report.rpc_status.error_code()))
                  .c_str());
  std::printf("passed=%s\n", passed ? "true" : "false");
  std::fflush(stdout);
  if (!report.rpc_status.ok()) std::cerr << "mock_arm: " << DescribeRpcError(report.rpc_status);
}

int Main() {
  auto connected = ConnectFromFlags(absl::GetFlag(FLAGS_server));
  if (!connected.ok()) {
    std::cerr << "mock_arm: " << connected.status().message() << "\n";
    return 2;
  }
  std::shared_ptr<grpc::Channel> channel = *std::move(connected);
  auto setup = MakeSetup(channel);
  if (!setup.ok()) {
    std::cerr << "mock_arm: " << setup.status().message() << "\n";
    return 2;
  }
  if (absl::GetFlag(FLAGS_approach)) {
    absl::Status approached = ApproachStart(channel, &*setup);
    if (!approached.ok()) {
      std::cerr << "mock_arm: " << approached.message() << "\n";
      return EXIT_FAILURE;
    }
  }
  auto executor = CheckingExecutorFor(*setup);
  if (!executor.ok()) {
    std::cerr << "mock_arm: the arm or scene is invalid: " << executor.status().message() << "\n";
    return 2;
  }
  const Report report = RunTrack(channel, *setup, **executor);
  const bool passed = Passed(report, *setup);
  PrintSummary(report, passed);
  return passed ? EXIT_SUCCESS : EXIT_FAILURE;
}

}  // namespace
}  // namespace ikd::clients

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "mock_arm --arm=NAME|--arm_file=F [--scene=NAME] [--path=circle|line] [--rate_hz=100] "
      "[--duration=2] [--move_obstacle=ID --move_by=x,y,z]: a simulated controller streaming "
      "targets through KinematicsService.Track and checking every joint state");
  absl::ParseCommandLine(argc, argv);
  return ikd::clients::Main();
}
