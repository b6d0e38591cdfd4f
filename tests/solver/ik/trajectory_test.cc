#include "ikd/ik/trajectory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "testing/eigen_matchers.h"

namespace ikd::ik {
namespace {

using ::ikd::testing::CompareMatrices;
using ::testing::HasSubstr;
using V = Eigen::Vector3d;
constexpr double kPi = std::numbers::pi;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Distance of p from the line through c along unit a (independent of the arc's u, v basis).
double DistanceFromAxis(const V& p, const V& c, const V& a) { return (p - c).cross(a).norm(); }

// Velocity on each cubic piece is quadratic in t, so three one-sided samples at spacing e
// extrapolate it and its derivative to the knot exactly (up to rounding), from either side.
struct OneSided {
  V velocity;
  V acceleration;
};
OneSided FromSide(const Trajectory& path, double knot, double e) {
  const V q1 = path.VelocityAt(knot + e), q2 = path.VelocityAt(knot + 2 * e),
          q3 = path.VelocityAt(knot + 3 * e);
  return {3 * q1 - 3 * q2 + q3, (5 * q1 - 8 * q2 + 3 * q3) / (-2 * e)};
}

// Checks SubSteps(t0, t1, max_step): increasing, in (t0, t1], last exactly t1, and no hand move
// longer than max_step starting from PositionAt(t0). Returns the number of steps.
int CheckSubSteps(const Trajectory& path, double t0, double t1, double max_step) {
  auto steps = path.SubSteps(t0, t1, max_step);
  EXPECT_TRUE(steps.ok()) << steps.status();
  if (!steps.ok() || steps->empty()) return 0;
  EXPECT_EQ(steps->back(), t1);
  double previous_time = t0;
  V previous = path.PositionAt(t0);
  double longest = 0.0;
  for (double t : *steps) {
    EXPECT_GT(t, previous_time);
    EXPECT_LE(t, t1);
    const V p = path.PositionAt(t);
    longest = std::max(longest, (p - previous).norm());
    previous = p;
    previous_time = t;
  }
  EXPECT_LE(longest, max_step) << "over [" << t0 << ", " << t1 << "]";
  return static_cast<int>(steps->size());
}

void ExpectInvalid(const absl::Status& status, const std::string& field) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(field));
}

// ---------------------------------------------------------------------------------------------
// Line

// Line a -> b over 2 s: ends exact (0 ulp), midpoint (a + b) / 2 exact, velocity (b - a) / 2 and
// length |b - a| to 1e-15; held outside [0, 2] with zero velocity.
TEST(TrajectoryTest, LineEndpointsMidpointVelocityAndHold) {
  const V a(0.3, -1.2, 2.5), b(-0.7, 0.4, 1.0);
  auto line = Trajectory::Line(a, b, 2.0);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->start_time(), 0.0);
  EXPECT_EQ(line->end_time(), 2.0);
  EXPECT_TRUE(CompareMatrices(line->PositionAt(0.0), a, 0.0));
  EXPECT_TRUE(CompareMatrices(line->PositionAt(2.0), b, 0.0));
  EXPECT_TRUE(CompareMatrices(line->PositionAt(1.0), ((a + b) / 2).eval(), 1e-15));
  EXPECT_TRUE(CompareMatrices(line->PositionAt(0.5), (0.75 * a + 0.25 * b).eval(), 1e-15));
  EXPECT_TRUE(CompareMatrices(line->VelocityAt(0.7), ((b - a) / 2).eval(), 1e-15));
  EXPECT_NEAR(line->Length(), (b - a).norm(), 1e-15);
  EXPECT_TRUE(CompareMatrices(line->PositionAt(-3.0), a, 0.0));
  EXPECT_TRUE(CompareMatrices(line->PositionAt(7.0), b, 0.0));
  EXPECT_TRUE(CompareMatrices(line->PositionAt(kNan), a, 0.0));
  EXPECT_TRUE(CompareMatrices(line->VelocityAt(-1.0), V::Zero(), 0.0));
  EXPECT_TRUE(CompareMatrices(line->VelocityAt(2.5), V::Zero(), 0.0));
  EXPECT_TRUE(CompareMatrices(line->VelocityAt(kNan), V::Zero(), 0.0));
}

// ---------------------------------------------------------------------------------------------
// Arc

