#include "ikd/ik/trajectory.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include <Eigen/Geometry>

#include "absl/strings/str_cat.h"
#include "ikd/world.h"

namespace ikd::ik {
namespace {

using Eigen::Vector3d;

constexpr int kMaxPoints = 1'000'000;  // waypoints or polyline vertices
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string Format(const Vector3d& v) {
  return absl::StrCat("(", v.x(), ", ", v.y(), ", ", v.z(), ")");
}

absl::Status Invalid(const std::string& field, const std::string& bound, double got) {
  return absl::InvalidArgumentError(absl::StrCat(field, " must be ", bound, ", got ", got));
}

absl::Status CheckFinite(const Vector3d& v, const std::string& field) {
  if (v.allFinite()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " must be finite, got ", Format(v)));
}

absl::Status CheckPositive(double x, const std::string& field) {
  if (std::isfinite(x) && x > 0.0) return absl::OkStatus();
  return Invalid(field, "finite and > 0", x);
}

absl::Status CheckCount(size_t n, const std::string& field) {
  if (n >= 2 && n <= static_cast<size_t>(kMaxPoints)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must have between 2 and ", kMaxPoints, " entries, got ", n));
}

// Knot velocities of the C2 cubic spline through (t_i, p_i) with zero end velocities. C2
// continuity of the cubic Hermite pieces at interior knot i gives (de Boor, A Practical Guide
// to Splines, ch. IV, eq. (9)):
//   h_i m_{i-1} + 2 (h_{i-1} + h_i) m_i + h_{i-1} m_{i+1} = 3 (h_i d_{i-1} + h_{i-1} d_i),
// h_i = t_{i+1} - t_i, d_i = (p_{i+1} - p_i) / h_i; strictly diagonally dominant, so the
// Thomas algorithm without pivoting is stable.
std::vector<Vector3d> ClampedSplineVelocities(const std::vector<double>& t,
                                              const std::vector<Vector3d>& p) {
  const int n = static_cast<int>(t.size());
  std::vector<Vector3d> m(n, Vector3d::Zero());
  if (n < 3) return m;
  std::vector<double> diag(n, 1.0), upper(n, 0.0);
  std::vector<Vector3d> rhs(n, Vector3d::Zero());
  for (int i = 1; i < n - 1; ++i) {
    const double h0 = t[i] - t[i - 1], h1 = t[i + 1] - t[i];
    const double lower = h1;  // coefficient of m_{i-1}; m_0 = 0 drops it for i = 1
    diag[i] = 2.0 * (h0 + h1);
    upper[i] = h0;
    rhs[i] = 3.0 * (h1 * (p[i] - p[i - 1]) / h0 + h0 * (p[i + 1] - p[i]) / h1);
    if (i > 1) {  // eliminate m_{i-1} with the already reduced row i - 1
      const double f = lower / diag[i - 1];
      diag[i] -= f * upper[i - 1];
      rhs[i] -= f * rhs[i - 1];
    }
  }
  for (int i = n - 2; i >= 1; --i) m[i] = (rhs[i] - upper[i] * m[i + 1]) / diag[i];
  return m;
}

// Adaptive Gauss-Legendre (5 points, exact for degree 9) of f over [a, b]: bisect until the
// whole-interval and two-halves estimates agree to `tolerance`.
template <class F>
double GaussLegendre5(const F& f, double a, double b) {
  static constexpr std::array<double, 3> kNodes = {0.0, 0.5384693101056831, 0.9061798459386640};
  static constexpr std::array<double, 3> kWeights = {0.5688888888888889, 0.4786286704993665,
                                                     0.2369268850561891};
  const double mid = 0.5 * (a + b), half = 0.5 * (b - a);
  double sum = kWeights[0] * f(mid);
  for (int j = 1; j < 3; ++j) {
    sum += kWeights[j] * (f(mid - half * kNodes[j]) + f(mid + half * kNodes[j]));
  }
  return half * sum;
}

// Subdivisions one adaptive integral may make. The depth cap alone allows 2^40: a speed that
// overflows (a waypoint at 1e188 m, found by fuzzing) makes every error estimate NaN, which
// never passes the test, and took minutes on the request's thread (the length is then infinite
// and refused). Smooth segments stop far below this.
constexpr int kMaxSubdivisions = 4096;

template <class F>
double AdaptiveIntegral(const F& f, double a, double b, double whole, double tolerance,
                        int depth, int& budget) {
  const double mid = 0.5 * (a + b);
  const double left = GaussLegendre5(f, a, mid), right = GaussLegendre5(f, mid, b);
  if (depth >= 40 || budget <= 0 || std::abs(left + right - whole) <= tolerance) {
    return left + right;
  }
  --budget;
  return AdaptiveIntegral(f, a, mid, left, 0.5 * tolerance, depth + 1, budget) +
         AdaptiveIntegral(f, mid, b, right, 0.5 * tolerance, depth + 1, budget);
}

}  // namespace

Trajectory::Trajectory(Kind kind, std::vector<double> knots, std::vector<Vector3d> points,
                       std::vector<Vector3d> velocities, ArcGeometry arc)
    : kind_(kind),
      knots_(std::move(knots)),
      points_(std::move(points)),
      velocities_(std::move(velocities)),
      arc_(std::move(arc)) {
  const int segments = static_cast<int>(knots_.size()) - 1;
  speed_bounds_.resize(segments);
  for (int k = 0; k < segments; ++k) speed_bounds_[k] = SegmentSpeedBound(k);
  for (int k = 0; k < segments; ++k) {
    const double length = SegmentLength(k);
    length_ += length;
    extent_ = std::max(extent_, SegmentExtent(k, length));
  }
}

double Trajectory::SegmentExtent(int k, double length) const {
  switch (kind_) {
    case Kind::kArc:
      return arc_.center.cwiseAbs().maxCoeff() + arc_.radius;
    case Kind::kPiecewiseLinear:
      return std::max(points_[k].cwiseAbs().maxCoeff(), points_[k + 1].cwiseAbs().maxCoeff());
    case Kind::kCubicHermite:
      // The curve stays within its length of its first point.
      return points_[k].cwiseAbs().maxCoeff() + length;
  }
  return kInf;
}

absl::Status Trajectory::CheckDerived(const char* field) const {
  bool finite = std::isfinite(length_);
  for (double bound : speed_bounds_) finite = finite && std::isfinite(bound);
  if (!finite) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " give a path speed or length beyond the double range"));
  }
  // Points inside the world can still give a spline that overshoots far out of it (a short
  // interval next to a long one).
  if (extent_ > kWorldExtent) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " give a path that may leave the world: up to ", extent_,
        " m from the origin in a coordinate (bound ", kWorldExtent, " m)"));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Construction

