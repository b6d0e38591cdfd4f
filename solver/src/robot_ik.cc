#include "ikd/robot/robot_ik.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace ikd::robot {
namespace {

constexpr double kPi = 3.14159265358979323846;

absl::Status RangeError(const char* field, const char* bound, double got) {
  return absl::InvalidArgumentError(absl::StrCat(field, " must be ", bound, ", got ", got));
}

Eigen::Isometry3d Interpolate(const Eigen::Isometry3d& from, const Eigen::Isometry3d& to,
                              double t) {
  const Eigen::Quaterniond a(from.linear()), b(to.linear());
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  X.linear() = a.slerp(t, b).toRotationMatrix();
  X.translation() = (1.0 - t) * from.translation() + t * to.translation();
  return X;
}

double RotationAngle(const Eigen::Matrix3d& a, const Eigen::Matrix3d& b) {
  return Eigen::AngleAxisd(a.transpose() * b).angle();
}

// Candidate restart seeds per restart: the one whose tool is nearest the target is taken, a
// shorter path crosses fewer singularities and limits.
constexpr int kSeedCandidates = 16;

// A configuration drawn uniformly inside the limits ([-pi, pi] for a continuous joint).
Eigen::VectorXd RandomConfiguration(const Robot& robot, std::mt19937_64& rng) {
  Eigen::VectorXd q(robot.num_joints());
  for (int k = 0; k < q.size(); ++k) {
    const auto& limits = robot.spec().joints[k].limits;
    const double lo = limits ? limits->lower : -kPi, hi = limits ? limits->upper : kPi;
    q[k] = std::uniform_real_distribution<double>(lo, hi)(rng);
  }
  return q;
}

// How far the tool sites travel from pose `from` to the target: the path length MoveTo steps.
double Travel(const Eigen::Isometry3d& from, const ToolTarget& target, double spacing) {
  double travel = (target.position - from.translation()).norm();
  if (target.orientation) {
    travel += spacing * RotationAngle(from.linear(), target.orientation->toRotationMatrix());
  }
  return travel;
}

Eigen::VectorXd NearestRandomConfiguration(const Robot& robot, const ToolTarget& target,
                                           std::mt19937_64& rng) {
  Eigen::VectorXd best;
  double best_travel = std::numeric_limits<double>::infinity();
  for (int k = 0; k < kSeedCandidates; ++k) {
    Eigen::VectorXd q = RandomConfiguration(robot, rng);
    const double travel = Travel(ToolPose(robot.spec(), q), target, robot.spacing());
    if (travel < best_travel) best_travel = travel, best = std::move(q);
  }
  return best;
}

ProjectionOptions SolverOptions() {
  ProjectionOptions projection;
  projection.tolerance = 1e-12;
  projection.max_iterations = 50;
  return projection;
}

}  // namespace

absl::StatusOr<ToolTarget> ToolTarget::Position(const Eigen::Vector3d& position) {
  if (!position.allFinite()) return absl::InvalidArgumentError("target.position must be finite");
  ToolTarget target;
  target.position = position;
  return target;
}

absl::StatusOr<ToolTarget> ToolTarget::Pose(const Eigen::Vector3d& position,
                                            const Eigen::Quaterniond& orientation) {
  auto target = Position(position);
  if (!target.ok()) return target.status();
  if (!orientation.coeffs().allFinite()) {
    return absl::InvalidArgumentError("target.orientation must be finite");
  }
  if (std::abs(orientation.norm() - 1.0) > 1e-6) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target.orientation must be a unit quaternion (|norm - 1| <= 1e-6), got norm ",
        orientation.norm()));
  }
  target->orientation = orientation.normalized();
  return target;
}

absl::Status RobotIkOptions::Validate() const {
  if (!(position_tolerance > 0.0) || !std::isfinite(position_tolerance)) {
    return RangeError("position_tolerance", "finite and > 0", position_tolerance);
  }
  if (!(rotation_tolerance > 0.0) || !std::isfinite(rotation_tolerance)) {
    return RangeError("rotation_tolerance", "finite and > 0", rotation_tolerance);
  }
  if (!(max_step_fraction > 0.0) || max_step_fraction > 2.0) {
    return RangeError("max_step_fraction", "in (0, 2]", max_step_fraction);
  }
  if (max_bisections < 0 || max_bisections > 30) {
    return RangeError("max_bisections", "in [0, 30]", max_bisections);
  }
  if (max_restarts < 0 || max_restarts > 10000) {
    return RangeError("max_restarts", "in [0, 10000]", max_restarts);
  }
  if (max_steps < 1 || max_steps > 1000000) return RangeError("max_steps", "in [1, 1e6]", max_steps);
  return absl::OkStatus();
}

