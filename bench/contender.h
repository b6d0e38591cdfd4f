// The constraint benchmark's view of one method under test on one chain: ikd's solvers and
// the optional peer libraries (GROMACS SHAKE, OpenMM CCMA) behind one small interface, so
// every method is timed by the same loop on the same perturbed configurations.
#pragma once

#include <Eigen/Core>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ikd/constraints/model.h"
#include "ikd/constraints/types.h"

namespace ikd::bench {

// What one timed projection reported about itself.
struct ProjectionCounts {
  int iterations = -1;    // sweeps / chord iterations (positions + velocities); -1: not reported
  bool converged = true;  // by the method's own account; the harness also measures violations
};

// Load and Store copy a configuration into and out of the method's own data layout and are
// not timed; Project is the timed call.
class Contender {
 public:
  virtual ~Contender() = default;
  virtual void Load(const Eigen::Matrix3Xd& positions, const Eigen::Matrix3Xd& velocities) = 0;
  virtual ProjectionCounts Project() = 0;
  virtual void Store(Eigen::Matrix3Xd& positions, Eigen::Matrix3Xd& velocities) const = 0;
};

// ikd's ConstraintSolver for `method`: ProjectPositions against `reference` (the exact
// conformation, Bailey's r(t)) and, with `with_velocities`, ProjectVelocities at the result.
absl::StatusOr<std::unique_ptr<Contender>> MakeIkdContender(
    constraints::Method method, bool with_velocities, const constraints::ConstraintModel& model,
    const Eigen::Matrix3Xd& reference, double tolerance, int max_iterations);

#ifdef IKD_HAVE_GROMACS
// GROMACS's SHAKE kernel gmx::cshake from the double-precision libgromacs_d, fed exactly as
// GROMACS's own vec_shakef feeds it (reference link vectors, 0.5 / (w_i + w_j),
// 0.5 / (l^2 tau)); positions only (GROMACS's RATTLE kernel is not exported).
absl::StatusOr<std::unique_ptr<Contender>> MakeGromacsShake(
    const constraints::ConstraintModel& model, const Eigen::Matrix3Xd& reference, double tolerance,
    int max_iterations);
std::string GromacsVersion();
#endif

#ifdef IKD_HAVE_OPENMM
// OpenMM's CCMA on the Reference platform through Context::applyConstraints(tolerance).
// With `with_angles`, a HarmonicAngleForce of zero stiffness carries the reference bond angles,
// which is how CCMA learns the coupling between bonds sharing a site; without it CCMA's
// coupling matrix is the identity. OpenMM stops after 150 iterations without saying so.
absl::StatusOr<std::unique_ptr<Contender>> MakeOpenMMCcma(const constraints::ConstraintModel& model,
                                                          const Eigen::Matrix3Xd& reference,
                                                          double tolerance, bool with_angles);
std::string OpenMMVersion();
#endif

}  // namespace ikd::bench