absl::StatusOr<Trajectory> Trajectory::FromWaypoints(std::vector<Waypoint> waypoints,
                                                     Interpolation interpolation) {
  if (interpolation != Interpolation::kLinear && interpolation != Interpolation::kCubic) {
    return Invalid("interpolation", "kLinear (0) or kCubic (1)", static_cast<int>(interpolation));
  }
  if (absl::Status s = CheckCount(waypoints.size(), "waypoints"); !s.ok()) return s;
  std::vector<double> knots;
  std::vector<Vector3d> points;
  knots.reserve(waypoints.size());
  points.reserve(waypoints.size());
  for (size_t k = 0; k < waypoints.size(); ++k) {
    const std::string field = absl::StrCat("waypoints[", k, "]");
    const double time = waypoints[k].time;
    if (!std::isfinite(time)) return Invalid(field + ".time", "finite", time);
    if (k > 0 && !(time > knots.back())) {
      return Invalid(field + ".time", absl::StrCat("> waypoints[", k - 1, "].time (", knots.back(), ")"),
                     time);
    }
    if (absl::Status s = CheckInWorld(waypoints[k].position, field + ".position"); !s.ok()) return s;
    knots.push_back(time);
    points.push_back(waypoints[k].position);
  }
  const bool cubic = interpolation == Interpolation::kCubic;
  std::vector<Vector3d> velocities;
  if (cubic) velocities = ClampedSplineVelocities(knots, points);
  Trajectory path(cubic ? Kind::kCubicHermite : Kind::kPiecewiseLinear, std::move(knots),
                  std::move(points), std::move(velocities), ArcGeometry{});
  if (absl::Status s = path.CheckDerived("waypoints"); !s.ok()) return s;
  return path;
}

absl::StatusOr<Trajectory> Trajectory::Line(const Vector3d& from, const Vector3d& to,
                                            double duration) {
  if (absl::Status s = CheckInWorld(from, "from"); !s.ok()) return s;
  if (absl::Status s = CheckInWorld(to, "to"); !s.ok()) return s;
  if (absl::Status s = CheckPositive(duration, "duration"); !s.ok()) return s;
  Trajectory path(Kind::kPiecewiseLinear, {0.0, duration}, {from, to}, {}, ArcGeometry{});
  if (absl::Status s = path.CheckDerived("from, to and duration"); !s.ok()) return s;
  return path;
}

