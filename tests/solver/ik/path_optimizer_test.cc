// The path optimizer's bend floor (path_optimizer.h, OptimizePath's min_bend): a spatial arm
// whose driver path runs with a joint nearly straight (where its azimuth spins) is optimized
// with a low and a high floor; the test's own bend angles (between consecutive limbs), hand
// positions and limb lengths show the high floor straightens the joint less while the hand
// stays on its line and the limbs keep their lengths.
#include "../solver/ik/path_optimizer.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "ikd/ik/path.h"
#include "ikd/ik/trajectory.h"

namespace ikd::ik {
namespace {

constexpr double kLimb = 0.25;

// The test's own bend of joint k (1 <= k < limbs): the angle between limbs k-1 and k.
double Bend(const Eigen::Matrix3Xd& sites, int k) {
  const Eigen::Vector3d a = (sites.col(k) - sites.col(k - 1)).normalized();
  const Eigen::Vector3d b = (sites.col(k + 1) - sites.col(k)).normalized();
  return std::atan2(a.cross(b).norm(), a.dot(b));
}

// The least bend of the interior joints over the second half of the path (the first samples
// stay near the start, which the optimizer holds).
double LeastBendLate(const std::vector<IkResult>& steps) {
  double least = 10.0;
  for (size_t s = steps.size() / 2; s < steps.size(); ++s) {
    for (int k = 1; k + 1 < steps[s].sites.cols(); ++k)
      least = std::min(least, Bend(steps[s].sites, k));
  }
  return least;
}

TEST(PathOptimizerBendFloor, HigherFloorKeepsTheJointFromStraightening) {
  ArmSpec spec;
  spec.planar = false;
  for (int k = 0; k < 4; ++k) spec.limbs.push_back({kLimb, 0.01});
  auto arm = Arm::Create(spec);
  ASSERT_TRUE(arm.ok());
  // Joint 2 nearly straight at the start; the hand then moves 0.2 m towards the base.
  auto start = arm->SitesFromAngles({0.5, 0.0, 0.6, 1.0, 0.08, 0.0, 0.5, 2.0});
  ASSERT_TRUE(start.ok());
  const Eigen::Vector3d from = start->col(4), to = from - 0.2 * from.normalized();
  auto line = Trajectory::Line(from, to, 1.0);
  ASSERT_TRUE(line.ok());
  IkOptions options;
  auto driver = PathDriver::Create(*arm, nullptr, *line, options, *start);
  ASSERT_TRUE(driver.ok());
  std::vector<IkResult> driven;
  for (int s = 0; s <= 100; ++s) {
    auto step = driver->StepTo(0.01 * s);
    ASSERT_TRUE(step.ok());
    driven.push_back(*step);
    ASSERT_EQ(step->status, planning::StepStatus::kReached) << "sample " << s;
  }
  std::vector<double> least;
  for (double floor : {0.02, 0.5}) {
    std::vector<IkResult> steps = driven;
    auto projector = ArmTracker::Create(*arm, nullptr, options, *start);
    ASSERT_TRUE(projector.ok());
    ASSERT_TRUE(
        internal::OptimizePath(*arm, nullptr, *projector, options.safety_margin, steps, {}, floor)
            .ok());
    for (size_t s = 0; s < steps.size(); ++s) {
      // The hand stays where the driver put it, and that is on the segment (the test's own
      // distance to it).
      const Eigen::Vector3d hand = steps[s].sites.col(4);
      EXPECT_LT((hand - driven[s].sites.col(4)).norm(), 1e-9) << "sample " << s;
      const double t =
          std::clamp((hand - from).dot(to - from) / (to - from).squaredNorm(), 0.0, 1.0);
      EXPECT_LT((from + t * (to - from) - hand).norm(), 1e-9) << "sample " << s;
      for (int k = 0; k < 4; ++k) {
        EXPECT_NEAR((steps[s].sites.col(k + 1) - steps[s].sites.col(k)).norm(), kLimb, 1e-9);
      }
    }
    least.push_back(LeastBendLate(steps));
  }
  EXPECT_GT(least[1], least[0] + 0.05)
      << "floors 0.02 and 0.5: least late bends " << least[0] << " and " << least[1];
  EXPECT_GT(least[1], 0.3);
}

}  // namespace
}  // namespace ikd::ik
