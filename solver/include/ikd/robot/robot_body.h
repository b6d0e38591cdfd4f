// An industrial arm's body for the planning layer (planning/swept_clearance.h): its links'
// capsules (link_geometry.h: link_shapes, else joint origin to joint origin of radius
// link_radii), how far a capsule's points can move while the joints move linearly, and the
// clearance of the link pairs self_collision.h checks against each other. The body's "links"
// are the capsules, several per link where its shape takes several.
//
//   ikd::robot::RobotBody body(robot);
//   auto swept = ikd::planning::SweptClearanceOf(body, &scene, q_before, q_after);
#pragma once

#include <utility>
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

  // The checked pairs of links (self_collision.h) in groups of consecutive pairs, one pair a
  // group up to kMaxSelfGroups pairs. In link a's frame link b > a moves only by the joints
  // a+1..b, so a pair's clearance changes by at most sum_{j=a+1..b} |dq_j| r_jb (r_jb: joint j's
  // origin to the farthest point of link b), far less than the two links' own sweeps where the
  // shoulder turns them both; a group takes the largest of its pairs'.
  int NumSelfGroups() const override { return static_cast<int>(group_first_.size()) - 1; }
  void SelfClearanceGroups(const std::vector<planning::Capsule>& links,
                           SelfGroups* clearance) const override;
  void GroupSweeps(const Eigen::VectorXd& q_a, const Eigen::VectorXd& q_b,
                   const Eigen::VectorXd& bounds, SelfGroups* sweeps) const override;
  void TravelGroupSweeps(const Eigen::VectorXd& travel, const Eigen::VectorXd& bounds,
                         SelfGroups* sweeps) const override;

 private:
  // The largest of link k's capsules' `bounds`.
  double LinkSweep(const Eigen::VectorXd& bounds, int k) const;
  // pairs_ into groups, and pair_reach_.
  void GroupPairs();
  // Per group the bound on its pairs' clearance change for joint turns |dq| (`turns`), each
  // pair's never above the sum of its links' own sweeps (`bounds`, per capsule).
  void PairSweeps(const Eigen::VectorXd& turns, const Eigen::VectorXd& bounds,
                  SelfGroups* sweeps) const;

  const Robot* robot_;
  Eigen::MatrixXd reach_;   // reach_(j, c): joint j's origin to the farthest point of capsule c
  std::vector<int> first_;  // LinkCapsules::first
  std::vector<std::pair<int, int>> pairs_;  // SelfCollisionMatrix::checked
  std::vector<int> group_first_;            // group g: pairs_[group_first_[g], group_first_[g+1])
  Eigen::MatrixXd pair_reach_;              // pair_reach_(j, p): r_jb for pair p, 0 off a+1..b
};

}  // namespace ikd::robot
