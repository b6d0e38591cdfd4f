// Motion of a point restricted to a plane curve (Vesely Table I) or a surface (Table II) by one
// Cartesian constraint sigma(r) = 0: a Verlet free flight (optionally under gravity), then the
// Lagrange correction along grad sigma(r(t_n)) iterated to convergence (Vesely eq. 3-5). The
// acceleration, including the constraint's, comes a posteriori from the Newton-Gregory second
// difference (Vesely sec. III A). This is a single-site nonlinear constraint, not a distance
// constraint, so it has its own small projection instead of a ConstraintSolver.
//
//   // Vesely problem 4: a car driving around Sergels Torg at 50 km/h.
//   auto track = ikd::systems::MakeCurve({.type = ikd::systems::CurveType::kSuperellipse,
//                                         .a = 25.0, .b = 25.0 / 1.2, .n = 2.5});
//   if (!track.ok()) return track.status();      // names the bad field
//   ikd::systems::FollowOptions options;
//   options.mode = ikd::systems::FollowMode::kConstantSpeed;
//   options.dt = 1e-3;
//   options.steps = 10000;
//   auto run = ikd::systems::FollowConstraint(**track, {25, 0, 0}, {0, 50 / 3.6, 0}, options);
//   if (!run.ok()) return run.status();          // bad input
//   if (!run->projection.converged()) { ... }    // numerical failure: run->positions stop early
//   for (const Eigen::Vector3d& a : run->accelerations) { ... }  // lateral acceleration
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/constraints/types.h"

namespace ikd::systems {

// A holonomic constraint sigma(r) = 0 on one point.
class ConstraintShape {
 public:
  virtual ~ConstraintShape() = default;
  // sigma(r) and grad sigma(r) from Vesely Table I / II. Finite wherever CheckDomain(r) is OK.
  virtual double Sigma(const Eigen::Vector3d& r) const = 0;
  virtual Eigen::Vector3d Gradient(const Eigen::Vector3d& r) const = 0;
  // Plane curves constrain (x, y) only; the point keeps its z.
  virtual bool planar() const = 0;
  // A typical size of the shape (length units); tolerances are relative to it.
  virtual double length_scale() const = 0;
  // InvalidArgument when sigma is undefined at r (the pseudo-hyperboloid's axis), else OK.
  virtual absl::Status CheckDomain(const Eigen::Vector3d& r) const;
  // First-order distance of r from the shape, |sigma(r)| / |grad sigma(r)| (infinite where the
  // gradient vanishes).
  double DistanceEstimate(const Eigen::Vector3d& r) const;
};

// Vesely Table I.
enum class CurveType {
  kParabola,        // a x^2 - y                                   (a != 0)
  kEllipse,         // (x/a)^2 + (y/b)^2 - 1                       (a, b > 0)
  kSuperellipse,    // (|x|/a)^n + (|y|/b)^n - 1, the Lame curve     (a, b > 0, n > 1)
  kDiscorectangle,  // stadium: x^2/r^2 - 1 for |y| <= y0, (x^2 + (|y| - y0)^2)/r^2 - 1 beyond
                    //                                               (r > 0, y0 >= 0)
  kBean,            // x^4 + x^2 y^2 + y^4 - x (x^2 + y^2)           (no parameters; grad sigma
                    //   vanishes at the origin, which lies on the curve)
};
const char* CurveName(CurveType type);

struct CurveSpec {
  CurveType type = CurveType::kEllipse;
  double a = 1.0;   // parabola coefficient (1/length); ellipse, superellipse half axis along x
  double b = 1.0;   // ellipse, superellipse half axis along y
  double n = 2.0;   // superellipse exponent
  double r = 1.0;   // discorectangle half width (radius of the end caps)
  double y0 = 0.0;  // discorectangle half length of the straight sides
};

// Vesely Table II.
enum class SurfaceType {
  kSphere,             // (x^2 + y^2 + z^2) / r^2 - 1             (r > 0)
  kParaboloid,         // a (x^2 + y^2) - z                        (a != 0)
  kHyperboloid,        // (x^2 + y^2) / a^2 - z^2 / c^2 - 1        (a, c > 0), one sheet
  kPseudoHyperboloid,  // -a / sqrt(x^2 + y^2) - z                 (a > 0), undefined on the z axis
};
const char* SurfaceName(SurfaceType type);

struct SurfaceSpec {
  SurfaceType type = SurfaceType::kSphere;
  double r = 1.0;  // sphere radius
  double a = 1.0;  // paraboloid coefficient (1/length); hyperboloid waist radius;
                   // pseudo-hyperboloid strength (length^2)
  double c = 1.0;  // hyperboloid axis scale along z
};

class Curve final : public ConstraintShape {
 public:
  double Sigma(const Eigen::Vector3d& r) const override;
  Eigen::Vector3d Gradient(const Eigen::Vector3d& r) const override;
  bool planar() const override { return true; }
  double length_scale() const override;
  const CurveSpec& spec() const { return spec_; }

