// An industrial arm's body for the planning layer (planning/swept_clearance.h): its links'
// capsules (link_geometry.h: link_shapes, else joint origin to joint origin of radius
// link_radii), how far a capsule's points can move while the joints move linearly, and the
// clearance of the link pairs self_collision.h checks against each other. The body's "links"
// are the capsules, several per link where its shape takes several.
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
  // Joint j turns links j.. rigidly about its axis: a point of a capsule of link k moves at
  // most |dq_j| times its distance from joint j's origin, at most the joint origins j..k end to
  // end plus the capsule's farthest point from joint k's origin (neither depends on q: each is
  // a distance between two points of one link).
  void SweepBounds(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                   Eigen::VectorXd* bounds) const override;
  // The same reach per joint, whatever the path: per capsule reach^T travel.
  void TravelBounds(const Eigen::VectorXd& travel, Eigen::VectorXd* bounds) const override;
  double SelfClearance(const std::vector<planning::Capsule>& links) const override;
  bool ChecksSelf() const override;

 private:
  const Robot* robot_;
  Eigen::MatrixXd reach_;   // reach_(j, c): joint j's origin to the farthest point of capsule c
  std::vector<int> first_;  // LinkCapsules::first
};

}  // namespace ikd::robot
