#include "ikd/robot/robot_body.h"

#include <algorithm>
#include <limits>

#include "ikd/robot/link_geometry.h"
#include "ikd/robot/self_collision.h"

namespace ikd::robot {

RobotBody::RobotBody(const Robot& robot)
    : robot_(&robot), first_(LinkCapsuleOffsets(robot.spec())) {
  const int n = robot.num_joints();
  const std::vector<Eigen::Isometry3d> origins = LinkPoses(robot.spec(), Eigen::VectorXd::Zero(n));
  const std::vector<std::vector<LinkShape>> shapes = LinkShapesOf(robot.spec());
  reach_ = Eigen::MatrixXd::Zero(n, first_.back());
  for (int j = 0; j < n; ++j) {
    double along = 0.0;  // joint j's origin to joint k's, the joint origins end to end
    for (int k = j; k < n; ++k) {
      if (k > j) along += (origins[k].translation() - origins[k - 1].translation()).norm();
      for (size_t i = 0; i < shapes[k].size(); ++i) {
        const LinkShape& shape = shapes[k][i];  // in link k's frame: joint k's origin is 0
        reach_(j, first_[k] + i) = along + std::max(shape.a.norm(), shape.b.norm()) + shape.radius;
      }
    }
  }
}

void RobotBody::Links(const Eigen::VectorXd& q, std::vector<planning::Capsule>* links) const {
  *links = LinkCapsulesAt(robot_->spec(), q).capsules;
}

void RobotBody::TravelBounds(const Eigen::VectorXd& travel, Eigen::VectorXd* bounds) const {
  *bounds = reach_.transpose() * travel.cwiseAbs();
}

void RobotBody::SweepBounds(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                            Eigen::VectorXd* bounds) const {
  *bounds = reach_.transpose() * (b - a).cwiseAbs();
}

bool RobotBody::ChecksSelf() const { return ChecksSelfCollision(*robot_); }

double RobotBody::SelfClearance(const std::vector<planning::Capsule>& links) const {
  const SelfCollisionMatrix& matrix = SelfCollisionMatrixOf(*robot_);
  if (matrix.checked().empty()) return std::numeric_limits<double>::infinity();
  return LeastSelfClearance(matrix, LinkCapsules{links, first_}).clearance;
}

}  // namespace ikd::robot
