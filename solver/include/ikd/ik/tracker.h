// The Cartesian IK engine (Kastenmeier & Vesely 1996; Vesely 2013 sec. VII B):
//  (a) the hand site is moved stepwise towards each target (sub-steps no longer than
//      max_step_fraction of the shortest limb);
//  (b) the interior sites, predicted from the previous steps, are projected back to exact limb
//      lengths with the constraint engine (base and hand fixed); violated joint limits are
//      added as distance constraints at their bound (active set) and projected again. An arm
//      clear of every margin (and of obstacles by twice it) takes one step down the cost
//      gradient (diagonal Newton) in the prediction, before the projection;
//  (c) a stochastic optimization displaces interior sites at random, re-projects, and keeps a
//      trial when the cost falls (obstacle and self clearance below the safety margin, joint
//      motion, joint-limit violation, bending); its step size follows the 1/5 success rule and
//      it stops after `patience` rejections in a row. Deterministic trials come first: pushes
//      out of the margin and one descent step, re-projected and kept on the same rule. When
//      the sub-step began clear and its projection has no clearance or limit term active and
//      no obstacle near, the cost is smooth and the descent step of (b) is the optimization:
//      no trials run (`explore_unconstrained` runs them there too).
//
//   auto arm = ikd::ik::Arm::Create(spec);
//   auto tracker = ikd::ik::ArmTracker::Create(*arm, &scene, options);
//   for (const auto& target : targets) {
//     auto step = tracker->StepTo(target);  // status, sites, angles, clearance, ...
//   }
#pragma once

#include <cstdint>
#include <memory>
#include <limits>
#include <optional>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/ik/arm.h"
#include "ikd/ik/trajectory.h"
#include "ikd/planning/scene.h"
#include "ikd/planning/step_status.h"

namespace ikd::ik {

// Weights of the optimization cost. Lengths in metres, angles in radians.
struct CostWeights {
  double clearance = 1e6;     // per m^2 of (margin - obstacle clearance) below the margin
  double self_clearance = 1e6;  // per m^2 of (margin - limb-limb clearance) below the margin
  double velocity = 1.0;      // per m^2 of sum_i |r_i - r_i(previous step)|^2 (interior sites)
  // per m^2 of sum_i |r_i - r_i(prev) - c (r_i(prev) - r_i(prev2))|^2, c the ratio of this
  // hand step to the last one (capped at 1): the arm coasts no faster than its hand
  double acceleration = 1.0;
  double joint_limit = 1e4;   // per rad^2 of limit violation
  double bending = 1e-3;      // per rad^2 of sum_k theta_k^2 over interior joints
};

struct IkOptions {
  uint64_t seed = 1;              // the same seed reproduces the output bit for bit
  // Random trials per sub-step, at most (see patience); 0 = plain projection, no optimization.
  int trials_per_step = 24;
  // The random trials of a sub-step stop after this many rejections in a row (0 = never: all
  // trials_per_step run). A deterministic rule: the seed still fixes the output.
  int patience = 4;
  // Trials also where the arm is clear of every margin and obstacle (see (c) above). Off
  // (default): there the smooth terms are left to the descent step of the prediction, and an
  // arm that stays clear follows a path that does not depend on the seed.
  bool explore_unconstrained = false;
  // Wall-clock budget for the trials of one StepTo call, in seconds; 0 = none. A budget that
  // cuts trials short makes the output depend on machine speed: determinism needs 0.
  double time_budget_seconds = 0.0;
  double safety_margin = 0.01;    // m: clearance below this is penalized
  double max_step_fraction = 0.1; // max hand move per sub-step, as a fraction of the shortest limb
  double tolerance = 1e-12;       // relative limb-length tolerance (Bailey eq. 24)
  double initial_sigma_fraction = 0.02;  // trial displacement, fraction of the shortest limb
  CostWeights weights;
  // SolveTrajectory / PlanPath: optimize the tracker's path as a whole (path.h). Off: the
  // step-by-step tracker's path as it is (rate limits are still checked and reported).
  bool optimize_path = true;

