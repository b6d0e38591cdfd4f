// End-effector trajectories r_e(t) for the Cartesian IK engine (Kastenmeier & Vesely 1996;
// Vesely 2013 sec. VII B, step (a): "move the robot hand stepwise through its required
// trajectory r_e(t_n)"): timed waypoints with linear or cubic-spline interpolation, and the
// primitives line, circular arc and polyline.
// Pure geometry: positions and velocities as functions of time, arc length, sample times and
// sub-steps that bound how far the hand moves per step.
//
//   auto path = ikd::ik::Trajectory::Arc(/*center=*/{0.8, 0.2, 0}, /*axis=*/{0, 0, 1},
//                                        /*start=*/{1.05, 0.2, 0}, /*angle=*/M_PI, /*duration=*/2);
//   double previous = path->start_time();
//   for (double t : *path->SampleTimes(0.01)) {           // the controller's sample instants
//     for (double s : *path->SubSteps(previous, t, 0.005)) {  // hand moves of <= 5 mm
//       MoveHandTo(path->PositionAt(s));
//     }
//     previous = t;
//   }
//
// Every trajectory is defined on [start_time(), end_time()] and holds its end points outside:
// PositionAt clamps the time, VelocityAt is zero outside (a NaN time counts as the start).
// Primitives (Line, Arc, Polyline) start at time 0.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"

namespace ikd::ik {

struct Waypoint {
  double time = 0.0;  // seconds
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
};

enum class Interpolation {
  kLinear,  // straight segments at constant speed between consecutive waypoints (C0)
  // C2 cubic spline through every waypoint, clamped with zero velocity at the first and last
  // waypoint: a robot hand starts and stops at rest, so a natural spline (zero end
  // acceleration, non-zero end velocity) would demand a velocity jump from rest. Reproduces
  // any cubic polynomial path with zero end velocities exactly; a straight line at constant
  // speed is not reproduced (it does not start at rest).
  kCubic,
};

class Trajectory {
 public:
  // >= 2 waypoints with strictly increasing finite times and finite positions. Errors name the
  // field, e.g. "waypoints[3].time must be > waypoints[2].time (1.5), got 1.2".
  static absl::StatusOr<Trajectory> FromWaypoints(std::vector<Waypoint> waypoints,
                                                  Interpolation interpolation);
  // Straight line from `from` (t = 0) to `to` (t = duration) at constant speed; from == to is a
  // hold. duration finite and > 0.
  static absl::StatusOr<Trajectory> Line(const Eigen::Vector3d& from, const Eigen::Vector3d& to,
                                         double duration);
  // Circular arc about the line through `center` along `axis` (need not be unit length; norm
  // >= 1e-9), starting at `start` and sweeping `angle` radians (right-hand rule about axis;
  // negative turns the other way; |angle| <= 100 turns; 0 is a hold) over `duration` at
  // constant angular speed. The circle lies in the plane through `start` normal to the axis;
  // its radius is the distance of `start` from the axis line and must be >= 1e-9.
  static absl::StatusOr<Trajectory> Arc(const Eigen::Vector3d& center, const Eigen::Vector3d& axis,
                                        const Eigen::Vector3d& start, double angle,
                                        double duration);
  // Straight segments through `points` (>= 2, consecutive points distinct) at constant `speed`
  // (finite, > 0); vertex k is reached at time (path length up to k) / speed.
  static absl::StatusOr<Trajectory> Polyline(std::vector<Eigen::Vector3d> points, double speed);

  double start_time() const { return knots_.front(); }
  double end_time() const { return knots_.back(); }
  double duration() const { return end_time() - start_time(); }

  // Position at time t, clamped to [start_time, end_time].
  Eigen::Vector3d PositionAt(double t) const;
  // Velocity at time t: zero outside [start_time, end_time]; at a knot where the velocity
  // jumps (linear interpolation, polyline vertices) the value of the segment starting there,
  // and of the last segment at end_time.
  Eigen::Vector3d VelocityAt(double t) const;

