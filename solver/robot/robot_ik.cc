#include "ikd/robot/robot_ik.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include <Eigen/Cholesky>

#include "absl/strings/str_cat.h"
#include "ikd/robot/analytic_ik.h"
#include "ikd/robot/seed_atlas.h"
#include "motion.h"

namespace ikd::robot {

using constraints::ConstraintModel;
using constraints::ConstraintSolver;
using constraints::DistanceConstraint;
using constraints::MakeConstraintSolver;
using constraints::Method;
using constraints::ProjectionOptions;
using constraints::ProjectionOutcome;

namespace {

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

// Links closer to an obstacle than this many safety margins are pulled away in a path step's
// redundant directions (internal::PullFromObstacles; 3 and a pull of 1 did best on
// bench/paths' obstacle scenarios among buffers 2-5 and pulls 0.5-2).
constexpr double kClearanceBuffer = 3.0;

// Trial displacement of the obstacle avoidance at start, a fraction of the site spacing.
constexpr double kInitialSigmaFraction = 0.1;
// Candidate restart seeds per restart: the one whose tool is nearest the target is taken, a
// shorter path crosses fewer singularities and limits.
constexpr int kSeedCandidates = 16;

// Halvings of a step in an attempt from a start other than the given configuration, when
// another attempt may follow.
constexpr int kStartBisections = 2;

// How far the tool sites travel from pose `from` to the target: the path length StepTo steps.
double Travel(const Eigen::Isometry3d& from, const ToolTarget& target, double spacing) {
  double travel = (target.position - from.translation()).norm();
  if (target.orientation) {
    travel += spacing * internal::RotationAngle(from.linear(), target.orientation->toRotationMatrix());
  }
  return travel;
}

Eigen::VectorXd NearestRandomConfiguration(const Robot& robot, const ToolTarget& target,
                                           std::mt19937_64& rng) {
  Eigen::VectorXd best;
  double best_travel = std::numeric_limits<double>::infinity();
  for (int k = 0; k < kSeedCandidates; ++k) {
    Eigen::VectorXd q = internal::RandomConfiguration(robot, rng);
    const double travel = Travel(ToolPose(robot.spec(), q), target, robot.spacing());
    if (travel < best_travel) best_travel = travel, best = std::move(q);
  }
  return best;
}

// Steps on the way need the links only roughly (the next projection restores them from
// wherever they are); the last step is polished to the engine's full precision. 1e-5 rather
// than 1e-8 saves a Newton iteration in four (7-9% of a single pose's instructions).
constexpr double kStepTolerance = 1e-5;
constexpr double kFinalTolerance = 1e-12;
// A step projects by Newton's method: from a step of the spacing it converges in 3-4 iterations
// (the chord iteration took 13-17 at half the step, its rate set by the links' turn). On a
// path, a step that needs more is near a singularity and is bisected: more iterations there
// can land on another branch (a joint jump). A single-pose attempt only needs to get there:
// a higher cap lets such steps finish instead (robot_bench, 2000 targets: mean 149-189 us with
// 8 against 179-208 with 6, 202-237 with 5, 306-318 with 4). Since a projection whose
// violation grows stops early (ProjectionOptions::newton), 12 costs nothing in vain: 0-2%
// fewer instructions than 8, the same successes.
constexpr int kStepNewtonIterations = 6;
constexpr int kReachNewtonIterations = 12;

ProjectionOptions StepOptions(int iterations = kStepNewtonIterations) {
  ProjectionOptions projection;
  projection.tolerance = kStepTolerance;
  projection.max_iterations = iterations;
  projection.newton = true;
  return projection;
}

// The polish starts near the surface (1e-5): chord iterations converge in two or three there.
ProjectionOptions PolishOptions() {
  ProjectionOptions projection;
  projection.tolerance = kFinalTolerance;
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
  if (!std::isfinite(time_budget) || time_budget < 0.0) {
    return RangeError("time_budget", "finite and >= 0", time_budget);
  }
  if (trials_per_step < 0 || trials_per_step > 100000) {
    return RangeError("trials_per_step", "in [0, 100000]", trials_per_step);
  }
  const std::pair<const char*, double> nonnegative[] = {{"safety_margin", safety_margin},
                                                        {"clearance_weight", clearance_weight},
                                                        {"motion_weight", motion_weight}};
  for (const auto& [name, value] : nonnegative) {
    if (!std::isfinite(value) || value < 0.0) return RangeError(name, "finite and >= 0", value);
  }
  return absl::OkStatus();
}

absl::StatusOr<RobotTracker> RobotTracker::Create(const Robot& robot, const RobotIkOptions& options,
                                                  const Eigen::VectorXd& q0,
                                                  const planning::Scene* scene) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  if (q0.size() != robot.num_joints()) {
    return absl::InvalidArgumentError(absl::StrCat("seed must hold ", robot.num_joints(),
                                                   " joint values, got ", q0.size()));
  }
  if (!q0.allFinite()) return absl::InvalidArgumentError("seed must be finite");
  if (options.solver == IkSolver::kAnalytic && AnalyticIkOf(robot) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "solver is ANALYTIC but ", AnalyticIk::Create(robot.spec()).status().message()));
  }
  RobotTracker tracker(robot, options, Projectors{&robot.model(TargetMode::kPosition)},
                       Projectors{&robot.model(TargetMode::kPose)}, scene);
  tracker.Reset(q0);
  return tracker;
}

