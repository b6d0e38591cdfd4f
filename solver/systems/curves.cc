#include "ikd/systems/curves.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace ikd::systems {

using constraints::ProjectionOutcome;
using constraints::ProjectionSummary;

namespace {

double Sign(double x) { return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : 0.0); }

absl::Status Positive(double value, const char* field) {
  if (std::isfinite(value) && value > 0.0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " must be finite and > 0, got ", value));
}

absl::Status NonZero(double value, const char* field) {
  if (std::isfinite(value) && value != 0.0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " must be finite and != 0, got ", value));
}

absl::Status InRange(double value, const char* field, double low, double high) {
  if (std::isfinite(value) && value >= low && value <= high) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must be in [", low, ", ", high, "], got ", value));
}

ProjectionSummary Failure(ProjectionOutcome outcome, int iterations, std::string message) {
  ProjectionSummary s;
  s.outcome = outcome;
  s.iterations = iterations;
  s.max_relative_violation = std::numeric_limits<double>::infinity();
  s.message = std::move(message);
  return s;
}

// One Lagrange correction (Vesely eq. 3-5): r <- r - sigma(r) / (grad sigma(r) . d) d, with d =
// grad sigma(r(t_n)) the fixed direction of the constraint force. Returns false with `failure`
// set when it cannot be applied.
bool Correct(const ConstraintShape& shape, const Eigen::Vector3d& direction, int iteration,
             Eigen::Vector3d& r, ProjectionSummary& failure) {
  if (absl::Status s = shape.CheckDomain(r); !s.ok()) {
    failure = Failure(ProjectionOutcome::kNonFinite, iteration,
                      absl::StrCat("left the domain: ", s.message()));
    return false;
  }
  const Eigen::Vector3d gradient = shape.Gradient(r);
  const double alignment = gradient.dot(direction);
  // A correction direction (nearly) tangent to the shape at r cannot restore sigma = 0.
  if (!(std::abs(alignment) > 1e-12 * gradient.norm() * direction.norm())) {
    failure = Failure(ProjectionOutcome::kSingular, iteration,
                      "grad sigma at the trial point is orthogonal to grad sigma(r(t_n)) "
                      "(step too large, or a singular point of the shape)");
    return false;
  }
  const Eigen::Vector3d next = r - (shape.Sigma(r) / alignment) * direction;
  if (!next.allFinite()) {
    failure = Failure(ProjectionOutcome::kNonFinite, iteration, "non-finite position");
    return false;
  }
  r = next;
  return true;
}

// |sigma| / |grad sigma| relative to the length scale, infinite outside the domain.
double RelativeDistance(const ConstraintShape& shape, const Eigen::Vector3d& r) {
  if (!shape.CheckDomain(r).ok()) return std::numeric_limits<double>::infinity();
  return shape.DistanceEstimate(r) / shape.length_scale();
}

// Projects r onto sigma = 0 along grad sigma(anchor). When chord > 0 (kConstantSpeed), each
// correction is followed by rescaling the step r - anchor to the length `chord`; the two
// alternate until both hold, contracting by ~ kappa * chord per round.
ProjectionSummary Project(const ConstraintShape& shape, const Eigen::Vector3d& anchor, double chord,
                          const FollowOptions& options, Eigen::Vector3d& r) {
  const Eigen::Vector3d direction = shape.Gradient(anchor);
  if (!(direction.norm() > 0.0) || !direction.allFinite()) {
    return Failure(ProjectionOutcome::kSingular, 0,
                   "grad sigma(r(t_n)) vanishes: r(t_n) is a singular point of the shape");
  }
  ProjectionSummary summary;
  for (int iteration = 0;; ++iteration) {
    const double distance = RelativeDistance(shape, r);
    const double chord_error = chord > 0.0 ? std::abs((r - anchor).norm() / chord - 1.0) : 0.0;
    if (distance <= options.tolerance && chord_error <= options.tolerance) {
      summary.iterations = iteration;
      summary.max_relative_violation = distance;
      return summary;
    }
    if (iteration == options.max_iterations) break;
    ProjectionSummary failure;
    if (!Correct(shape, direction, iteration + 1, r, failure)) return failure;
    if (chord > 0.0) {
      const double step = (r - anchor).norm();
      if (!(step > 0.0)) {
        return Failure(ProjectionOutcome::kSingular, iteration + 1,
                       "the step shrank to zero: no direction to go");
      }
      r = anchor + (chord / step) * (r - anchor);
    }
  }
  return Failure(ProjectionOutcome::kNotConverged, options.max_iterations,
                 absl::StrCat("no convergence within max_iterations = ", options.max_iterations,
                              " (step too large for the curvature?)"));
}