// Quarter turn about +z from (cx + r, cy, z0): right-hand rule gives (cx, cy + r, z0), and
// -pi/2 gives (cx, cy - r, z0) (analytic, 1e-12); length |angle| r (1e-15 relative).
TEST(TrajectoryTest, ArcQuarterTurnEndsAtAnalyticPoint) {
  const V c(1.0, 2.0, 3.0);
  const double r = 0.4;
  const V start(1.4, 2.0, 3.5);  // 0.5 above the center's plane: the circle keeps that height
  auto ccw = Trajectory::Arc(c, V::UnitZ(), start, kPi / 2, 1.5);
  auto cw = Trajectory::Arc(c, V(0, 0, 7), start, -kPi / 2, 1.5);  // non-unit axis
  ASSERT_TRUE(ccw.ok()) << ccw.status();
  ASSERT_TRUE(cw.ok()) << cw.status();
  EXPECT_TRUE(CompareMatrices(ccw->PositionAt(0.0), start, 0.0));
  EXPECT_TRUE(CompareMatrices(ccw->PositionAt(1.5), V(1.0, 2.0 + r, 3.5), 1e-12));
  EXPECT_TRUE(CompareMatrices(cw->PositionAt(1.5), V(1.0, 2.0 - r, 3.5), 1e-12));
  // Half way: 45 degrees, (cx + r/sqrt2, cy + r/sqrt2).
  EXPECT_TRUE(CompareMatrices(ccw->PositionAt(0.75),
                              V(1.0 + r / std::sqrt(2.0), 2.0 + r / std::sqrt(2.0), 3.5), 1e-12));
  EXPECT_NEAR(ccw->Length(), kPi / 2 * r, 1e-15 * kPi / 2 * r);
  EXPECT_NEAR(cw->Length(), kPi / 2 * r, 1e-15 * kPi / 2 * r);
}

// A tilted 2.3-turn arc against Eigen's AngleAxis rotation (Rodrigues) of start - center: same
// point (1e-12), radius kept (1e-12), axial height kept (1e-12), velocity omega a x (p - c)
// (1e-12) with constant speed |angle| r / duration, length |angle| r (1e-13 relative).
TEST(TrajectoryTest, ArcKeepsRadiusAndConstantSpeed) {
  const V c(0.3, -0.2, 0.5), axis(1.0, 2.0, 2.0), start(1.1, 0.4, -0.3);
  const V a = axis / 3.0;  // |(1, 2, 2)| = 3
  const double angle = -2.3 * 2 * kPi, duration = 4.0;
  const double r = DistanceFromAxis(start, c, a);
  const double height = (start - c).dot(a);
  auto arc = Trajectory::Arc(c, axis, start, angle, duration);
  ASSERT_TRUE(arc.ok()) << arc.status();
  for (int i = 0; i <= 400; ++i) {
    const double t = duration * i / 400.0;
    const V p = arc->PositionAt(t);
    const V rodrigues = c + Eigen::AngleAxisd(angle * t / duration, a) * (start - c);
    ASSERT_TRUE(CompareMatrices(p, rodrigues, 1e-12)) << "t = " << t;
    EXPECT_NEAR(DistanceFromAxis(p, c, a), r, 1e-12);
    EXPECT_NEAR((p - c).dot(a), height, 1e-12);
    const V v = arc->VelocityAt(t);
    EXPECT_TRUE(CompareMatrices(v, ((angle / duration) * a.cross(p - c)).eval(), 1e-12));
    EXPECT_NEAR(v.norm(), std::abs(angle) * r / duration, 1e-12);
  }
  EXPECT_NEAR(arc->Length(), std::abs(angle) * r, 1e-13 * std::abs(angle) * r);
}

// ---------------------------------------------------------------------------------------------
// Polyline and linear waypoints