namespace {

// The matrix method with the tracker's fixed options: MakeConstraintSolver fails only on invalid
// options, which these are not.
std::unique_ptr<ConstraintSolver> MatrixProjector(const ConstraintModel& model,
                                                  const constraints::ProjectionOptions& options) {
  auto solver = MakeConstraintSolver(Method::kMatrix, model, options);
  assert(solver.ok());
  return *std::move(solver);
}

}  // namespace

ConstraintSolver& RobotTracker::Projectors::Step() {
  if (step_ == nullptr) step_ = MatrixProjector(*model, StepOptions());
  return *step_;
}

ConstraintSolver& RobotTracker::Projectors::Polish() {
  if (polish_ == nullptr) polish_ = MatrixProjector(*model, PolishOptions());
  return *polish_;
}

ConstraintSolver& RobotTracker::Projectors::Reach() {
  if (reach_ == nullptr) reach_ = MatrixProjector(*model, StepOptions(kReachNewtonIterations));
  return *reach_;
}

RobotTracker::RobotTracker(const Robot& robot, const RobotIkOptions& options, Projectors position,
                           Projectors pose, const planning::Scene* scene)
    : robot_(&robot),
      options_(options),
      position_(std::move(position)),
      pose_(std::move(pose)),
      scene_(scene),
      rng_(options.seed),
      motion_weights_(internal::MotionWeights(robot)),
      sigma_(kInitialSigmaFraction * robot.spacing()),
      bisection_limit_(options.max_bisections) {}

double RobotTracker::MinClearance(const Eigen::VectorXd& q) const {
  return internal::MinLinkClearance(*robot_, scene_, q);
}

void RobotTracker::Reset(const Eigen::VectorXd& q) {
  q_ = q;
  posture_ = q;
  sites_ = robot_->SitesFromAngles(q);
  last_interval_ = 0.0;  // a jump: nothing to extrapolate
}

