#include "ikd/systems/curves.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace ikd {
namespace {

double Sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }

absl::Status Positive(double value, const char* field) {
  if (std::isfinite(value) && value > 0.0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " must be finite and > 0, got ", value));
}

// Vesely Table I.
class Curve final : public ConstraintShape {
 public:
  explicit Curve(const CurveSpec& s) : s_(s) {}
  bool planar() const override { return true; }

  double Sigma(const Eigen::Vector3d& p) const override {
    const double x = p.x(), y = p.y();
    switch (s_.type) {
      case CurveType::kParabola: return s_.a * x * x - y;
      case CurveType::kEllipse: return x * x / (s_.a * s_.a) + y * y / (s_.b * s_.b) - 1.0;
      case CurveType::kSuperellipse:
        return std::pow(std::abs(x) / s_.a, s_.n) + std::pow(std::abs(y) / s_.b, s_.n) - 1.0;
      case CurveType::kDiscorectangle: {
        const double dy = std::max(0.0, std::abs(y) - s_.y0);
        return (x * x + dy * dy) / (s_.r * s_.r) - 1.0;
      }
      case CurveType::kBean:
        return std::pow(x, 4) + x * x * y * y + std::pow(y, 4) - x * (x * x + y * y);
    }
    return 0.0;
  }

  Eigen::Vector3d Gradient(const Eigen::Vector3d& p) const override {
    const double x = p.x(), y = p.y();
    switch (s_.type) {
      case CurveType::kParabola: return {2 * s_.a * x, -1.0, 0.0};
      case CurveType::kEllipse: return {2 * x / (s_.a * s_.a), 2 * y / (s_.b * s_.b), 0.0};
      case CurveType::kSuperellipse:
        return {s_.n * std::pow(std::abs(x), s_.n - 1) / std::pow(s_.a, s_.n) * Sign(x),
                s_.n * std::pow(std::abs(y), s_.n - 1) / std::pow(s_.b, s_.n) * Sign(y), 0.0};
      case CurveType::kDiscorectangle: {
        const double dy = std::max(0.0, std::abs(y) - s_.y0);
        return {2 * x / (s_.r * s_.r), 2 * Sign(y) * dy / (s_.r * s_.r), 0.0};
      }
      case CurveType::kBean:
        return {4 * x * x * x - 3 * x * x + 2 * x * y * y - y * y,
                4 * y * y * y + 2 * y * (x * x - x), 0.0};
    }
    return Eigen::Vector3d::Zero();
  }

 private:
  CurveSpec s_;
};

// Vesely Table II.
class Surface final : public ConstraintShape {
 public:
  explicit Surface(const SurfaceSpec& s) : s_(s) {}
  bool planar() const override { return false; }

  double Sigma(const Eigen::Vector3d& p) const override {
    const double rho2 = p.x() * p.x() + p.y() * p.y();
    switch (s_.type) {
      case SurfaceType::kSphere: return p.squaredNorm() / (s_.r * s_.r) - 1.0;
      case SurfaceType::kParaboloid: return s_.a * rho2 - p.z();
      case SurfaceType::kHyperboloid:
        return rho2 / (s_.a * s_.a) - p.z() * p.z() / (s_.c * s_.c) - 1.0;
      case SurfaceType::kPseudoHyperboloid: return -s_.a / std::sqrt(rho2) - p.z();
    }
    return 0.0;
  }

  Eigen::Vector3d Gradient(const Eigen::Vector3d& p) const override {
    const double rho2 = p.x() * p.x() + p.y() * p.y();
    switch (s_.type) {
      case SurfaceType::kSphere: return 2.0 * p / (s_.r * s_.r);
      case SurfaceType::kParaboloid: return {2 * s_.a * p.x(), 2 * s_.a * p.y(), -1.0};
      case SurfaceType::kHyperboloid:
        return {2 * p.x() / (s_.a * s_.a), 2 * p.y() / (s_.a * s_.a), -2 * p.z() / (s_.c * s_.c)};
      case SurfaceType::kPseudoHyperboloid: {
        const double rho3 = rho2 * std::sqrt(rho2);
        return {s_.a * p.x() / rho3, s_.a * p.y() / rho3, -1.0};
      }
    }
    return Eigen::Vector3d::Zero();
  }

  absl::Status CheckDomain(const Eigen::Vector3d& p) const override {
    if (s_.type == SurfaceType::kPseudoHyperboloid &&
        std::hypot(p.x(), p.y()) < 1e-9 * std::max(1.0, s_.a)) {
      return absl::InvalidArgumentError(
          "the pseudo-hyperboloid is undefined on its axis (x = y = 0)");
    }
    return absl::OkStatus();
  }

 private:
  SurfaceSpec s_;
};

// Vesely eq. 3-5: r <- r - [sigma(r) / (grad sigma(r) . grad sigma(r_n))] grad sigma(r_n).
absl::StatusOr<int> Project(const ConstraintShape& shape, const Eigen::Vector3d& anchor,
                            const FollowOptions& options, Eigen::Vector3d& r) {
  const Eigen::Vector3d direction = shape.Gradient(anchor);
  for (int iteration = 1; iteration <= options.max_iterations; ++iteration) {
    if (absl::Status s = shape.CheckDomain(r); !s.ok()) return s;
    const Eigen::Vector3d gradient = shape.Gradient(r);
    const double sigma = shape.Sigma(r);
    if (std::abs(sigma) <= options.tolerance * gradient.norm()) return iteration - 1;
    const double alignment = gradient.dot(direction);
    if (!(std::abs(alignment) > 1e-300)) break;
    r -= (sigma / alignment) * direction;
    if (!r.allFinite()) break;
  }
  return absl::AbortedError(absl::StrCat("projection did not converge within max_iterations=",
                                         options.max_iterations, " (step too large?)"));
}

}  // namespace