absl::Status CheckStart(const ConstraintShape& shape, const Eigen::Vector3d& r0,
                        const Eigen::Vector3d& v0, const FollowOptions& options) {
  if (!r0.allFinite()) return absl::InvalidArgumentError("r0 must be finite");
  if (!v0.allFinite()) return absl::InvalidArgumentError("v0 must be finite");
  if (shape.planar() && v0.z() != 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("v0.z must be 0 for a plane curve, got ", v0.z()));
  }
  if (shape.planar() && options.gravity.z() != 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("gravity.z must be 0 for a plane curve, got ", options.gravity.z()));
  }
  if (options.mode == FollowMode::kConstantSpeed && !options.gravity.isZero(0.0)) {
    return absl::InvalidArgumentError("gravity must be zero in kConstantSpeed mode (no force)");
  }
  if (absl::Status s = shape.CheckDomain(r0); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("r0: ", s.message()));
  }
  if (!(shape.Gradient(r0).norm() > 0.0)) {
    return absl::InvalidArgumentError("r0 is a singular point of the shape (grad sigma = 0)");
  }
  const double off = RelativeDistance(shape, r0);
  if (!(off <= options.start_tolerance)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "r0 is ", off * shape.length_scale(), " away from the shape (sigma(r0) = ", shape.Sigma(r0),
        "); at most start_tolerance * length scale = ",
        options.start_tolerance * shape.length_scale(), " is accepted"));
  }
  return absl::OkStatus();
}

// Central differences at the interior points (Vesely sec. III A). A dt so small that dt^2
// underflows (or the quotients overflow) gives no estimate at all: an error, never a NaN.
absl::Status Differentiate(const Eigen::Vector3d& gravity, ConstrainedMotion& t) {
  const double dt = t.dt;
  for (size_t n = 1; n + 1 < t.positions.size(); ++n) {
    const Eigen::Vector3d& before = t.positions[n - 1];
    const Eigen::Vector3d& after = t.positions[n + 1];
    const Eigen::Vector3d a = (after - 2.0 * t.positions[n] + before) / (dt * dt);
    const Eigen::Vector3d v = (after - before) / (2.0 * dt);
    if (!a.allFinite() || !v.allFinite()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dt is too small for the finite-difference estimates: with dt = ", dt,
          " the velocity or acceleration at step ", n, " is not finite"));
    }
    t.velocities.push_back(v);
    t.accelerations.push_back(a);
    t.constraint_accelerations.push_back(a - gravity);
  }
  return absl::OkStatus();
}

}  // namespace

double ConstraintShape::DistanceEstimate(const Eigen::Vector3d& r) const {
  const double gradient = Gradient(r).norm();
  if (!(gradient > 0.0)) return std::numeric_limits<double>::infinity();
  return std::abs(Sigma(r)) / gradient;
}

absl::Status ConstraintShape::CheckDomain(const Eigen::Vector3d&) const { return absl::OkStatus(); }

const char* CurveName(CurveType type) {
  switch (type) {
    case CurveType::kParabola: return "PARABOLA";
    case CurveType::kEllipse: return "ELLIPSE";
    case CurveType::kSuperellipse: return "SUPERELLIPSE";
    case CurveType::kDiscorectangle: return "DISCORECTANGLE";
    case CurveType::kBean: return "BEAN";
  }
  return "UNKNOWN";
}