// Vertices 3-4-12 apart at speed 0.5: reached at t = 0, 6, 14, 38 (analytic, 1e-12), velocity
// 0.5 x unit direction on each leg (1e-15), length 19 (1e-14).
TEST(TrajectoryTest, PolylinePassesVerticesAtAnalyticTimes) {
  const std::vector<V> points = {V(0, 0, 0), V(3, 0, 0), V(3, 4, 0), V(3, 4, 12)};
  auto path = Trajectory::Polyline(points, 0.5);
  ASSERT_TRUE(path.ok()) << path.status();
  const std::vector<double> times = {0.0, 6.0, 14.0, 38.0};
  EXPECT_EQ(path->start_time(), 0.0);
  EXPECT_NEAR(path->end_time(), 38.0, 1e-12);
  for (int k = 0; k < 4; ++k) {
    EXPECT_TRUE(CompareMatrices(path->PositionAt(times[k]), points[k], 1e-12)) << "vertex " << k;
  }
  EXPECT_TRUE(CompareMatrices(path->VelocityAt(3.0), V(0.5, 0, 0), 1e-15));
  EXPECT_TRUE(CompareMatrices(path->VelocityAt(10.0), V(0, 0.5, 0), 1e-15));
  EXPECT_TRUE(CompareMatrices(path->VelocityAt(20.0), V(0, 0, 0.5), 1e-15));
  EXPECT_TRUE(CompareMatrices(path->PositionAt(26.0), V(3, 4, 6), 1e-12));
  EXPECT_NEAR(path->Length(), 19.0, 1e-14);
}

// Linear waypoints at uneven times starting at t = -1: p_k + (t - t_k)/(t_k+1 - t_k) (p_k+1 - p_k)
// (1e-14) between knots, the waypoint itself at each knot (exact), length = sum of chords.
TEST(TrajectoryTest, LinearWaypointsInterpolateExactly) {
  const std::vector<Waypoint> waypoints = {
      {-1.0, V(0, 0, 0)}, {0.5, V(1, 2, 0)}, {2.0, V(1, 2, 3)}, {4.25, V(-1, 0.5, 1)}};
  auto path = Trajectory::FromWaypoints(waypoints, Interpolation::kLinear);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(path->start_time(), -1.0);
  EXPECT_EQ(path->end_time(), 4.25);
  double chords = 0.0;
  for (size_t k = 0; k + 1 < waypoints.size(); ++k) {
    const Waypoint& w0 = waypoints[k];
    const Waypoint& w1 = waypoints[k + 1];
    EXPECT_TRUE(CompareMatrices(path->PositionAt(w0.time), w0.position, 0.0));
    for (double f : {0.1, 0.5, 0.77}) {
      const double t = w0.time + f * (w1.time - w0.time);
      const V expected =
          w0.position + (t - w0.time) / (w1.time - w0.time) * (w1.position - w0.position);
      EXPECT_TRUE(CompareMatrices(path->PositionAt(t), expected, 1e-14));
      EXPECT_TRUE(CompareMatrices(
          path->VelocityAt(t), ((w1.position - w0.position) / (w1.time - w0.time)).eval(), 1e-14));
    }
    chords += (w1.position - w0.position).norm();
  }
  EXPECT_TRUE(CompareMatrices(path->PositionAt(4.25), waypoints.back().position, 0.0));
  EXPECT_NEAR(path->Length(), chords, 1e-14 * chords);
}

// ---------------------------------------------------------------------------------------------
// Cubic spline

const std::vector<Waypoint> kCurvy = {{0.0, V(0, 0, 0)},        {0.4, V(0.3, 0.5, -0.2)},
                                      {1.5, V(1.0, 0.2, 0.4)},  {1.9, V(1.2, -0.6, 0.1)},
                                      {3.0, V(0.4, -0.9, 0.0)}, {3.2, V(0.3, -0.7, 0.2)}};

// Clamped cubic spline through uneven knots: every waypoint hit (1e-15), velocity zero at both
// ends (the chosen end condition, 1e-15); velocity continuous (C1) and acceleration continuous
// (C2) at interior knots, from exact one-sided quadratic extrapolation (1e-9 and 1e-6 of scale).
TEST(TrajectoryTest, CubicSplineInterpolatesAndIsC2) {
  auto path = Trajectory::FromWaypoints(kCurvy, Interpolation::kCubic);
  ASSERT_TRUE(path.ok()) << path.status();
  for (const Waypoint& w : kCurvy) {
    EXPECT_TRUE(CompareMatrices(path->PositionAt(w.time), w.position, 1e-15)) << "t " << w.time;
  }
  EXPECT_TRUE(CompareMatrices(path->VelocityAt(0.0), V::Zero(), 1e-15));
  EXPECT_TRUE(CompareMatrices(path->VelocityAt(3.2), V::Zero(), 1e-15));
  double largest_acceleration_jump_scale = 0.0;
  for (size_t k = 1; k + 1 < kCurvy.size(); ++k) {
    const double knot = kCurvy[k].time, e = 1e-3;
    const OneSided left = FromSide(*path, knot, -e), right = FromSide(*path, knot, e);
    EXPECT_TRUE(CompareMatrices(left.velocity, right.velocity, 1e-9)) << "knot " << k;
    EXPECT_TRUE(CompareMatrices(left.acceleration, right.acceleration, 1e-6)) << "knot " << k;
    largest_acceleration_jump_scale =
        std::max(largest_acceleration_jump_scale, left.acceleration.norm());
  }
  // The path really bends: accelerations are O(1), so the C2 check is not vacuous.
  EXPECT_GT(largest_acceleration_jump_scale, 1.0);
}

