// The motion check against closed forms: a rod turning about the z axis past a ball.
#include "ikd/planning/swept_clearance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace ikd::planning {
namespace {

// A rod of `length` from the origin, at angle q[0] about the z axis; its points move at most
// |dq| * length (the test's own bound).
class Rod : public ArmBody {
 public:
  explicit Rod(double length) : length_(length) {}
  int num_joints() const override { return 1; }
  int num_links() const override { return 1; }
  void Links(const Eigen::VectorXd& q, std::vector<Capsule>* links) const override {
    links->assign(1, {Eigen::Vector3d::Zero(),
                      length_ * Eigen::Vector3d(std::cos(q[0]), std::sin(q[0]), 0.0), 0.0});
  }
  void SweepBounds(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                   Eigen::VectorXd* bounds) const override {
    bounds->setConstant(1, std::abs(b[0] - a[0]) * length_);
  }

 private:
  double length_;
};

Eigen::VectorXd Angle(double q) { return Eigen::VectorXd::Constant(1, q); }

// The ball at (1, 0, height), radius rho; the rod (length 2) at angle theta passes at distance
// sqrt(height^2 + sin^2 theta) from its centre while |theta| < pi / 2.
Scene BallAt(double height, double rho) {
  return *Scene::Create({{"ball", Sphere{Eigen::Vector3d(1.0, 0.0, height), rho}}});
}

TEST(SweptClearanceTest, FindsTheCollisionBetweenTwoClearEnds) {
  const Rod rod(2.0);
  const Scene scene = BallAt(0.0, 0.1);
  // Both ends clear by sin(0.5) - 0.1 = 0.38 m; the rod passes through the ball's centre.
  EXPECT_GT(Clearance(rod, &scene, Angle(-0.5)), 0.3);
  EXPECT_GT(Clearance(rod, &scene, Angle(0.5)), 0.3);
  const SweptClearance swept = SweptClearanceOf(rod, &scene, Angle(-0.5), Angle(0.5));
  EXPECT_LT(swept.min_clearance, 0.0);
  EXPECT_GT(swept.at, 0.0);
  EXPECT_LT(swept.at, 1.0);
}

TEST(SweptClearanceTest, BoundsTheLeastClearanceOfAClearMotion) {
  const Rod rod(2.0);
  for (const double height : {0.3, 0.15, 0.11, 0.1001}) {
    const Scene scene = BallAt(height, 0.1);
    const double truth = height - 0.1;  // at theta = 0
    const SweptClearanceOptions options;
    const SweptClearance swept = SweptClearanceOf(rod, &scene, Angle(-0.7), Angle(0.4), options);
    EXPECT_LE(swept.min_clearance, truth + 1e-12) << height;
    EXPECT_LE(swept.evaluations, options.max_evaluations);
    // Settled within the budget: within the tolerance of the truth. A grazing pass near a
    // smooth minimum may spend it (the bound is linear, the clearance quadratic there).
    if (swept.evaluations < options.max_evaluations) {
      EXPECT_GE(swept.min_clearance,
                truth - std::max(options.tolerance, options.relative_tolerance * truth) - 1e-12)
          << height;
    }
  }
}

TEST(SweptClearanceTest, AMotionFarFromEverythingCostsItsTwoEnds) {
  const Rod rod(1.0);
  const Scene far = *Scene::Create({{"far", Sphere{Eigen::Vector3d(0.0, 0.0, 3.0), 0.1}}});
  const SweptClearance swept = SweptClearanceOf(rod, &far, Angle(0.0), Angle(0.05));
  EXPECT_EQ(swept.evaluations, 2);
  EXPECT_NEAR(swept.min_clearance, 3.0 - 0.1, 0.05);
}

TEST(SweptClearanceTest, NoSceneAndNoSelfChecksIsInfinitelyClear) {
  const Rod rod(1.0);
  const SweptClearance swept = SweptClearanceOf(rod, nullptr, Angle(0.0), Angle(3.0));
  EXPECT_EQ(swept.min_clearance, std::numeric_limits<double>::infinity());
  EXPECT_EQ(swept.evaluations, 0);  // nothing to check: not even the ends are measured
}

TEST(SweptClearanceTest, AnExhaustedBudgetStaysBelowTheTruth) {
  const Rod rod(2.0);
  const Scene scene = BallAt(0.1 + 1e-9, 0.1);  // grazing: 1 nm at theta = 0
  SweptClearanceOptions options;
  options.max_evaluations = 6;
  const SweptClearance swept = SweptClearanceOf(rod, &scene, Angle(-1.0), Angle(1.3), options);
  EXPECT_EQ(swept.evaluations, 6);
  EXPECT_LE(swept.min_clearance, 1e-9);
}

}  // namespace
}  // namespace ikd::planning
