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

#include <chrono>
#include <cstdint>
#include <memory>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/constraints/solver.h"
#include "ikd/ik/arm.h"
#include "ikd/ik/scene.h"
#include "ikd/ik/trajectory.h"

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

enum class StepStatus {
  kReached,             // hand on the target, clear of obstacles, within limits
  kClampedUnreachable,  // target outside the reachable shell; hand at the closest point
  kInCollision,         // no collision-free configuration found for this step
  kJointLimitBlocked,   // the limits could not be met; the arm holds its last valid pose
  // Paths only (path.h): reached, but a joint passes its velocity (acceleration) limit at the
  // requested timing; the path's summary gives the time scaling at which it would not.
  kVelocityLimited,
  kAccelerationLimited,
};
const char* StepStatusName(StepStatus status);

struct IkStep {
  double time = 0.0;
  Eigen::Matrix3Xd sites;        // world frame, one column per site (base first, hand last)
  std::vector<double> angles;    // see arm.h for the convention
  double hand_error = 0.0;       // |hand - requested target| (m)
  double clamp_distance = 0.0;   // distance from the requested target to the reachable shell
  double min_clearance = 0.0;    // min over limbs of obstacle and self clearance (+inf: none)
  double constraint_residual = 0.0;  // max relative limb-length violation
  int iterations = 0;            // constraint-solver iterations in this step
  int trials_accepted = 0;
  StepStatus status = StepStatus::kReached;
};

class ArmTracker {
 public:
  // `scene` may be null (free space); arm and scene must outlive the tracker. `initial_sites`
  // defaults to the arm's home configuration and must satisfy the limb lengths (1e-9).
  static absl::StatusOr<ArmTracker> Create(const Arm& arm, const Scene* scene,
                                           const IkOptions& options,
                                           std::optional<Eigen::Matrix3Xd> initial_sites = {});

  // Drives the hand to `target` (world frame) and returns the resulting step. Errors only for
  // bad input (non-finite target); every numerical outcome is a status inside the step.
  absl::StatusOr<IkStep> StepTo(const Eigen::Vector3d& target, double time = 0.0);

  const Eigen::Matrix3Xd& sites() const { return current_; }
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
  ArmTracker(const Arm& arm, const Scene* scene, const IkOptions& options,
             std::unique_ptr<ConstraintSolver> solver, Eigen::Matrix3Xd initial);
  Eigen::Vector3d ClampTarget(const Eigen::Vector3d& target) const;
  bool SubStep(const Eigen::Vector3d& hand, int depth, IkStep& step);
  // Projects `sites` onto the limb lengths (and the violated joint limits), adding the solver
  // iterations to `iterations`; false when that fails.
  bool ProjectWithLimits(const Eigen::Matrix3Xd& reference, Eigen::Matrix3Xd& sites,
                         int& iterations);
  Eigen::Matrix3Xd StraightArm(const Eigen::Vector3d& hand, bool folded) const;
  // A Jacobian-free way to a configuration with the hand at `hand`, for when the projection
  // fails near full stretch; false if even that cannot be projected exactly.
  bool ReachFallback(const Eigen::Vector3d& hand, Eigen::Matrix3Xd& sites, IkStep& step);
  // The cost split by kind. The clearance and joint-limit terms are zero unless the arm is
  // inside the margin or beyond a limit ("constrained"); motion and bending are smooth.
  struct CostTerms {
    double clearance = 0.0, self_clearance = 0.0, joint_limit = 0.0, motion = 0.0, bending = 0.0;
    bool near_obstacle = false;  // see ConstraintTerms
    double Total() const { return clearance + self_clearance + joint_limit + motion + bending; }
    bool Constrained() const {
      return clearance > 0.0 || self_clearance > 0.0 || joint_limit > 0.0;
    }
  };
  CostTerms Terms(const Eigen::Matrix3Xd& sites) const;
  // False only when no pair of limbs of `sites` can be inside `margin`: bounded from the last
  // exact self-clearance (measured_*) and how far the sites moved since.
  bool MayBeInSelfMargin(const Eigen::Matrix3Xd& sites, double margin) const;
  // True when, by the same bound, no limb of `sites` is inside the self-clearance margin and
  // none is near an obstacle (kObstacleBand margins).
  bool FarFromContact(const Eigen::Matrix3Xd& sites) const;
  // Largest site move from measured_sites_ (infinite before the first measurement).
  double MovedSinceMeasured(const Eigen::Matrix3Xd& sites) const;
  // min(clearance, min over limbs of the obstacle clearance).
  double ObstacleClearanceBelow(const Eigen::Matrix3Xd& sites, double clearance) const;
  // The clearance and limit terms only; obstacles are searched out to `obstacle_reach` (at
  // least the buffered margin) for near_obstacle.
  CostTerms ConstraintTerms(const Eigen::Matrix3Xd& sites, double obstacle_reach = 0.0) const;
  void AddSmoothTerms(const Eigen::Matrix3Xd& sites, CostTerms& terms) const;
  // Unit direction of limb k (its nominal length: exact on the constraint surface).
  Eigen::Vector3d Direction(const Eigen::Matrix3Xd& sites, int k) const;