const char* RobotIkStatusName(RobotIkStatus status) {
  switch (status) {
    case RobotIkStatus::kSolved: return "SOLVED";
    case RobotIkStatus::kJointLimitBlocked: return "JOINT_LIMIT_BLOCKED";
    case RobotIkStatus::kNotConverged: return "NOT_CONVERGED";
  }
  return "UNKNOWN";
}

absl::StatusOr<RobotTracker> RobotTracker::Create(const Robot& robot, const RobotIkOptions& options,
                                                  const Eigen::VectorXd& q0) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  if (q0.size() != robot.num_joints()) {
    return absl::InvalidArgumentError(absl::StrCat("seed must hold ", robot.num_joints(),
                                                   " joint values, got ", q0.size()));
  }
  if (!q0.allFinite()) return absl::InvalidArgumentError("seed must be finite");
  auto position = MakeConstraintSolver(Method::kMatrix, robot.model(TargetMode::kPosition), SolverOptions());
  if (!position.ok()) return position.status();
  auto pose = MakeConstraintSolver(Method::kMatrix, robot.model(TargetMode::kPose), SolverOptions());
  if (!pose.ok()) return pose.status();
  RobotTracker tracker(robot, options, *std::move(position), *std::move(pose));
  tracker.Reset(q0);
  return tracker;
}

RobotTracker::RobotTracker(const Robot& robot, const RobotIkOptions& options,
                           std::unique_ptr<ConstraintSolver> position_solver,
                           std::unique_ptr<ConstraintSolver> pose_solver)
    : robot_(&robot),
      options_(options),
      position_solver_(std::move(position_solver)),
      pose_solver_(std::move(pose_solver)) {}

void RobotTracker::Reset(const Eigen::VectorXd& q) {
  q_ = q;
  sites_ = robot_->SitesFromAngles(q);
}

bool RobotTracker::Step(const Eigen::Isometry3d& from, const Eigen::Isometry3d& to,
                        TargetMode mode, int depth, RobotIkResult& result, bool& limit_hit) {
  if (result.projections >= options_.max_steps) return false;
  Eigen::Matrix3Xd sites = sites_;
  const auto tool = robot_->ToolSitesFor(to);
  const auto& ids = robot_->tool_sites();
  const int driven = mode == TargetMode::kPose ? 4 : 1;
  for (int k = 0; k < driven; ++k) sites.col(ids[k]) = tool[k];
  // Vesely eq. 6-7 via the matrix method: the links of the current configuration carry the
  // correction that restores every cluster with base and driven tool sites fixed.
  auto summary = SolverFor(mode).ProjectPositions(sites_, sites);
  ++result.projections;
  if (!summary.ok() || !summary->converged()) {
    if (depth >= options_.max_bisections) return false;
    const Eigen::Isometry3d middle = Interpolate(from, to, 0.5);
    return Step(from, middle, mode, depth + 1, result, limit_hit) &&
           Step(middle, to, mode, depth + 1, result, limit_hit);
  }
  Eigen::VectorXd q = robot_->AnglesFromSites(sites, &q_);
  if (robot_->LimitViolation(q) > 0.0) {
    if (!LockViolatedJoints(q, mode)) {
      limit_hit = true;
      return false;
    }
    return Step(from, to, mode, depth, result, limit_hit);  // again, with the joints locked
  }
  q_ = std::move(q);
  sites_ = std::move(sites);
  return true;
}

ConstraintSolver& RobotTracker::SolverFor(TargetMode mode) {
  if (locked_solver_) return *locked_solver_;
  return mode == TargetMode::kPose ? *pose_solver_ : *position_solver_;
}

