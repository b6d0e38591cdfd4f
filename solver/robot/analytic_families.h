// The three closed-form families of analytic_ik.h, each solving a 6R arm given in product-of-
// exponentials form with the family's points on the axes (the intersections its conditions
// promise), so that the position equations drop the joints that cannot move the chosen points.
#pragma once

#include <array>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace ikd::robot::internal {

// Joint k turns about the line along h[k] through c[k] (world frame, q = 0); home is the tool
// pose at q = 0. sign[k] = +-1 where the family needs axis k parallel to axis 1 (0-based), as
// h[k] = sign[k] h[1].
struct Arm6 {
  std::array<Eigen::Vector3d, 6> h, c;
  Eigen::Isometry3d home = Eigen::Isometry3d::Identity();
  std::array<double, 6> sign = {1, 1, 1, 1, 1, 1};
};

struct RawSolution {
  std::array<double, 6> q{};
  // cos and sin of q[0..2] (the spherical-wrist families turn the wrist target back by them).
  std::array<double, 3> cos{1.0, 1.0, 1.0}, sin{};
  // Its number among the pose's branches: in order of discovery; a spherical wrist's, twice its
  // arm part's number plus 0 or 1 (the same whether the wrists are made at once or lazily).
  int branch = 0;
  bool singular = false;
};

// Axes 2, 3, 4 parallel; c[4] == c[5] on both of axes 5 and 6.
std::vector<RawSolution> SolveThreeParallel(const Arm6& arm, const Eigen::Isometry3d& X);
// The spherical-wrist families in two steps (the sweep of a 7R arm adds the wrists lazily):
// the arm parts (q[0..2] with their cosines and sines, q[3..5] unset), then each part's wrist
// branches (two, flipped or not) appended to `out`.
std::vector<RawSolution> ElbowArmParts(const Arm6& arm, const Eigen::Isometry3d& X);
std::vector<RawSolution> ShoulderArmParts(const Arm6& arm, const Eigen::Isometry3d& X);
void AppendWrist(const Arm6& arm, const Eigen::Isometry3d& X, const RawSolution& arm_part,
                 std::vector<RawSolution>& out);
// c[3] == c[4] == c[5] the wrist centre; axes 2, 3 parallel.
std::vector<RawSolution> SolveSphericalWristElbow(const Arm6& arm, const Eigen::Isometry3d& X);
// c[3] == c[4] == c[5] the wrist centre; c[0] == c[1] on both of axes 1 and 2.
std::vector<RawSolution> SolveSphericalWristShoulder(const Arm6& arm, const Eigen::Isometry3d& X);

}  // namespace ikd::robot::internal