bool RobotTracker::Step(const Path& path, double t0, double t1, int depth, RobotIkResult& result,
                        bool& limit_hit) {
  if (result.projections >= options_.max_steps) return false;
  // Predicted from the last step (a secant predictor) or a joint-space step, then the driven
  // tool sites placed.
  const double interval = (t1 - t0) * path.travel;
  const Eigen::Isometry3d X_step = Interpolate(path.start, path.goal, t1);
  Eigen::Matrix3Xd sites = sites_;
  if (solving_ && last_interval_ > 0.0) {
    sites += (interval / last_interval_) * last_motion_;
  } else if (solving_) {
    // The first step of a start: from the joint-space step (3-4 Newton iterations instead of
    // 5-8, and fewer failed first steps; a secant costs nothing and does as well after it).
    sites = robot_->SitesFromAngles(
        q_ + internal::ToolStep(*robot_, q_, X_step, path.mode,
                                Eigen::VectorXd::Ones(q_.size()), Eigen::VectorXd::Zero(q_.size())));
  } else {
    // A path's step: the least joint motion weighted by the velocity limits, drawn off the
    // joint limits in the redundant directions. A secant would carry the last step's motion
    // in the redundant directions on for ever (a drift that makes slow tools need fast joints).
    Eigen::VectorXd weights = motion_weights_, preferred;
    internal::AvoidLimits(*robot_, q_, interval / robot_->spacing(), weights, preferred);
    internal::PullToPosture(q_, posture_, interval / robot_->spacing(), preferred);
    if (internal::ChecksClearance(*robot_, scene_)) {
      internal::PullFromObstacles(*robot_, scene_, q_, kClearanceBuffer * options_.safety_margin,
                                  internal::SelfShift(kClearanceBuffer, options_.safety_margin),
                                  interval / robot_->spacing(), preferred);
    }
    sites = robot_->SitesFromAngles(
        q_ + internal::ToolStep(*robot_, q_, X_step, path.mode, weights, preferred));
  }
  const auto tool = robot_->ToolSitesFor(X_step);
  const auto& ids = robot_->tool_sites();
  const int driven = path.mode == TargetMode::kPose ? 4 : 1;
  for (int k = 0; k < driven; ++k) sites.col(ids[k]) = tool[k];
  // Vesely eq. 6-7 via the matrix method: the links of the current configuration carry the
  // first correction that restores every cluster with base and driven tool sites fixed; Newton
  // iterations (ProjectionOptions::newton) finish it.
  Projectors& projectors = ProjectorsFor(path.mode);
  ConstraintSolver& projector = solving_ ? projectors.Reach() : projectors.Step();
  auto summary = projector.ProjectPositions(sites_, sites);
  ++result.projections;
  if (summary.ok()) result.iterations += summary->iterations;
  if (!summary.ok() || !summary->converged()) {
    // Singular at the reference itself: a shorter step has the same reference.
    const bool singular_here = summary.ok() && summary->outcome == ProjectionOutcome::kSingular &&
                               summary->iterations == 0;
    if (depth >= bisection_limit_ || singular_here) return false;
    const double middle = 0.5 * (t0 + t1);
    return Step(path, t0, middle, depth + 1, result, limit_hit) &&
           Step(path, middle, t1, depth + 1, result, limit_hit);
  }
  Eigen::VectorXd q = robot_->AnglesFromSites(sites, &q_);
  if (robot_->LimitViolation(q) > 0.0) {
    if (!LockViolatedJoints(q, path.mode)) {
      limit_hit = true;
      return false;
    }
    return Step(path, t0, t1, depth, result, limit_hit);  // again, with the joints locked
  }
  last_motion_ = sites - sites_;
  last_interval_ = interval;
  const Eigen::VectorXd q_before = q_;
  q_ = std::move(q);
  sites_ = std::move(sites);
  AvoidObstacles(path.mode, q_before, result);
  return true;
}

bool RobotTracker::Polish(TargetMode mode, RobotIkResult& result) {
  Eigen::Matrix3Xd sites = sites_;
  auto summary = ProjectorsFor(mode).Polish().ProjectPositions(sites_, sites);
  ++result.projections;
  if (!summary.ok() || !summary->converged()) return false;
  result.iterations += summary->iterations;
  q_ = robot_->AnglesFromSites(sites, &q_);
  sites_ = std::move(sites);
  return true;
}

RobotTracker::Projectors& RobotTracker::ProjectorsFor(TargetMode mode) {
  if (locked_projectors_) return *locked_projectors_;
  return mode == TargetMode::kPose ? pose_ : position_;
}

bool RobotTracker::LockViolatedJoints(const Eigen::VectorXd& q, TargetMode mode) {
  for (int k = 0; k < robot_->num_joints(); ++k) {
    const auto& limits = robot_->spec().joints[k].limits;
    if (!limits || (q[k] >= limits->lower && q[k] <= limits->upper)) continue;
    const bool locked = std::any_of(lock_key_.begin(), lock_key_.end(),
                                    [k](int entry) { return entry / 2 == k; });
    if (locked) return false;
    lock_key_.push_back(2 * k + (q[k] > limits->upper ? 1 : 0));
  }
  // A lock takes one degree of freedom: beyond the arm's redundancy the constraints would
  // outnumber the freedoms (a singular set, whatever the configuration).
  const int redundancy = robot_->num_joints() - internal::ToolRows(mode);
  if (static_cast<int>(lock_key_.size()) > redundancy) return false;
  std::vector<int> key = lock_key_;
  key.push_back(mode == TargetMode::kPose ? 1 : 0);
  auto cached = locked_sets_.find(key);
  if (cached == locked_sets_.end()) {
    auto locked = BuildLockedSet(mode);
    if (!locked.ok()) return false;
    if (locked_sets_.size() >= kMaxLockedSets) locked_sets_.clear();
    cached = locked_sets_.emplace(std::move(key), *std::move(locked)).first;
  }
  locked_projectors_ = &cached->second.projectors;
  return true;
}