bool RobotTracker::LockViolatedJoints(const Eigen::VectorXd& q, TargetMode mode) {
  // Locked just inside the bound, so that the held angle reads as within the limits.
  constexpr double kInset = 1e-9;
  for (int k = 0; k < robot_->num_joints(); ++k) {
    const auto& limits = robot_->spec().joints[k].limits;
    if (!limits || (q[k] >= limits->lower && q[k] <= limits->upper)) continue;
    if (std::find(locked_.begin(), locked_.end(), k) != locked_.end()) return false;
    const double bound = q[k] > limits->upper ? limits->upper - kInset : limits->lower + kInset;
    locked_.push_back(k);
    locks_.push_back(robot_->JointLock(sites_, q_, k, bound));
  }
  std::vector<DistanceConstraint> constraints = robot_->constraints();
  constraints.insert(constraints.end(), locks_.begin(), locks_.end());
  auto model = ConstraintModel::Create(robot_->model(mode).inverse_masses(), constraints);
  if (!model.ok()) return false;
  locked_model_ = std::make_unique<ConstraintModel>(*std::move(model));
  auto solver = MakeConstraintSolver(Method::kMatrix, *locked_model_, SolverOptions());
  if (!solver.ok()) return false;
  locked_solver_ = *std::move(solver);
  return true;
}

RobotIkResult RobotTracker::MoveTo(const ToolTarget& target) {
  RobotIkResult result;
  locked_.clear();
  locks_.clear();
  locked_solver_.reset();
  const Eigen::Isometry3d start = robot_->ToolPoseFromSites(sites_);
  Eigen::Isometry3d goal = start;
  goal.translation() = target.position;
  if (target.orientation) goal.linear() = target.orientation->toRotationMatrix();
  // Tool sites sit `spacing` from the TCP: a turn by theta moves them by at most spacing theta.
  const double s = robot_->spacing();
  const double travel = Travel(start, target, s);
  const int steps = std::max(1, static_cast<int>(std::ceil(travel / (options_.max_step_fraction * s))));
  bool limit_hit = false;
  for (int k = 1; k <= steps; ++k) {
    const Eigen::Isometry3d from = Interpolate(start, goal, double(k - 1) / steps);
    const Eigen::Isometry3d to = Interpolate(start, goal, double(k) / steps);
    if (!Step(from, to, target.mode(), 0, result, limit_hit)) {
      return Finish(target, limit_hit ? RobotIkStatus::kJointLimitBlocked : RobotIkStatus::kNotConverged,
                    std::move(result));
    }
  }
  return Finish(target, RobotIkStatus::kSolved, std::move(result));
}

RobotIkResult RobotTracker::Finish(const ToolTarget& target, RobotIkStatus status,
                                   RobotIkResult result) const {
  result.q = q_;
  result.sites = sites_;
  // The verdict comes from forward kinematics of q, not from the sites the solver moved.
  const Eigen::Isometry3d X_WT = ToolPose(robot_->spec(), q_);
  result.position_error = (X_WT.translation() - target.position).norm();
  result.rotation_error =
      target.orientation ? RotationAngle(X_WT.linear(), target.orientation->toRotationMatrix()) : 0.0;
  const bool within = result.position_error <= options_.position_tolerance &&
                      result.rotation_error <= options_.rotation_tolerance &&
                      robot_->LimitViolation(q_) <= 0.0;
  if (status == RobotIkStatus::kSolved && !within) status = RobotIkStatus::kNotConverged;
  result.status = status;
  return result;
}

absl::StatusOr<RobotIkResult> SolveRobotIk(const Robot& robot, const ToolTarget& target,
                                           const Eigen::VectorXd& seed,
                                           const RobotIkOptions& options) {
  if (!target.position.allFinite()) return absl::InvalidArgumentError("target.position must be finite");
  auto tracker = RobotTracker::Create(robot, options, seed);
  if (!tracker.ok()) return tracker.status();
  std::mt19937_64 rng(options.seed);
  RobotIkResult best;
  int projections = 0;
  for (int attempt = 0; attempt <= options.max_restarts; ++attempt) {
    if (attempt > 0) tracker->Reset(NearestRandomConfiguration(robot, target, rng));
    RobotIkResult result = tracker->MoveTo(target);
    projections += result.projections;
    result.restarts = attempt;
    result.projections = projections;
    if (result.status == RobotIkStatus::kSolved) return result;
    if (attempt == 0 || result.position_error < best.position_error) best = std::move(result);
  }
  best.restarts = options.max_restarts;
  best.projections = projections;
  return best;
}

}  // namespace ikd::robot
