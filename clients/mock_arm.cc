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
#include <random>
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
#include "conversions.h"
#include "ikd/ik/arm.h"
#include "ikd/robot/link_geometry.h"
#include "ikd/robot/robot.h"
#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "ikd/v1/model_service.grpc.pb.h"
#include "mock_geometry.h"
#include "mock_rates.h"
#include "robot_conversions.h"
#include "validation.h"

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
ABSL_FLAG(double, max_joint_step, 0.5, "check: largest joint position change per target (rad)");
ABSL_FLAG(double, limb_tolerance, 1e-6, "check: largest relative limb-length error");
ABSL_FLAG(double, max_hand_error, 1e-6, "check: largest hand error of a REACHED state (m)");
ABSL_FLAG(double, max_joint_rate, 0,
          "servo: joint rate limit (rad/s) of every joint; 0: each joint's declared limit "
          "(ArmSpec rate limits, robot joint ranges), 4 where the arm declares none");
ABSL_FLAG(double, max_joint_accel, 0,
          "servo: joint acceleration limit (rad/s^2) of every joint; 0: each joint's declared "
          "limit, 200 where the arm declares none");
ABSL_FLAG(double, max_joint_jerk, 0,
          "servo: joint jerk limit (rad/s^3) of every joint; 0: each joint's declared limit, "
          "none where the arm declares none");
ABSL_FLAG(bool, check_self_collision, false,
          "check: industrial arms' links against each other even where the arm does not ask for "
          "it (robot.check_self_collision; by default on for a URDF's collision geometry), "
          "every non-adjacent pair except those touching in every one of 10000 configurations "
          "drawn within the limits");
ABSL_FLAG(double, motion_check_step, 0.002,
          "check: the motion between two states is sampled at least this often (rad of the "
          "joint that turns most), and at least 16 times");
ABSL_FLAG(double, max_tracking_error, 0.05,
          "check: largest servo tracking error |commanded - actual| of any joint (rad)");
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
ABSL_FLAG(double, max_rotation_error, 1e-5,
          "check: largest tool rotation error of a REACHED state with an orientation (rad)");
ABSL_FLAG(bool, approach, true,
          "before tracking, move to the path's start (KinematicsService.Solve) and start the "
          "stream from there, as a controller moves to the start of a Cartesian path first");