absl::StatusOr<RobotTracker::LockedSet> RobotTracker::BuildLockedSet(TargetMode mode) const {
  // Locked just inside the bound, so that the held angle reads as within the limits.
  constexpr double kInset = 1e-6;  // rad: far above the angle noise of a 1e-8 step projection
  // The lock's length depends on the bound alone (the clusters are rigid); read off q = 0, so
  // that a kept set is the one a fresh tracker would build, to the bit.
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(robot_->num_joints());
  const Eigen::Matrix3Xd sites = robot_->SitesFromAngles(zero);
  std::vector<DistanceConstraint> constraints = robot_->constraints();
  for (int entry : lock_key_) {
    const int k = entry / 2;
    const auto& limits = *robot_->spec().joints[k].limits;
    const double bound = entry % 2 == 1 ? limits.upper - kInset : limits.lower + kInset;
    constraints.push_back(robot_->JointLock(sites, zero, k, bound));
  }
  auto model = ConstraintModel::Create(robot_->model(mode).inverse_masses(), constraints);
  if (!model.ok()) return model.status();
  auto owned = std::make_unique<ConstraintModel>(*std::move(model));
  Projectors projectors{owned.get()};
  return LockedSet{std::move(owned), std::move(projectors)};
}

RobotIkResult RobotTracker::StepTo(const ToolTarget& target, double duration) {
  RobotIkResult result;
  const Eigen::VectorXd q_start = q_;
  move_start_ = q_;
  move_duration_ = duration;
  lock_key_.clear();
  locked_projectors_ = nullptr;
  const Eigen::Isometry3d start = robot_->ToolPoseFromSites(sites_);
  const Eigen::Isometry3d goal = internal::ToolGoal(target, start);
  // Tool sites sit `spacing` from the TCP: a turn by theta moves them by at most spacing theta.
  const double s = robot_->spacing();
  const Path path{start, goal, Travel(start, target, s), target.mode()};
  const double steps_needed = std::ceil(path.travel / (options_.max_step_fraction * s));
  // A path longer than the step budget (a target far out of reach) cannot be finished.
  if (!(steps_needed <= options_.max_steps)) {
    return Finish(target, q_start, duration, planning::StepStatus::kNotConverged,
                  std::move(result));
  }
  const int steps = std::max(1, static_cast<int>(steps_needed));
  bool limit_hit = false;
  for (int k = 1; k <= steps; ++k) {
    if (!Step(path, double(k - 1) / steps, double(k) / steps, 0, result, limit_hit)) {
      return Finish(target, q_start, duration,
                    limit_hit ? planning::StepStatus::kJointLimitBlocked
                              : planning::StepStatus::kNotConverged,
                    std::move(result));
    }
  }
  const bool polished = Polish(path.mode, result);
  return Finish(target, q_start, duration,
                polished ? planning::StepStatus::kReached : planning::StepStatus::kNotConverged,
                std::move(result));
}

RobotIkResult RobotTracker::Finish(const ToolTarget& target, const Eigen::VectorXd& q_start,
                                   double duration, planning::StepStatus status,
                                   RobotIkResult result, std::optional<double> clearance) const {
  result.q = q_;
  for (int k = 0; k < q_.size(); ++k) {
    const double change = std::abs(q_[k] - q_start[k]);
    result.max_joint_change = std::max(result.max_joint_change, change);
    const auto& limits = robot_->spec().joints[k].limits;
    if (duration > 0.0 && limits && std::isfinite(limits->max_velocity)) {
      result.velocity_ratio = std::max(result.velocity_ratio, change / (limits->max_velocity * duration));
    }
  }
  result.sites = sites_;
  // The verdict comes from forward kinematics of q, not from the sites the solver moved.
  std::tie(result.position_error, result.rotation_error) =
      internal::ToolErrors(*robot_, q_, target);
  const bool within = result.position_error <= options_.position_tolerance &&
                      result.rotation_error <= options_.rotation_tolerance &&
                      robot_->LimitViolation(q_) <= 0.0;
  if (status == planning::StepStatus::kReached && !within)
    status = planning::StepStatus::kNotConverged;
  result.min_clearance = clearance.has_value() ? *clearance : MinClearance(q_);
  if (status == planning::StepStatus::kReached && result.min_clearance < 0.0) {
    status = planning::StepStatus::kInCollision;
  }
  if (status == planning::StepStatus::kReached && result.velocity_ratio > 1.0) {
    status = planning::StepStatus::kVelocityLimited;
  }
  result.status = status;
  return result;
}

