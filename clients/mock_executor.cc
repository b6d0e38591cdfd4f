#include "mock_executor.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "client_util.h"
#include "conversions.h"
#include "ikd/ik/arm.h"
#include "ikd/robot/link_geometry.h"
#include "ikd/robot/robot.h"
#include "mock_geometry.h"
#include "mock_rates.h"
#include "robot_conversions.h"
#include "validation.h"

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
ABSL_FLAG(double, max_rotation_error, 1e-5,
          "check: largest tool rotation error of a REACHED state with an orientation (rad)");

namespace ikd::clients {
namespace {

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
class CheckingExecutor final : public Executor {
 public:
  static absl::StatusOr<std::unique_ptr<Executor>> Create(const MockSetup& setup) {
    server::ModelLimits limits;
    if (auto valid = server::SceneFromProto(setup.scene, "scene", limits); !valid.ok()) {
      return valid.status();
    }
    auto scene = mock::Scene::FromProto(setup.scene);
    if (!scene.ok()) return scene.status();
    if (setup.arm.has_robot()) {
      auto robot = server::RobotFromArmSpec(setup.arm, "arm");
      if (!robot.ok()) return robot.status();
      return std::unique_ptr<Executor>(
          new CheckingExecutor(setup, *std::move(robot), *std::move(scene)));
    }
    auto arm = server::ArmFromProto(setup.arm, "arm", limits);
    if (!arm.ok()) return arm.status();
    return std::unique_ptr<Executor>(
        new CheckingExecutor(setup, *std::move(arm), *std::move(scene)));
  }

  void ApplySceneUpdate(const v1::SceneUpdate& update) override {
    absl::Status applied = scene_.Apply(update);
    if (!applied.ok()) std::cerr << "mock_arm: local scene update failed: " << applied << "\n";
  }

  void Execute(const v1::JointState& state, const v1::JointState* previous, size_t index,
               Report* report) override {
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
      rotation_error =
          Eigen::AngleAxisd(X.linear().transpose() * wanted.toRotationMatrix()).angle();
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

  CheckingExecutor(const MockSetup& setup, ik::Arm arm, mock::Scene scene)
      : setup_(setup),
        arm_(std::move(arm)),
        scene_(std::move(scene)),
        servo_(setup.config.period(), ServoLimits(ChainDeclaredRates(*arm_))),
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

  CheckingExecutor(const MockSetup& setup, robot::Robot robot, mock::Scene scene)
      : setup_(setup),
        scene_(std::move(scene)),
        robot_(std::move(robot)),
        servo_(setup.config.period(), ServoLimits(RobotDeclaredRates(*robot_))),
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

  void CheckHand(const v1::JointState& state, const Eigen::Matrix3Xd& sites, Report* report) const {
    const double error = (sites.col(arm_->hand()) - server::FromProto(state.target())).norm();
    report->max_hand_error = std::max(report->max_hand_error, error);
    if (state.status() != v1::STEP_STATUS_REACHED) return;
    ++report->reached;
    if (!(error <= absl::GetFlag(FLAGS_max_hand_error))) ++report->missed_targets;
  }

  const MockSetup& setup_;
  std::optional<ik::Arm> arm_;         // a chain arm, or ...
  mock::Scene scene_;                  // (the controller's copy of the scene, either kind)
  std::optional<robot::Robot> robot_;  // ... an industrial arm
  std::vector<double> radii_;
  Servo servo_;
  mock::RateCheck rates_;  // the commanded stream against the declared limits
  std::vector<std::vector<robot::LinkShape>> link_shapes_;  // industrial arms: per link
  std::vector<std::pair<int, int>> link_pairs_;             // industrial arms: checked link pairs
};

}  // namespace

absl::StatusOr<std::unique_ptr<Executor>> CheckingExecutorFor(const MockSetup& setup) {
  return CheckingExecutor::Create(setup);
}

}  // namespace ikd::clients
