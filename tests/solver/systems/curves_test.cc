#include "ikd/systems/curves.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd::systems {
namespace {

using ::testing::HasSubstr;
constexpr double kPi = std::numbers::pi;
constexpr double kG = 9.81;

// Measured values go to the test XML (--gtest_output=xml) for the docs.
std::string Sci(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3e", v);
  return buffer;
}

template <typename T>
T OrDie(absl::StatusOr<T> value) {
  EXPECT_TRUE(value.ok()) << value.status();
  return *std::move(value);
}

bool AllFinite(const ConstrainedMotion& t) {
  for (const auto* list :
       {&t.positions, &t.velocities, &t.accelerations, &t.constraint_accelerations}) {
    for (const Eigen::Vector3d& v : *list) {
      if (!v.allFinite()) return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Vesely problem 4: Sergels Torg, a superellipse with n = 5/2, a = 25 m, a/b = 6/5, at 50 km/h.

constexpr double kA = 25.0, kB = 25.0 / 1.2, kN = 2.5, kSpeed = 50.0 / 3.6;

// Curvature of the implicit curve F(x, y) = (|x|/a)^n + (|y|/b)^n - 1 = 0 from the analytic
// first and second derivatives of F (F_xy = 0):
//   kappa = |F_y^2 F_xx - 2 F_x F_y F_xy + F_x^2 F_yy| / (F_x^2 + F_y^2)^(3/2).
double SuperellipseCurvature(double x, double y) {
  const double fx = kN * std::pow(std::abs(x), kN - 1) / std::pow(kA, kN) * (x < 0 ? -1 : 1);
  const double fy = kN * std::pow(std::abs(y), kN - 1) / std::pow(kB, kN) * (y < 0 ? -1 : 1);
  const double fxx = kN * (kN - 1) * std::pow(std::abs(x), kN - 2) / std::pow(kA, kN);
  const double fyy = kN * (kN - 1) * std::pow(std::abs(y), kN - 2) / std::pow(kB, kN);
  return std::abs(fy * fy * fxx + fx * fx * fyy) / std::pow(fx * fx + fy * fy, 1.5);
}

// The point of largest curvature in the first quadrant, by a dense scan of the parametrization
// x = a cos(t)^(2/n), y = b sin(t)^(2/n).
Eigen::Vector2d SharpestPoint() {
  Eigen::Vector2d best(kA, 0.0);
  double kappa_max = 0.0;
  for (int i = 1; i < 200000; ++i) {
    const double t = 0.5 * kPi * i / 200000;
    const Eigen::Vector2d p(kA * std::pow(std::cos(t), 2 / kN), kB * std::pow(std::sin(t), 2 / kN));
    const double kappa = SuperellipseCurvature(p.x(), p.y());
    if (kappa > kappa_max) kappa_max = kappa, best = p;
  }
  return best;
}

ConstrainedMotion DriveAroundSergelsTorg(FollowMode mode, double dt, int steps) {
  auto track = OrDie(MakeCurve({.type = CurveType::kSuperellipse, .a = kA, .b = kB, .n = kN}));
  FollowOptions options;
  options.mode = mode;
  options.dt = dt;
  options.steps = steps;
  ConstrainedMotion run = OrDie(FollowConstraint(*track, {kA, 0, 0}, {0, kSpeed, 0}, options));
  EXPECT_TRUE(run.projection.converged()) << run.projection.message;
  EXPECT_EQ(run.steps_completed(), steps);
  return run;
}

// Reference: the lateral acceleration of uniform motion is v^2 kappa along the inward normal,
// kappa from the implicit-function formula above (Vesely problem 4). Constant-speed mode,
// dt = 2.5e-4 s (h = 3.5 mm per step), one full lap. Every sample matches v^2 kappa within 1%
// except the 7 samples within 3 h of each flat point on the axes (s = arc length from it): there
// kappa ~ |s|^(1/2) has no derivative; the second difference errs by ~ h^2 kappa'' / 12 =
// kappa h^2 / (48 s^2), 0.23% at |s| = 3 h (measured worst elsewhere: 0.23%), and near s = 0
// reads ~ v^2 kappa(h) where kappa -> 0, so those samples are held to 1% of the largest v^2
// kappa (12.4 m/s^2) instead (measured 0.63%). The chord speed is 50 km/h within 1e-12 and the
// central-difference speed within 1e-6.
TEST(CurvesTest, SergelsTorgLateralAccelerationIsVSquaredKappa) {
  const double dt = 2.5e-4;
  const ConstrainedMotion run = DriveAroundSergelsTorg(FollowMode::kConstantSpeed, dt, 44000);
  ASSERT_TRUE(AllFinite(run));
  double kappa_max = 0.0;
  for (double t = 0; t < 0.5 * kPi; t += 1e-4) {
    kappa_max = std::max(kappa_max, SuperellipseCurvature(kA * std::pow(std::cos(t), 2 / kN),
                                                          kB * std::pow(std::sin(t), 2 / kN)));
  }
  const double lateral_max = kSpeed * kSpeed * kappa_max;
  const double flat_zone = 3 * kSpeed * dt;
  double worst_relative = 0.0, worst_flat = 0.0, worst_speed = 0.0, turned = 0.0;
  int excluded = 0;
  for (size_t k = 0; k < run.accelerations.size(); ++k) {
    const Eigen::Vector3d& r = run.positions[k + 1];
    const Eigen::Vector3d& a = run.accelerations[k];
    turned += std::remainder(
        std::atan2(r.y(), r.x()) - std::atan2(run.positions[k].y(), run.positions[k].x()), 2 * kPi);
    ASSERT_NEAR((run.positions[k + 1] - run.positions[k]).norm() / dt, kSpeed, 1e-12 * kSpeed);
    worst_speed = std::max(worst_speed, std::abs(run.velocities[k].norm() / kSpeed - 1.0));
    const double expected = kSpeed * kSpeed * SuperellipseCurvature(r.x(), r.y());
    const Eigen::Vector2d inward = -Eigen::Vector2d(r.x(), r.y()).normalized();
    ASSERT_GT(a.head<2>().dot(inward), 0.0) << "sample " << k << ": not toward the inside";
    if (std::abs(r.x()) < flat_zone || std::abs(r.y()) < flat_zone) {
      ++excluded;
      worst_flat = std::max(worst_flat, std::abs(a.norm() - expected) / lateral_max);
      continue;
    }
    worst_relative = std::max(worst_relative, std::abs(a.norm() / expected - 1.0));
  }
  EXPECT_GT(turned, 2 * kPi) << "less than one lap";
  EXPECT_LT(worst_relative, 0.01);
  EXPECT_LT(worst_flat, 0.01);
  EXPECT_LT(worst_speed, 1e-6);
  EXPECT_LE(excluded, 5 * 7);  // 44000 steps run 153 m: the first flat point comes twice
  RecordProperty("worst_relative", Sci(worst_relative));
  RecordProperty("worst_flat_over_max", Sci(worst_flat));
  RecordProperty("excluded_samples", std::to_string(excluded));
  RecordProperty("of_samples", std::to_string(run.accelerations.size()));
  RecordProperty("worst_speed", Sci(worst_speed));
  RecordProperty("lateral_max", Sci(lateral_max));
}

// Reference: Vesely problem 4 asks where the largest acceleration occurs: at the point of
// largest curvature, found by a dense scan of the parametrization (independent of sigma). The
// largest a-posteriori |a| is v^2 kappa_max within 0.1% and lies within 0.2 m of one of the four
// symmetric images of that point (kappa is flat there: O(dt^2) noise moves the argmax by mm).
TEST(CurvesTest, SergelsTorgLargestAccelerationIsAtTheSharpestPoint) {
  const ConstrainedMotion run = DriveAroundSergelsTorg(FollowMode::kConstantSpeed, 1e-3, 11000);
  const Eigen::Vector2d sharpest = SharpestPoint();
  size_t at = 0;
  for (size_t k = 0; k < run.accelerations.size(); ++k) {
    if (run.accelerations[k].norm() > run.accelerations[at].norm()) at = k;
  }
  const Eigen::Vector3d& r = run.positions[at + 1];
  const double expected = kSpeed * kSpeed * SuperellipseCurvature(sharpest.x(), sharpest.y());
  EXPECT_NEAR(run.accelerations[at].norm(), expected, 1e-3 * expected);
  EXPECT_LT((Eigen::Vector2d(std::abs(r.x()), std::abs(r.y())) - sharpest).norm(), 0.2);
  RecordProperty("a_max", Sci(run.accelerations[at].norm()));
  RecordProperty("sharpest_x", Sci(sharpest.x()));
  RecordProperty("sharpest_y", Sci(sharpest.y()));
}

// Reference: without forces, Verlet plus the projection (SHAKE for one constraint) conserves the
// speed up to an O(dt^2) oscillation: in free-flight mode (dt = 1e-3 s) the central-difference
// speed around Sergels Torg stays within 1e-4 of 50 km/h over a lap (measured 3e-8), and
// v^2 kappa still holds within 1% away from the flat points (the same |s| < 3 h exclusion).
TEST(CurvesTest, SergelsTorgFreeFlightKeepsTheSpeed) {
  const double dt = 1e-3;
  const ConstrainedMotion run = DriveAroundSergelsTorg(FollowMode::kFreeFlight, dt, 11000);
  double worst_speed = 0.0, worst_relative = 0.0;
  for (size_t k = 0; k < run.accelerations.size(); ++k) {
    const Eigen::Vector3d& r = run.positions[k + 1];
    const double speed = run.velocities[k].norm();
    worst_speed = std::max(worst_speed, std::abs(speed / kSpeed - 1.0));
    if (std::abs(r.x()) < 3 * kSpeed * dt || std::abs(r.y()) < 3 * kSpeed * dt) continue;
    const double expected = speed * speed * SuperellipseCurvature(r.x(), r.y());
    worst_relative = std::max(worst_relative, std::abs(run.accelerations[k].norm() / expected - 1));
  }
  EXPECT_LT(worst_speed, 1e-4);
  EXPECT_LT(worst_relative, 0.01);
  RecordProperty("worst_speed", Sci(worst_speed));
  RecordProperty("worst_relative", Sci(worst_relative));
}

// Reference: the stadium of the same total length and width (Vesely problem 4's comparison;
// Table I orientation, long along y: r = b = 20.83 m, y0 = a - b = 4.17 m): lateral
// acceleration v^2 / r = 9.26 m/s^2 on the end caps and 0 on the straight sides, within 1% of
// v^2 / r, except the samples whose 3-point stencil straddles one of the 4 junctions where the
// curvature jumps (at most 2 per junction). Constant-speed mode keeps the chord speed exact
// across the jumps (1e-12).
TEST(CurvesTest, StadiumAccelerationJumpsBetweenZeroAndVSquaredOverR) {
  const double r = kB, y0 = kA - kB, dt = 1e-3;
  auto stadium = OrDie(MakeCurve({.type = CurveType::kDiscorectangle, .r = r, .y0 = y0}));
  FollowOptions options;
  options.mode = FollowMode::kConstantSpeed;
  options.dt = dt;
  options.steps = 11000;  // perimeter 2 pi r + 4 y0 = 147.6 m: more than a lap
  const ConstrainedMotion run =
      OrDie(FollowConstraint(*stadium, {r, 0, 0}, {0, kSpeed, 0}, options));
  ASSERT_TRUE(run.projection.converged()) << run.projection.message;
  const double on_cap = kSpeed * kSpeed / r;
  double worst = 0.0;
  int straddling = 0;
  for (size_t k = 0; k < run.accelerations.size(); ++k) {
    ASSERT_NEAR((run.positions[k + 1] - run.positions[k]).norm() / dt, kSpeed, 1e-12 * kSpeed);
    const double before = std::abs(run.positions[k].y()) - y0;
    const double here = std::abs(run.positions[k + 1].y()) - y0;
    const double after = std::abs(run.positions[k + 2].y()) - y0;
    if ((before > 0) != (after > 0) || (here > 0) != (after > 0)) {
      ++straddling;
      continue;
    }
    const double expected = here > 0 ? on_cap : 0.0;
    worst = std::max(worst, std::abs(run.accelerations[k].norm() - expected) / on_cap);
  }
  EXPECT_LT(worst, 0.01);
  EXPECT_LE(straddling, 2 * 4 + 2);  // a lap has 4 junctions; the run starts a lap over
  RecordProperty("worst_over_v2_r", Sci(worst));
  RecordProperty("straddling", std::to_string(straddling));
}

// ---------------------------------------------------------------------------------------------
// Vesely problem 5: the model gravitational well, sigma = -a / rho - z.

// Circular orbit at rho0 in the plane z0 = -a / rho0, unit mass, constraint force -lambda grad
// sigma with grad sigma = (a x / rho^3, a y / rho^3, -1):
//   z:      0 = -g + lambda                        -> lambda = g,
//   radial: -v^2 / rho0 = -lambda a / rho0^2       -> v^2 = g a / rho0.
// Reference: started there (a = 0.5 m^2, rho0 = 1 m, dt = 1e-3 s, omega = v / rho0 = 2.2 /s),
// the Euler start misses Verlet's discrete circular orbit by O(dt^2), so rho and z oscillate by
// at most (omega dt)^2 = 4.9e-6 relative, with no growth over 20 revolutions (the last two
// revolutions stay within 1.1x the first two); the constraint acceleration is g |grad sigma| =
// g sqrt(1 + a^2 / rho0^4) within (omega dt)^2, and the orbit turns at omega (phase within
// 1e-3 rad after 20 revolutions = 126 rad). Teeth: 10% too fast, rho leaves rho0 by > 5%.
TEST(CurvesTest, PseudoHyperboloidCircularOrbitKeepsItsRadius) {
  const double a = 0.5, rho0 = 1.0, z0 = -a / rho0, dt = 1e-3;
  auto funnel = OrDie(MakeSurface({.type = SurfaceType::kPseudoHyperboloid, .a = a}));
  const double v = std::sqrt(kG * a / rho0), omega = v / rho0;
  FollowOptions options;
  options.dt = dt;
  options.steps = static_cast<int>(20 * 2 * kPi / omega / dt);
  options.gravity = {0, 0, -kG};
  const ConstrainedMotion run = OrDie(FollowConstraint(*funnel, {rho0, 0, z0}, {0, v, 0}, options));
  ASSERT_TRUE(run.projection.converged()) << run.projection.message;
  ASSERT_EQ(run.steps_completed(), options.steps);
  const size_t two_turns = run.positions.size() / 10;
  double worst_rho = 0.0, worst_z = 0.0, worst_force = 0.0, turned = 0.0, early = 0.0, late = 0.0;
  for (size_t n = 1; n < run.positions.size(); ++n) {
    const Eigen::Vector3d& r = run.positions[n];
    const double off = std::abs(std::hypot(r.x(), r.y()) / rho0 - 1.0);
    worst_rho = std::max(worst_rho, off);
    if (n <= two_turns) early = std::max(early, off);
    if (n + two_turns >= run.positions.size()) late = std::max(late, off);
    worst_z = std::max(worst_z, std::abs(r.z() / z0 - 1.0));
    turned += std::remainder(
        std::atan2(r.y(), r.x()) - std::atan2(run.positions[n - 1].y(), run.positions[n - 1].x()),
        2 * kPi);
  }
  const double force = kG * std::sqrt(1.0 + a * a / (rho0 * rho0 * rho0 * rho0));
  for (const Eigen::Vector3d& c : run.constraint_accelerations) {
    worst_force = std::max(worst_force, std::abs(c.norm() / force - 1.0));
  }
  const double bound = (omega * dt) * (omega * dt);
  EXPECT_LT(worst_rho, bound);
  EXPECT_LT(worst_z, bound);
  EXPECT_LT(worst_force, bound);
  EXPECT_LE(late, 1.1 * early);
  EXPECT_NEAR(turned, omega * run.steps_completed() * dt, 1e-3);
  RecordProperty("worst_rho", Sci(worst_rho));
  RecordProperty("early_late", Sci(early) + " " + Sci(late));
  RecordProperty("worst_z", Sci(worst_z));
  RecordProperty("worst_force", Sci(worst_force));
  RecordProperty("phase_error", Sci(turned - omega * run.steps_completed() * dt));

  const ConstrainedMotion fast =
      OrDie(FollowConstraint(*funnel, {rho0, 0, z0}, {0, 1.1 * v, 0}, options));
  double spread = 0.0;
  for (const Eigen::Vector3d& r : fast.positions) {
    spread = std::max(spread, std::abs(std::hypot(r.x(), r.y()) - rho0));
  }
  EXPECT_GT(spread, 0.05 * rho0);
}

// Reference: numerical failure is an outcome, not an error (design rule). A step longer than
// the ellipse (v = 1000 m/s, dt = 0.01 s) has no point of the curve along grad sigma(r0): the
// run is OK, stops after step 0 and says why in its summary. A ball dropped from rest into the
// funnel at dt = 0.05 s approaches the axis with ever larger steps; whatever happens there, the
// result is OK, NaN-free and every recorded point lies on the surface.
TEST(CurvesTest, FailedProjectionIsAnOutcomeNotAnError) {
  auto ellipse = OrDie(MakeCurve({.type = CurveType::kEllipse, .a = 2.0, .b = 1.0}));
  FollowOptions options;
  options.dt = 0.01;
  options.steps = 10;
  const ConstrainedMotion run = OrDie(FollowConstraint(*ellipse, {2, 0, 0}, {0, 1000, 0}, options));
  EXPECT_FALSE(run.projection.converged());
  EXPECT_THAT(run.projection.message, HasSubstr("step 1 of 10"));
  EXPECT_EQ(run.steps_completed(), 0);
  EXPECT_TRUE(AllFinite(run));
  RecordProperty("ellipse", std::string(constraints::OutcomeName(run.projection.outcome)) + ": " +
                                run.projection.message);

  auto funnel = OrDie(MakeSurface({.type = SurfaceType::kPseudoHyperboloid, .a = 0.5}));
  options.dt = 0.05;
  options.steps = 100000;
  options.gravity = {0, 0, -kG};
  const ConstrainedMotion fall = OrDie(FollowConstraint(*funnel, {1, 0, -0.5}, {0, 0, 0}, options));
  EXPECT_TRUE(AllFinite(fall));
  for (const Eigen::Vector3d& r : fall.positions) {
    EXPECT_LE(funnel->DistanceEstimate(r), 1e-12 * funnel->length_scale());
  }
  RecordProperty("funnel", std::string(constraints::OutcomeName(fall.projection.outcome)) +
                               " after " + std::to_string(fall.steps_completed()) + ": " +
                               fall.projection.message);
}

// ---------------------------------------------------------------------------------------------
// Table I and II shapes.

using SigmaFunction = std::function<double(const Eigen::Vector3d&)>;

// |grad sigma(r) - central difference of the independently written sigma| / |grad sigma(r)|.
double GradientError(const ConstraintShape& shape, const SigmaFunction& sigma,
                     const Eigen::Vector3d& r) {
  // Small h: the stadium's sigma is only C^1 at the cap junctions (central-difference error
  // ~ h |jump of sigma''|); rounding adds ~1e-16 / h.
  const double h = 1e-7 * shape.length_scale();
  Eigen::Vector3d numeric;
  for (int i = 0; i < 3; ++i) {
    const Eigen::Vector3d e = h * Eigen::Vector3d::Unit(i);
    numeric[i] = (sigma(r + e) - sigma(r - e)) / (2 * h);
  }
  const Eigen::Vector3d gradient = shape.Gradient(r);
  return (gradient - numeric).norm() / gradient.norm();
}

struct SurfaceCase {
  SurfaceSpec spec;
  Eigen::Vector3d r0, v0;
  SigmaFunction sigma;  // Table II, written out independently
};

class SurfaceTest : public ::testing::TestWithParam<int> {};

std::vector<SurfaceCase> SurfaceCases() {
  return {
      {{.type = SurfaceType::kSphere, .r = 2.0},
       {2 * std::sin(1.0), 0, -2 * std::cos(1.0)},
       {0, 1.5, 0.0},
       [](const Eigen::Vector3d& p) { return p.squaredNorm() / 4.0 - 1.0; }},
      {{.type = SurfaceType::kParaboloid, .a = 0.5},
       {1, 0, 0.5},
       {0, 0.7, 0.3},
       [](const Eigen::Vector3d& p) { return 0.5 * (p.x() * p.x() + p.y() * p.y()) - p.z(); }},
      // Near the stable circular orbit at z = c (v^2 = g c^2 (1 + z^2/c^2) / z = g), tilted.
      {{.type = SurfaceType::kHyperboloid, .a = 1.0, .c = 0.5},
       {std::sqrt(2.0), 0, 0.5},
       {0, std::sqrt(kG), 0.3},
       [](const Eigen::Vector3d& p) {
         return p.x() * p.x() + p.y() * p.y() - p.z() * p.z() / 0.25 - 1.0;
       }},
      {{.type = SurfaceType::kPseudoHyperboloid, .a = 0.5},
       {1.0, 0, -0.5},
       {0.3, 2.5, 0},
       [](const Eigen::Vector3d& p) { return -0.5 / std::hypot(p.x(), p.y()) - p.z(); }},
  };
}

// Reference: a ball gliding on each Table II surface under g = (0, 0, -9.81) (dt = 1e-3 s,
// 10^4 steps): it stays on the surface (sigma written out independently, |sigma| / |grad| <=
// 1e-12 relative; grad sigma matches a central difference of it within 1e-6); gravity and the
// constraint force (along grad sigma(r_n), in the plane of r_n and the z axis) exert no torque
// about z, so the discrete angular momentum (r_n x r_{n+1})_z / dt is conserved to rounding (1e-11
// relative); the energy v^2/2 + g z with central-difference velocities stays within 1e-5 of
// v0^2/2 + g L (O(dt^2); measured <= 7e-7).
TEST_P(SurfaceTest, BallStaysOnTheSurfaceConservingLzAndEnergy) {
  const SurfaceCase c = SurfaceCases()[GetParam()];
  auto surface = OrDie(MakeSurface(c.spec));
  FollowOptions options;
  options.dt = 1e-3;
  options.steps = 10000;
  options.gravity = {0, 0, -kG};
  const ConstrainedMotion run = OrDie(FollowConstraint(*surface, c.r0, c.v0, options));
  ASSERT_TRUE(run.projection.converged()) << run.projection.message;
  double worst_sigma = 0.0, worst_gradient = 0.0;
  for (size_t n = 0; n < run.positions.size(); ++n) {
    const Eigen::Vector3d& r = run.positions[n];
    const double g = surface->Gradient(r).norm();
    worst_sigma = std::max(worst_sigma, std::abs(c.sigma(r)) / g / surface->length_scale());
    if (n % 100 == 0) {
      worst_gradient = std::max(worst_gradient, GradientError(*surface, c.sigma, r));
    }
  }
  auto lz = [&](size_t n) {
    return (run.positions[n].x() * run.positions[n + 1].y() -
            run.positions[n].y() * run.positions[n + 1].x()) /
           options.dt;
  };
  double worst_lz = 0.0;
  for (size_t n = 1; n + 1 < run.positions.size(); ++n) {
    worst_lz = std::max(worst_lz, std::abs(lz(n) - lz(0)));
  }
  auto energy = [&](size_t k) {
    return 0.5 * run.velocities[k].squaredNorm() + kG * run.positions[k + 1].z();
  };
  const double kinetic = 0.5 * c.v0.squaredNorm() + kG * surface->length_scale();
  double worst_energy = 0.0;
  for (size_t k = 0; k < run.velocities.size(); ++k) {
    worst_energy = std::max(worst_energy, std::abs(energy(k) - energy(0)) / kinetic);
  }
  EXPECT_LT(worst_sigma, 1.01e-12);
  EXPECT_LT(worst_gradient, 1e-6);
  EXPECT_LT(worst_lz, 1e-11 * std::max(1.0, std::abs(lz(0))));
  EXPECT_LT(worst_energy, 1e-5);
  RecordProperty("worst_sigma", Sci(worst_sigma));
  RecordProperty("worst_lz", Sci(worst_lz));
  RecordProperty("worst_gradient", Sci(worst_gradient));
  RecordProperty("worst_energy", Sci(worst_energy));
}

INSTANTIATE_TEST_SUITE_P(TableII, SurfaceTest, ::testing::Range(0, 4), [](const auto& info) {
  return std::string(SurfaceName(SurfaceCases()[info.param].spec.type));
});

// ---------------------------------------------------------------------------------------------
// Table I curves.

struct CurveCase {
  CurveSpec spec;
  Eigen::Vector3d r0, v0, gravity;
  FollowMode mode;
  SigmaFunction sigma;  // Table I, written out independently
};

std::vector<CurveCase> CurveCases() {
  const Eigen::Vector3d none = Eigen::Vector3d::Zero(), down(0, -kG, 0);
  return {
      // A bead on a parabolic wire under gravity, swinging through the bottom.
      {{.type = CurveType::kParabola, .a = 0.5},
       {1, 0.5, 0},
       {0, 0, 0},
       down,
       FollowMode::kFreeFlight,
       [](const Eigen::Vector3d& p) { return 0.5 * p.x() * p.x() - p.y(); }},
      {{.type = CurveType::kEllipse, .a = 2.0, .b = 1.0},
       {2, 0, 0},
       {0, 1, 0},
       none,
       FollowMode::kConstantSpeed,
       [](const Eigen::Vector3d& p) { return p.x() * p.x() / 4 + p.y() * p.y() - 1; }},
      {{.type = CurveType::kSuperellipse, .a = 1.0, .b = 2.0, .n = 4.0},
       {1, 0, 0},
       {0, 1, 0},
       none,
       FollowMode::kFreeFlight,
       [](const Eigen::Vector3d& p) { return std::pow(p.x(), 4) + std::pow(p.y() / 2, 4) - 1; }},
      {{.type = CurveType::kDiscorectangle, .r = 1.0, .y0 = 2.0},
       {1, 0, 0},
       {0, 1, 0},
       none,
       FollowMode::kConstantSpeed,
       [](const Eigen::Vector3d& p) {
         const double beyond = std::max(0.0, std::abs(p.y()) - 2.0);
         return p.x() * p.x() + beyond * beyond - 1;
       }},
      // Around the bean's far end (not through the singular origin).
      {{.type = CurveType::kBean},
       {1, 0, 0},
       {0, 0.3, 0},
       none,
       FollowMode::kConstantSpeed,
       [](const Eigen::Vector3d& p) {
         const double x = p.x(), y = p.y();
         return x * x * x * x + x * x * y * y + y * y * y * y - x * (x * x + y * y);
       }},
  };
}

class CurveTest : public ::testing::TestWithParam<int> {};

// Reference: every Table I curve holds the point on sigma = 0 (sigma written out independently;
// |sigma| / |grad sigma| <= 1e-12 of the length scale at every one of 3000 steps, dt = 1e-3;
// grad sigma matches a central difference of it within 1e-6); in constant-speed mode the chord
// speed is |v0| within 1e-12; in free flight (the bead on the parabola under gravity, the
// force-free superellipse) the energy v^2/2 - g.r is conserved within 1e-5 of v0^2/2 + |g| L
// (O(dt^2); a constraint force off the normal would change it at first order).
TEST_P(CurveTest, PointStaysOnTheCurve) {
  const CurveCase c = CurveCases()[GetParam()];
  auto curve = OrDie(MakeCurve(c.spec));
  FollowOptions options;
  options.dt = 1e-3;
  options.steps = 3000;
  options.mode = c.mode;
  options.gravity = c.gravity;
  const ConstrainedMotion run = OrDie(FollowConstraint(*curve, c.r0, c.v0, options));
  ASSERT_TRUE(run.projection.converged()) << run.projection.message;
  double worst_sigma = 0.0, worst_gradient = 0.0, worst_chord = 0.0, worst_energy = 0.0;
  for (size_t n = 0; n < run.positions.size(); ++n) {
    const Eigen::Vector3d& r = run.positions[n];
    ASSERT_EQ(r.z(), 0.0);
    worst_sigma = std::max(
        worst_sigma, std::abs(c.sigma(r)) / curve->Gradient(r).norm() / curve->length_scale());
    if (n % 100 == 0) worst_gradient = std::max(worst_gradient, GradientError(*curve, c.sigma, r));
    if (n > 0 && c.mode == FollowMode::kConstantSpeed) {
      worst_chord =
          std::max(worst_chord,
                   std::abs((r - run.positions[n - 1]).norm() / options.dt / c.v0.norm() - 1.0));
    }
  }
  auto energy = [&](size_t k) {
    return 0.5 * run.velocities[k].squaredNorm() - c.gravity.dot(run.positions[k + 1]);
  };
  const double scale = 0.5 * c.v0.squaredNorm() + c.gravity.norm() * curve->length_scale();
  for (size_t k = 0; k < run.velocities.size(); ++k) {
    worst_energy = std::max(worst_energy, std::abs(energy(k) - energy(0)) / scale);
  }
  EXPECT_LT(worst_sigma, 1.01e-12);
  EXPECT_LT(worst_gradient, 1e-6);
  RecordProperty("worst_sigma", Sci(worst_sigma));
  RecordProperty("worst_gradient", Sci(worst_gradient));
  if (c.mode == FollowMode::kConstantSpeed) {
    EXPECT_LT(worst_chord, 1e-12);
    RecordProperty("worst_chord", Sci(worst_chord));
  }
  if (c.mode == FollowMode::kFreeFlight) {
    EXPECT_LT(worst_energy, 1e-5);
    RecordProperty("worst_energy", Sci(worst_energy));
  }
}

INSTANTIATE_TEST_SUITE_P(TableI, CurveTest, ::testing::Range(0, 5), [](const auto& info) {
  return std::string(CurveName(CurveCases()[info.param].spec.type));
});

// ---------------------------------------------------------------------------------------------
// Bad input: InvalidArgument naming the field and its bound.

template <typename T>
std::string ErrorOf(const absl::StatusOr<T>& result) {
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
  return std::string(result.status().message());
}

TEST(CurvesTest, BadShapeParametersNameTheField) {
  EXPECT_THAT(ErrorOf(MakeCurve({.type = CurveType::kParabola, .a = 0.0})),
              HasSubstr("a must be finite and != 0, got 0"));
  EXPECT_THAT(ErrorOf(MakeCurve({.type = CurveType::kEllipse, .a = -1.0})),
              HasSubstr("a must be finite and > 0, got -1"));
  EXPECT_THAT(ErrorOf(MakeCurve({.type = CurveType::kEllipse, .b = 0.0})),
              HasSubstr("b must be finite and > 0, got 0"));
  EXPECT_THAT(ErrorOf(MakeCurve({.type = CurveType::kSuperellipse, .n = 1.0})),
              HasSubstr("n must be finite and > 1, got 1"));
  EXPECT_THAT(ErrorOf(MakeCurve({.type = CurveType::kSuperellipse, .b = NAN})),
              HasSubstr("b must be finite and > 0"));
  EXPECT_THAT(ErrorOf(MakeCurve({.type = CurveType::kDiscorectangle, .r = -2.0})),
              HasSubstr("r must be finite and > 0, got -2"));
  EXPECT_THAT(ErrorOf(MakeCurve({.type = CurveType::kDiscorectangle, .y0 = -1.0})),
              HasSubstr("y0 must be finite and >= 0, got -1"));
  EXPECT_THAT(ErrorOf(MakeSurface({.type = SurfaceType::kSphere, .r = 0.0})),
              HasSubstr("r must be finite and > 0, got 0"));
  EXPECT_THAT(ErrorOf(MakeSurface({.type = SurfaceType::kParaboloid, .a = INFINITY})),
              HasSubstr("a must be finite and != 0"));
  EXPECT_THAT(ErrorOf(MakeSurface({.type = SurfaceType::kHyperboloid, .c = -1.0})),
              HasSubstr("c must be finite and > 0, got -1"));
  EXPECT_THAT(ErrorOf(MakeSurface({.type = SurfaceType::kPseudoHyperboloid, .a = 0.0})),
              HasSubstr("a must be finite and > 0, got 0"));
}

TEST(CurvesTest, BadStartsAndOptionsNameTheField) {
  auto ellipse = OrDie(MakeCurve({.type = CurveType::kEllipse, .a = 2.0, .b = 1.0}));
  const FollowOptions ok;
  EXPECT_THAT(ErrorOf(FollowConstraint(*ellipse, {1, 1, 0}, {0, 1, 0}, ok)),
              HasSubstr("away from the shape"));
  EXPECT_THAT(ErrorOf(FollowConstraint(*ellipse, {2, 0, 0}, {0, 1, 1}, ok)),
              HasSubstr("v0.z must be 0 for a plane curve"));
  EXPECT_THAT(ErrorOf(FollowConstraint(*ellipse, {NAN, 0, 0}, {0, 1, 0}, ok)),
              HasSubstr("r0 must be finite"));
  // Within start_tolerance the start is accepted and moved onto the curve.
  const ConstrainedMotion nudged =
      OrDie(FollowConstraint(*ellipse, {2 + 1e-7, 0, 0}, {0, 1, 0}, ok));
  EXPECT_NEAR(nudged.positions[0].x(), 2.0, 1e-12);

  auto funnel = OrDie(MakeSurface({.type = SurfaceType::kPseudoHyperboloid, .a = 1.0}));
  EXPECT_THAT(ErrorOf(FollowConstraint(*funnel, {0, 0, -1}, {0, 1, 0}, ok)),
              HasSubstr("r0: the pseudo-hyperboloid is undefined on its axis"));
  auto bean = OrDie(MakeCurve({.type = CurveType::kBean}));
  EXPECT_THAT(ErrorOf(FollowConstraint(*bean, {0, 0, 0}, {0, 1, 0}, ok)),
              HasSubstr("singular point"));

  FollowOptions bad = ok;
  bad.dt = 0.0;
  EXPECT_THAT(ErrorOf(FollowConstraint(*ellipse, {2, 0, 0}, {0, 1, 0}, bad)),
              HasSubstr("dt must be finite and > 0, got 0"));
  // Fuzzer finding: dt^2 underflows, so the acceleration estimates would be 0/0.
  bad.dt = 1e-200;
  EXPECT_THAT(ErrorOf(FollowConstraint(*ellipse, {2, 0, 0}, {0, 1, 0}, bad)),
              HasSubstr("dt is too small for the finite-difference estimates"));
  bad = ok;
  bad.steps = 0;
  EXPECT_THAT(ErrorOf(FollowConstraint(*ellipse, {2, 0, 0}, {0, 1, 0}, bad)),
              HasSubstr("steps must be in [1, 1000000], got 0"));
  bad = ok;
  bad.tolerance = 0.0;
  EXPECT_THAT(ErrorOf(FollowConstraint(*ellipse, {2, 0, 0}, {0, 1, 0}, bad)),
              HasSubstr("tolerance must be in [1e-15, 0.1], got 0"));
  bad = ok;
  bad.max_iterations = 0;
  EXPECT_THAT(ErrorOf(FollowConstraint(*ellipse, {2, 0, 0}, {0, 1, 0}, bad)),
              HasSubstr("max_iterations must be in [1, 10000], got 0"));
  bad = ok;
  bad.start_tolerance = -1.0;
  EXPECT_THAT(ErrorOf(FollowConstraint(*ellipse, {2, 0, 0}, {0, 1, 0}, bad)),
              HasSubstr("start_tolerance must be in [0, 0.1], got -1"));
  bad = ok;
  bad.gravity = {0, 0, -kG};
  EXPECT_THAT(ErrorOf(FollowConstraint(*ellipse, {2, 0, 0}, {0, 1, 0}, bad)),
              HasSubstr("gravity.z must be 0 for a plane curve"));
  bad = ok;
  bad.mode = FollowMode::kConstantSpeed;
  bad.gravity = {0, -kG, 0};
  EXPECT_THAT(ErrorOf(FollowConstraint(*ellipse, {2, 0, 0}, {0, 1, 0}, bad)),
              HasSubstr("gravity must be zero in kConstantSpeed mode"));
  bad.gravity.setZero();
  EXPECT_THAT(ErrorOf(FollowConstraint(*ellipse, {2, 0, 0}, {1, 0, 0}, bad)),
              HasSubstr("non-zero component along the shape"));
}

}  // namespace
}  // namespace ikd::systems