RobotIkResult RobotTracker::Solve(const ToolTarget& target) {
  if (std::optional<RobotIkResult> closed_form = SolveAnalytic(target)) return *closed_form;
  // Restart seeds and trials come from the options' seed alone, and the trials' step size
  // starts afresh: a solve does not depend on what the tracker did before (a batch's answers
  // are the unary Solve's).
  std::mt19937_64 rng(options_.seed);
  rng_.seed(options_.seed);
  sigma_ = kInitialSigmaFraction * robot_->spacing();
  // The nearest start alone first (most solves need no other; a search for more costs as much
  // again), the rest of the list when the first attempt fails.
  const Eigen::VectorXd given = q_;
  const Eigen::Isometry3d X_given = robot_->ToolPoseFromSites(sites_);
  std::vector<Start> starts = Starts(target, given, X_given, 1);
  starts.resize(1);
  const int listed = options_.starts == SolveStarts::kGivenThenRandom
                         ? 1
                         : 1 + std::min(kAtlasStarts, SeedAtlasOf(*robot_).size());
  RobotIkResult best;
  int projections = 0;
  const auto started = std::chrono::steady_clock::now();
  const auto over_budget = [&] {
    return options_.time_budget > 0.0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() >=
               options_.time_budget;
  };
  int attempt = 0;
  for (; attempt <= options_.max_restarts && (attempt == 0 || !over_budget()); ++attempt) {
    if (attempt == 1 && listed > 1) starts = Starts(target, given, X_given, kAtlasStarts);
    if (attempt >= static_cast<int>(starts.size())) {
      Reset(NearestRandomConfiguration(*robot_, target, rng));
    } else if (attempt > 0 || options_.starts == SolveStarts::kNearestFirst) {
      Reset(starts[attempt].q);  // (the given configuration first goes on as it is)
    }
    // A step that needs many halvings is cheaper left for the next start; the given
    // configuration (its branch is preferred) and the last attempt get them all.
    const bool given_start = attempt < static_cast<int>(starts.size()) && starts[attempt].given;
    bisection_limit_ = !given_start && attempt < options_.max_restarts
                           ? std::min(options_.max_bisections, kStartBisections)
                           : options_.max_bisections;
    solving_ = true;
    RobotIkResult result = StepTo(target);
    solving_ = false;
    bisection_limit_ = options_.max_bisections;
    projections += result.projections;
    result.restarts = attempt;
    result.projections = projections;
    if (result.status == planning::StepStatus::kReached) {
      posture_ = q_;  // a path from here keeps to the answer's posture
      return result;
    }
    if (attempt == 0 || result.position_error < best.position_error) best = std::move(result);
  }
  best.restarts = attempt - 1;
  best.projections = projections;
  Reset(best.q);  // the tracker stays where the answer is (its posture too)
  return best;
}

std::vector<RobotTracker::Start> RobotTracker::Starts(const ToolTarget& target,
                                                      const Eigen::VectorXd& given,
                                                      const Eigen::Isometry3d& X_given,
                                                      int count) const {
  if (options_.starts == SolveStarts::kGivenThenRandom) return {Start{given, true}};
  const SeedAtlas& atlas = SeedAtlasOf(*robot_);
  const double own = options_.starts == SolveStarts::kGivenFirst
                         ? -1.0  // before any entry
                         : atlas.SquaredDistance(X_given, target.position, target.orientation);
  std::vector<Start> starts;
  bool own_placed = false;
  for (const SeedAtlas::Neighbor& n : atlas.Nearest(target.position, target.orientation, count)) {
    if (!own_placed && own <= n.squared_distance) starts.push_back({given, true}), own_placed = true;
    starts.push_back({atlas.configuration(n.index), false});
  }
  if (!own_placed) starts.push_back({given, true});
  return starts;
}

absl::StatusOr<RobotIkResult> SolveRobotIk(const Robot& robot, const ToolTarget& target,
                                           const Eigen::VectorXd& seed,
                                           const RobotIkOptions& options) {
  if (!target.position.allFinite()) return absl::InvalidArgumentError("target.position must be finite");
  auto tracker = RobotTracker::Create(robot, options, seed);
  if (!tracker.ok()) return tracker.status();
  return tracker->Solve(target);
}

}  // namespace ikd::robot
