// An industrial arm's body for the planning layer (planning/swept_clearance.h): its links as
// the capsules of LinkSegments (joint origin to joint origin, the last to the tool centre point,
// of radius link_radii), how far a link's points can move while the joints move linearly, and
// the clearance of the link pairs self_collision.h checks against each other.
//
//   ikd::robot::RobotBody body(robot);
//   auto swept = ikd::planning::SweptClearanceOf(body, &scene, q_before, q_after);
#pragma once

#include <vector>

#include <Eigen/Core>

#include "ikd/planning/swept_clearance.h"
#include "ikd/robot/robot.h"

namespace ikd::robot {

class RobotBody : public planning::ArmBody {
 public:
  explicit RobotBody(const Robot& robot);  // the robot must outlive the body

  int num_joints() const override { return robot_->num_joints(); }
  int num_links() const override { return static_cast<int>(reach_.cols()); }
  void Links(const Eigen::VectorXd& q, std::vector<planning::Capsule>* links) const override;
  // Joint j turns links j.. rigidly about its axis: a point of link k moves at most |dq_j|
  // times its distance from joint j's origin, at most the segments j..k end to end plus link
  // k's radius (segment lengths do not depend on q: each joins two points of one link).
  void SweepBounds(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                   Eigen::VectorXd* bounds) const override;
  double SelfClearance(const std::vector<planning::Capsule>& links) const override;
  bool ChecksSelf() const override;

 private:
  const Robot* robot_;
  Eigen::MatrixXd reach_;  // reach_(j, k): joint j's origin to the farthest point of link k
  std::vector<double> radii_;
};

}  // namespace ikd::robot
