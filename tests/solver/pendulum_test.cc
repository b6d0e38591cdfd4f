#include "ikd/systems/pendulum.h"

#include <cmath>
#include <numbers>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd {
namespace {

using ::testing::HasSubstr;
constexpr double kPi = std::numbers::pi;

ProjectionOptions Tight() {
  ProjectionOptions o;
  o.tolerance = 1e-12;
  o.max_iterations = 100000;
  return o;
}

PendulumSpec Single(double angle, double omega, double g) {
  PendulumSpec s;
  s.masses = {1.0};
  s.lengths = {1.0};
  s.angles = {angle};
  s.angular_velocities = {omega};
  s.gravity = g;
  return s;
}

// Vesely problem 1: start at r0 = (1, 0) with v0 = (0, -1), no gravity, dt = 0.01: phi(n dt)
// follows omega t (omega = -1); a projected Verlet step turns by atan(dt) = dt (1 - dt^2/3 + ..)
// at worst, so after n steps |phi - omega t| <= n dt^3 / 3 (2.1e-4 rad for a full turn);
// |r| = 1 to the tolerance 1e-12 at every step.
TEST(PendulumTest, Problem1CircleFollowsOmegaT) {
  for (Method m : {Method::kShake, Method::kRattle}) {
    auto p = *Pendulum::Create(Single(kPi / 2, -1.0, 0.0), m, Tight(), 0.01);
    double worst_phase = 0.0;
    for (int n = 1; n <= 628; ++n) {
      ASSERT_TRUE(p.Step().ok());
      const Eigen::Vector3d r = p.positions().col(1);
      EXPECT_NEAR(r.norm(), 1.0, 1e-12);
      const double phi = std::atan2(r.y(), r.x());  // from +x, as problem 1 measures it
      worst_phase = std::max(worst_phase, std::abs(std::remainder(phi - (-0.01 * n), 2 * kPi)));
    }
    EXPECT_LT(worst_phase, 628 * 1e-6 / 3) << MethodName(m);
    EXPECT_GT(worst_phase, 0.0);
  }
}

// Complete elliptic integral of the first kind by the arithmetic-geometric mean:
// K(k) = pi / (2 AGM(1, sqrt(1 - k^2))).
double EllipticK(double k) {
  double a = 1.0, b = std::sqrt(1.0 - k * k);
  for (int i = 0; i < 40; ++i) std::tie(a, b) = std::pair(0.5 * (a + b), std::sqrt(a * b));
  return kPi / (2.0 * a);
}

// A single pendulum released at 60 degrees: period T = 4 sqrt(l/g) K(sin 30 deg) (exact, large
// amplitude); RATTLE at dt = 1e-3 matches it within 0.1% (measured from upward zero crossings).
TEST(PendulumTest, SixtyDegreePeriodMatchesEllipticIntegral) {
  const double g = 9.81;
  const double exact = 4.0 * std::sqrt(1.0 / g) * EllipticK(std::sin(kPi / 6));
  for (Method m : {Method::kRattle, Method::kMilcShake}) {
    auto p = *Pendulum::Create(Single(kPi / 3, 0.0, g), m, Tight(), 1e-3);
    std::vector<double> crossings;
    double previous = p.RodAngles()[0];
    while (crossings.size() < 4) {
      ASSERT_TRUE(p.Step().ok());
      const double angle = p.RodAngles()[0];
      if (previous < 0.0 && angle >= 0.0) {
        crossings.push_back(p.time() - 1e-3 * angle / (angle - previous));
      }
      previous = angle;
    }
    const double period = (crossings.back() - crossings.front()) / 3.0;
    EXPECT_NEAR(period, exact, 1e-3 * exact) << MethodName(m);
  }
}

// Independent formulation: the double pendulum's Lagrange equations in the angles, integrated by
// classical RK4 with a step 1/10 of the Cartesian one.
struct AngleState {
  double t1, t2, w1, w2;
};

AngleState Derivative(const AngleState& s, double m1, double m2, double l1, double l2, double g) {
  const double d = s.t1 - s.t2;
  const double den = 2 * m1 + m2 - m2 * std::cos(2 * d);
  const double a1 = (-g * (2 * m1 + m2) * std::sin(s.t1) - m2 * g * std::sin(s.t1 - 2 * s.t2) -
                     2 * std::sin(d) * m2 * (s.w2 * s.w2 * l2 + s.w1 * s.w1 * l1 * std::cos(d))) /
                    (l1 * den);
  const double a2 = (2 * std::sin(d) *
                     (s.w1 * s.w1 * l1 * (m1 + m2) + g * (m1 + m2) * std::cos(s.t1) +
                      s.w2 * s.w2 * l2 * m2 * std::cos(d))) /
                    (l2 * den);
  return {s.w1, s.w2, a1, a2};
}

AngleState Rk4(AngleState s, double h, int steps, double m1, double m2, double l1, double l2,
               double g) {
  auto axpy = [](const AngleState& a, double c, const AngleState& b) {
    return AngleState{a.t1 + c * b.t1, a.t2 + c * b.t2, a.w1 + c * b.w1, a.w2 + c * b.w2};
  };
  for (int i = 0; i < steps; ++i) {
    const AngleState k1 = Derivative(s, m1, m2, l1, l2, g);
    const AngleState k2 = Derivative(axpy(s, h / 2, k1), m1, m2, l1, l2, g);
    const AngleState k3 = Derivative(axpy(s, h / 2, k2), m1, m2, l1, l2, g);
    const AngleState k4 = Derivative(axpy(s, h, k3), m1, m2, l1, l2, g);
    s = {s.t1 + h / 6 * (k1.t1 + 2 * k2.t1 + 2 * k3.t1 + k4.t1),
         s.t2 + h / 6 * (k1.t2 + 2 * k2.t2 + 2 * k3.t2 + k4.t2),
         s.w1 + h / 6 * (k1.w1 + 2 * k2.w1 + 2 * k3.w1 + k4.w1),
         s.w2 + h / 6 * (k1.w2 + 2 * k2.w2 + 2 * k3.w2 + k4.w2)};
  }
  return s;
}

PendulumSpec Double() {
  PendulumSpec s;
  s.masses = {1.0, 0.7};
  s.lengths = {1.0, 0.8};
  s.angles = {0.9, 1.6};
  s.angular_velocities = {0.0, 0.5};
  return s;
}

// Max site-position difference between the Cartesian run and RK4 over 1.5 s.
double DoublePendulumError(Method method, double dt) {
  const PendulumSpec spec = Double();
  auto p = *Pendulum::Create(spec, method, Tight(), dt);
  const int steps = static_cast<int>(std::lround(1.5 / dt));
  for (int n = 0; n < steps; ++n) EXPECT_TRUE(p.Step().ok());
  const AngleState s = Rk4({0.9, 1.6, 0.0, 0.5}, dt / 10, 10 * steps, 1.0, 0.7, 1.0, 0.8, 9.81);
  const Eigen::Vector3d r1(std::sin(s.t1), -std::cos(s.t1), 0.0);
  const Eigen::Vector3d r2 = r1 + 0.8 * Eigen::Vector3d(std::sin(s.t2), -std::cos(s.t2), 0.0);
  return std::max((p.positions().col(1) - r1).norm(), (p.positions().col(2) - r2).norm());
}

class DoublePendulumTest : public ::testing::TestWithParam<Method> {};

// The Cartesian trajectory converges to the angle-coordinate one at second order: error below
// 2e-3 m at dt = 1e-3, and halving dt divides it by 4 +- 25% (velocity Verlet is O(dt^2)).
TEST_P(DoublePendulumTest, AgreesWithAngleCoordinateRk4) {
  const double coarse = DoublePendulumError(GetParam(), 1e-3);
  const double fine = DoublePendulumError(GetParam(), 5e-4);
  EXPECT_LT(coarse, 2e-3);
  EXPECT_NEAR(coarse / fine, 4.0, 1.0) << coarse << " vs " << fine;
}

// 1e5 steps of dt = 1e-3 (100 s): the total energy oscillates by O(dt^2) with no secular drift:
// the mean over the last 10% differs from the mean over the first 10% by less than 1e-5 J, and
// the largest excursion stays below 5e-4 J (E ~ 10 J).
TEST_P(DoublePendulumTest, EnergyHasNoSecularDrift) {
  auto p = *Pendulum::Create(Double(), GetParam(), Tight(), 1e-3);
  const double e0 = p.TotalEnergy();
  const int steps = 100000, window = steps / 10;
  double first = 0.0, last = 0.0, worst = 0.0;
  for (int n = 0; n < steps; ++n) {
    ASSERT_TRUE(p.Step().ok());
    const double e = p.TotalEnergy();
    worst = std::max(worst, std::abs(e - e0));
    if (n < window) first += e / window;
    if (n >= steps - window) last += e / window;
  }
  EXPECT_LT(std::abs(last - first), 1e-5);
  EXPECT_LT(worst, 5e-4);
}

INSTANTIATE_TEST_SUITE_P(VelocityVerlet, DoublePendulumTest,
                         ::testing::Values(Method::kRattle, Method::kMilcShake, Method::kMatrix),
                         [](const auto& info) { return std::string(MethodName(info.param)); });

// Conical pendulum: at polar angle theta the steady rotation has Omega^2 = g / (l cos theta);
// started on it, the 3-D pendulum keeps theta within 1e-5 rad over 10 revolutions.
TEST(PendulumTest, ConicalPendulumKeepsItsAngle) {
  const double theta = 0.6, g = 9.81;
  PendulumSpec s;
  s.planar = false;
  s.masses = {2.0};
  s.lengths = {1.5};
  s.angles = {theta, 0.0};
  s.angular_velocities = {0.0, std::sqrt(g / (1.5 * std::cos(theta)))};
  auto p = *Pendulum::Create(s, Method::kRattle, Tight(), 1e-3);
  const double period = 2 * kPi / s.angular_velocities[1];
  double worst = 0.0;
  while (p.time() < 10 * period) {
    ASSERT_TRUE(p.Step().ok());
    worst = std::max(worst, std::abs(p.RodAngles()[0] - theta));
  }
  EXPECT_LT(worst, 1e-5);
}

TEST(PendulumTest, RejectsBadInput) {
  PendulumSpec s = Double();
  s.lengths[1] = -1.0;
  EXPECT_THAT(std::string(Pendulum::Create(s, Method::kRattle, Tight(), 1e-3).status().message()),
              HasSubstr("lengths[1] must be finite and > 0"));
  s = Double();
  s.masses.clear();
  EXPECT_THAT(std::string(s.Validate().message()), HasSubstr("masses: need between 1"));
  s = Double();
  s.angles[0] = NAN;
  EXPECT_THAT(std::string(s.Validate().message()), HasSubstr("angles[0]"));
  s = Double();
  s.planar = false;
  EXPECT_THAT(std::string(s.Validate().message()), HasSubstr("angles: need 4"));
  EXPECT_THAT(std::string(Pendulum::Create(Double(), Method::kRattle, Tight(), 0.0).status().message()),
              HasSubstr("dt"));
}

}  // namespace
}  // namespace ikd
