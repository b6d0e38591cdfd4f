#include "robot/analytic_family_check.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ikd::robot::internal {
namespace {

double AngleBetween(const Line& a, const Line& b) {
  return std::atan2(a.h.cross(b.h).norm(), std::abs(a.h.dot(b.h)));
}

// The closest points of two non-parallel lines: their midpoint and distance.
struct Meeting {
  Eigen::Vector3d point;
  double distance = 0.0;
};
Meeting Closest(const Line& a, const Line& b) {
  const Eigen::Vector3d r = b.o - a.o;
  const double ab = a.h.dot(b.h), denominator = 1.0 - ab * ab;
  const double s = (a.h.dot(r) - ab * b.h.dot(r)) / denominator;
  const double t = (ab * a.h.dot(r) - b.h.dot(r)) / denominator;
  const Eigen::Vector3d pa = a.o + s * a.h, pb = b.o + t * b.h;
  return {0.5 * (pa + pb), (pa - pb).norm()};
}

class Checker {
 public:
  // numbers: the joint number (1-based) of each axis, for the messages; locked: the locked
  // joint's number (0: none). Parallel or intersecting axes on either side of a locked joint
  // are so at one locked value only, and serve no family.
  Checker(const std::array<Line, 6>& axes, const std::array<int, 6>& numbers, int locked,
          double tolerance)
      : axes_(axes), numbers_(numbers), locked_(locked), tol_(tolerance) {
    for (int k = 0; k < 6; ++k) fit_.c[k] = axes[k].o;
  }
  bool Parallel(int a, int b) {
    if (!fit_.failure.empty() || !SameSide(a, b)) return false;
    const double angle = AngleBetween(axes_[a], axes_[b]);
    if (angle > tol_) {
      return Fail(absl::StrFormat("axes %d and %d not parallel (%.3g rad > %g)", numbers_[a],
                                  numbers_[b], angle, tol_));
    }
    fit_.error = std::max(fit_.error, angle);
    fit_.sign[b] = axes_[a].h.dot(axes_[b].h) > 0.0 ? 1.0 : -1.0;
    return true;
  }
  bool NotParallel(int a, int b) {
    if (!fit_.failure.empty()) return false;
    if (AngleBetween(axes_[a], axes_[b]) > 1e3 * tol_) return true;
    return Fail(absl::StrFormat("axes %d and %d parallel", numbers_[a], numbers_[b]));
  }
  // Where axes a and b meet, or a failure.
  std::optional<Eigen::Vector3d> Intersect(int a, int b) {
    if (!SameSide(a, b) || !NotParallel(a, b)) return std::nullopt;
    const Meeting m = Closest(axes_[a], axes_[b]);
    if (m.distance > tol_) {
      Fail(absl::StrFormat("axes %d and %d do not intersect (%.3g m apart > %g)", numbers_[a],
                           numbers_[b], m.distance, tol_));
      return std::nullopt;
    }
    fit_.error = std::max(fit_.error, m.distance);
    return m.point;
  }
  // Axes 4, 5, 6 through one point: the wrist centre becomes their point.
  bool SphericalWrist() {
    const std::optional<Eigen::Vector3d> p = Intersect(3, 4), q = Intersect(4, 5);
    if (!p || !q) return false;
    if ((*p - *q).norm() > tol_) {
      return Fail(absl::StrFormat("axes %d, %d, %d do not meet in one point (%.3g m > %g)",
                                  numbers_[3], numbers_[4], numbers_[5], (*p - *q).norm(), tol_));
    }
    fit_.error = std::max(fit_.error, (*p - *q).norm());
    fit_.c[3] = fit_.c[4] = fit_.c[5] = 0.5 * (*p + *q);
    return true;
  }
  Fit Result() {
    fit_.ok = fit_.failure.empty();
    return fit_;
  }
  Fit& fit() { return fit_; }

 private:
  bool SameSide(int a, int b) {
    if (locked_ == 0 || (numbers_[a] < locked_) == (numbers_[b] < locked_)) return true;
    return Fail(absl::StrFormat("axes %d and %d lie on either side of locked joint %d", numbers_[a],
                                numbers_[b], locked_));
  }
  bool Fail(std::string why) {
    if (fit_.failure.empty()) fit_.failure = std::move(why);
    return false;
  }
  const std::array<Line, 6>& axes_;
  const std::array<int, 6>& numbers_;
  int locked_;
  double tol_;
  Fit fit_;
};

}  // namespace

Fit CheckFamily(AnalyticFamily family, const std::array<Line, 6>& axes,
                const std::array<int, 6>& numbers, int locked, double tolerance) {
  Checker check(axes, numbers, locked, tolerance);
  switch (family) {
    case AnalyticFamily::kThreeParallel:
      check.Parallel(1, 2) && check.Parallel(1, 3) && check.NotParallel(0, 1) &&
          check.NotParallel(1, 4);
      if (std::optional<Eigen::Vector3d> p = check.Intersect(4, 5)) {
        check.fit().c[4] = check.fit().c[5] = *p;
      }
      break;
    case AnalyticFamily::kSphericalWristElbow:
      check.SphericalWrist() && check.Parallel(1, 2) && check.NotParallel(0, 1);
      break;
    case AnalyticFamily::kSphericalWristShoulder:
      if (check.SphericalWrist()) {
        if (std::optional<Eigen::Vector3d> p = check.Intersect(0, 1)) {
          check.fit().c[0] = check.fit().c[1] = *p;
        }
      }
      break;
  }
  return check.Result();
}

}  // namespace ikd::robot::internal