const char* SurfaceName(SurfaceType type) {
  switch (type) {
    case SurfaceType::kSphere: return "SPHERE";
    case SurfaceType::kParaboloid: return "PARABOLOID";
    case SurfaceType::kHyperboloid: return "HYPERBOLOID";
    case SurfaceType::kPseudoHyperboloid: return "PSEUDO_HYPERBOLOID";
  }
  return "UNKNOWN";
}

// Vesely Table I.
double Curve::Sigma(const Eigen::Vector3d& p) const {
  const CurveSpec& s = spec_;
  const double x = p.x(), y = p.y();
  switch (s.type) {
    case CurveType::kParabola: return s.a * x * x - y;
    case CurveType::kEllipse: return x * x / (s.a * s.a) + y * y / (s.b * s.b) - 1.0;
    case CurveType::kSuperellipse:
      return std::pow(std::abs(x) / s.a, s.n) + std::pow(std::abs(y) / s.b, s.n) - 1.0;
    case CurveType::kDiscorectangle: {
      const double beyond = std::max(0.0, std::abs(y) - s.y0);  // 0 along the straight sides
      return (x * x + beyond * beyond) / (s.r * s.r) - 1.0;
    }
    case CurveType::kBean:
      return x * x * x * x + x * x * y * y + y * y * y * y - x * (x * x + y * y);
  }
  return 0.0;
}

Eigen::Vector3d Curve::Gradient(const Eigen::Vector3d& p) const {
  const CurveSpec& s = spec_;
  const double x = p.x(), y = p.y();
  switch (s.type) {
    case CurveType::kParabola: return {2.0 * s.a * x, -1.0, 0.0};
    case CurveType::kEllipse: return {2.0 * x / (s.a * s.a), 2.0 * y / (s.b * s.b), 0.0};
    case CurveType::kSuperellipse:
      return {s.n * std::pow(std::abs(x) / s.a, s.n - 1.0) / s.a * Sign(x),
              s.n * std::pow(std::abs(y) / s.b, s.n - 1.0) / s.b * Sign(y), 0.0};
    case CurveType::kDiscorectangle: {
      const double beyond = std::max(0.0, std::abs(y) - s.y0);
      return {2.0 * x / (s.r * s.r), 2.0 * Sign(y) * beyond / (s.r * s.r), 0.0};
    }
    case CurveType::kBean:
      return {4.0 * x * x * x - 3.0 * x * x + 2.0 * x * y * y - y * y,
              4.0 * y * y * y + 2.0 * y * (x * x - x), 0.0};
  }
  return Eigen::Vector3d::Zero();
}

double Curve::length_scale() const {
  switch (spec_.type) {
    case CurveType::kParabola: return 1.0 / std::abs(spec_.a);  // where the slope reaches 2
    case CurveType::kEllipse:
    case CurveType::kSuperellipse: return std::max(spec_.a, spec_.b);
    case CurveType::kDiscorectangle: return spec_.r + spec_.y0;
    case CurveType::kBean: return 1.0;  // the bean spans 0 <= x <= 1
  }
  return 1.0;
}

// Vesely Table II.
double Surface::Sigma(const Eigen::Vector3d& p) const {
  const SurfaceSpec& s = spec_;
  const double rho2 = p.x() * p.x() + p.y() * p.y();
  switch (s.type) {
    case SurfaceType::kSphere: return p.squaredNorm() / (s.r * s.r) - 1.0;
    case SurfaceType::kParaboloid: return s.a * rho2 - p.z();
    case SurfaceType::kHyperboloid: return rho2 / (s.a * s.a) - p.z() * p.z() / (s.c * s.c) - 1.0;
    case SurfaceType::kPseudoHyperboloid: return -s.a / std::sqrt(rho2) - p.z();
  }
  return 0.0;
}

