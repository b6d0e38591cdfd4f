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
  // Joint k turns limbs k.. rigidly about site k: planar at |d angle|; spatial at most
  // |d bend| + 2 sin(bend / 2) |d azimuth| (the angular speed of a rotation by the bend about
  // an axis that turns with the azimuth), times the farthest a point of limb L can be from
  // site k (the limbs k..L end to end, plus limb L's radius).
  void SweepBounds(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                   Eigen::VectorXd* bounds) const override;
  double SelfClearance(const std::vector<planning::Capsule>& links) const override;
  // Non-adjacent limbs exist from three limbs on.
  bool ChecksSelf() const override { return num_links() >= 3; }

 private:
  const Arm* arm_;
  Eigen::MatrixXd reach_;  // reach_(k, L): site k to the farthest point of limb L (L >= k)
  std::vector<double> radii_;
};

}  // namespace ikd::ik