  // Times start, start + dt, start + 2 dt, ..., end: `end` is always the last sample, and an
  // interior sample closer than 1e-9 dt to the end is dropped so that no sample interval is
  // a rounding sliver. InvalidArgument naming "sample_period" unless finite and > 0 and giving
  // at most kMaxSamples samples.
  absl::StatusOr<std::vector<double>> SampleTimes(double sample_period) const;

  // Increasing times in (t0, t1], the last exactly t1, such that the hand moves at most
  // `max_step` (Euclidean distance of consecutive positions, starting at PositionAt(t0))
  // between consecutive times. Each stretch of [t0, t1] within one segment (within an eighth
  // of a segment for cubic splines) is cut uniformly in time by a bound on the speed there
  // (chord <= path length <= speed bound x time), so a
  // path whose length is an exact multiple of max_step may get one extra step. t0, t1 finite,
  // t0 <= t1 (t0 == t1 gives {t1}); max_step finite and > 0; at most kMaxSamples times.
  absl::StatusOr<std::vector<double>> SubSteps(double t0, double t1, double max_step) const;

  // Arc length of the whole path: exact for lines, arcs, polylines and linear waypoints;
  // adaptive Gauss-Legendre quadrature of the speed for cubic splines (relative error < 1e-12
  // in practice, 1e-9 guaranteed by the tests).
  double Length() const { return length_; }

  static constexpr int kMaxSamples = 10'000'000;
  static constexpr double kMaxArcAngle = 200.0 * 3.14159265358979323846;  // 100 turns
  static constexpr double kMinAxisNorm = 1e-9;
  static constexpr double kMinArcRadius = 1e-9;

 private:
  enum class Kind { kPiecewiseLinear, kCubicHermite, kArc };
  // Circle of the arc: p(theta) = center + u cos(theta) + v sin(theta), |u| = |v| = radius,
  // v = axis x u (right-hand rule), theta = angle (t - start) / duration.
  struct ArcGeometry {
    Eigen::Vector3d center = Eigen::Vector3d::Zero();  // on the plane of the circle
    Eigen::Vector3d u = Eigen::Vector3d::UnitX();
    Eigen::Vector3d v = Eigen::Vector3d::UnitY();
    double radius = 0.0;
    double angle = 0.0;
  };

  Trajectory(Kind kind, std::vector<double> knots, std::vector<Eigen::Vector3d> points,
             std::vector<Eigen::Vector3d> velocities, ArcGeometry arc);
  // The segment containing t (already clamped): knots_[k] <= t < knots_[k + 1], or the last.
  int SegmentAt(double t) const;
  Eigen::Vector3d SegmentPosition(int k, double t) const;
  Eigen::Vector3d SegmentVelocity(int k, double t) const;
  // Upper bound of the speed on segment k (exact for linear and arc segments; the largest
  // Bezier control point of the quadratic velocity for cubic segments).
  double SegmentSpeedBound(int k) const;
  // Upper bound of the speed over [a, b] within segment k (tighter than the segment's bound
  // for cubic segments).
  double SpeedBound(int k, double a, double b) const;
  // Calls visit(a, b, speed_bound) for consecutive pieces covering [t0, t1] (t0 < t1), each
  // inside one segment or outside [start_time, end_time] (speed bound 0 there).
  template <class F>
  void ForEachPiece(double t0, double t1, const F& visit) const;
  double SegmentLength(int k) const;
  // Bound on |coordinate| over segment k, whose length is `length`.
  double SegmentExtent(int k, double length) const;
  // InvalidArgument when a speed bound or the length is not finite (inputs near the double
  // range) or the path may leave the world (ikd/world.h); `field` names what to blame.
  absl::Status CheckDerived(const char* field) const;

  Kind kind_;
  std::vector<double> knots_;                // segment boundaries in time, strictly increasing
  std::vector<Eigen::Vector3d> points_;      // position at each knot (not used by arcs)
  std::vector<Eigen::Vector3d> velocities_;  // cubic Hermite: velocity at each knot
  ArcGeometry arc_;
  std::vector<double> speed_bounds_;  // per segment
  double length_ = 0.0;
  double extent_ = 0.0;  // no coordinate of the path exceeds this (m)
};

}  // namespace ikd::ik