absl::Status ConstraintShape::CheckDomain(const Eigen::Vector3d&) const { return absl::OkStatus(); }

absl::StatusOr<std::unique_ptr<ConstraintShape>> MakeCurve(const CurveSpec& spec) {
  switch (spec.type) {
    case CurveType::kParabola:
      if (!std::isfinite(spec.a) || spec.a == 0.0) {
        return absl::InvalidArgumentError(absl::StrCat("a must be finite and non-zero, got ", spec.a));
      }
      break;
    case CurveType::kEllipse:
    case CurveType::kSuperellipse:
      if (absl::Status s = Positive(spec.a, "a"); !s.ok()) return s;
      if (absl::Status s = Positive(spec.b, "b"); !s.ok()) return s;
      if (spec.type == CurveType::kSuperellipse && !(std::isfinite(spec.n) && spec.n > 1.0)) {
        return absl::InvalidArgumentError(absl::StrCat("n must be finite and > 1, got ", spec.n));
      }
      break;
    case CurveType::kDiscorectangle:
      if (absl::Status s = Positive(spec.r, "r"); !s.ok()) return s;
      if (!std::isfinite(spec.y0) || spec.y0 < 0.0) {
        return absl::InvalidArgumentError(absl::StrCat("y0 must be finite and >= 0, got ", spec.y0));
      }
      break;
    case CurveType::kBean:
      break;
  }
  return std::make_unique<Curve>(spec);
}

absl::StatusOr<std::unique_ptr<ConstraintShape>> MakeSurface(const SurfaceSpec& spec) {
  switch (spec.type) {
    case SurfaceType::kSphere:
      if (absl::Status s = Positive(spec.r, "r"); !s.ok()) return s;
      break;
    case SurfaceType::kHyperboloid:
      if (absl::Status s = Positive(spec.c, "c"); !s.ok()) return s;
      [[fallthrough]];
    case SurfaceType::kParaboloid:
    case SurfaceType::kPseudoHyperboloid:
      if (absl::Status s = Positive(spec.a, "a"); !s.ok()) return s;
      break;
  }
  return std::make_unique<Surface>(spec);
}

absl::Status FollowOptions::Validate() const {
  if (!std::isfinite(dt) || dt <= 0.0) {
    return absl::InvalidArgumentError(absl::StrCat("dt must be finite and > 0, got ", dt));
  }
  if (steps < 1 || steps > 100'000'000) {
    return absl::InvalidArgumentError(absl::StrCat("steps must be in [1, 1e8], got ", steps));
  }
  if (!gravity.allFinite()) return absl::InvalidArgumentError("gravity must be finite");
  if (!std::isfinite(tolerance) || tolerance <= 0.0) {
    return absl::InvalidArgumentError(absl::StrCat("tolerance must be finite and > 0, got ", tolerance));
  }
  if (max_iterations < 1 || max_iterations > 1'000'000) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_iterations must be in [1, 1e6], got ", max_iterations));
  }
  return absl::OkStatus();
}

absl::StatusOr<ConstrainedPath> FollowConstraint(const ConstraintShape& shape,
                                                 const Eigen::Vector3d& r0,
                                                 const Eigen::Vector3d& v0,
                                                 const FollowOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  if (!r0.allFinite() || !v0.allFinite()) {
    return absl::InvalidArgumentError("r0 and v0 must be finite");
  }
  if (absl::Status s = shape.CheckDomain(r0); !s.ok()) return s;
  const Eigen::Vector3d n0 = shape.Gradient(r0);
  const double off = std::abs(shape.Sigma(r0)) / n0.norm();
  if (!(off <= 1e-6 * std::max(1.0, r0.norm()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("r0 is ", off, " away from the constraint (sigma(r0) must be ~0)"));
  }
  Eigen::Vector3d gravity = options.gravity;
  Eigen::Vector3d v = v0 - v0.dot(n0) / n0.squaredNorm() * n0;  // tangential start
  if (shape.planar()) gravity.z() = v.z() = 0.0;
  ConstrainedPath path;
  path.positions.reserve(options.steps + 1);
  path.positions.push_back(r0);
  const double dt = options.dt;
  for (int n = 0; n < options.steps; ++n) {
    const Eigen::Vector3d& r = path.positions.back();
    // First step from (r0, v0) (Vesely problem 5), then Verlet: r' = 2 r_n - r_{n-1} + g dt^2.
    Eigen::Vector3d next = n == 0 ? Eigen::Vector3d(r + v * dt + 0.5 * dt * dt * gravity)
                                  : Eigen::Vector3d(2.0 * r - path.positions[n - 1] + dt * dt * gravity);
    auto iterations = Project(shape, r, options, next);
    if (!iterations.ok()) {
      return absl::Status(iterations.status().code(),
                          absl::StrCat("step ", n + 1, ": ", iterations.status().message()));
    }
    path.max_iterations_used = std::max(path.max_iterations_used, *iterations);
    path.positions.push_back(next);
  }
  for (int n = 1; n < options.steps; ++n) {
    const Eigen::Vector3d& prev = path.positions[n - 1];
    const Eigen::Vector3d& next = path.positions[n + 1];
    path.velocities.push_back((next - prev) / (2 * dt));
    path.accelerations.push_back((next - 2 * path.positions[n] + prev) / (dt * dt));
  }
  return path;
}

}  // namespace ikd