// q(t) = A + C (s^2 - 2 s^3 / 3), s = t / T, is a cubic with q'(0) = q'(T) = 0, so the clamped
// spline through samples of it at uneven knots is q itself (uniqueness of the interpolant):
// position 1e-13, velocity 1e-12 at 97 times. A natural spline would miss (q''(0) != 0).
TEST(TrajectoryTest, CubicSplineReproducesCubicWithRestEnds) {
  const V A(0.2, -0.4, 1.0), C(1.5, -0.8, 0.6);
  const double T = 2.5;
  const auto q = [&](double t) {
    const double s = t / T;
    return V(A + C * (s * s - 2 * s * s * s / 3));
  };
  const auto dq = [&](double t) {
    const double s = t / T;
    return V(C * (2 * s - 2 * s * s) / T);
  };
  for (const std::vector<double>& knots :
       {std::vector<double>{0.0, 2.5}, std::vector<double>{0.0, 0.3, 0.35, 1.4, 2.0, 2.5}}) {
    std::vector<Waypoint> waypoints;
    for (double t : knots) waypoints.push_back({t, q(t)});
    auto path = Trajectory::FromWaypoints(waypoints, Interpolation::kCubic);
    ASSERT_TRUE(path.ok()) << path.status();
    for (int i = 0; i <= 96; ++i) {
      const double t = T * i / 96.0;
      ASSERT_TRUE(CompareMatrices(path->PositionAt(t), q(t), 1e-13)) << "t " << t;
      ASSERT_TRUE(CompareMatrices(path->VelocityAt(t), dq(t), 1e-12)) << "t " << t;
    }
  }
}

// Length of the cubic: the rest-to-rest cubic above along a straight line has length |C| / 3
// (s^2 - 2 s^3 / 3 rises monotonically from 0 to 1/3), 1e-12 relative; the curvy spline
// against a Richardson-extrapolated chord sum of 2e5 points, 1e-9 relative.
TEST(TrajectoryTest, CubicLengthMatchesIndependentReferences) {
  const V C(0.9, -1.2, 2.0);
  std::vector<Waypoint> straight;
  for (double t : {0.0, 0.3, 0.35, 1.4, 2.0, 2.5}) {
    const double s = t / 2.5;
    straight.push_back({t, V(C * (s * s - 2 * s * s * s / 3))});
  }
  auto line = Trajectory::FromWaypoints(straight, Interpolation::kCubic);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_NEAR(line->Length(), C.norm() / 3, 1e-12 * C.norm() / 3);

  auto curvy = Trajectory::FromWaypoints(kCurvy, Interpolation::kCubic);
  ASSERT_TRUE(curvy.ok()) << curvy.status();
  const auto chord_sum = [&](int n) {
    double sum = 0.0;
    V previous = curvy->PositionAt(curvy->start_time());
    for (int i = 1; i <= n; ++i) {
      const V p = curvy->PositionAt(curvy->start_time() + curvy->duration() * i / n);
      sum += (p - previous).norm();
      previous = p;
    }
    return sum;
  };
  const double reference = (4 * chord_sum(100'000) - chord_sum(50'000)) / 3;  // O(h^4)
  EXPECT_NEAR(curvy->Length(), reference, 1e-9 * reference);
}

