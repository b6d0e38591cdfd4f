#include "ikd/systems/curves.h"

#include <cmath>
#include <numbers>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd {
namespace {

using ::testing::HasSubstr;
constexpr double kPi = std::numbers::pi;

// Curvature of the implicit superellipse F = (|x|/a)^n + (|y|/b)^n - 1 from its analytic
// derivatives: kappa = |F_y^2 F_xx - 2 F_x F_y F_xy + F_x^2 F_yy| / |grad F|^3 (F_xy = 0).
double SuperellipseCurvature(double x, double y, double a, double b, double n) {
  const double fx = n * std::pow(std::abs(x), n - 1) / std::pow(a, n) * (x < 0 ? -1 : 1);
  const double fy = n * std::pow(std::abs(y), n - 1) / std::pow(b, n) * (y < 0 ? -1 : 1);
  const double fxx = n * (n - 1) * std::pow(std::abs(x), n - 2) / std::pow(a, n);
  const double fyy = n * (n - 1) * std::pow(std::abs(y), n - 2) / std::pow(b, n);
  return std::abs(fy * fy * fxx + fx * fx * fyy) / std::pow(fx * fx + fy * fy, 1.5);
}

// Vesely problem 4, Sergels Torg: superellipse n = 5/2, a = 25 m, a/b = 6/5, driven at 50 km/h.
// The a-posteriori (Newton-Gregory) lateral acceleration matches v^2 kappa from the analytic
// curvature within 1% wherever kappa is at least a tenth of its maximum, and within 1% of the
// maximum everywhere (kappa ~ |y|^(1/2) vanishes non-smoothly at the flat points on the axes,
// where the second difference needs dt = 2.5e-4 s to stay inside 1%); speed within 1e-4.
TEST(CurvesTest, SergelsTorgAccelerationIsVSquaredKappa) {
  const double a = 25.0, b = 25.0 / 1.2, n = 2.5, v = 50.0 / 3.6;
  auto track = *MakeCurve({CurveType::kSuperellipse, a, b, n});
  FollowOptions options;
  options.dt = 2.5e-4;
  options.steps = 44000;  // a full lap (perimeter ~ 143 m)
  auto run = FollowConstraint(*track, {a, 0, 0}, {0, v, 0}, options);
  ASSERT_TRUE(run.ok()) << run.status();
  double kappa_max = 0.0;
  for (size_t k = 0; k < run->accelerations.size(); ++k) {
    const Eigen::Vector3d& r = run->positions[k + 1];
    kappa_max = std::max(kappa_max, SuperellipseCurvature(r.x(), r.y(), a, b, n));
  }
  const double lateral_max = v * v * kappa_max;
  for (size_t k = 0; k < run->accelerations.size(); ++k) {
    const Eigen::Vector3d& r = run->positions[k + 1];
    const double speed = run->velocities[k].norm();
    ASSERT_NEAR(speed, v, 1e-4 * v) << "sample " << k;
    const double kappa = SuperellipseCurvature(r.x(), r.y(), a, b, n);
    const double expected = speed * speed * kappa;
    const double measured = run->accelerations[k].norm();
    ASSERT_NEAR(measured, expected, 0.01 * lateral_max) << "sample " << k;
    if (kappa >= 0.1 * kappa_max) {
      ASSERT_NEAR(measured, expected, 0.01 * expected) << "sample " << k;
    }
  }
}

// Vesely problem 5: on the pseudo-hyperboloid z = -a / rho under gravity g, a circular orbit at
// radius rho0 needs v^2 = g a / rho0 (the normal force N grad sigma has N = -g from the z
// balance; its radial part g a / rho0^2 is the centripetal v^2 / rho0). Started there, the ball
// keeps rho and z within 1e-5 relative over 10 revolutions.
TEST(CurvesTest, PseudoHyperboloidCircularOrbitKeepsItsRadius) {
  const double a = 0.5, rho0 = 1.0, g = 9.81;
  auto funnel = *MakeSurface({SurfaceType::kPseudoHyperboloid, 1.0, a});
  const double v = std::sqrt(g * a / rho0);
  FollowOptions options;
  options.dt = 1e-3;
  options.steps = static_cast<int>(10 * 2 * kPi * rho0 / v / options.dt);
  options.gravity = {0, 0, -g};
  auto run = FollowConstraint(*funnel, {rho0, 0, -a / rho0}, {0, v, 0}, options);
  ASSERT_TRUE(run.ok()) << run.status();
  double worst_rho = 0.0, worst_z = 0.0;
  for (const Eigen::Vector3d& r : run->positions) {
    worst_rho = std::max(worst_rho, std::abs(std::hypot(r.x(), r.y()) - rho0) / rho0);
    worst_z = std::max(worst_z, std::abs(r.z() + a / rho0) / (a / rho0));
  }
  EXPECT_LT(worst_rho, 1e-5);
  EXPECT_LT(worst_z, 1e-5);
  // The check has teeth: 10% too fast and the orbit is no longer circular.
  auto fast = FollowConstraint(*funnel, {rho0, 0, -a / rho0}, {0, 1.1 * v, 0}, options);
  double spread = 0.0;
  for (const Eigen::Vector3d& r : fast->positions) {
    spread = std::max(spread, std::abs(std::hypot(r.x(), r.y()) - rho0));
  }
  EXPECT_GT(spread, 0.05);
}

// Every Table I curve and Table II surface holds the point on sigma = 0: |sigma| / |grad sigma|
// <= 1e-12 (the projection tolerance) at every step, with gravity for the surfaces.
TEST(CurvesTest, EveryShapeHoldsThePointOnIt) {
  struct Case {
    std::unique_ptr<ConstraintShape> shape;
    Eigen::Vector3d r0, v0;
  };
  std::vector<Case> cases;
  cases.push_back({*MakeCurve({CurveType::kParabola, 0.5}), {0, 0, 0}, {1, 0, 0}});
  cases.push_back({*MakeCurve({CurveType::kEllipse, 2.0, 1.0}), {2, 0, 0}, {0, 1, 0}});
  cases.push_back({*MakeCurve({CurveType::kDiscorectangle, 1, 1, 2, 1.0, 2.0}), {1, 0, 0}, {0, 1, 0}});
  cases.push_back({*MakeCurve({CurveType::kBean}), {1, 0, 0}, {0, 0.5, 0}});
  cases.push_back({*MakeSurface({SurfaceType::kSphere, 2.0}), {2, 0, 0}, {0, 1, 0.5}});
  cases.push_back({*MakeSurface({SurfaceType::kParaboloid, 1, 0.5}), {1, 0, 0.5}, {0, 1, 0}});
  cases.push_back({*MakeSurface({SurfaceType::kHyperboloid, 1, 1, 1}), {1, 0, 0}, {0, 1, 0.3}});
  for (size_t k = 0; k < cases.size(); ++k) {
    FollowOptions options;
    options.dt = 1e-3;
    options.steps = 5000;
    if (!cases[k].shape->planar()) options.gravity = {0, 0, -9.81};
    auto run = FollowConstraint(*cases[k].shape, cases[k].r0, cases[k].v0, options);
    ASSERT_TRUE(run.ok()) << "case " << k << ": " << run.status();
    for (const Eigen::Vector3d& r : run->positions) {
      const double off = std::abs(cases[k].shape->Sigma(r)) / cases[k].shape->Gradient(r).norm();
      ASSERT_LE(off, 1e-12) << "case " << k;
    }
  }
}

TEST(CurvesTest, BadInputNamesTheProblem) {
  EXPECT_THAT(std::string(MakeCurve({CurveType::kEllipse, -1.0, 1.0}).status().message()),
              HasSubstr("a must be finite and > 0"));
  EXPECT_THAT(std::string(MakeCurve({CurveType::kSuperellipse, 1, 1, 0.5}).status().message()),
              HasSubstr("n must be finite and > 1"));
  EXPECT_THAT(std::string(MakeSurface({SurfaceType::kSphere, NAN}).status().message()),
              HasSubstr("r must be finite"));
  auto ellipse = *MakeCurve({CurveType::kEllipse, 2.0, 1.0});
  FollowOptions options;
  EXPECT_THAT(std::string(FollowConstraint(*ellipse, {1, 1, 0}, {0, 1, 0}, options).status().message()),
              HasSubstr("away from the constraint"));
  options.dt = 0.0;
  EXPECT_THAT(std::string(FollowConstraint(*ellipse, {2, 0, 0}, {0, 1, 0}, options).status().message()),
              HasSubstr("dt must be finite and > 0"));
  auto funnel = *MakeSurface({SurfaceType::kPseudoHyperboloid, 1, 1});
  EXPECT_THAT(std::string(FollowConstraint(*funnel, {0, 0, -1}, {0, 1, 0}, FollowOptions()).status().message()),
              HasSubstr("axis"));
}

}  // namespace
}  // namespace ikd
