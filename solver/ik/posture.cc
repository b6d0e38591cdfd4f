#include "ikd/ik/posture.h"

#include <cmath>
#include <numbers>

#include "absl/strings/str_cat.h"

namespace ikd::ik {
namespace {

// a - b, for a turning joint modulo a full turn (in [-pi, pi]: q and q + 2 pi are one
// configuration of it).
double Difference(double a, double b, bool turns) {
  return turns ? std::remainder(a - b, 2.0 * std::numbers::pi) : a - b;
}

// The cost's free minimum: per joint the weighted mean of seed and posture, each taken from q
// (a turning joint's the shorter way round).
Eigen::VectorXd FreeMinimum(const Eigen::VectorXd& q, const Eigen::VectorXd& seed,
                            const Posture& posture, const JointMetric& metric) {
  Eigen::VectorXd goal(q.size());
  for (int j = 0; j < q.size(); ++j) {
    const bool turns = metric.turns[j];
    goal[j] = q[j] + (Difference(seed[j], q[j], turns) +
                      posture.weight * Difference(posture.q[j], q[j], turns)) /
                         (1.0 + posture.weight);
  }
  return goal;
}

// The step restricted to the null space of J in the metric W = diag(1 / scale^2):
// (I - W^-1 J^T (J W^-1 J^T + eps I)^-1 J) step; eps keeps a singular J solvable.
// Liégeois (1977) gradient projection, weighted: dq = (I - W^-1 J^T (J W^-1 J^T)^-1 J) step.
Eigen::VectorXd TangentPart(const Eigen::MatrixXd& J, const Eigen::VectorXd& step,
                            const Eigen::VectorXd& scale) {
  constexpr double kDamping = 1e-10;
  const Eigen::VectorXd inverse_metric = scale.cwiseProduct(scale);
  const Eigen::MatrixXd JWinv = J * inverse_metric.asDiagonal();
  Eigen::MatrixXd gram = JWinv * J.transpose();
  gram.diagonal().array() += kDamping * std::max(1.0, gram.diagonal().maxCoeff());
  const Eigen::VectorXd multipliers = gram.ldlt().solve(J * step);
  return step - JWinv.transpose() * multipliers;
}

// d hand / d angles by central differences of the arm's forward kinematics.
Eigen::MatrixXd HandJacobian(const Arm& arm, const Eigen::VectorXd& q) {
  constexpr double h = 1e-6;
  Eigen::MatrixXd J(3, q.size());
  std::vector<double> angles(q.data(), q.data() + q.size());
  for (int j = 0; j < q.size(); ++j) {
    angles[j] = q[j] + h;
    const absl::StatusOr<Eigen::Matrix3Xd> plus = arm.SitesFromAngles(angles);
    angles[j] = q[j] - h;
    const absl::StatusOr<Eigen::Matrix3Xd> minus = arm.SitesFromAngles(angles);
    angles[j] = q[j];
    J.col(j) = plus.ok() && minus.ok()
                   ? Eigen::Vector3d((plus->col(arm.hand()) - minus->col(arm.hand())) / (2 * h))
                   : Eigen::Vector3d::Zero();
  }
  return J;
}

}  // namespace

absl::Status Posture::Validate(int size) const {
  if (q.size() != size) {
    return absl::InvalidArgumentError(
        absl::StrCat("posture must hold the arm's ", size, " joint positions, got ", q.size()));
  }
  for (int j = 0; j < q.size(); ++j) {
    if (!std::isfinite(q[j])) {
      return absl::InvalidArgumentError(absl::StrCat("posture[", j, "] must be finite"));
    }
  }
  if (!(weight > 0.0) || weight > 1e6) {
    return absl::InvalidArgumentError(
        absl::StrCat("posture_weight must be in (0, 1e6], got ", weight));
  }
  return absl::OkStatus();
}

double PostureCost(const Eigen::VectorXd& q, const Eigen::VectorXd& seed, const Posture& posture,
                   const JointMetric& metric) {
  double cost = 0.0;
  for (int j = 0; j < q.size(); ++j) {
    const double to_seed = Difference(q[j], seed[j], metric.turns[j]);
    const double to_posture = Difference(q[j], posture.q[j], metric.turns[j]);
    const double scale = metric.scale[j];
    cost += (to_seed * to_seed + posture.weight * to_posture * to_posture) / (scale * scale);
  }
  return cost;
}

JointMetric ChainJointMetric(const Arm& arm) {
  JointMetric metric{Eigen::VectorXd::Ones(arm.num_angles()),
                     std::vector<bool>(arm.num_angles(), true)};
  const auto& limits = arm.spec().joint_limits;
  for (int i = 0; i < arm.num_angles(); ++i) {
    if (arm.planar()) {
      metric.turns[i] = i == 0 || i > static_cast<int>(limits.size()) || !limits[i - 1];
    } else {
      metric.turns[i] = i % 2 == 1;  // azimuths turn; bends lie in [0, pi]
    }
  }
  return metric;
}

Eigen::VectorXd DescendToPosture(Eigen::VectorXd q, const Eigen::VectorXd& seed,
                                 const Posture& posture, const JointMetric& metric,
                                 const TargetJacobian& jacobian, const ProjectOntoTarget& project,
                                 const std::function<void()>& kept,
                                 const std::function<bool()>& stop, int max_projections) {
  // A pull that the re-projection undoes (no redundancy left in that direction) is halved
  // until it is too small to matter.
  constexpr double kSmallestPull = 1.0 / 64.0;
  constexpr double kLeastDecrease = 1e-12;  // relative: below it the descent has converged
  const Eigen::VectorXd& scale = metric.scale;
  double cost = PostureCost(q, seed, posture, metric);
  double pull = 1.0;
  Eigen::VectorXd tangent =
      TangentPart(jacobian(q), FreeMinimum(q, seed, posture, metric) - q, scale);
  for (int n = 0; n < max_projections && pull >= kSmallestPull && !(stop && stop()); ++n) {
    const Eigen::VectorXd pulled = q + pull * tangent;
    const std::optional<Eigen::VectorXd> reached = project(pulled);
    const double reached_cost =
        reached ? PostureCost(*reached, seed, posture, metric) : cost;
    if (reached && reached_cost < cost * (1.0 - kLeastDecrease)) {
      q = *reached;
      cost = reached_cost;
      kept();
      pull = std::min(1.0, 2.0 * pull);
      tangent = TangentPart(jacobian(q), FreeMinimum(q, seed, posture, metric) - q, scale);
    } else {
      pull *= 0.5;
    }
  }
  return q;
}

absl::StatusOr<IkResult> SolvePoseWithPosture(const Arm& arm, const planning::Scene* scene,
                                              const Eigen::Vector3d& target,
                                              const IkOptions& options,
                                              std::optional<Eigen::Matrix3Xd> initial_sites,
                                              const Posture& posture,
                                              const std::function<bool()>& stop) {
  if (absl::Status valid = posture.Validate(arm.num_angles()); !valid.ok()) return valid;
  const Eigen::Matrix3Xd start = initial_sites ? *initial_sites : arm.HomeSites();
  absl::StatusOr<IkResult> solved = SolvePose(arm, scene, target, options, start);
  if (!solved.ok() || solved->status != planning::StepStatus::kReached) return solved;
  const std::vector<double> seed_angles = arm.AnglesFromSites(start);
  const Eigen::VectorXd seed = Eigen::Map<const Eigen::VectorXd>(seed_angles.data(), seed_angles.size());
  IkResult candidate;
  const auto project = [&](const Eigen::VectorXd& pulled) -> std::optional<Eigen::VectorXd> {
    absl::StatusOr<Eigen::Matrix3Xd> sites =
        arm.SitesFromAngles(std::vector<double>(pulled.data(), pulled.data() + pulled.size()));
    if (!sites.ok()) return std::nullopt;
    absl::StatusOr<IkResult> step = SolvePose(arm, scene, target, options, *std::move(sites));
    if (!step.ok() || step->status != planning::StepStatus::kReached) return std::nullopt;
    candidate = *std::move(step);
    return Eigen::Map<const Eigen::VectorXd>(candidate.angles.data(), candidate.angles.size());
  };
  const JointMetric metric = ChainJointMetric(arm);
  const auto cost = [&](const IkResult& step) {
    return PostureCost(Eigen::Map<const Eigen::VectorXd>(step.angles.data(), step.angles.size()),
                       seed, posture, metric);
  };
  const auto descend = [&](IkResult from) {
    DescendToPosture(Eigen::Map<const Eigen::VectorXd>(from.angles.data(), from.angles.size()),
                     seed, posture, metric,
                     [&](const Eigen::VectorXd& q) { return HandJacobian(arm, q); }, project,
                     [&] { from = candidate; }, stop);
    return from;
  };
  IkResult best = descend(*std::move(solved));
  // The posture's own sheet of solutions: continuation from the posture itself, descended too.
  if (!(stop && stop()) && project(posture.q)) {
    IkResult other = descend(candidate);
    if (cost(other) < cost(best)) best = std::move(other);
  }
  return best;
}

}  // namespace ikd::ik
