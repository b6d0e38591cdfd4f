// Motion of a point restricted to a plane curve (Vesely Table I) or a surface (Table II) by a
// Cartesian constraint sigma(r) = 0: Verlet free flight (optionally under gravity), then the
// Lagrange correction along grad sigma(r(t_n)) iterated to convergence (Vesely eq. 3-5). The
// constraint acceleration comes a posteriori from the Newton-Gregory second difference
// (Vesely sec. III A).
//
//   auto track = ikd::MakeCurve({ikd::CurveType::kSuperellipse, /*a=*/25, /*b=*/25 / 1.2, 2.5});
//   ikd::FollowOptions options;  // dt, steps, gravity
//   auto run = ikd::FollowConstraint(**track, r0, v0, options);
#pragma once

#include <memory>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/constraints/types.h"

namespace ikd {

// A holonomic constraint sigma(r) = 0 on one point.
class ConstraintShape {
 public:
  virtual ~ConstraintShape() = default;
  virtual double Sigma(const Eigen::Vector3d& r) const = 0;
  virtual Eigen::Vector3d Gradient(const Eigen::Vector3d& r) const = 0;
  // True for plane curves (motion in the x-y plane, z ignored).
  virtual bool planar() const = 0;
  // Why the constraint is undefined at r (e.g. on the pseudo-hyperboloid's axis), or OK.
  virtual absl::Status CheckDomain(const Eigen::Vector3d& r) const;
};

enum class CurveType {
  kParabola,        // a x^2 - y
  kEllipse,         // (x/a)^2 + (y/b)^2 - 1
  kSuperellipse,    // (|x|/a)^n + (|y|/b)^n - 1
  kDiscorectangle,  // stadium: straight sides x = +-r for |y| <= y0, half circles beyond
  kBean,            // x^4 + x^2 y^2 + y^4 - x (x^2 + y^2)
};

struct CurveSpec {
  CurveType type = CurveType::kEllipse;
  double a = 1.0;   // parabola coefficient, ellipse / superellipse half axis along x
  double b = 1.0;   // half axis along y
  double n = 2.0;   // superellipse exponent (> 1)
  double r = 1.0;   // discorectangle half width
  double y0 = 1.0;  // discorectangle half length of the straight part (>= 0)
};

enum class SurfaceType {
  kSphere,              // (x^2 + y^2 + z^2) / r^2 - 1
  kParaboloid,          // a (x^2 + y^2) - z
  kHyperboloid,         // (x^2 + y^2) / a^2 - z^2 / c^2 - 1
  kPseudoHyperboloid,   // -a / sqrt(x^2 + y^2) - z
};

struct SurfaceSpec {
  SurfaceType type = SurfaceType::kSphere;
  double r = 1.0;
  double a = 1.0;
  double c = 1.0;
};

// Errors: non-finite or non-positive parameters (InvalidArgument naming the field).
absl::StatusOr<std::unique_ptr<ConstraintShape>> MakeCurve(const CurveSpec& spec);
absl::StatusOr<std::unique_ptr<ConstraintShape>> MakeSurface(const SurfaceSpec& spec);

struct FollowOptions {
  double dt = 1e-3;                                 // > 0
  int steps = 1000;                                 // in [1, 10^8]
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();  // acceleration (m/s^2)
  // |sigma| / |grad sigma| (a distance from the constraint) accepted after projection.
  double tolerance = 1e-12;
  int max_iterations = 100;
  absl::Status Validate() const;
};

struct ConstrainedPath {
  std::vector<Eigen::Vector3d> positions;      // steps + 1 points, r(t_0) .. r(t_steps)
  // Central differences (r_{n+1} - r_{n-1}) / (2 dt) and the Newton-Gregory acceleration
  // (r_{n+1} - 2 r_n + r_{n-1}) / dt^2 at the interior points n = 1 .. steps - 1.
  std::vector<Eigen::Vector3d> velocities;
  std::vector<Eigen::Vector3d> accelerations;
  int max_iterations_used = 0;
};

// Follows the constraint from r0 (which must satisfy it within 1e-6 of the scale of r0) with
// initial velocity v0 (its component along grad sigma is removed first). Errors: bad options,
// a start off the constraint or outside its domain, non-finite input; a projection that does
// not converge gives ABORTED naming the step.
absl::StatusOr<ConstrainedPath> FollowConstraint(const ConstraintShape& shape,
                                                 const Eigen::Vector3d& r0,
                                                 const Eigen::Vector3d& v0,
                                                 const FollowOptions& options);

}  // namespace ikd