// Fuzzing finding (kinematics_service_fuzzer): a cubic spline from a waypoint at y = 1.39e188 m
// back to the arm's workspace: its speed overflows to infinity, every error estimate of the
// adaptive length integral was NaN, and it recursed towards 2^40 intervals (minutes on the
// request's thread). Such a waypoint is now outside the world and refused up front; waypoints
// in the world 1e-300 s apart still overflow the speed, and the integral stops within its
// budget.
TEST(TrajectoryTest, HugeWaypointIsRefusedWithBoundedWork) {
  const std::vector<Waypoint> waypoints = {{0.0, V(0.4, 1.3923463798895858e188, 0.4)},
                                           {0.5, V(0.4, 0.35, 0.38)},
                                           {1.0, V(0.4, 0.4, 0.35)}};
  auto path = Trajectory::FromWaypoints(waypoints, Interpolation::kCubic);
  EXPECT_EQ(path.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(path.status().message()),
              HasSubstr("waypoints[0].position must be finite and within 1e+06 m"));
  const std::vector<Waypoint> abrupt = {
      {0.0, V(0.4, -1e6, 0.4)}, {1e-300, V(0.4, 1e6, 0.38)}, {1.0, V(0.4, 0.4, 0.35)}};
  auto fast = Trajectory::FromWaypoints(abrupt, Interpolation::kCubic);
  EXPECT_EQ(fast.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(fast.status().message()), HasSubstr("beyond the double range"));
}

// Waypoints inside the world whose spline overshoots out of it: a 1e5 m move in 1 s, then back
// in 1 ns, gives a knot velocity of ~1.5e14 m/s and an overshoot of order 1e13 m on the first
// segment. The path is refused; the same points linearly interpolated stay put and are kept.
TEST(TrajectoryTest, SplineLeavingTheWorldIsRefused) {
  const std::vector<Waypoint> waypoints = {
      {0.0, V(0, 0, 0)}, {1.0, V(1e5, 0, 0)}, {1.0 + 1e-9, V(0, 0, 0)}};
  auto cubic = Trajectory::FromWaypoints(waypoints, Interpolation::kCubic);
  EXPECT_EQ(cubic.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(cubic.status().message()),
              HasSubstr("waypoints give a path that may leave the world"));
  EXPECT_TRUE(Trajectory::FromWaypoints(waypoints, Interpolation::kLinear).ok());
  // An arc around a center near the edge leaves the world; a line along the edge does not.
  EXPECT_THAT(
      std::string(
          Trajectory::Arc(V(9e5, 0, 0), V::UnitZ(), V(9e5, 2e5, 0), 1.0, 1.0).status().message()),
      HasSubstr("may leave the world"));
  EXPECT_TRUE(Trajectory::Line(V(-1e6, 0, 0), V(1e6, 0, 0), 1.0).ok());
}

// ---------------------------------------------------------------------------------------------
// Sampling

// SampleTimes: start + k dt, end included exactly; counts 11 (dt 0.1 on 1 s), 5 (dt 0.3),
// 4 (dt 1/3: no rounding sliver before the end), 2 (dt > duration), 7 (dt 0.5 on [-1, 2]).
TEST(TrajectoryTest, SampleTimesIncludeEndWithRightCount) {
  auto line = *Trajectory::Line(V::Zero(), V::UnitX(), 1.0);
  const auto times = [&](double dt) { return *line.SampleTimes(dt); };
  ASSERT_EQ(times(0.1).size(), 11u);
  for (int k = 0; k < 11; ++k) EXPECT_NEAR(times(0.1)[k], 0.1 * k, 1e-15);
  EXPECT_EQ(times(0.1).back(), 1.0);
  EXPECT_THAT(times(0.3),
              ::testing::ElementsAre(0.0, 0.3, 0.6, ::testing::DoubleNear(0.9, 1e-15), 1.0));
  EXPECT_EQ(times(1.0 / 3).size(), 4u);
  EXPECT_EQ(times(1.0 / 3).back(), 1.0);
  EXPECT_THAT(times(2.0), ::testing::ElementsAre(0.0, 1.0));
  EXPECT_THAT(times(1.0), ::testing::ElementsAre(0.0, 1.0));

  auto path =
      *Trajectory::FromWaypoints({{-1.0, V::Zero()}, {2.0, V::UnitY()}}, Interpolation::kLinear);
  EXPECT_THAT(*path.SampleTimes(0.5), ::testing::ElementsAre(-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0));
}

