// The Paden-Kahan subproblems (solver/robot/subproblems.h) on random instances built from known
// angles: every returned angle satisfies its equation, recomputed here with a rotation of the
// test's own (Eigen's AngleAxis), and the angle the instance was built from is among them.
#include "../solver/robot/subproblems.h"

#include <cmath>
#include <numbers>
#include <random>

#include <gtest/gtest.h>
#include <Eigen/Geometry>

namespace ikd::robot::internal {
namespace {

Eigen::Vector3d Turn(const Eigen::Vector3d& k, double theta, const Eigen::Vector3d& p) {
  return Eigen::AngleAxisd(theta, k) * p;
}

double AngleGap(double a, double b) {
  return std::abs(std::remainder(a - b, 2 * std::numbers::pi));
}

struct Draw {
  std::mt19937_64 rng{20261129};
  Eigen::Vector3d Unit() { return Vector().normalized(); }
  Eigen::Vector3d Vector() {
    std::normal_distribution<double> n;
    return {n(rng), n(rng), n(rng)};
  }
  double Angle() { return std::uniform_real_distribution<double>(-3.1, 3.1)(rng); }
};

TEST(Subproblems, RotMatchesAngleAxisAndAngleAboutInvertsIt) {
  Draw draw;
  for (int i = 0; i < 100; ++i) {
    const Eigen::Vector3d k = draw.Unit();
    const double theta = draw.Angle();
    const Eigen::Matrix3d R = Rot(k, theta);
    EXPECT_LT((R - Eigen::AngleAxisd(theta, k).toRotationMatrix()).norm(), 1e-14);
    EXPECT_LT(AngleGap(AngleAbout(k, R), theta), 1e-12);
  }
}

TEST(Subproblems, OneFindsTheAngleThatCarriesP1ToP2) {
  Draw draw;
  for (int i = 0; i < 200; ++i) {
    const Eigen::Vector3d k = draw.Unit(), p1 = draw.Vector();
    const double theta = draw.Angle();
    const Angle1 a = Subproblem1(k, p1, Turn(k, theta, p1));
    EXPECT_TRUE(a.exact);
    EXPECT_FALSE(a.degenerate);
    EXPECT_LT(AngleGap(a.theta, theta), 1e-10);
  }
  // Along the axis every angle serves.
  EXPECT_TRUE(Subproblem1(Eigen::Vector3d::UnitZ(), {0, 0, 2}, {0, 0, 2}).degenerate);
  // Lengths that differ: the least-squares angle, flagged inexact.
  const Angle1 ls = Subproblem1(Eigen::Vector3d::UnitZ(), {1, 0, 0}, {0, 3, 0});
  EXPECT_FALSE(ls.exact);
  EXPECT_NEAR(ls.theta, std::numbers::pi / 2, 1e-12);
}

TEST(Subproblems, FourSolvesTheProjectionEquation) {
  Draw draw;
  for (int i = 0; i < 200; ++i) {
    const Eigen::Vector3d h = draw.Unit(), k = draw.Unit(), p = draw.Vector();
    const double theta = draw.Angle();
    const double d = h.dot(Turn(k, theta, p));
    const Angles a = Subproblem4(h, k, p, d);
    ASSERT_TRUE(a.exact);
    bool source = false;
    for (int j = 0; j < a.count; ++j) {
      EXPECT_NEAR(h.dot(Turn(k, a.theta[j], p)), d, 1e-10);
      source = source || AngleGap(a.theta[j], theta) < 1e-6;
    }
    EXPECT_TRUE(source);
  }
  // Out of reach: the nearest value, not exact.
  const Angles far =
      Subproblem4(Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitZ(), {1, 0, 0}, 2.0);
  EXPECT_FALSE(far.exact);
  EXPECT_EQ(far.count, 1);
  EXPECT_NEAR(far.theta[0], 0.0, 1e-12);
}

TEST(Subproblems, ThreeKeepsTheDistance) {
  Draw draw;
  for (int i = 0; i < 200; ++i) {
    const Eigen::Vector3d k = draw.Unit(), p1 = draw.Vector(), p2 = draw.Vector();
    const double theta = draw.Angle();
    const double d = (Turn(k, theta, p1) - p2).norm();
    const Angles a = Subproblem3(k, p1, p2, d);
    ASSERT_TRUE(a.exact);
    bool source = false;
    for (int j = 0; j < a.count; ++j) {
      EXPECT_NEAR((Turn(k, a.theta[j], p1) - p2).norm(), d, 1e-9);
      source = source || AngleGap(a.theta[j], theta) < 1e-6;
    }
    EXPECT_TRUE(source);
  }
}

TEST(Subproblems, TwoMeetsBothRotations) {
  Draw draw;
  for (int i = 0; i < 200; ++i) {
    const Eigen::Vector3d k1 = draw.Unit(), k2 = draw.Unit(), p2 = draw.Vector();
    const double t1 = draw.Angle(), t2 = draw.Angle();
    // p1 chosen so that (t1, t2) solves rot(k1, t1) p1 = rot(k2, t2) p2.
    const Eigen::Vector3d p1 = Turn(k1, -t1, Turn(k2, t2, p2));
    const AnglePairs a = Subproblem2(k1, p1, k2, p2);
    ASSERT_TRUE(a.exact);
    ASSERT_EQ(a.count, 2);
    bool source = false;
    for (int j = 0; j < a.count; ++j) {
      EXPECT_LT((Turn(k1, a.theta1[j], p1) - Turn(k2, a.theta2[j], p2)).norm(), 1e-9);
      source = source || (AngleGap(a.theta1[j], t1) < 1e-6 && AngleGap(a.theta2[j], t2) < 1e-6);
    }
    EXPECT_TRUE(source);
  }
}

// The cosines and sines the subproblems return with each angle (the closed forms build their
// rotations from them) are those of the angle, by libm here; the out-of-reach and degenerate
// answers included.
void ExpectCosSinOf(double theta, double c, double s) {
  EXPECT_NEAR(c, std::cos(theta), 1e-12) << theta;
  EXPECT_NEAR(s, std::sin(theta), 1e-12) << theta;
}

TEST(Subproblems, EveryAngleComesWithItsCosineAndSine) {
  Draw draw;
  for (int i = 0; i < 200; ++i) {
    const Eigen::Vector3d k = draw.Unit(), k2 = draw.Unit(), p1 = draw.Vector(), p2 = draw.Vector();
    const double theta = draw.Angle();
    EXPECT_LT(
        (Rot(k, std::cos(theta), std::sin(theta)) - Eigen::AngleAxisd(theta, k).toRotationMatrix())
            .norm(),
        1e-14);
    const Angle1 about = AngleAboutWithCosSin(k, Eigen::AngleAxisd(theta, k).toRotationMatrix());
    ExpectCosSinOf(about.theta, about.cos, about.sin);
    const Angle1 one = Subproblem1(k, p1, p2);  // generally inexact: least squares
    ExpectCosSinOf(one.theta, one.cos, one.sin);
    // d drawn past the reachable band now and then: the single nearest answer.
    const Angles four = Subproblem4(k2, k, p1, 1.5 * draw.Vector().x());
    for (int j = 0; j < four.count; ++j) ExpectCosSinOf(four.theta[j], four.cos[j], four.sin[j]);
    const Angles three = Subproblem3(k, p1, p2, std::abs(draw.Vector().x()));
    for (int j = 0; j < three.count; ++j) {
      ExpectCosSinOf(three.theta[j], three.cos[j], three.sin[j]);
    }
    const AnglePairs two = Subproblem2(k, p1, k2, Turn(k2, theta, p1));
    for (int j = 0; j < two.count; ++j) {
      ExpectCosSinOf(two.theta1[j], two.cos1[j], two.sin1[j]);
      ExpectCosSinOf(two.theta2[j], two.cos2[j], two.sin2[j]);
    }
  }
  const Angles degenerate = Subproblem4(Eigen::Vector3d::UnitZ(), Eigen::Vector3d::UnitZ(),
                                        Eigen::Vector3d::UnitZ(), 1.0);
  ASSERT_TRUE(degenerate.degenerate);
  ExpectCosSinOf(degenerate.theta[0], degenerate.cos[0], degenerate.sin[0]);
}

}  // namespace
}  // namespace ikd::robot::internal
