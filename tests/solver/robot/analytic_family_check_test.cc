// Which closed-form family six axes fit (robot/analytic_family_check.h), on axes written by the
// test: a UR-like arm (axes 2, 3, 4 parallel, 5 and 6 meeting), a Puma-like one (a spherical
// wrist), and each condition broken by more than the tolerance, named by its joints.
#include "../solver/robot/analytic_family_check.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

namespace ikd::robot::internal {
namespace {

constexpr double kTolerance = 1e-6;
constexpr std::array<int, 6> kNumbers = {1, 2, 3, 4, 5, 6};

Line Axis(double ox, double oy, double oz, const Eigen::Vector3d& h) {
  return {Eigen::Vector3d(ox, oy, oz), h.normalized()};
}

// UR5-like: base z, shoulder, elbow and wrist 1 along y, wrist 2 along z, wrist 3 along y
// through wrist 2's axis at (0.8, 0.2, 0.1).
std::array<Line, 6> UrAxes() {
  const Eigen::Vector3d y = Eigen::Vector3d::UnitY(), z = Eigen::Vector3d::UnitZ();
  return {Axis(0, 0, 0, z),        Axis(0, 0.1, 0.1, y),   Axis(0.4, 0.1, 0.1, y),
          Axis(0.8, 0.1, 0.1, -y), Axis(0.8, 0.2, 0.0, z), Axis(0.8, 0.0, 0.1, y)};
}

// KUKA KR-like: axes 2 and 3 parallel, 4, 5 and 6 through the wrist centre (0.6, 0, 0.5), the
// shoulder 0.1 m off the base axis (axes 1 and 2 do not meet).
std::array<Line, 6> KrAxes() {
  const Eigen::Vector3d x = Eigen::Vector3d::UnitX(), y = Eigen::Vector3d::UnitY(),
                        z = Eigen::Vector3d::UnitZ();
  return {Axis(0, 0, 0, z),     Axis(0.1, 0, 0.4, y), Axis(0.4, 0, 0.4, y),
          Axis(0.6, 0, 0.5, x), Axis(0.6, 0, 0.5, y), Axis(0.6, 0, 0.5, x)};
}

TEST(CheckFamilyTest, AUrArmFitsThreeParallelWithItsWristPointAndAxisSigns) {
  const Fit fit = CheckFamily(AnalyticFamily::kThreeParallel, UrAxes(), kNumbers, 0, kTolerance);
  ASSERT_TRUE(fit.ok) << fit.failure;
  EXPECT_LT((fit.c[4] - Eigen::Vector3d(0.8, 0.2, 0.1)).norm(), 1e-12);
  EXPECT_EQ(fit.c[4], fit.c[5]);
  EXPECT_EQ(fit.sign[2], 1.0);
  EXPECT_EQ(fit.sign[3], -1.0);  // axis 4 points against axis 2
}

TEST(CheckFamilyTest, AKrArmFitsTheElbowFamilyAndNotTheOthers) {
  const Fit elbow =
      CheckFamily(AnalyticFamily::kSphericalWristElbow, KrAxes(), kNumbers, 0, kTolerance);
  EXPECT_TRUE(elbow.ok) << elbow.failure;
  const Fit three = CheckFamily(AnalyticFamily::kThreeParallel, KrAxes(), kNumbers, 0, kTolerance);
  EXPECT_FALSE(three.ok);
  EXPECT_NE(three.failure.find("axes 2 and 4 not parallel"), std::string::npos) << three.failure;
  const Fit shoulder =
      CheckFamily(AnalyticFamily::kSphericalWristShoulder, KrAxes(), kNumbers, 0, kTolerance);
  EXPECT_FALSE(shoulder.ok);
  EXPECT_NE(shoulder.failure.find("axes 1 and 2 do not intersect"), std::string::npos)
      << shoulder.failure;
}

TEST(CheckFamilyTest, AConditionBrokenBeyondTheToleranceNamesItsJoints) {
  std::array<Line, 6> axes = UrAxes();
  // Axis 3 tilted by 10 tolerances: not parallel to axis 2; by a tenth of one: still parallel.
  for (const double tilt : {10 * kTolerance, 0.1 * kTolerance}) {
    axes[2].h = Eigen::Vector3d(0.0, std::cos(tilt), std::sin(tilt));
    const Fit fit = CheckFamily(AnalyticFamily::kThreeParallel, axes, kNumbers, 0, kTolerance);
    EXPECT_EQ(fit.ok, tilt < kTolerance) << fit.failure;
    if (!fit.ok) {
      EXPECT_NE(fit.failure.find("axes 2 and 3 not parallel"), std::string::npos) << fit.failure;
    }
  }
  axes = UrAxes();
  axes[5].o.x() += 10 * kTolerance;  // wrist 3 passes wrist 2's axis
  const Fit missed = CheckFamily(AnalyticFamily::kThreeParallel, axes, kNumbers, 0, kTolerance);
  EXPECT_FALSE(missed.ok);
  EXPECT_NE(missed.failure.find("axes 5 and 6 do not intersect"), std::string::npos)
      << missed.failure;
}

}  // namespace
}  // namespace ikd::robot::internal