// SubSteps: every hand move <= max_step (the bound), last time exactly t1; on constant-speed
// paths the count is within one of the minimum ceil(L / max_step), on the cubic within 20 %.
TEST(TrajectoryTest, SubStepsBoundEveryHandMove) {
  const double max_step = 0.01;
  auto line = *Trajectory::Line(V(0, 0, 0), V(1, 0, 0), 1.0);
  const int line_steps = CheckSubSteps(line, 0.0, 1.0, max_step);
  EXPECT_GE(line_steps, 100);
  EXPECT_LE(line_steps, 101);
  CheckSubSteps(line, 0.123, 0.456, max_step);
  CheckSubSteps(line, -2.0, 0.3, max_step);  // starts while holding before the path
  CheckSubSteps(line, 0.9, 5.0, max_step);   // ends while holding after it

  auto arc = *Trajectory::Arc(V::Zero(), V::UnitZ(), V(0.5, 0, 0), 3 * kPi, 2.0);
  const int arc_steps = CheckSubSteps(arc, 0.0, 2.0, max_step);
  const int minimum = static_cast<int>(std::ceil(arc.Length() / max_step));
  EXPECT_GE(arc_steps, minimum - 1);  // chords are slightly shorter than arcs
  EXPECT_LE(arc_steps, minimum + 1);
  CheckSubSteps(arc, 0.7, 0.71, max_step);

  auto curvy = *Trajectory::FromWaypoints(kCurvy, Interpolation::kCubic);
  const int curvy_steps = CheckSubSteps(curvy, 0.0, 3.2, max_step);
  EXPECT_LE(curvy_steps, 1.2 * std::ceil(curvy.Length() / max_step));  // measured 539 / 480
  CheckSubSteps(curvy, 0.2, 2.95, 0.05);
  CheckSubSteps(curvy, -1.0, 4.0, 0.02);
  // Rest-to-rest unit move in 1 s: speed 6 t (1 - t) peaks at 1.5 inside [0.44, 0.56], where the
  // end speeds are 1.4784 and the length 0.179136; a bound from the end speeds alone fails.
  auto smooth =
      *Trajectory::FromWaypoints({{0.0, V::Zero()}, {1.0, V::UnitX()}}, Interpolation::kCubic);
  CheckSubSteps(smooth, 0.44, 0.56, 1.49 * 0.12);
  CheckSubSteps(curvy, 1.0, 1.0001, 1e-6);

  auto polyline = *Trajectory::Polyline({V(0, 0, 0), V(3, 0, 0), V(3, 4, 0), V(3, 4, 12)}, 0.5);
  CheckSubSteps(polyline, 5.0, 20.0, 0.3);

  EXPECT_THAT(*line.SubSteps(0.5, 0.5, max_step), ::testing::ElementsAre(0.5));
  EXPECT_THAT(*line.SubSteps(0.5, 0.505, max_step), ::testing::ElementsAre(0.505));
}

// ---------------------------------------------------------------------------------------------
// Validation

// Every bad input is InvalidArgument naming the field (message text from the spec).
TEST(TrajectoryTest, BadWaypointsNameTheField) {
  const auto make = [](std::vector<Waypoint> w, Interpolation i = Interpolation::kCubic) {
    return Trajectory::FromWaypoints(std::move(w), i).status();
  };
  const V p = V::Zero();
  ExpectInvalid(make({{0.0, p}}), "waypoints must have between 2");
  ExpectInvalid(make({}), "waypoints");
  EXPECT_EQ(make({{0.0, p}, {1.0, p}, {1.5, p}, {1.2, p}}).message(),
            "waypoints[3].time must be > waypoints[2].time (1.5), got 1.2");
  ExpectInvalid(make({{0.0, p}, {0.0, p}}), "waypoints[1].time must be > waypoints[0].time");
  ExpectInvalid(make({{kNan, p}, {1.0, p}}), "waypoints[0].time must be finite");
  ExpectInvalid(make({{0.0, p}, {kInf, p}}), "waypoints[1].time must be finite");
  ExpectInvalid(make({{0.0, p}, {1.0, p}, {2.0, V(0, kNan, 0)}}), "waypoints[2].position");
  ExpectInvalid(make({{0.0, p}, {1.0, p}}, static_cast<Interpolation>(7)), "interpolation");
  ExpectInvalid(make({{0.0, V(-1e308, 0, 0)}, {1e-300, V(1e308, 0, 0)}}, Interpolation::kLinear),
                "waypoints");
}