Eigen::Vector3d Surface::Gradient(const Eigen::Vector3d& p) const {
  const SurfaceSpec& s = spec_;
  const double rho2 = p.x() * p.x() + p.y() * p.y();
  switch (s.type) {
    case SurfaceType::kSphere: return 2.0 * p / (s.r * s.r);
    case SurfaceType::kParaboloid: return {2.0 * s.a * p.x(), 2.0 * s.a * p.y(), -1.0};
    case SurfaceType::kHyperboloid:
      return {2.0 * p.x() / (s.a * s.a), 2.0 * p.y() / (s.a * s.a), -2.0 * p.z() / (s.c * s.c)};
    case SurfaceType::kPseudoHyperboloid: {
      const double rho3 = rho2 * std::sqrt(rho2);
      return {s.a * p.x() / rho3, s.a * p.y() / rho3, -1.0};
    }
  }
  return Eigen::Vector3d::Zero();
}

double Surface::length_scale() const {
  switch (spec_.type) {
    case SurfaceType::kSphere: return spec_.r;
    case SurfaceType::kParaboloid: return 1.0 / std::abs(spec_.a);
    case SurfaceType::kHyperboloid: return std::max(spec_.a, spec_.c);
    case SurfaceType::kPseudoHyperboloid: return std::sqrt(spec_.a);  // where z = -rho
  }
  return 1.0;
}