 private:
  friend absl::StatusOr<std::unique_ptr<Curve>> MakeCurve(const CurveSpec& spec);
  explicit Curve(const CurveSpec& spec) : spec_(spec) {}
  CurveSpec spec_;
};

class Surface final : public ConstraintShape {
 public:
  double Sigma(const Eigen::Vector3d& r) const override;
  Eigen::Vector3d Gradient(const Eigen::Vector3d& r) const override;
  bool planar() const override { return false; }
  double length_scale() const override;
  absl::Status CheckDomain(const Eigen::Vector3d& r) const override;
  const SurfaceSpec& spec() const { return spec_; }

 private:
  friend absl::StatusOr<std::unique_ptr<Surface>> MakeSurface(const SurfaceSpec& spec);
  explicit Surface(const SurfaceSpec& spec) : spec_(spec) {}
  SurfaceSpec spec_;
};

// Errors (InvalidArgument naming the field and its bound): a parameter of the chosen type that
// is not finite or out of its range above. Parameters the type does not use are ignored.
absl::StatusOr<std::unique_ptr<Curve>> MakeCurve(const CurveSpec& spec);
absl::StatusOr<std::unique_ptr<Surface>> MakeSurface(const SurfaceSpec& spec);

enum class FollowMode {
  // Verlet free flight under `gravity`, r' = 2 r_n - r_{n-1} + g dt^2 (Vesely eq. 1), the first
  // step from (r0, v0) as r' = r0 + v0 dt + g dt^2 / 2 (Vesely problem 5).
  kFreeFlight,
  // Uniform motion with no applied force (Vesely problem 4): the free flight of kFreeFlight
  // with g = 0, then the new point is moved along the shape until the chord |r_{n+1} - r_n|
  // equals v dt, v the speed of the tangential part of v0, so the speed never drifts (not even
  // where the curvature jumps).
  kConstantSpeed,
};

struct FollowOptions {
  double dt = 1e-3;  // > 0, finite
  int steps = 1000;  // in [1, kMaxSteps]
  FollowMode mode = FollowMode::kFreeFlight;
  // Uniform acceleration (length / s^2). kConstantSpeed: must be zero. Plane curves: gravity.z
  // must be zero (the curve lies in a plane z = const).
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();
  // Accepted distance from the shape after each projection, |sigma| / |grad sigma|, relative to
  // the shape's length_scale(); in [1e-15, 0.1]. kConstantSpeed also holds the chord
  // |r_{n+1} - r_n| to v dt within this relative accuracy.
  double tolerance = 1e-12;
  // Correction iterations per step (Vesely eq. 5 repeated); in [1, 10000].
  int max_iterations = 100;
  // How far r0 may lie off the shape (relative to length_scale()) before it is rejected; a
  // start within it is projected onto the shape first. In [0, 0.1].
  double start_tolerance = 1e-6;

  static constexpr int kMaxSteps = 1'000'000;
  // OK, or InvalidArgument naming the field and its bound.
  absl::Status Validate() const;
};

struct ConstrainedMotion {
  double dt = 0.0;
  // r(t_n) = r(n dt), n = 0 .. m. m = steps, or fewer when a projection failed: then the
  // points up to the last good one are kept and `projection` says what went wrong.
  std::vector<Eigen::Vector3d> positions;
  // At the interior points n = 1 .. m - 1 (entry k belongs to positions[k + 1]):
  // the central difference (r_{n+1} - r_{n-1}) / (2 dt), the Newton-Gregory second difference
  // (r_{n+1} - 2 r_n + r_{n-1}) / dt^2 (Vesely sec. III A), both O(dt^2), and the constraint
  // acceleration a_n - g, i.e. the Lagrange force per unit mass.
  std::vector<Eigen::Vector3d> velocities;
  std::vector<Eigen::Vector3d> accelerations;
  std::vector<Eigen::Vector3d> constraint_accelerations;
  // Over the whole run: the outcome (kConverged unless a step failed; its message names the
  // step), the largest number of iterations one step needed, and the largest distance from the
  // shape of a recorded point relative to length_scale().
  constraints::ProjectionSummary projection;

  int steps_completed() const { return static_cast<int>(positions.size()) - 1; }
};

// Follows `shape` from r0 with initial velocity v0; v0's component along grad sigma(r0) is
// removed first (the motion starts tangentially). Errors (InvalidArgument): invalid options;
// non-finite r0 or v0; r0 outside the shape's domain, at a point where grad sigma vanishes, or
// farther off the shape than start_tolerance; for plane curves a non-zero v0.z or gravity.z;
// for kConstantSpeed a non-zero gravity or a zero tangential speed. A projection that fails
// mid-run (no convergence, a vanishing gradient, leaving the domain) is not an error: the
// result is OK, shorter, and says so in `projection`. No NaN is ever returned.
absl::StatusOr<ConstrainedMotion> FollowConstraint(const ConstraintShape& shape,
                                                   const Eigen::Vector3d& r0,
                                                   const Eigen::Vector3d& v0,
                                                   const FollowOptions& options);

}  // namespace ikd::systems