namespace ikd::clients {
namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Set-up: the arm (its limb lengths are needed for the checks), scene and targets.

struct Setup {
  v1::TrackConfig config;
  v1::ArmSpec arm;      // what the server solves with, for the checks
  v1::SceneSpec scene;  // empty: free space
  std::vector<v1::TrackTarget> targets;
  std::optional<v1::SceneUpdate> scene_update;
  size_t update_before = 0;  // index of the first target after the scene update
};

absl::Status ResolveArm(const std::shared_ptr<grpc::Channel>& channel, Setup* setup) {
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

absl::Status ResolveScene(const std::shared_ptr<grpc::Channel>& channel, Setup* setup) {
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

absl::Status MakeTargets(Setup* setup) {
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

absl::Status MakeSceneUpdate(Setup* setup) {
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

absl::StatusOr<Setup> MakeSetup(const std::shared_ptr<grpc::Channel>& channel) {
  Setup setup;
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
absl::Status ApproachStart(const std::shared_ptr<grpc::Channel>& channel, Setup* setup) {
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
// Executing the returned states: the checks a controller would make before moving motors.

struct Report {
  size_t targets_sent = 0;
  size_t states_received = 0;
  size_t scene_updates_sent = 0;
  size_t out_of_order = 0;       // states whose time or target differs from the one sent there
  size_t bad_limbs = 0;          // states whose limbs are not their lengths
  size_t bad_positions = 0;      // joint positions that are not the angles of the sites
  size_t limit_violations = 0;   // states beyond a joint limit
  size_t collisions = 0;         // states with a limb inside an obstacle or another limb
  size_t motion_collisions = 0;  // clear states whose motion from a clear previous state
                                 // passes through an obstacle or another limb
  size_t missed_targets = 0;     // REACHED states whose hand is not on the target (or, with
                                 // an orientation, not turned as asked)
  size_t joint_jumps = 0;        // states with a joint step above --max_joint_step
  size_t servo_overruns = 0;     // control ticks with tracking error above the bound
  size_t rate_overruns = 0;      // states whose motion passes a declared velocity,
                                 // acceleration or jerk limit (mock_rates.h)
  double max_velocity_ratio = 0, max_acceleration_ratio = 0, max_jerk_ratio = 0;  // of them
  size_t reached = 0;
  size_t late = 0;  // LATE states (TrackConfig.deadline)
  double max_hand_error = 0;
  double max_rotation_error = 0; // rad, industrial arms with an orientation
  double max_limb_error = 0;     // relative
  double max_position_error = 0; // rad, reported positions vs angles of the sites
  double max_limit_violation = 0;
  double max_joint_step = 0;     // rad
  double max_tracking_error = 0; // rad, servo
  std::optional<double> min_clearance;  // computed here from the sites and the mock's scene
  std::optional<double> min_motion_clearance;  // the same, inside the motions between states
  std::vector<double> latencies_ms;
  std::vector<double> held_ms;  // TrackResponse.held_us: the server's share of each round trip
  grpc::Status rpc_status;
};

// Angle differences are taken modulo 2 pi: a planar first-limb angle going from pi to -pi has
// moved by a little, not by 2 pi.
double AngleDifference(double a, double b) { return std::remainder(a - b, 2 * M_PI); }

double JointStep(const v1::JointState& state, const v1::JointState* previous) {
  if (previous == nullptr || previous->positions_size() != state.positions_size()) return 0;
  double largest = 0;
  for (int j = 0; j < state.positions_size(); ++j) {
    const double step = AngleDifference(state.positions(j), previous->positions(j));
    largest = std::max(largest, std::abs(step));
  }
  return largest;
}

bool AnswersTarget(const v1::JointState& state, const v1::TrackTarget& target) {
  return state.time() == target.time() && Distance(state.target(), target.position()) == 0;
}

// The servo's limits of one joint.
struct ServoLimit {
  double rate = 0;         // rad/s
  double accel = 0;        // rad/s^2
  double jerk = INFINITY;  // rad/s^3
};

constexpr ServoLimit kUndeclaredServo{4.0, 200.0, INFINITY};

// A joint's servo limit: the flags when given, else the declared limit (+inf: none declared).
ServoLimit ServoFor(const mock::DeclaredRate& declared) {
  const double rate = absl::GetFlag(FLAGS_max_joint_rate);
  const double accel = absl::GetFlag(FLAGS_max_joint_accel);
  const double jerk = absl::GetFlag(FLAGS_max_joint_jerk);
  return {rate > 0                           ? rate
          : std::isfinite(declared.velocity) ? declared.velocity
                                             : kUndeclaredServo.rate,
          accel > 0                              ? accel
          : std::isfinite(declared.acceleration) ? declared.acceleration
                                                 : kUndeclaredServo.accel,
          jerk > 0 ? jerk : declared.jerk};
}

// Joints that follow commanded positions under rate, acceleration and jerk limits: each tick
// the velocity moves toward the one that would close the error in one tick, by at most
// accel * dt, with the acceleration changing by at most jerk * dt, and is clamped to the rate
// limit (a first-order servo with saturation).
class Servo {
 public:
  Servo(double dt, std::vector<ServoLimit> limits) : dt_(dt), limits_(std::move(limits)) {}

  // Moves toward `command` for one tick; returns the largest |command - actual| after it.
  double Tick(const google::protobuf::RepeatedField<double>& command) {
    if (actual_.size() != static_cast<size_t>(command.size())) {  // first command: start there
      actual_.assign(command.begin(), command.end());
      velocity_.assign(command.size(), 0.0);
      acceleration_.assign(command.size(), 0.0);
      return 0;
    }
    double worst = 0;
    for (size_t j = 0; j < actual_.size(); ++j) {
      const double wanted = AngleDifference(command[j], actual_[j]) / dt_;
      const ServoLimit& limit = limits_[std::min(j, limits_.size() - 1)];
      double a = std::clamp((wanted - velocity_[j]) / dt_, -limit.accel, limit.accel);
      a = std::clamp(a, acceleration_[j] - limit.jerk * dt_, acceleration_[j] + limit.jerk * dt_);
      const double before = velocity_[j];
      velocity_[j] = std::clamp(velocity_[j] + a * dt_, -limit.rate, limit.rate);
      acceleration_[j] = (velocity_[j] - before) / dt_;
      actual_[j] += velocity_[j] * dt_;
      worst = std::max(worst, std::abs(AngleDifference(command[j], actual_[j])));
    }
    return worst;
  }

 private:
  double dt_;
  std::vector<ServoLimit> limits_;  // per joint position
  std::vector<double> actual_, velocity_, acceleration_;
};

// The controller's own model of the arm and of the scene (updated as the stream updates it).
// The input is validated as the server validates it; the scene's obstacles and their
// clearances are the mock's own (mock::Scene).
class Executor {
 public:
  static absl::StatusOr<Executor> Create(const Setup& setup) {
    server::ModelLimits limits;
    if (auto valid = server::SceneFromProto(setup.scene, "scene", limits); !valid.ok()) {
      return valid.status();
    }
    auto scene = mock::Scene::FromProto(setup.scene);
    if (!scene.ok()) return scene.status();
    if (setup.arm.has_robot()) {
      auto robot = server::RobotFromArmSpec(setup.arm, "arm");
      if (!robot.ok()) return robot.status();
      return Executor(setup, *std::move(robot), *std::move(scene));
    }
    auto arm = server::ArmFromProto(setup.arm, "arm", limits);
    if (!arm.ok()) return arm.status();
    return Executor(setup, *std::move(arm), *std::move(scene));
  }

  void ApplySceneUpdate(const v1::SceneUpdate& update) {
    absl::Status applied = scene_.Apply(update);
    if (!applied.ok()) std::cerr << "mock_arm: local scene update failed: " << applied << "\n";
  }

  void Execute(const v1::JointState& state, const v1::JointState* previous, size_t index,
               Report* report) {
    if (index >= setup_.targets.size() || !AnswersTarget(state, setup_.targets[index])) {
      ++report->out_of_order;
    }
    if (robot_) {
      CheckRobot(state, index < setup_.targets.size() ? &setup_.targets[index] : nullptr, report);
    } else if (!CheckChain(state, report)) {
      return;
    }
    if (previous != nullptr) CheckMotion(*previous, state, report);
    CheckRates(state, previous, report);
    const double step = JointStep(state, previous);
    report->max_joint_step = std::max(report->max_joint_step, step);
    if (step > absl::GetFlag(FLAGS_max_joint_step)) ++report->joint_jumps;
    const double tracking = servo_.Tick(state.positions());
    report->max_tracking_error = std::max(report->max_tracking_error, tracking);
    if (tracking > absl::GetFlag(FLAGS_max_tracking_error)) ++report->servo_overruns;
  }

 private:
  // The chain arm's checks from the sites; false when the state has the wrong shape.
  bool CheckChain(const v1::JointState& state, Report* report) {
    if (state.sites_size() != arm_->num_sites()) {
      ++report->bad_limbs;
      report->max_limb_error = INFINITY;
      return false;
    }
    const Eigen::Matrix3Xd sites = Sites(state);
    CheckLimbs(sites, report);
    CheckPositions(state, sites, report);
    CheckLimits(sites, report);
    CheckClearance(sites, report);
    CheckHand(state, sites, report);
    return true;
  }

  // An industrial arm's checks with the controller's own robot model: the link clusters keep
  // their distances, the joint values are the angles of the sites and inside the limits, the
  // link capsules (the arm's shapes placed by forward kinematics) stay out of the obstacles, and a
  // REACHED state's forward kinematics (the DH/URDF chain, not the sites) puts the tool on the
  // target, turned as asked.
  void CheckRobot(const v1::JointState& state, const v1::TrackTarget* target, Report* report) {
    const robot::Robot& robot = *robot_;
    if (state.sites_size() != robot.num_sites() || state.positions_size() != robot.num_joints()) {
      ++report->bad_limbs;
      report->max_limb_error = INFINITY;
      return;
    }
    const Eigen::Matrix3Xd sites = Sites(state);
    const double limb_error = robot.model(robot::TargetMode::kPose).MaxRelativeViolation(sites);
    report->max_limb_error = std::max(report->max_limb_error, limb_error);
    if (!(limb_error <= absl::GetFlag(FLAGS_limb_tolerance))) ++report->bad_limbs;
    const Eigen::VectorXd q =
        Eigen::Map<const Eigen::VectorXd>(state.positions().data(), state.positions_size());
    const double position_error = (robot.AnglesFromSites(sites, &q) - q).cwiseAbs().maxCoeff();
    report->max_position_error = std::max(report->max_position_error, position_error);
    if (!(position_error <= 1e-6)) ++report->bad_positions;
    const double violation = std::max(0.0, robot.LimitViolation(q));
    report->max_limit_violation = std::max(report->max_limit_violation, violation);
    if (!(violation <= 1e-9)) ++report->limit_violations;
    CheckRobotClearance(q, report);
    const Eigen::Isometry3d X = robot::ToolPose(robot.spec(), q);
    const double hand_error = (X.translation() - server::FromProto(state.target())).norm();
    report->max_hand_error = std::max(report->max_hand_error, hand_error);
    double rotation_error = 0.0;
    if (target != nullptr && target->has_orientation()) {
      const Eigen::Quaterniond wanted = server::FromProto(target->orientation()).normalized();
      rotation_error = Eigen::AngleAxisd(X.linear().transpose() * wanted.toRotationMatrix()).angle();
      report->max_rotation_error = std::max(report->max_rotation_error, rotation_error);
    }
    if (state.status() != v1::STEP_STATUS_REACHED) return;
    ++report->reached;
    if (!(hand_error <= absl::GetFlag(FLAGS_max_hand_error)) ||
        !(rotation_error <= absl::GetFlag(FLAGS_max_rotation_error))) {
      ++report->missed_targets;
    }
  }

  // The commanded motion against the declared limits (mock_rates.h): chain angles by their
  // difference modulo 2 pi, as the servo turns them.
  void CheckRates(const v1::JointState& state, const v1::JointState* previous, Report* report) {
    const int n = state.positions_size();
    Eigen::VectorXd step = Eigen::VectorXd::Zero(n);
    if (previous != nullptr && previous->positions_size() == n) {
      for (int j = 0; j < n; ++j) {
        step[j] = robot_ ? state.positions(j) - previous->positions(j)
                         : AngleDifference(state.positions(j), previous->positions(j));
      }
    }
    if (rates_.Observe(state.time(), step)) ++report->rate_overruns;
    report->max_velocity_ratio = rates_.max_velocity_ratio();
    report->max_acceleration_ratio = rates_.max_acceleration_ratio();
    report->max_jerk_ratio = rates_.max_jerk_ratio();
  }

  // The motion from `from` to `to` the servo is commanded through: every joint linearly (chain
  // angles by their difference modulo 2 pi, as the servo turns them and the server unwraps
  // them), sampled inside at least every --motion_check_step rad. Counted only between two
  // states clear in the current scene: a state inside an obstacle is counted by itself, and
  // a scene update may move an obstacle onto the arm, which no answer can undo.
  void CheckMotion(const v1::JointState& from, const v1::JointState& to, Report* report) const {
    const int n = to.positions_size();
    if (from.positions_size() != n || n == 0) return;
    Eigen::VectorXd q_a(n), dq(n);
    for (int j = 0; j < n; ++j) {
      q_a[j] = from.positions(j);
      dq[j] = robot_ ? to.positions(j) - from.positions(j)
                     : AngleDifference(to.positions(j), from.positions(j));
    }
    if (!(ClearanceAt(q_a) >= 0) || !(ClearanceAt(q_a + dq) >= 0)) return;
    const double least =
        mock::LeastClearanceInside(q_a, dq, absl::GetFlag(FLAGS_motion_check_step),
                                   [this](const Eigen::VectorXd& q) { return ClearanceAt(q); });
    if (std::isfinite(least)) {
      report->min_motion_clearance =
          std::min(report->min_motion_clearance.value_or(INFINITY), least);
    }
    if (!(least >= 0)) ++report->motion_collisions;
  }

  // The least clearance of the arm at joint positions q (obstacles and, chains, limb to limb);
  // -infinity where the positions are no configuration of the arm.
  double ClearanceAt(const Eigen::VectorXd& q) const {
    if (robot_) return RobotClearance(q);
    auto sites = arm_->SitesFromAngles(std::vector<double>(q.data(), q.data() + q.size()));
    return sites.ok() ? ChainClearance(*sites) : -INFINITY;
  }

  Executor(const Setup& setup, ik::Arm arm, mock::Scene scene)
      : setup_(setup),
        arm_(std::move(arm)),
        scene_(std::move(scene)),
        servo_(1.0 / absl::GetFlag(FLAGS_rate_hz), ServoLimits(ChainDeclaredRates(*arm_))),
        rates_(ChainDeclaredRates(*arm_)) {
    for (const auto& limb : arm_->spec().limbs) radii_.push_back(limb.radius);
  }
  double RobotClearance(const Eigen::VectorXd& q) const {
    const mock::LinkBodies bodies = RobotBodies(robot_->spec(), link_shapes_, q);
    double clearance = mock::LinkPairsClearance(bodies, link_pairs_);
    for (const auto& link : bodies) {
      for (const mock::LinkCapsule& c : link) {
        clearance = std::min(clearance, scene_.MinClearance(c.a, c.b, c.radius));
      }
    }
    return clearance;
  }

  // The links' capsules in the world at q: each link's shapes (robot::LinkShapesOf, in its own
  // frame) placed by forward kinematics.
  static mock::LinkBodies RobotBodies(const robot::ChainSpec& spec,
                                      const std::vector<std::vector<robot::LinkShape>>& shapes,
                                      const Eigen::VectorXd& q) {
    const std::vector<Eigen::Isometry3d> poses = robot::LinkPoses(spec, q);
    mock::LinkBodies bodies(poses.size());
    for (size_t k = 0; k < poses.size(); ++k) {
      for (const robot::LinkShape& shape : shapes[k]) {
        bodies[k].push_back({poses[k] * shape.a, poses[k] * shape.b, shape.radius});
      }
    }
    return bodies;
  }

  void CheckRobotClearance(const Eigen::VectorXd& q, Report* report) const {
    const double clearance = RobotClearance(q);
    if (std::isfinite(clearance)) {
      report->min_clearance = std::min(report->min_clearance.value_or(INFINITY), clearance);
    }
    if (clearance < 0) ++report->collisions;
  }

  Executor(const Setup& setup, robot::Robot robot, mock::Scene scene)
      : setup_(setup),
        scene_(std::move(scene)),
        robot_(std::move(robot)),
        servo_(1.0 / absl::GetFlag(FLAGS_rate_hz), ServoLimits(RobotDeclaredRates(*robot_))),
        rates_(RobotDeclaredRates(*robot_)),
        link_shapes_(robot::LinkShapesOf(robot_->spec())),
        link_pairs_(RobotLinkPairs(*robot_, link_shapes_)) {}

  // The link pairs the controller checks against each other (mock::LinkPairsToCheck over
  // 10000 configurations drawn within the joint limits, its own draw); none where the arm
  // checks no self-collision (ChainSpec::ChecksSelfCollision) and --check_self_collision is
  // off, nor where every capsule is a line.
  static std::vector<std::pair<int, int>> RobotLinkPairs(
      const robot::Robot& robot, const std::vector<std::vector<robot::LinkShape>>& shapes) {
    const robot::ChainSpec& spec = robot.spec();
    if (!robot::HasLinkVolume(spec) ||
        !(spec.ChecksSelfCollision() || absl::GetFlag(FLAGS_check_self_collision))) {
      return {};
    }
    std::mt19937_64 rng(2);
    auto random_links = [&] {
      Eigen::VectorXd q(robot.num_joints());
      for (int j = 0; j < robot.num_joints(); ++j) {
        const auto& limits = spec.joints[j].limits;
        q[j] = std::uniform_real_distribution<double>(limits ? limits->lower : -M_PI,
                                                      limits ? limits->upper : M_PI)(rng);
      }
      return RobotBodies(spec, shapes, q);
    };
    return mock::LinkPairsToCheck(robot.num_joints(), 10000, random_links);
  }

  // Per joint position (chain arms: per angle) the limits the arm declares.
  static std::vector<mock::DeclaredRate> ChainDeclaredRates(const ik::Arm& arm) {
    std::vector<mock::DeclaredRate> rates;
    for (int j = 0; j < arm.num_angles(); ++j) {
      const ik::JointRateLimit& declared = arm.RateLimit(arm.JointOfAngle(j));
      rates.push_back({declared.max_velocity, declared.max_acceleration, declared.max_jerk});
    }
    return rates;
  }

  static std::vector<mock::DeclaredRate> RobotDeclaredRates(const robot::Robot& robot) {
    std::vector<mock::DeclaredRate> rates;
    for (int j = 0; j < robot.num_joints(); ++j) {
      const std::optional<robot::JointLimits>& declared = robot.spec().joints[j].limits;
      rates.push_back(declared ? mock::DeclaredRate{declared->max_velocity,
                                                    declared->max_acceleration, declared->max_jerk}
                               : mock::DeclaredRate{});
    }
    return rates;
  }

  static std::vector<ServoLimit> ServoLimits(const std::vector<mock::DeclaredRate>& declared) {
    std::vector<ServoLimit> limits;
    for (const mock::DeclaredRate& rate : declared) limits.push_back(ServoFor(rate));
    return limits;
  }

  static Eigen::Matrix3Xd Sites(const v1::JointState& state) {
    Eigen::Matrix3Xd sites(3, state.sites_size());
    for (int k = 0; k < state.sites_size(); ++k) sites.col(k) = server::FromProto(state.sites(k));
    return sites;
  }

  void CheckLimbs(const Eigen::Matrix3Xd& sites, Report* report) const {
    double worst = 0;
    for (int k = 0; k < arm_->num_limbs(); ++k) {
      const double length = arm_->spec().limbs[k].length;
      worst = std::max(worst, std::abs((sites.col(k + 1) - sites.col(k)).norm() - length) / length);
    }
    report->max_limb_error = std::max(report->max_limb_error, worst);
    if (!(worst <= absl::GetFlag(FLAGS_limb_tolerance))) ++report->bad_limbs;
  }

  void CheckPositions(const v1::JointState& state, const Eigen::Matrix3Xd& sites,
                      Report* report) const {
    const std::vector<double> angles = arm_->AnglesFromSites(sites);
    double worst = state.positions_size() == static_cast<int>(angles.size()) ? 0 : INFINITY;
    for (size_t j = 0; j < angles.size() && j < static_cast<size_t>(state.positions_size()); ++j) {
      worst = std::max(worst, std::abs(AngleDifference(state.positions(j), angles[j])));
    }
    report->max_position_error = std::max(report->max_position_error, worst);
    if (!(worst <= 1e-6)) ++report->bad_positions;
  }

  void CheckLimits(const Eigen::Matrix3Xd& sites, Report* report) const {
    const double violation = arm_->LimitViolation(sites);
    report->max_limit_violation = std::max(report->max_limit_violation, violation);
    if (!(violation <= 1e-9)) ++report->limit_violations;
  }

  double ChainClearance(const Eigen::Matrix3Xd& sites) const {
    double clearance = mock::ChainSelfClearance(sites, radii_);
    for (int k = 0; k < arm_->num_limbs(); ++k) {
      clearance =
          std::min(clearance, scene_.MinClearance(sites.col(k), sites.col(k + 1), radii_[k]));
    }
    return clearance;
  }

  void CheckClearance(const Eigen::Matrix3Xd& sites, Report* report) const {
    const double clearance = ChainClearance(sites);
    if (std::isfinite(clearance)) {
      report->min_clearance = std::min(report->min_clearance.value_or(INFINITY), clearance);
    }
    if (clearance < 0) ++report->collisions;
  }

  void CheckHand(const v1::JointState& state, const Eigen::Matrix3Xd& sites,
                 Report* report) const {
    const double error = (sites.col(arm_->hand()) - server::FromProto(state.target())).norm();
    report->max_hand_error = std::max(report->max_hand_error, error);
    if (state.status() != v1::STEP_STATUS_REACHED) return;
    ++report->reached;
    if (!(error <= absl::GetFlag(FLAGS_max_hand_error))) ++report->missed_targets;
  }

  const Setup& setup_;
  std::optional<ik::Arm> arm_;         // a chain arm, or ...
  mock::Scene scene_;                  // (the controller's copy of the scene, either kind)
  std::optional<robot::Robot> robot_;  // ... an industrial arm
  std::vector<double> radii_;
  Servo servo_;
  mock::RateCheck rates_;  // the commanded stream against the declared limits
  std::vector<std::vector<robot::LinkShape>> link_shapes_;  // industrial arms: per link
  std::vector<std::pair<int, int>> link_pairs_;  // industrial arms: checked link pairs
};

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

void WriteTargets(TrackStream& stream, const Setup& setup, SendLog& log) {
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

Report RunTrack(const std::shared_ptr<grpc::Channel>& channel, const Setup& setup,
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

bool Passed(const Report& report, const Setup& setup) {
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
  auto executor = Executor::Create(*setup);
  if (!executor.ok()) {
    std::cerr << "mock_arm: the arm or scene is invalid: " << executor.status().message() << "\n";
    return 2;
  }
  const Report report = RunTrack(channel, *setup, *executor);
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
