// A chain arm's body for the planning layer (planning/swept_clearance.h): its limbs as capsules
// for joint angles in arm.h's convention, the non-adjacent limbs checked against each other,
// and how far a limb's points can move while the angles move linearly.
//
//   ikd::ik::ChainArmBody body(*arm);
//   auto swept = ikd::planning::SweptClearanceOf(body, &scene, angles_before, angles_after);
#pragma once

#include <vector>

#include <Eigen/Core>

#include "ikd/ik/arm.h"
#include "ikd/planning/swept_clearance.h"

namespace ikd::ik {

class ChainArmBody : public planning::ArmBody {
 public:
  explicit ChainArmBody(const Arm& arm);  // the arm must outlive the body

  int num_joints() const override { return arm_->num_angles(); }
  int num_links() const override { return arm_->num_limbs(); }
  void Links(const Eigen::VectorXd& angles, std::vector<planning::Capsule>* links) const override;
  // Planar: limb m's heading turns by Phi_m (the running sum of the angle changes), so limb L's
  // points move at most sum_{m<L} L_m |Phi_m| + (L_L + r_L) |Phi_L|: turns of opposite signs
  // cancel. Spatial: joint k turns limbs k.. rigidly about site k, at most |d bend| +
  // 2 sin(bend / 2) |d azimuth| (the angular speed of a rotation by the bend about an axis that
  // turns with the azimuth), times the farthest a point of limb L can be from site k (the limbs
  // k..L end to end, plus limb L's radius).
  void SweepBounds(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                   Eigen::VectorXd* bounds) const override;
  // Any path: joint k turns the limbs after it by at most its travel (planar: the heading of
  // limb m turns by at most the sum of the travels up to m; spatial: bend travel + 2 x azimuth
  // travel, the bound above with sin <= 1), about site k, which limb L's points lie within
  // reach(k, L) of: limb L by sum_{k<=L} turn_k reach(k, L).
  void TravelBounds(const Eigen::VectorXd& travel, Eigen::VectorXd* bounds) const override;
  // GroupSweeps' spatial bound from the same turns (planar too: in limb i's frame joints
  // i+1..j turn limb j by at most their travels, with no cancellation to count on).
  void TravelGroupSweeps(const Eigen::VectorXd& travel, const Eigen::VectorXd& bounds,
                         SelfGroups* sweeps) const override;
  double SelfClearance(const std::vector<planning::Capsule>& links) const override;
  // Non-adjacent limbs exist from three limbs on.
  bool ChecksSelf() const override { return num_links() >= 3; }
  // Self pairs grouped by their separation j - i along the chain: 2..4, 5..8, 9..16, ...
  // Only the joints i+1..j move limb j against limb i, so a pair's clearance changes by at most
  // SweepBounds' bound taken in limb i's frame, where the distance is the same (planar:
  // sum_{m=i+1..j} L_m |Phi_m - Phi_i|; spatial: sum_{k=i+1..j} turn_k reach(k, j)); for a
  // group, the largest over its pairs. Neighbours then bound tightly, however the chain swings
  // as a whole.
  int NumSelfGroups() const override { return static_cast<int>(group_last_.size()); }
  void SelfClearanceGroups(const std::vector<planning::Capsule>& links,
                           SelfGroups* clearance) const override;
  void GroupSweeps(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                   const Eigen::VectorXd& bounds, SelfGroups* sweeps) const override;
  static constexpr int kFirstGroupLast = 4;  // the first group: separations 2..4
  // Relative slack on the group sweeps for the running sums' rounding (a bound must not fall
  // short of the sum it stands for).
  static constexpr double kRoundingSlack = 1e-12;

 private:
  // Per limb the rate its joint turns over the motion a -> b (SweepBounds).
  void TurnRates(const Eigen::VectorXd& a, const Eigen::VectorXd& b, Eigen::VectorXd* rates) const;
  // Per limb the most its joint turns the limbs after it, whatever the path (TravelBounds).
  void TravelTurns(const Eigen::VectorXd& travel, Eigen::VectorXd* turns) const;
  // Per group the widest sum_{k=i+1..j} turn_k reach(k, j) over its pairs (i, j), from running
  // sums of turn_k and turn_k along_[k]: O(1) per limb and group.
  void GroupSweepsOfTurns(const Eigen::VectorXd& turns, SelfGroups* sweeps) const;
  // Planar arms: per limb how far its heading turns over the motion a -> b (the running sum of
  // the angle changes: limb 0's absolute, the others relative).
  void HeadingTurns(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                    Eigen::VectorXd* turns) const;
  // GroupSweeps of a planar arm, from its headings' turns.
  void PlanarGroupSweeps(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                         SelfGroups* sweeps) const;
  // The sites of `links` (each limb's start, then the last limb's end).
  static Eigen::Matrix3Xd SitesOf(const std::vector<planning::Capsule>& links);

  const Arm* arm_;
  Eigen::MatrixXd reach_;  // reach_(k, L): site k to the farthest point of limb L (L >= k)
  std::vector<double> radii_;
  std::vector<double> along_;    // along_[k]: the limbs 0..k-1 end to end (num_limbs() + 1)
  std::vector<int> group_last_;  // the widest separation of each self group
};

}  // namespace ikd::ik