TEST(TrajectoryTest, BadPrimitivesNameTheField) {
  const V p(1, 2, 3), z = V::UnitZ();
  ExpectInvalid(Trajectory::Line(V(kNan, 0, 0), p, 1.0).status(), "from must be finite");
  ExpectInvalid(Trajectory::Line(p, V(0, kInf, 0), 1.0).status(), "to must be finite");
  for (double d : {0.0, -1.0, kNan, kInf}) {
    ExpectInvalid(Trajectory::Line(p, p, d).status(), "duration must be finite and > 0");
    ExpectInvalid(Trajectory::Arc(V::Zero(), z, p, 1.0, d).status(), "duration");
  }
  ExpectInvalid(Trajectory::Line(V(-1e308, 0, 0), V(1e308, 0, 0), 1.0).status(),
                "from must be finite and within 1e+06 m");

  ExpectInvalid(Trajectory::Arc(V(kNan, 0, 0), z, p, 1.0, 1.0).status(), "center");
  ExpectInvalid(Trajectory::Arc(V::Zero(), V::Zero(), p, 1.0, 1.0).status(),
                "axis must be a vector of norm >= 1e-09");
  ExpectInvalid(Trajectory::Arc(V::Zero(), V(0, 0, 1e-12), p, 1.0, 1.0).status(), "axis");
  ExpectInvalid(Trajectory::Arc(V::Zero(), V(kNan, 0, 1), p, 1.0, 1.0).status(), "axis");
  ExpectInvalid(Trajectory::Arc(V::Zero(), z, V(0, 0, 5), 1.0, 1.0).status(),
                "start must be at distance >= 1e-09 from the axis");
  ExpectInvalid(Trajectory::Arc(V::Zero(), z, V(0, 0, kInf), 1.0, 1.0).status(), "start");
  ExpectInvalid(Trajectory::Arc(V::Zero(), z, p, kNan, 1.0).status(), "angle");
  ExpectInvalid(Trajectory::Arc(V::Zero(), z, p, 201 * kPi, 1.0).status(),
                "angle must be finite with |angle| <= 628.319");

  ExpectInvalid(Trajectory::Polyline({p}, 1.0).status(), "points must have between 2");
  ExpectInvalid(Trajectory::Polyline({p, V::Zero(), V::Zero()}, 1.0).status(),
                "points[2] must be distinct from points[1]");
  ExpectInvalid(Trajectory::Polyline({p, V(kNan, 0, 0)}, 1.0).status(), "points[1] must be finite");
  for (double speed : {0.0, -2.0, kNan, kInf}) {
    ExpectInvalid(Trajectory::Polyline({p, V::Zero()}, speed).status(),
                  "speed must be finite and > 0");
  }
  ExpectInvalid(Trajectory::Polyline({V::Zero(), V(1e6, 0, 0)}, 1e-320).status(), "speed");
}

TEST(TrajectoryTest, BadSamplingNamesTheField) {
  auto line = *Trajectory::Line(V::Zero(), V::UnitX(), 1.0);
  for (double dt : {0.0, -0.1, kNan, kInf}) {
    ExpectInvalid(line.SampleTimes(dt).status(), "sample_period must be finite and > 0");
  }
  ExpectInvalid(line.SampleTimes(1e-8).status(), "sample_period must be >= duration / 9999999");
  ExpectInvalid(line.SubSteps(kNan, 1.0, 0.1).status(), "t0 must be finite");
  ExpectInvalid(line.SubSteps(0.0, kInf, 0.1).status(), "t1 must be finite and >= t0");
  ExpectInvalid(line.SubSteps(0.5, 0.4, 0.1).status(), "t1 must be finite and >= t0 (0.5)");
  for (double step : {0.0, -1.0, kNan, kInf}) {
    ExpectInvalid(line.SubSteps(0.0, 1.0, step).status(), "max_step must be finite and > 0");
  }
  ExpectInvalid(line.SubSteps(0.0, 1.0, 1e-9).status(), "max_step must be large enough");
}

}  // namespace
}  // namespace ikd::ik
