// The motion check against closed forms: a rod turning about the z axis past a ball.
#include "ikd/planning/swept_clearance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
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
    ++evaluations;
    links->assign(1, {Eigen::Vector3d::Zero(),
                      length_ * Eigen::Vector3d(std::cos(q[0]), std::sin(q[0]), 0.0), 0.0});
  }
  void SweepBounds(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                   Eigen::VectorXd* bounds) const override {
    bounds->setConstant(1, std::abs(b[0] - a[0]) * length_);
  }
  void TravelBounds(const Eigen::VectorXd& travel, Eigen::VectorXd* bounds) const override {
    bounds->setConstant(1, std::abs(travel[0]) * length_);
  }
  mutable int evaluations = 0;

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

// Rows of rod angles, one a row.
Eigen::MatrixXd Rows(const std::vector<double>& angles) {
  return Eigen::Map<const Eigen::VectorXd>(angles.data(), static_cast<int>(angles.size()));
}

// The test's own closed form: the rod (length 2) at theta passes the ball at (1, 0, height)
// of radius rho at sqrt(height^2 + sin^2 theta) - rho, for |theta| < pi / 2.
double RodClearance(double theta, double height, double rho) {
  return std::hypot(height, std::sin(theta)) - rho;
}

TEST(StaysClearAlongTest, FindsTheStepThatPassesThroughTheBall) {
  const Rod rod(2.0);
  const Scene scene = BallAt(0.0, 0.1);
  // Every row clear by at least sin(0.15) - 0.1 = 0.05 m; the step from -0.15 to 0.15 crosses.
  EXPECT_FALSE(StaysClearAlong(rod, &scene, Rows({-0.9, -0.6, -0.35, -0.15, 0.15, 0.4})));
  EXPECT_TRUE(StaysClearAlong(rod, &scene, Rows({-0.9, -0.6, -0.35, -0.15})));
  EXPECT_FALSE(StaysClearAlong(rod, &scene, Rows({-0.9, 0.05})));  // a row inside
}

TEST(StaysClearAlongTest, FarFromEverythingOneConfigurationTells) {
  const Rod rod(1.0);
  const Scene far = *Scene::Create({{"far", Sphere{Eigen::Vector3d(0.0, 0.0, 3.0), 0.1}}});
  EXPECT_TRUE(StaysClearAlong(rod, &far, Rows({0.0, 0.2, 0.5, 0.3, 0.6, 0.9, 1.2, 1.0})));
  EXPECT_EQ(rod.evaluations, 1);
}

// Paths that go back and forth past the ball at several heights: the verdict is the test's own
// (every row and a dense sampling of every step against the closed form), and the same as
// every step's SweptClearancesAlong.
TEST(StaysClearAlongTest, AgreesWithADenseSamplingAndWithEveryStepsCheck) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> start(-1.2, 1.2), step(-0.4, 0.4);
  int touching = 0, clear = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const double height = 0.02 * (trial % 10);
    const Rod rod(2.0);
    const Scene scene = BallAt(height, 0.1);
    std::vector<double> angles{start(rng)};
    for (int r = 0; r < 8; ++r) {
      angles.push_back(std::clamp(angles.back() + step(rng), -1.4, 1.4));
    }
    double least = std::numeric_limits<double>::infinity();
    for (size_t r = 0; r + 1 < angles.size(); ++r) {
      for (int i = 0; i <= 1000; ++i) {
        const double theta = angles[r] + (i / 1000.0) * (angles[r + 1] - angles[r]);
        least = std::min(least, RodClearance(theta, height, 0.1));
      }
    }
    if (std::abs(least) < 1e-6) continue;  // grazing: a dense sample may fall either way
    const bool touches = least < 0.0;
    bool every_step_clear = true;
    for (const SweptClearance& motion : SweptClearancesAlong(rod, &scene, Rows(angles))) {
      every_step_clear &= motion.min_clearance >= 0.0;
    }
    const bool verdict = StaysClearAlong(rod, &scene, Rows(angles));
    EXPECT_EQ(verdict, !touches) << trial;
    EXPECT_EQ(verdict, every_step_clear) << trial;
    (touches ? touching : clear)++;
  }
  EXPECT_GE(touching, 30);
  EXPECT_GE(clear, 30);
}

}  // namespace
}  // namespace ikd::planning
