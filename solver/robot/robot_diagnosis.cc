#include "ikd/robot/robot_diagnosis.h"

#include <algorithm>
#include <cmath>

#include <Eigen/Geometry>
#include <Eigen/SVD>

#include "ikd/robot/analytic_ik.h"
#include "ikd/robot/chain.h"
#include "ikd/robot/link_geometry.h"
#include "ikd/robot/self_collision.h"

namespace ikd::robot {
namespace {

constexpr size_t kMaxPairs = 8;  // colliding pairs listed, worst first

// Link-obstacle and link-link pairs (self_collision.h's checked pairs) below zero (all, worst
// first, capped) and the closest inside the margin.
void Clearances(const Robot& robot, const planning::Scene* scene, const Eigen::VectorXd& q,
                double margin, std::vector<ik::Reason>& reasons) {
  const LinkCapsules links = LinkCapsulesAt(robot.spec(), q);
  std::vector<ik::Reason> colliding, inside;
  for (const SelfContact& contact :
       SelfContactsBelow(SelfCollisionMatrixOf(robot), links, margin)) {
    ik::Reason r;
    r.kind =
        contact.clearance < 0.0 ? ik::Reason::Kind::kCollision : ik::Reason::Kind::kNearCollision;
    r.link = contact.link_a, r.other_link = contact.link_b, r.distance = contact.clearance;
    r.bound = margin;
    (contact.clearance < 0.0 ? colliding : inside).push_back(r);
  }
  for (int k = 0; scene != nullptr && k < links.num_links(); ++k) {
    for (const auto& [obstacle, distance] : LinkObstaclesBelow(links, *scene, k, margin)) {
      ik::Reason r;
      r.kind = distance < 0.0 ? ik::Reason::Kind::kCollision : ik::Reason::Kind::kNearCollision;
      r.link = k, r.obstacle = obstacle, r.distance = distance, r.bound = margin;
      (distance < 0.0 ? colliding : inside).push_back(r);
    }
  }
  auto by_distance = [](const ik::Reason& a, const ik::Reason& b) { return a.distance < b.distance; };
  std::stable_sort(colliding.begin(), colliding.end(), by_distance);
  std::stable_sort(inside.begin(), inside.end(), by_distance);
  if (colliding.size() > kMaxPairs) colliding.resize(kMaxPairs);
  reasons.insert(reasons.end(), colliding.begin(), colliding.end());
  if (!inside.empty()) reasons.push_back(inside.front());
}

// A full pose that no configuration within the limits reaches: 6R arms with a closed form,
// whose branches are every solution (a 7R arm's sweep samples its redundancy and could miss a
// narrow band). `distance` and `value`: the closed form's least position and rotation miss (0
// and 0 where the pose is reached only past a joint limit); `bound`: the position tolerance.
void OutOfReach(const Robot& robot, const ToolTarget& target, const Eigen::VectorXd& q,
                const RobotIkOptions& options, std::vector<ik::Reason>& reasons) {
  if (!target.orientation) return;
  const AnalyticIk* ik = AnalyticIkOf(robot);
  if (ik == nullptr || ik->locked_joint() >= 0) return;
  Eigen::Isometry3d X_WT = Eigen::Isometry3d::Identity();
  X_WT.linear() = target.orientation->normalized().toRotationMatrix();
  X_WT.translation() = target.position;
  const AnalyticReach reach = ik->Reach(X_WT, q, 0);
  if (reach.within_limits) return;
  ik::Reason r;
  r.kind = ik::Reason::Kind::kOutOfReach;
  r.distance = reach.position_miss, r.value = reach.rotation_miss;
  r.bound = options.position_tolerance;
  reasons.push_back(r);
}

void JointsAtLimits(const Robot& robot, const Eigen::VectorXd& q, std::vector<ik::Reason>& reasons) {
  for (int j = 0; j < robot.num_joints(); ++j) {
    const auto& limits = robot.spec().joints[j].limits;
    if (!limits) continue;
    const bool low = q[j] <= limits->lower + ik::kAtLimit, high = q[j] >= limits->upper - ik::kAtLimit;
    if (!low && !high) continue;
    ik::Reason r;
    r.kind = ik::Reason::Kind::kJointLimit;
    r.joint = j, r.value = q[j], r.bound = low ? limits->lower : limits->upper;
    reasons.push_back(r);
  }
}

// The least singular value of the tool Jacobian's rows the target uses (position; and
// rotation for a pose) and the tool direction of its left singular vector.
void Singularity(const Robot& robot, const Eigen::VectorXd& q, const ToolTarget& target,
                 std::vector<ik::Reason>& reasons) {
  const Eigen::MatrixXd J = ToolJacobian(robot.spec(), q);
  const Eigen::MatrixXd used = target.orientation ? J : Eigen::MatrixXd(J.topRows(3));
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(used, Eigen::ComputeFullU);
  const Eigen::VectorXd& sigma = svd.singularValues();
  const Eigen::Index rank_rows = std::min(used.rows(), used.cols());
  const double least = rank_rows < used.rows() ? 0.0 : sigma[rank_rows - 1];
  if (least >= kSingularValue) return;
  const Eigen::VectorXd u = svd.matrixU().col(used.rows() - 1);
  ik::Reason r;
  r.kind = ik::Reason::Kind::kSingular;
  r.value = least;
  r.bound = kSingularValue;
  const Eigen::Vector3d linear = u.head<3>();
  r.direction = linear.norm() > 1e-12 ? linear.normalized() : Eigen::Vector3d(u.tail<3>().normalized());
  reasons.push_back(r);
}

void Residuals(const Robot& robot, const Eigen::VectorXd& q, const ToolTarget& target,
               const RobotIkOptions& options, std::vector<ik::Reason>& reasons) {
  const Eigen::Isometry3d X = ToolPose(robot.spec(), q);
  const Eigen::Vector3d gap = target.position - X.translation();
  if (gap.norm() > options.position_tolerance) {
    ik::Reason r;
    r.kind = ik::Reason::Kind::kResidual;
    r.value = gap.norm(), r.bound = options.position_tolerance, r.direction = gap.normalized();
    reasons.push_back(r);
  }
  if (!target.orientation) return;
  const Eigen::AngleAxisd turn(target.orientation->normalized().toRotationMatrix() *
                               X.linear().transpose());
  if (turn.angle() > options.rotation_tolerance) {
    ik::Reason r;
    r.kind = ik::Reason::Kind::kRotationResidual;
    r.value = turn.angle(), r.bound = options.rotation_tolerance, r.direction = turn.axis();
    reasons.push_back(r);
  }
}

}  // namespace

std::vector<ik::Reason> DiagnoseRobot(const Robot& robot, const planning::Scene* scene,
                                      const Eigen::VectorXd& q, const ToolTarget& target,
                                      const RobotIkOptions& options) {
  std::vector<ik::Reason> reasons;
  Clearances(robot, scene, q, options.safety_margin, reasons);
  JointsAtLimits(robot, q, reasons);
  OutOfReach(robot, target, q, options, reasons);
  Singularity(robot, q, target, reasons);
  Residuals(robot, q, target, options, reasons);
  return reasons;
}

}  // namespace ikd::robot