absl::StatusOr<Trajectory> Trajectory::Arc(const Vector3d& center, const Vector3d& axis,
                                           const Vector3d& start, double angle,
                                           double duration) {
  if (absl::Status s = CheckInWorld(center, "center"); !s.ok()) return s;
  if (absl::Status s = CheckFinite(axis, "axis"); !s.ok()) return s;
  if (absl::Status s = CheckInWorld(start, "start"); !s.ok()) return s;
  const double axis_norm = axis.norm();
  if (!(axis_norm >= kMinAxisNorm)) {
    return Invalid("axis", absl::StrCat("a vector of norm >= ", kMinAxisNorm), axis_norm);
  }
  if (!std::isfinite(angle) || std::abs(angle) > kMaxArcAngle) {
    return Invalid("angle", absl::StrCat("finite with |angle| <= ", kMaxArcAngle, " (100 turns)"),
                   angle);
  }
  if (absl::Status s = CheckPositive(duration, "duration"); !s.ok()) return s;
  // Only the part of start - center normal to the axis turns; the axial offset is kept, so the
  // circle lies in the plane through `start`.
  const Vector3d a = axis / axis_norm;
  const Vector3d offset = start - center;
  const double axial = offset.dot(a);
  ArcGeometry arc;
  arc.center = center + axial * a;
  arc.u = offset - axial * a;
  arc.radius = arc.u.norm();
  if (!(arc.radius >= kMinArcRadius)) {
    return Invalid("start", absl::StrCat("at distance >= ", kMinArcRadius,
                                         " from the axis (the arc radius)"),
                   arc.radius);
  }
  arc.v = a.cross(arc.u);
  arc.angle = angle;
  Trajectory path(Kind::kArc, {0.0, duration}, {start}, {}, std::move(arc));
  if (absl::Status s = path.CheckDerived("center, start, angle and duration"); !s.ok()) {
    return s;
  }
  return path;
}