absl::Status Surface::CheckDomain(const Eigen::Vector3d& p) const {
  // sigma = -a / rho diverges on the axis; 1e-9 of the length scale keeps a / rho^3 finite.
  if (spec_.type == SurfaceType::kPseudoHyperboloid &&
      !(std::hypot(p.x(), p.y()) > 1e-9 * length_scale())) {
    return absl::InvalidArgumentError(
        "the pseudo-hyperboloid is undefined on its axis x = y = 0 (rho must be > 0)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Curve>> MakeCurve(const CurveSpec& spec) {
  switch (spec.type) {
    case CurveType::kParabola:
      if (absl::Status s = NonZero(spec.a, "a"); !s.ok()) return s;
      break;
    case CurveType::kEllipse:
    case CurveType::kSuperellipse:
      if (absl::Status s = Positive(spec.a, "a"); !s.ok()) return s;
      if (absl::Status s = Positive(spec.b, "b"); !s.ok()) return s;
      // n <= 1 gives corners (n = 1) or cusps where grad sigma vanishes or diverges.
      if (spec.type == CurveType::kSuperellipse && !(std::isfinite(spec.n) && spec.n > 1.0)) {
        return absl::InvalidArgumentError(absl::StrCat("n must be finite and > 1, got ", spec.n));
      }
      break;
    case CurveType::kDiscorectangle:
      if (absl::Status s = Positive(spec.r, "r"); !s.ok()) return s;
      if (!std::isfinite(spec.y0) || spec.y0 < 0.0) {
        return absl::InvalidArgumentError(
            absl::StrCat("y0 must be finite and >= 0, got ", spec.y0));
      }
      break;
    case CurveType::kBean: break;
    default: return absl::InvalidArgumentError("type is not a known CurveType");
  }
  return std::unique_ptr<Curve>(new Curve(spec));
}

absl::StatusOr<std::unique_ptr<Surface>> MakeSurface(const SurfaceSpec& spec) {
  switch (spec.type) {
    case SurfaceType::kSphere:
      if (absl::Status s = Positive(spec.r, "r"); !s.ok()) return s;
      break;
    case SurfaceType::kParaboloid:
      if (absl::Status s = NonZero(spec.a, "a"); !s.ok()) return s;
      break;
    case SurfaceType::kHyperboloid:
      if (absl::Status s = Positive(spec.a, "a"); !s.ok()) return s;
      if (absl::Status s = Positive(spec.c, "c"); !s.ok()) return s;
      break;
    case SurfaceType::kPseudoHyperboloid:
      if (absl::Status s = Positive(spec.a, "a"); !s.ok()) return s;
      break;
    default: return absl::InvalidArgumentError("type is not a known SurfaceType");
  }
  return std::unique_ptr<Surface>(new Surface(spec));
}

absl::Status FollowOptions::Validate() const {
  if (!std::isfinite(dt) || dt <= 0.0) {
    return absl::InvalidArgumentError(absl::StrCat("dt must be finite and > 0, got ", dt));
  }
  if (steps < 1 || steps > kMaxSteps) {
    return absl::InvalidArgumentError(
        absl::StrCat("steps must be in [1, ", kMaxSteps, "], got ", steps));
  }
  if (mode != FollowMode::kFreeFlight && mode != FollowMode::kConstantSpeed) {
    return absl::InvalidArgumentError("mode is not a known FollowMode");
  }
  if (!gravity.allFinite()) return absl::InvalidArgumentError("gravity must be finite");
  if (absl::Status s = InRange(tolerance, "tolerance", 1e-15, 0.1); !s.ok()) return s;
  if (max_iterations < 1 || max_iterations > 10000) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_iterations must be in [1, 10000], got ", max_iterations));
  }
  return InRange(start_tolerance, "start_tolerance", 0.0, 0.1);
}

absl::StatusOr<ConstrainedMotion> FollowConstraint(const ConstraintShape& shape,
                                                   const Eigen::Vector3d& r0,
                                                   const Eigen::Vector3d& v0,
                                                   const FollowOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  if (absl::Status s = CheckStart(shape, r0, v0, options); !s.ok()) return s;

  // Put the start exactly on the shape, then remove v0's normal component.
  Eigen::Vector3d start = r0;
  if (ProjectionSummary s = Project(shape, r0, 0.0, options, start); !s.converged()) {
    return absl::InvalidArgumentError(
        absl::StrCat("r0 cannot be projected onto the shape: ", s.message));
  }
  const Eigen::Vector3d normal = shape.Gradient(start).normalized();
  const Eigen::Vector3d velocity = v0 - v0.dot(normal) * normal;
  const bool constant_speed = options.mode == FollowMode::kConstantSpeed;
  const double chord = constant_speed ? velocity.norm() * options.dt : 0.0;
  if (constant_speed && !(chord > 0.0)) {
    return absl::InvalidArgumentError(
        "v0 must have a non-zero component along the shape in kConstantSpeed mode");
  }

  const double dt = options.dt;
  const Eigen::Vector3d kick = dt * dt * options.gravity;
  ConstrainedMotion t;
  t.dt = dt;
  t.positions.reserve(options.steps + 1);
  t.positions.push_back(start);
  t.projection.max_relative_violation = RelativeDistance(shape, start);
  for (int n = 0; n < options.steps; ++n) {
    const Eigen::Vector3d& r = t.positions.back();
    // Vesely problem 5: an Euler-Taylor first step from (r0, v0), then Verlet (eq. 1).
    Eigen::Vector3d next = n == 0 ? Eigen::Vector3d(r + dt * velocity + 0.5 * kick)
                                  : Eigen::Vector3d(2.0 * r - t.positions[n - 1] + kick);
    const ProjectionSummary step = Project(shape, r, chord, options, next);
    if (!step.converged()) {
      t.projection.outcome = step.outcome;
      t.projection.message = absl::StrCat("step ", n + 1, " of ", options.steps,
                                          " (t = ", (n + 1) * dt, "): ", step.message);
      t.projection.iterations = std::max(t.projection.iterations, step.iterations);
      break;
    }
    t.projection.iterations = std::max(t.projection.iterations, step.iterations);
    t.projection.max_relative_violation =
        std::max(t.projection.max_relative_violation, step.max_relative_violation);
    t.positions.push_back(next);
  }
  if (absl::Status s = Differentiate(options.gravity, t); !s.ok()) return s;
  return t;
}

}  // namespace ikd::systems
