#include "motion.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/SVD>

#include "ikd/robot/chain.h"
#include "ikd/robot/link_geometry.h"
#include "ikd/robot/seed_atlas.h"
#include "ikd/robot/self_collision.h"

namespace ikd::robot::internal {
namespace {

// The outer part of a joint's range where LimitAvoidance draws it back (fraction of the range).
constexpr double kLimitBuffer = 0.1;
// Radians of pull per spacing of tool travel at the limit itself (0 at the buffer's edge).
constexpr double kLimitPull = 0.1;
// Radians of joint motion per spacing of tool travel with which a link touching an obstacle is
// pulled away from it (0 at the buffer's edge).
constexpr double kClearancePull = 1.0;
// Fraction of the deviation from the posture pulled back per spacing of tool travel.
constexpr double kPosturePull = 1.0;
// Newton steps that put a sample's tool back on its target (quadratic: few suffice).
constexpr int kPlacingSteps = 12;
constexpr double kPlacedSettled = 1e-13;  // rad
// Weight factor of a joint's motion at its limit (1 at the buffer's edge).
constexpr double kLimitWeight = 100.0;


// How deep q[k] is in the buffer of its range: 0 outside, 1 at the bound; toward_middle gets
// the sign of a move away from that bound.
double LimitDepth(const Robot& robot, const Eigen::VectorXd& q, int k, double* toward_middle) {
  const auto& limits = robot.spec().joints[k].limits;
  if (!limits) return 0.0;
  const double buffer = kLimitBuffer * (limits->upper - limits->lower);
  if (!(buffer > 0.0)) return 0.0;
  // 0 at the buffer's edge, 1 at the bound.
  const double into_lower = (limits->lower + buffer - q[k]) / buffer;
  const double into_upper = (q[k] - (limits->upper - buffer)) / buffer;
  if (toward_middle) *toward_middle = into_lower > into_upper ? 1.0 : -1.0;
  return std::clamp(std::max(into_lower, into_upper), 0.0, 1.0);
}

}  // namespace

double RotationAngle(const Eigen::Matrix3d& a, const Eigen::Matrix3d& b) {
  return Eigen::AngleAxisd(a.transpose() * b).angle();
}

std::pair<double, double> ToolErrors(const Robot& robot, const Eigen::VectorXd& q,
                                     const ToolTarget& target) {
  const Eigen::Isometry3d X = ToolPose(robot.spec(), q);
  return {(X.translation() - target.position).norm(),
          target.orientation
              ? RotationAngle(X.linear(), target.orientation->toRotationMatrix())
              : 0.0};
}

bool HasRateLimits(const Robot& robot) {
  for (const JointSpec& joint : robot.spec().joints) {
    if (joint.limits &&
        (std::isfinite(joint.limits->max_velocity) ||
         std::isfinite(joint.limits->max_acceleration) || std::isfinite(joint.limits->max_jerk))) {
      return true;
    }
  }
  return false;
}

double VelocityLimit(const Robot& robot, int k) {
  const auto& limits = robot.spec().joints[k].limits;
  return limits ? limits->max_velocity : std::numeric_limits<double>::infinity();
}

double AccelerationLimit(const Robot& robot, int k) {
  const auto& limits = robot.spec().joints[k].limits;
  return limits ? limits->max_acceleration : std::numeric_limits<double>::infinity();
}

double JerkLimit(const Robot& robot, int k) {
  const auto& limits = robot.spec().joints[k].limits;
  return limits ? limits->max_jerk : std::numeric_limits<double>::infinity();
}

Eigen::Isometry3d ToolGoal(const ToolTarget& target, const Eigen::Isometry3d& now) {
  Eigen::Isometry3d X = now;
  X.translation() = target.position;
  if (target.orientation) X.linear() = target.orientation->toRotationMatrix();
  return X;
}

Eigen::VectorXd MotionWeights(const Robot& robot) {
  const int n = robot.num_joints();
  double v_ref = std::numeric_limits<double>::infinity();
  for (const JointSpec& joint : robot.spec().joints) {
    if (joint.limits && std::isfinite(joint.limits->max_velocity)) {
      v_ref = std::min(v_ref, joint.limits->max_velocity);
    }
  }
  Eigen::VectorXd w = Eigen::VectorXd::Ones(n);
  if (!std::isfinite(v_ref)) return w;
  for (int k = 0; k < n; ++k) {
    const auto& limits = robot.spec().joints[k].limits;
    if (limits && std::isfinite(limits->max_velocity)) {
      w[k] = std::pow(v_ref / limits->max_velocity, 2);
    }
  }
  return w;
}

Eigen::VectorXd LeastMotionStep(const Eigen::MatrixXd& J, const Eigen::VectorXd& e,
                                const Eigen::VectorXd& w, const Eigen::VectorXd& c,
                                double damping) {
  // dq = c + W^-1 J^T (J W^-1 J^T + lambda^2 I)^-1 (e - J c)  (Whitney 1969, Liegeois 1977)
  const Eigen::MatrixXd JWinv = J * w.cwiseInverse().asDiagonal();
  Eigen::MatrixXd gram = JWinv * J.transpose();
  gram.diagonal().array() += damping * damping;
  return c + JWinv.transpose() * gram.ldlt().solve(e - J * c);
}

void AvoidLimits(const Robot& robot, const Eigen::VectorXd& q, double fraction,
                 Eigen::VectorXd& weights, Eigen::VectorXd& preferred) {
  preferred = Eigen::VectorXd::Zero(q.size());
  for (int k = 0; k < q.size(); ++k) {
    double toward_middle = 0.0;
    const double depth = LimitDepth(robot, q, k, &toward_middle);
    if (depth <= 0.0) continue;
    // Heavier near the bound (Chan & Dubey's weighted least norm), so that the redundant
    // directions carry the pull rather than the other joints' preference to stay.
    weights[k] *= 1.0 + kLimitWeight * depth * depth;
    preferred[k] = toward_middle * kLimitPull * fraction * depth * depth;
  }
}

void PullToPosture(const Eigen::VectorXd& q, const Eigen::VectorXd& posture, double fraction,
                   Eigen::VectorXd& preferred) {
  preferred += kPosturePull * fraction * (posture - q);
}

bool ChecksClearance(const Robot& robot, const planning::Scene* scene) {
  return (scene != nullptr && scene->size() > 0) || ChecksSelfCollision(robot);
}

double MinLinkClearance(const Robot& robot, const planning::Scene* scene,
                        const Eigen::VectorXd& q) {
  if (!ChecksClearance(robot, scene)) return std::numeric_limits<double>::infinity();
  const std::vector<double> d = LinkClearances(robot, scene, q);
  return d.empty() ? std::numeric_limits<double>::infinity()
                   : *std::min_element(d.begin(), d.end());
}

std::vector<double> LinkClearances(const Robot& robot, const planning::Scene* scene,
                                   const Eigen::VectorXd& q, double self_shift) {
  const LinkCapsules links = LinkCapsulesAt(robot.spec(), q);
  std::vector<double> d(links.num_links(), std::numeric_limits<double>::infinity());
  for (int k = 0; scene != nullptr && k < links.num_links(); ++k) {
    d[k] = LinkSceneClearance(links, *scene, k);
  }
  LowerBySelfClearances(SelfCollisionMatrixOf(robot), links, d, self_shift);
  return d;
}

namespace {

// What one link is nearest to: its clearance (as LinkClearances gives it), the closest point of
// the link, the unit direction in which moving that point raises the clearance and, for another
// link of the arm, that link and its own closest point (which moves too).
struct LinkContact {
  double clearance = std::numeric_limits<double>::infinity();
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  Eigen::Vector3d direction = Eigen::Vector3d::Zero();
  int other = -1;
  Eigen::Vector3d other_point = Eigen::Vector3d::Zero();
};

void NearestObstacles(const planning::Scene& scene, const LinkCapsules& links,
                      std::vector<LinkContact>& contacts) {
  for (int k = 0; k < links.num_links(); ++k) {
    for (int i = links.first[k]; i < links.first[k + 1]; ++i) {
      const planning::Capsule& c = links.capsules[i];
      int obstacle = -1;
      const double d = scene.MinSignedDistance(c.a, c.b, c.radius, &obstacle);
      if (!(d < contacts[k].clearance) || obstacle < 0) continue;
      const planning::CapsuleApproach approach =
          planning::ClosestApproach(scene.obstacles()[obstacle].shape, c.a, c.b, c.radius);
      contacts[k] = {d, (1.0 - approach.t) * c.a + approach.t * c.b, approach.normal, -1,
                     Eigen::Vector3d::Zero()};
    }
  }
}

void NearestLinks(const SelfCollisionMatrix& matrix, const LinkCapsules& links, double shift,
                  std::vector<LinkContact>& contacts) {
  const std::vector<Eigen::Vector3d> centres = LinkCentres(links);
  for (const auto& [a, b] : matrix.checked()) {
    const double lower = matrix.ClearanceLowerBound(centres, a, b) + shift;
    if (lower >= contacts[a].clearance && lower >= contacts[b].clearance) continue;
    for (int i = links.first[a]; i < links.first[a + 1]; ++i) {
      const planning::Capsule& x = links.capsules[i];
      for (int j = links.first[b]; j < links.first[b + 1]; ++j) {
        const planning::Capsule& y = links.capsules[j];
        const double ball_gap = CapsuleBallGap(x, y) + shift;
        if (ball_gap >= contacts[a].clearance && ball_gap >= contacts[b].clearance) continue;
        const planning::SegmentPair pair = planning::ClosestSegmentPair(x.a, x.b, y.a, y.b);
        const double d = pair.distance - x.radius - y.radius + shift;
        if (!(d < contacts[a].clearance) && !(d < contacts[b].clearance)) continue;
        const Eigen::Vector3d on_a = (1.0 - pair.s) * x.a + pair.s * x.b;
        const Eigen::Vector3d on_b = (1.0 - pair.t) * y.a + pair.t * y.b;
        // Axes that cross have no separating direction: the gradient there is 0.
        const Eigen::Vector3d apart = pair.distance > 0.0
                                          ? Eigen::Vector3d((on_a - on_b) / pair.distance)
                                          : Eigen::Vector3d::Zero();
        if (d < contacts[a].clearance) contacts[a] = {d, on_a, apart, b, on_b};
        if (d < contacts[b].clearance) contacts[b] = {d, on_b, -apart, a, on_a};
      }
    }
  }
}

// d(direction . p)/dq for a point p fixed in link `link` (poses: LinkPoses), added to `row`:
// joint j moves the links from j on, a revolute joint turning p about its axis, a prismatic
// one shifting it along.
void AddPointDerivative(const ChainSpec& spec, const std::vector<Eigen::Isometry3d>& poses,
                        int link, const Eigen::Vector3d& p, const Eigen::Vector3d& direction,
                        double sign, Eigen::RowVectorXd& row) {
  int j = 0;
  for (const JointSpec& joint : spec.joints) {
    if (joint.type == JointType::kFixed) continue;
    if (j > link) break;
    const Eigen::Vector3d axis = poses[j].linear() * joint.axis;
    const Eigen::Vector3d velocity = joint.type == JointType::kPrismatic
                                         ? axis
                                         : Eigen::Vector3d(axis.cross(p - poses[j].translation()));
    row[j] += sign * direction.dot(velocity);
    ++j;
  }
}

}  // namespace

Eigen::MatrixXd LinkClearanceGradients(const Robot& robot, const planning::Scene* scene,
                                       const Eigen::VectorXd& q, double self_shift) {
  return LinkClearancesWithGradients(robot, scene, q, self_shift,
                                     std::numeric_limits<double>::infinity())
      .gradient;
}

LinkClearanceField LinkClearancesWithGradients(const Robot& robot, const planning::Scene* scene,
                                               const Eigen::VectorXd& q, double self_shift,
                                               double gradient_below) {
  const ChainSpec& spec = robot.spec();
  const std::vector<Eigen::Isometry3d> poses = LinkPoses(spec, q);
  const LinkCapsules links = LinkCapsulesAt(spec, q, poses);
  std::vector<LinkContact> contacts(links.num_links());
  if (scene != nullptr) NearestObstacles(*scene, links, contacts);
  NearestLinks(SelfCollisionMatrixOf(robot), links, self_shift, contacts);
  LinkClearanceField field{std::vector<double>(links.num_links()),
                           Eigen::MatrixXd::Zero(links.num_links(), q.size())};
  for (int k = 0; k < links.num_links(); ++k) {
    const LinkContact& c = contacts[k];
    field.clearance[k] = c.clearance;
    if (!std::isfinite(c.clearance) || !(c.clearance < gradient_below)) continue;
    // The envelope theorem: the closest points stay put to first order, only the links move.
    Eigen::RowVectorXd row = Eigen::RowVectorXd::Zero(q.size());
    AddPointDerivative(spec, poses, k, c.point, c.direction, 1.0, row);
    if (c.other >= 0)
      AddPointDerivative(spec, poses, c.other, c.other_point, c.direction, -1.0, row);
    field.gradient.row(k) = row;
  }
  return field;
}

void PullFromObstacles(const Robot& robot, const planning::Scene* scene, const Eigen::VectorXd& q,
                       double buffer, double self_shift, double fraction,
                       Eigen::VectorXd& preferred) {
  const LinkClearanceField field = LinkClearancesWithGradients(robot, scene, q, self_shift, buffer);
  for (size_t k = 0; k < field.clearance.size(); ++k) {
    const double d = field.clearance[k];
    const double norm = field.gradient.row(k).norm();
    if (!(d < buffer) || !(norm > 0.0)) continue;
    const double strength = std::pow(1.0 - std::max(d, 0.0) / buffer, 2);
    preferred += (kClearancePull * fraction * strength / norm) * field.gradient.row(k).transpose();
  }
}

Eigen::VectorXd ToolStep(const Robot& robot, const Eigen::VectorXd& q,
                         const Eigen::Isometry3d& X_goal, TargetMode mode,
                         const Eigen::VectorXd& weights, const Eigen::VectorXd& preferred) {
  const Eigen::Isometry3d X_now = ToolPose(robot.spec(), q);
  Eigen::MatrixXd J = ToolJacobian(robot.spec(), q);
  Eigen::VectorXd e(6);
  e.head<3>() = X_goal.translation() - X_now.translation();
  const Eigen::AngleAxisd turn(X_goal.linear() * X_now.linear().transpose());
  e.tail<3>() = turn.angle() * turn.axis();
  if (mode == TargetMode::kPosition) {
    J.conservativeResize(3, Eigen::NoChange);
    e.conservativeResize(3);
  }
  // Damping of a hundredth of the spacing: finite near a singularity, negligible elsewhere.
  return LeastMotionStep(J, e, weights, preferred, 1e-2 * robot.spacing());
}

Eigen::VectorXd ClampIntoLimits(const Robot& robot, Eigen::VectorXd q) {
  for (int j = 0; j < q.size(); ++j) {
    const auto& limits = robot.spec().joints[j].limits;
    if (limits) q[j] = std::clamp(q[j], limits->lower, limits->upper);
  }
  return q;
}

int ToolRows(TargetMode mode) { return mode == TargetMode::kPose ? 6 : 3; }

Eigen::MatrixXd ToolNullSpace(const Robot& robot, const Eigen::VectorXd& q, TargetMode mode) {
  const int rows = ToolRows(mode);
  const int n = robot.num_joints();
  if (n <= rows) return Eigen::MatrixXd(n, 0);
  const Eigen::MatrixXd J = ToolJacobian(robot.spec(), q).topRows(rows);
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(J, Eigen::ComputeFullV);
  return svd.matrixV().rightCols(n - rows);
}

bool StandsOnTarget(const Robot& robot, const planning::Scene* scene, const ToolTarget& target,
                    const Eigen::VectorXd& q, const RobotIkOptions& options) {
  const auto [position_error, rotation_error] = ToolErrors(robot, q, target);
  return position_error <= options.position_tolerance &&
         rotation_error <= options.rotation_tolerance && robot.LimitViolation(q) <= 0.0 &&
         MinLinkClearance(robot, scene, q) >= options.safety_margin;
}

RobotIkResult PlacedSample(const Robot& robot, const planning::Scene* scene,
                           const ToolTarget& target, const RobotIkOptions& options,
                           Eigen::VectorXd q) {
  const Eigen::VectorXd weights = MotionWeights(robot);
  const Eigen::VectorXd none = Eigen::VectorXd::Zero(robot.num_joints());
  const Eigen::Isometry3d goal = ToolGoal(target, ToolPose(robot.spec(), q));
  for (int n = 0; n < kPlacingSteps; ++n) {
    const Eigen::VectorXd step = ToolStep(robot, q, goal, target.mode(), weights, none);
    q += step;
    if (!(step.cwiseAbs().maxCoeff() > kPlacedSettled)) break;
  }
  RobotIkResult sample;
  sample.q = std::move(q);
  sample.sites = robot.SitesFromAngles(sample.q);
  std::tie(sample.position_error, sample.rotation_error) = ToolErrors(robot, sample.q, target);
  sample.min_clearance = MinLinkClearance(robot, scene, sample.q);
  if (!(sample.position_error <= options.position_tolerance) ||
      !(sample.rotation_error <= options.rotation_tolerance)) {
    sample.status = planning::StepStatus::kNotConverged;
  } else if (robot.LimitViolation(sample.q) > 0.0) {
    sample.status = planning::StepStatus::kJointLimitBlocked;
  } else if (sample.min_clearance < 0.0) {
    sample.status = planning::StepStatus::kInCollision;
  } else {
    sample.status = planning::StepStatus::kReached;
  }
  return sample;
}

Eigen::VectorXd RandomConfiguration(const Robot& robot, std::mt19937_64& rng) {
  Eigen::VectorXd q(robot.num_joints());
  for (int k = 0; k < q.size(); ++k) {
    const auto [lo, hi] = SeedAtlas::SamplingRange(robot, k, 0.0);
    q[k] = std::uniform_real_distribution<double>(lo, hi)(rng);
  }
  return q;
}

}  // namespace ikd::robot::internal