  // OK, or InvalidArgument naming the field and its bound.
  absl::Status Validate() const;
};

struct IkResult {
  double time = 0.0;
  Eigen::Matrix3Xd sites;        // world frame, one column per site (base first, hand last)
  std::vector<double> angles;    // see arm.h for the convention
  double hand_error = 0.0;       // |hand - requested target| (m)
  double clamp_distance = 0.0;   // distance from the requested target to the reachable shell
  double min_clearance = 0.0;    // min over limbs of obstacle and self clearance (+inf: none)
  double constraint_residual = 0.0;  // max relative limb-length violation
  int iterations = 0;            // constraint-solver iterations in this step
  int trials_accepted = 0;
  planning::StepStatus status = planning::StepStatus::kReached;
};

class ArmTracker {
 public:
  // `scene` may be null (free space); arm and scene must outlive the tracker. `initial_sites`
  // defaults to the arm's home configuration and must satisfy the limb lengths (1e-9).
  static absl::StatusOr<ArmTracker> Create(const Arm& arm, const planning::Scene* scene,
                                           const IkOptions& options,
                                           std::optional<Eigen::Matrix3Xd> initial_sites = {});
  // Movable, not copyable (its constraint solver is its own).
  ArmTracker(ArmTracker&&) noexcept;
  ArmTracker& operator=(ArmTracker&&) noexcept;
  ~ArmTracker();

  // Drives the hand to `target` (world frame) and returns the resulting step. Errors only for
  // bad input (non-finite target); every numerical outcome is a status inside the step.
  absl::StatusOr<IkResult> StepTo(const Eigen::Vector3d& target, double time = 0.0);

  const Eigen::Matrix3Xd& sites() const;
  // Continues from `sites` (exact limb lengths, base at the base) at rest, as if the last step
  // had ended there: for a caller that answered another state than the last step's (the rate
  // limiter of rate_limit.h).
  void Restart(const Eigen::Matrix3Xd& sites);
  // Cost of a configuration relative to the tracker's history (for tests and diagnostics).
  double Cost(const Eigen::Matrix3Xd& sites) const;
  // Min clearance of a configuration to the scene and between non-adjacent limbs.
  // With a cutoff: min(the clearance, cutoff), exact below the cutoff (farther obstacles and
  // limb pairs are skipped early).
  double MinClearance(const Eigen::Matrix3Xd& sites,
                      double cutoff = std::numeric_limits<double>::infinity()) const;
  // For the path optimizer (path.h), the tracker's own projection: `sites` (base and hand
  // where they must stay) onto the limb lengths and the joint limits, the solver linearized at
  // `reference`; false when it fails.
  bool Project(const Eigen::Matrix3Xd& reference, Eigen::Matrix3Xd& sites);
  // Moves the limbs inside the safety margin outwards and projects again; false when none is
  // inside or the projection fails.
  bool PushOut(Eigen::Matrix3Xd& sites);

 private:
  // Its history, scratch storage and helpers (ik/tracker_state.h), allocated once by Create.
  class State;
  explicit ArmTracker(std::unique_ptr<State> state);

  std::unique_ptr<State> state_;
};

// Samples the trajectory every `sample_period` (end included) and plans the joint path from
// `initial_sites` (default: home) with PlanPath (path.h: the driver, then the path-level
// optimizer unless options.optimize_path is off). One IkResult per sample.
absl::StatusOr<std::vector<IkResult>> SolveTrajectory(
    const Arm& arm, const planning::Scene* scene, const Trajectory& trajectory,
    double sample_period, const IkOptions& options,
    std::optional<Eigen::Matrix3Xd> initial_sites = {});

// Single-pose IK: drives the hand from its initial position to `target` along a straight path
// with the same machinery; the last step tells whether the target was reached.
absl::StatusOr<IkResult> SolvePose(const Arm& arm, const planning::Scene* scene,
                                   const Eigen::Vector3d& target, const IkOptions& options,
                                   std::optional<Eigen::Matrix3Xd> initial_sites = {});

}  // namespace ikd::ik