  // The optimization of one sub-step (Kastenmeier & Vesely step (c)): the best configuration
  // so far and its cost; every trial is re-projected and kept when the cost falls.
  struct Search {
    Eigen::Matrix3Xd& sites;
    CostTerms terms;
    IkStep& step;
  };
  // `far`: the sub-step began clear of every margin (and its prediction took the descent
  // step).
  void Optimize(double hand_step, bool far, Eigen::Matrix3Xd& sites, IkStep& step);
  // How far the smooth terms may move a site in one sub-step: twice the hand's move.
  double SmoothCap(double hand_step) const;
  // Projects candidate_ and keeps it in `search` when its cost is lower.
  bool TryCandidate(Search& search);
  void PushTrials(Search& search);
  void DescentTrials(double smooth_cap, Search& search);
  void RandomTrials(double hand_step, double smooth_cap, Search& search);
  bool OutOfTime() const;  // the time budget of this StepTo is spent

  // A diagonally preconditioned step down the cost gradient: smooth terms (motion, bending)
  // moving no site more than `smooth_cap`, clearance terms up to a tenth of the shortest limb.
  void DescentStep(const Eigen::Matrix3Xd& sites, double smooth_cap, Eigen::Matrix3Xd& step);
  void AddBendingGradient(const Eigen::Matrix3Xd& sites, Eigen::Matrix3Xd& gradient,
                          Eigen::VectorXd& curvature) const;
  // False when no limb is inside the margin (nothing added).
  bool AddClearanceGradients(const Eigen::Matrix3Xd& sites, Eigen::Matrix3Xd& gradient,
                             Eigen::VectorXd& curvature) const;
  // Gradient of w (margin - d)^2 for the limb k of `approach`; `spread` 1 for an obstacle, 2
  // for a pair of limbs (both move).
  bool AddClearanceGradient(int k, const CapsuleApproach& approach, double weight, double spread,
                            Eigen::Matrix3Xd& gradient, Eigen::VectorXd& curvature) const;
  // -gradient / curvature per site, in the arm's plane if planar, scaled to move <= cap.
  void NewtonStep(const Eigen::Matrix3Xd& gradient, const Eigen::VectorXd& curvature, double cap,
                  Eigen::Matrix3Xd& step) const;
  // Moves the movable ends of every limb closer than the margin to an obstacle or to another
  // limb outwards along the separating normal; false when nothing is in the margin.
  bool PushOutOfMargin(Eigen::Matrix3Xd& sites);
  // Adds to `sites` the move of limb k's movable ends away from `away_from` when the limb is
  // inside the (buffered) margin, scaled by `strength`.
  void PushLimb(int k, const Shape& away_from, double strength, Eigen::Matrix3Xd& sites,
                bool& moved) const;
  void Commit(const Eigen::Matrix3Xd& sites);
  // current + momentum (current - previous): where the arm would coast to.
  void UpdateCoasting();

  const Arm* arm_;
  const Scene* scene_;
  IkOptions options_;
  std::unique_ptr<ConstraintSolver> solver_;
  Eigen::Matrix3Xd current_, previous_;  // the last two committed configurations
  uint64_t step_index_ = 0;
  uint64_t rng_stream_ = 0;  // the seed of this StepTo's random stream
  bool rng_seeded_ = false;  // rng_ seeded with rng_stream_ (on the first draw of a step)
  std::mt19937_64 rng_;
  double sigma_;
  double momentum_ = 1.0;  // this sub-step's hand move over the last one, capped at 1
  std::chrono::steady_clock::time_point deadline_;  // of the current StepTo when budgeted
  std::vector<double> radii_;  // limb collision radii
  std::vector<double> inverse_length_;
  Eigen::Matrix3Xd coasting_;  // current + momentum (current - previous)
  Eigen::Matrix3Xd measured_sites_;       // the last StepTo's result (none: 0 columns) ...
  double measured_self_clearance_ = 0.0;  // ... its exact self-clearance ...
  double measured_obstacle_clearance_ = 0.0;  // ... and obstacle clearance (+inf: none)
  // Scratch storage, kept so that trials do not allocate.
  mutable LimbPairCulling culling_;  // of Terms, PushOutOfMargin and MinClearance
  Eigen::Matrix3Xd predicted_;       // the configuration of SubStep
  Eigen::Matrix3Xd candidate_;       // the trial configuration of Optimize
  Eigen::Matrix3Xd push_origin_;     // the configuration PushOutOfMargin pushes from
  Eigen::Matrix3Xd descent_, smooth_gradient_, clearance_gradient_, clearance_step_;
  Eigen::VectorXd curvature_;
  std::vector<DistanceConstraint> limit_constraints_;  // limbs + active joint limits
  std::vector<bool> limit_active_;
};

// Samples the trajectory every `sample_period` (end included) and plans the joint path from
// `initial_sites` (default: home) with PlanPath (path.h: the driver, then the path-level
// optimizer unless options.optimize_path is off). One IkStep per sample.
absl::StatusOr<std::vector<IkStep>> SolveTrajectory(const Arm& arm, const Scene* scene,
                                                    const Trajectory& trajectory,
                                                    double sample_period,
                                                    const IkOptions& options,
                                                    std::optional<Eigen::Matrix3Xd> initial_sites = {});

// Single-pose IK: drives the hand from its initial position to `target` along a straight path
// with the same machinery; the last step tells whether the target was reached.
absl::StatusOr<IkStep> SolvePose(const Arm& arm, const Scene* scene, const Eigen::Vector3d& target,
                                 const IkOptions& options,
                                 std::optional<Eigen::Matrix3Xd> initial_sites = {});

}  // namespace ikd::ik