absl::StatusOr<Trajectory> Trajectory::Polyline(std::vector<Vector3d> points, double speed) {
  if (absl::Status s = CheckPositive(speed, "speed"); !s.ok()) return s;
  if (absl::Status s = CheckCount(points.size(), "points"); !s.ok()) return s;
  std::vector<double> knots(points.size(), 0.0);
  double length = 0.0;
  for (size_t k = 0; k < points.size(); ++k) {
    const std::string field = absl::StrCat("points[", k, "]");
    if (absl::Status s = CheckInWorld(points[k], field); !s.ok()) return s;
    if (k == 0) continue;
    const double step = (points[k] - points[k - 1]).norm();
    if (!(step > 0.0)) {
      return Invalid(field, absl::StrCat("distinct from points[", k - 1, "] (distance > 0)"),
                     step);
    }
    length += step;
    knots[k] = length / speed;  // the vertex time: path length so far / speed
    if (!std::isfinite(knots[k])) {
      return Invalid("speed", absl::StrCat("large enough for a finite duration of the path (length ",
                                           length, ")"),
                     speed);
    }
    if (!(knots[k] > knots[k - 1])) {
      return Invalid(field, absl::StrCat("far enough from points[", k - 1,
                                         "] to be reached at a later representable time"),
                     step);
    }
  }
  Trajectory path(Kind::kPiecewiseLinear, std::move(knots), std::move(points), {}, ArcGeometry{});
  if (absl::Status s = path.CheckDerived("points and speed"); !s.ok()) return s;
  return path;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

int Trajectory::SegmentAt(double t) const {
  const auto it = std::upper_bound(knots_.begin(), knots_.end(), t);
  const int k = static_cast<int>(it - knots_.begin()) - 1;
  return std::clamp(k, 0, static_cast<int>(knots_.size()) - 2);
}

Vector3d Trajectory::SegmentPosition(int k, double t) const {
  const double h = knots_[k + 1] - knots_[k];
  const double u = (t - knots_[k]) / h;
  switch (kind_) {
    case Kind::kArc: {
      // start + (cos - 1) u + sin v, with cos - 1 = -2 sin^2(theta/2) free of cancellation and
      // the start point reproduced exactly at theta = 0.
      const double theta = arc_.angle * u;
      const double half_sin = std::sin(0.5 * theta);
      return points_[0] - 2.0 * half_sin * half_sin * arc_.u + std::sin(theta) * arc_.v;
    }
    case Kind::kPiecewiseLinear:
      // Exact end points at u = 0 and u = 1.
      return (1.0 - u) * points_[k] + u * points_[k + 1];
    case Kind::kCubicHermite: {
      const double u2 = u * u, u3 = u2 * u;
      return (2 * u3 - 3 * u2 + 1) * points_[k] + (-2 * u3 + 3 * u2) * points_[k + 1] +
             h * ((u3 - 2 * u2 + u) * velocities_[k] + (u3 - u2) * velocities_[k + 1]);
    }
  }
  return points_[0];
}

Vector3d Trajectory::SegmentVelocity(int k, double t) const {
  const double h = knots_[k + 1] - knots_[k];
  const double u = (t - knots_[k]) / h;
  switch (kind_) {
    case Kind::kArc: {
      const double theta = arc_.angle * u;
      return (arc_.angle / h) * (std::cos(theta) * arc_.v - std::sin(theta) * arc_.u);
    }
    case Kind::kPiecewiseLinear:
      return (points_[k + 1] - points_[k]) / h;
    case Kind::kCubicHermite: {
      const double u2 = u * u;
      return (6 * u2 - 6 * u) / h * (points_[k] - points_[k + 1]) +
             (3 * u2 - 4 * u + 1) * velocities_[k] + (3 * u2 - 2 * u) * velocities_[k + 1];
    }
  }
  return Vector3d::Zero();
}

Vector3d Trajectory::PositionAt(double t) const {
  if (std::isnan(t)) t = start_time();
  t = std::clamp(t, start_time(), end_time());
  return SegmentPosition(SegmentAt(t), t);
}

Vector3d Trajectory::VelocityAt(double t) const {
  if (!(t >= start_time() && t <= end_time())) return Vector3d::Zero();  // holding (or NaN)
  return SegmentVelocity(SegmentAt(t), t);
}

double Trajectory::SegmentSpeedBound(int k) const {
  const double h = knots_[k + 1] - knots_[k];
  switch (kind_) {
    case Kind::kArc:
      return std::abs(arc_.angle) * arc_.radius / h;
    case Kind::kPiecewiseLinear:
      return (points_[k + 1] - points_[k]).norm() / h;
    case Kind::kCubicHermite: {
      // The velocity is a quadratic Bezier curve with control points m_k, 3 (p_k+1 - p_k) / h -
      // m_k - m_k+1, m_k+1; it stays in their convex hull, so its norm is at most theirs.
      const Vector3d middle =
          3.0 * (points_[k + 1] - points_[k]) / h - velocities_[k] - velocities_[k + 1];
      return std::max({velocities_[k].norm(), middle.norm(), velocities_[k + 1].norm()});
    }
  }
  return 0.0;
}

double Trajectory::SegmentLength(int k) const {
  const double h = knots_[k + 1] - knots_[k];
  if (kind_ != Kind::kCubicHermite) return speed_bounds_[k] * h;  // constant speed
  const auto speed = [&](double t) { return SegmentVelocity(k, t).norm(); };
  const double a = knots_[k], b = knots_[k + 1];
  const double whole = GaussLegendre5(speed, a, b);
  const double tolerance = 1e-14 * speed_bounds_[k] * h;  // the bound exceeds the length
  if (!(tolerance > 0.0)) return whole;  // a stationary segment (or non-finite: caught later)
  int budget = kMaxSubdivisions;
  return AdaptiveIntegral(speed, a, b, whole, tolerance, 0, budget);
}

// ---------------------------------------------------------------------------------------------
// Sampling

absl::StatusOr<std::vector<double>> Trajectory::SampleTimes(double sample_period) const {
  if (absl::Status s = CheckPositive(sample_period, "sample_period"); !s.ok()) return s;
  // Intervals of length sample_period, the last one possibly shorter but not a sliver.
  const double intervals = std::max(1.0, std::ceil(duration() / sample_period - 1e-9));
  if (!(intervals + 1.0 <= kMaxSamples)) {
    return Invalid("sample_period",
                   absl::StrCat(">= duration / ", kMaxSamples - 1, " = ",
                                duration() / (kMaxSamples - 1), " (at most ", kMaxSamples,
                                " samples)"),
                   sample_period);
  }
  const int n = static_cast<int>(intervals);
  std::vector<double> times;
  times.reserve(n + 1);
  for (int k = 0; k < n; ++k) {
    const double t = start_time() + k * sample_period;
    if (times.empty() || t > times.back()) times.push_back(t);  // skip time-resolution repeats
  }
  if (end_time() > times.back()) {
    times.push_back(end_time());
  } else {
    times.back() = end_time();
  }
  return times;
}

double Trajectory::SpeedBound(int k, double a, double b) const {
  if (kind_ != Kind::kCubicHermite) return speed_bounds_[k];  // constant speed
  // The velocity restricted to [a, b] is a quadratic Bezier curve with end control points
  // v(a), v(b) and middle control point 2 v(mid) - (v(a) + v(b)) / 2; it stays in their hull.
  const Vector3d va = SegmentVelocity(k, a), vb = SegmentVelocity(k, b);
  const Vector3d middle = 2.0 * SegmentVelocity(k, 0.5 * (a + b)) - 0.5 * (va + vb);
  return std::max({va.norm(), middle.norm(), vb.norm()});
}

template <class F>
void Trajectory::ForEachPiece(double t0, double t1, const F& visit) const {
  // Pieces of [t0, t1] split at the knots, each within one segment or outside the path's time
  // range (where the hand holds still); cubic segments are cut further into kCubicChunks
  // chunks so that a slow stretch (e.g. near a rest end) is not stepped at the peak speed.
  constexpr int kCubicChunks = 8;
  const auto first = std::upper_bound(knots_.begin(), knots_.end(), t0);
  double a = t0;
  for (auto it = first; a < t1; ++it) {
    const double b = it == knots_.end() ? t1 : std::min(*it, t1);
    const double mid = 0.5 * (a + b);
    if (!(mid >= start_time() && mid <= end_time())) {
      visit(a, b, 0.0);
    } else {
      const int k = SegmentAt(mid);
      const double h = knots_[k + 1] - knots_[k];
      const int chunks = kind_ != Kind::kCubicHermite
                             ? 1
                             : static_cast<int>(std::ceil(kCubicChunks * (b - a) / h));
      for (int c = 0; c < chunks; ++c) {
        const double lo = c == 0 ? a : a + (b - a) * c / chunks;
        const double hi = c + 1 == chunks ? b : a + (b - a) * (c + 1) / chunks;
        if (hi > lo) visit(lo, hi, SpeedBound(k, lo, hi));
      }
    }
    a = b;
    if (it == knots_.end()) break;
  }
}

absl::StatusOr<std::vector<double>> Trajectory::SubSteps(double t0, double t1,
                                                         double max_step) const {
  if (!std::isfinite(t0)) return Invalid("t0", "finite", t0);
  if (!std::isfinite(t1) || t1 < t0) {
    return Invalid("t1", absl::StrCat("finite and >= t0 (", t0, ")"), t1);
  }
  if (absl::Status s = CheckPositive(max_step, "max_step"); !s.ok()) return s;
  if (t1 == t0) return std::vector<double>{t1};

  // Uniform cuts per piece: each cut lasts at most max_step / speed bound, less a relative
  // 1e-9 and a few ulps of the times so that rounding cannot push a step over max_step.
  const auto cuts = [&](double a, double b, double speed) {
    if (!(speed > 0.0)) return 1.0;
    const double allowed =
        max_step / speed * (1.0 - 1e-9) - 4.0 * kEps * std::max(std::abs(a), std::abs(b));
    return allowed > 0.0 ? std::max(1.0, std::ceil((b - a) / allowed)) : kInf;
  };
  double total = 0.0;
  ForEachPiece(t0, t1, [&](double a, double b, double speed) { total += cuts(a, b, speed); });
  if (!(total <= kMaxSamples)) {
    return Invalid("max_step",
                   absl::StrCat("large enough for at most ", kMaxSamples, " sub-steps between t0 (",
                                t0, ") and t1 (", t1, ") at the time resolution, which need ",
                                total),
                   max_step);
  }

  std::vector<double> times;
  times.reserve(static_cast<size_t>(total));
  double last = t0;
  ForEachPiece(t0, t1, [&](double a, double b, double speed) {
    const int n = static_cast<int>(cuts(a, b, speed));
    for (int k = 1; k <= n; ++k) {
      const double t = k == n ? b : a + (b - a) * (static_cast<double>(k) / n);
      if (t > last) times.push_back(last = t);  // skip time-resolution repeats
    }
  });
  return times;
}

}  // namespace ikd::ik
