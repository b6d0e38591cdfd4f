#include "ik_conversions.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "conversions.h"
#include "errors.h"
#include "ikd/world.h"

namespace ikd::server {
namespace {

ik::Interpolation InterpolationFromProto(v1::Interpolation interpolation) {
  return interpolation == v1::INTERPOLATION_CUBIC ? ik::Interpolation::kCubic
                                                  : ik::Interpolation::kLinear;
}

absl::StatusOr<ik::Trajectory> WaypointsFromProto(const v1::WaypointPath& path,
                                                  const std::string& prefix) {
  if (path.interpolation() != v1::INTERPOLATION_LINEAR &&
      path.interpolation() != v1::INTERPOLATION_CUBIC) {
    return FieldViolation(Below(prefix, "interpolation"),
                          "must be INTERPOLATION_LINEAR or INTERPOLATION_CUBIC");
  }
  std::vector<ik::Waypoint> waypoints;
  waypoints.reserve(path.waypoints_size());
  for (const v1::Waypoint& w : path.waypoints()) {
    waypoints.push_back({w.time(), FromProto(w.position())});
  }
  absl::StatusOr<ik::Trajectory> out =
      ik::Trajectory::FromWaypoints(std::move(waypoints), InterpolationFromProto(path.interpolation()));
  // The solver names "waypoints[k].time", the field of WaypointPath: the request path is
  // "trajectory.waypoints.waypoints[k].time".
  return out.ok() ? out : AtRequestPath(out.status(), prefix);
}

absl::StatusOr<ik::Trajectory> PolylineFromProto(const v1::PolylinePath& path,
                                                 const std::string& prefix) {
  std::vector<Eigen::Vector3d> points;
  points.reserve(path.points_size());
  for (const v1::Vector3& p : path.points()) points.push_back(FromProto(p));
  absl::StatusOr<ik::Trajectory> out = ik::Trajectory::Polyline(std::move(points), path.speed());
  return out.ok() ? out : AtRequestPath(out.status(), prefix);
}

}  // namespace

absl::Status AtRequestPath(const absl::Status& solver_status, const std::string& prefix) {
  return SolverFieldViolation(solver_status,
                              [&](const std::string& field) { return Below(prefix, field); });
}

constexpr int kMaxPatience = 100000;  // ik::IkOptions::Validate's bound

int TrialsFromProto(const v1::IkOptions& options, int default_trials) {
  if (options.no_trials()) return 0;
  return options.trials_per_step() != 0 ? options.trials_per_step() : default_trials;
}

absl::StatusOr<ik::IkOptions> IkOptionsFromProto(const v1::IkOptions& in,
                                                 const std::string& path) {
  ik::IkOptions out;
  if (in.seed() != 0) out.seed = in.seed();
  out.trials_per_step = TrialsFromProto(in, out.trials_per_step);
  // The wire's -1 is the solver's 0 ("never stop"), and its 0 the default: the solver's bound
  // would name values the client cannot send.
  if (in.patience() < -1 || in.patience() > kMaxPatience) {
    return FieldViolation(Below(path, "patience"),
                          absl::StrCat("must be -1 (never stop), 0 (the default) or in [1, ",
                                       kMaxPatience, "], got ", in.patience()));
  }
  if (in.patience() != 0) out.patience = in.patience() == -1 ? 0 : in.patience();
  if (!v1::IkSolver_IsValid(in.solver())) {
    return FieldViolation(Below(path, "solver"),
                          absl::StrCat("must be AUTO, ANALYTIC or NUMERIC, got ", in.solver()));
  }
  if (in.solver() == v1::IK_SOLVER_ANALYTIC) {
    return FieldViolation(Below(path, "solver"),
                          "ANALYTIC is for industrial arms (ArmSpec.robot); a chain arm is solved "
                          "by its constraint tracker: leave it AUTO or set NUMERIC");
  }
  out.explore_unconstrained = in.explore_unconstrained();
  out.optimize_path = !in.no_path_optimization();
  if (in.safety_margin() != 0) out.safety_margin = in.safety_margin();
  if (in.max_step_fraction() != 0) out.max_step_fraction = in.max_step_fraction();
  if (in.tolerance() != 0) out.tolerance = in.tolerance();
  out.time_budget_seconds = in.time_budget_seconds();
  if (in.has_weights()) {
    const v1::CostWeights& w = in.weights();
    out.weights = {w.clearance(),    w.self_clearance(), w.velocity(),
                   w.acceleration(), w.joint_limit(),    w.bending()};
  }
  // The solver's own check names the field ("max_step_fraction in (0, 1], got -1").
  absl::Status valid = out.Validate();
  if (!valid.ok()) return AtRequestPath(valid, path);
  return out;
}

absl::StatusOr<std::optional<Eigen::Matrix3Xd>> SitesFromPositions(const ik::Arm& arm,
                                                                   const PositionList& positions,
                                                                   const std::string& path) {
  if (positions.empty()) return std::optional<Eigen::Matrix3Xd>();
  if (positions.size() != arm.num_angles()) {
    return FieldViolation(path, absl::StrCat("must hold the arm's ", arm.num_angles(),
                                             " joint positions, got ", positions.size()));
  }
  for (int k = 0; k < positions.size(); ++k) {
    if (!std::isfinite(positions[k])) {
      return FieldViolation(absl::StrCat(path, "[", k, "]"), "must be finite");
    }
  }
  absl::StatusOr<Eigen::Matrix3Xd> sites =
      arm.SitesFromAngles(std::vector<double>(positions.begin(), positions.end()));
  if (!sites.ok()) return AtRequestPath(sites.status(), path);
  return std::optional<Eigen::Matrix3Xd>(*std::move(sites));
}

absl::StatusOr<std::optional<ik::Posture>> PostureFromProto(
    const google::protobuf::RepeatedField<double>& posture, double weight, int size) {
  if (posture.empty()) {
    if (weight != 0.0) return FieldViolation("posture_weight", "is set without preferred_posture");
    return std::optional<ik::Posture>();
  }
  if (posture.size() != size) {
    return FieldViolation("preferred_posture", absl::StrCat("must hold the arm's ", size,
                                                            " joint positions, got ", posture.size()));
  }
  for (int k = 0; k < posture.size(); ++k) {
    if (!std::isfinite(posture[k])) {
      return FieldViolation(absl::StrCat("preferred_posture[", k, "]"), "must be finite");
    }
  }
  if (!std::isfinite(weight) || weight < 0.0 || weight > 1e6) {
    return FieldViolation("posture_weight", absl::StrCat("must be in (0, 1e6] (0: 1), got ", weight));
  }
  return std::optional<ik::Posture>(ik::Posture{
      .q = Eigen::Map<const Eigen::VectorXd>(posture.data(), posture.size()),
      .weight = weight == 0.0 ? 1.0 : weight});
}

absl::StatusOr<ik::Trajectory> TrajectoryFromProto(const v1::Trajectory& in,
                                                   const std::string& path) {
  absl::StatusOr<ik::Trajectory> out = absl::UnknownError("unset");
  std::string prefix = path;
  switch (in.path_case()) {
    case v1::Trajectory::kLine:
      prefix = Below(path, "line");
      out = ik::Trajectory::Line(FromProto(in.line().from()), FromProto(in.line().to()),
                                 in.line().duration());
      break;
    case v1::Trajectory::kArc:
      prefix = Below(path, "arc");
      out = ik::Trajectory::Arc(FromProto(in.arc().center()), FromProto(in.arc().axis()),
                                FromProto(in.arc().start()), in.arc().angle(),
                                in.arc().duration());
      break;
    case v1::Trajectory::kPolyline:
      return PolylineFromProto(in.polyline(), Below(path, "polyline"));
    case v1::Trajectory::kWaypoints:
      return WaypointsFromProto(in.waypoints(), Below(path, "waypoints"));
    default:
      return FieldViolation(path, "required: waypoints, line, arc or polyline");
  }
  if (!out.ok()) return AtRequestPath(out.status(), prefix);
  return out;
}

absl::StatusOr<Eigen::Vector3d> TargetFromProto(const v1::Vector3& target,
                                                const std::string& path) {
  const Eigen::Vector3d t = FromProto(target);
  if (!t.allFinite() || t.cwiseAbs().maxCoeff() > kWorldExtent) {
    return FieldViolation(path, absl::StrCat("every coordinate must be finite and within ",
                                             kWorldExtent, " m of the origin, got (", t.x(), ", ",
                                             t.y(), ", ", t.z(), ")"));
  }
  return t;
}

int64_t SubStepsForMove(const ik::Arm& arm, const ik::IkOptions& options,
                        const Eigen::Vector3d& from, const Eigen::Vector3d& to) {
  const double distance = std::min((to - from).norm(), 2.0 * arm.max_reach());
  const double step = options.max_step_fraction * arm.shortest_limb();
  // Far beyond int64 only for absurd inputs: saturate rather than overflow.
  const double steps = std::ceil(distance / step);
  return steps >= 9e18 ? INT64_MAX : static_cast<int64_t>(steps);
}

std::vector<std::string> JointNames(const ik::Arm& arm) {
  std::vector<std::string> names;
  names.reserve(arm.num_angles());
  for (int k = 0; k < arm.num_limbs(); ++k) {
    if (arm.planar()) {
      names.push_back(absl::StrCat("joint_", k));
    } else {
      names.push_back(absl::StrCat("joint_", k, "_bend"));
      names.push_back(absl::StrCat("joint_", k, "_azimuth"));
    }
  }
  return names;
}

v1::StepStatus ToProto(planning::StepStatus status) {
  switch (status) {
    case planning::StepStatus::kReached:
      return v1::STEP_STATUS_REACHED;
    case planning::StepStatus::kClampedUnreachable:
      return v1::STEP_STATUS_CLAMPED_UNREACHABLE;
    case planning::StepStatus::kInCollision:
      return v1::STEP_STATUS_IN_COLLISION;
    case planning::StepStatus::kJointLimitBlocked:
      return v1::STEP_STATUS_JOINT_LIMIT_BLOCKED;
    case planning::StepStatus::kVelocityLimited:
      return v1::STEP_STATUS_VELOCITY_LIMITED;
    case planning::StepStatus::kAccelerationLimited:
      return v1::STEP_STATUS_ACCELERATION_LIMITED;
    case planning::StepStatus::kNotConverged:
      return v1::STEP_STATUS_NOT_CONVERGED;
    case planning::StepStatus::kLate:
      return v1::STEP_STATUS_LATE;
  }
  return v1::STEP_STATUS_UNSPECIFIED;
}

void SetJointMotion(double time, const Eigen::Ref<const Eigen::VectorXd>& positions,
                    const Eigen::Matrix3Xd& sites, const v1::JointState* previous,
                    v1::JointState& out) {
  out.set_time(time);
  const double dt = previous != nullptr ? time - previous->time() : 0.0;
  const int n = static_cast<int>(positions.size());
  out.mutable_positions()->Reserve(n);
  out.mutable_velocities()->Reserve(n);
  out.mutable_sites()->Reserve(static_cast<int>(sites.cols()));
  for (int k = 0; k < n; ++k) {
    out.add_positions(positions[k]);
    const bool has_rate = dt > 0 && k < previous->positions_size();
    out.add_velocities(has_rate ? (positions[k] - previous->positions(k)) / dt : 0.0);
  }
  for (int s = 0; s < sites.cols(); ++s) {
    *out.add_sites() = ToProto(Eigen::Vector3d(sites.col(s)));
  }
}

absl::StatusOr<v1::JointState> JointStateFromStep(const ik::IkResult& step,
                                                  const Eigen::Vector3d& target,
                                                  const v1::JointState* previous) {
  v1::JointState out;
  SetJointMotion(step.time,
                 Eigen::Map<const Eigen::VectorXd>(step.angles.data(),
                                                   static_cast<Eigen::Index>(step.angles.size())),
                 step.sites, previous, out);
  *out.mutable_target() = ToProto(target);
  out.set_hand_error(step.hand_error);
  out.set_clamp_distance(step.clamp_distance);
  // +inf means nothing to collide with: the field stays absent.
  if (std::isfinite(step.min_clearance)) out.set_min_clearance(step.min_clearance);
  out.set_constraint_residual(step.constraint_residual);
  out.set_iterations(step.iterations);
  out.set_trials_accepted(step.trials_accepted);
  out.set_solver(v1::IK_SOLVER_NUMERIC);  // a chain arm has only its constraint tracker
  out.set_status(ToProto(step.status));
  if (absl::Status finite = CheckStateFinite(out); !finite.ok()) return finite;
  return out;
}

absl::Status CheckStateFinite(const v1::JointState& state) {
  FiniteCheck check;
  check.Number(state.time(), "time");
  for (int k = 0; k < state.positions_size(); ++k) check.Number(state.positions(k), "positions", k);
  for (int k = 0; k < state.velocities_size(); ++k) {
    check.Number(state.velocities(k), "velocities", k);
  }
  for (int k = 0; k < state.sites_size(); ++k) check.Vector(state.sites(k), "sites", k);
  check.Vector(state.target(), "target");
  check.Number(state.hand_error(), "hand_error");
  check.Number(state.clamp_distance(), "clamp_distance");
  if (state.has_min_clearance()) check.Number(state.min_clearance(), "min_clearance");
  check.Number(state.constraint_residual(), "constraint_residual");
  check.Number(state.rotation_error(), "rotation_error");
  return check.Result(absl::StrCat("the answer at t = ", state.time(), " s"));
}

void SummaryBuilder::Add(const v1::JointState& state) {
  totals_.set_samples(totals_.samples() + 1);
  switch (state.status()) {
    case v1::STEP_STATUS_REACHED:
      ++reached_;
      break;
    case v1::STEP_STATUS_CLAMPED_UNREACHABLE:
      totals_.set_clamped(totals_.clamped() + 1);
      break;
    case v1::STEP_STATUS_IN_COLLISION:
      totals_.set_in_collision(totals_.in_collision() + 1);
      break;
    case v1::STEP_STATUS_NOT_CONVERGED:
      totals_.set_not_converged(totals_.not_converged() + 1);
      break;
    case v1::STEP_STATUS_VELOCITY_LIMITED:
      totals_.set_velocity_limited(totals_.velocity_limited() + 1);
      break;
    case v1::STEP_STATUS_ACCELERATION_LIMITED:
      totals_.set_acceleration_limited(totals_.acceleration_limited() + 1);
      break;
    default:
      totals_.set_limit_blocked(totals_.limit_blocked() + 1);
  }
  totals_.set_max_hand_error(std::max(totals_.max_hand_error(), state.hand_error()));
  totals_.set_max_rotation_error(std::max(totals_.max_rotation_error(), state.rotation_error()));
  totals_.set_max_constraint_residual(
      std::max(totals_.max_constraint_residual(), state.constraint_residual()));
  if (state.has_min_clearance() &&
      (!totals_.has_min_clearance() || state.min_clearance() < totals_.min_clearance())) {
    totals_.set_min_clearance(state.min_clearance());
  }
}

v1::TrajectorySummary SummaryBuilder::Summary(double solve_seconds) const {
  v1::TrajectorySummary summary = totals_;
  summary.set_fraction_reached(
      summary.samples() > 0 ? static_cast<double>(reached_) / summary.samples() : 0.0);
  summary.set_solve_seconds(solve_seconds);
  return summary;
}

}  // namespace ikd::server
