#include "ikd/robot/robot_body.h"

#include <cmath>

#include "ikd/robot/self_collision.h"

namespace ikd::robot {

RobotBody::RobotBody(const Robot& robot) : robot_(&robot) {
  const auto segments = LinkSegments(robot.spec(), Eigen::VectorXd::Zero(robot.num_joints()));
  const int links = static_cast<int>(segments.size());
  const std::vector<double>& radii = robot.spec().link_radii;
  radii_ = radii.empty() ? std::vector<double>(links, 0.0) : radii;
  reach_ = Eigen::MatrixXd::Zero(robot.num_joints(), links);
  for (int j = 0; j < robot.num_joints(); ++j) {
    double along = 0.0;
    for (int k = j; k < links; ++k) {
      along += (segments[k].second - segments[k].first).norm();
      reach_(j, k) = along + radii_[k];
    }
  }
}

void RobotBody::Links(const Eigen::VectorXd& q, std::vector<planning::Capsule>* links) const {
  const auto segments = LinkSegments(robot_->spec(), q);
  links->resize(segments.size());
  for (size_t k = 0; k < segments.size(); ++k) {
    (*links)[k] = {segments[k].first, segments[k].second, radii_[k]};
  }
}

void RobotBody::SweepBounds(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                            Eigen::VectorXd* bounds) const {
  *bounds = reach_.transpose() * (b - a).cwiseAbs();
}

bool RobotBody::ChecksSelf() const { return ChecksSelfCollision(*robot_); }

double RobotBody::SelfClearance(const std::vector<planning::Capsule>& links) const {
  const SelfCollisionMatrix& matrix = SelfCollisionMatrixOf(*robot_);
  if (matrix.checked().empty()) return std::numeric_limits<double>::infinity();
  std::vector<std::pair<Eigen::Vector3d, Eigen::Vector3d>> segments;
  for (const planning::Capsule& link : links) segments.emplace_back(link.a, link.b);
  return LeastSelfClearance(matrix, segments, radii_).clearance;
}

}  // namespace ikd::robot
