// Joint paths for a hand path known in full (SolveTrajectory): the trajectory driver and the
// path-level optimizer (Kastenmeier & Vesely 1996 steps (a)-(c) per sample, then the whole path
// optimized at once, TrajOpt-style, with ikd's own projection onto the constraints).
//
//   auto times = path->SampleTimes(0.01);
//   auto plan = ikd::ik::PlanPath(*arm, &scene, *path, *times, options);
//   if (!plan->summary.IsSolutionUsable()) std::puts(plan->summary.BriefReport().c_str());
//   for (const ikd::ik::IkResult& s : plan->steps) { /* s.angles, s.sites, s.status */ }
//
// 1. The driver: an ArmTracker follows the hand path itself between samples (sub-steps of at
//    most max_step_fraction of the shortest limb along the path, not the chord), one IkResult per
//    sample. Where that path collides or is blocked, further deterministic starts are tracked
//    and the one with the fewest such samples is kept: other seeds of the trials (starts 1-3),
//    then the safety margin widened to 0.03, 0.1 and 0.3 of the arm's reach (starts 4-6; a
//    greedy pass that keeps a wide berth turns away from an obstacle before it is trapped
//    against it, and the optimizer works to the requested margin after). If it still fails
//    somewhere (a greedy pass cannot see an obstacle coming), the driver is run backwards from
//    that path's last configuration to the first sample, and the two are joined where both are
//    clear: the angles blended from the forward path to the backward one over a window about
//    the sample where they are closest (at half the tightest velocity limit, else 1 rad/s),
//    each blended sample projected onto the constraints and kept only if clear; the joined path
//    replaces the forward one when every blend is clear (start 7; the backward pass is tried
//    with the margin as given, then widened as the forward starts'). Still failing: the
//    joint-space start of step 2 (start 8) replaces it where it fails on fewer samples.
// 2. The optimizer (IkOptions::optimize_path), TrajOpt-style over the whole path: damped
//    Gauss-Newton (Levenberg-Marquardt) steps of
//        min 1/2 sum_j w_j (lambda_a |D2 q_j|^2 + lambda_v |D1 q_j|^2) + contact and bend terms
//        s.t. hand(q_k) = p_k at every sample
//    (D1, D2 the first and second time differences of joint j's angles in sample units, w_j
//    heavier for joints with tighter acceleration limits: least acceleration, and least motion
//    for the redundant directions), one sparse KKT solve for all samples per iteration with
//    the hand constraint linearized, plus a second-order correction of the hands; then every
//    sample is rebuilt by forward kinematics, its hand put back on the path and projected onto
//    the limb lengths and joint limits by the tracker's own solver (SHAKE family, base and
//    hand fixed), pushed out of the safety margin if it entered it, and kept only where its
//    clearance does not fall below min(its previous clearance, the margin). Limbs closer than
//    twice the margin to an obstacle or to another limb are charged (margin distance)^2,
//    linearized along their contact normals; a spatial joint's bend is kept from straightening
//    and from folding back (below 0.2 rad or above pi - 0.2 its azimuth turns fast for a small
//    move of the limb). A step that does not
//    lower the cost is undone and the damping raised. Where the arm declares rate limits and
//    the smooth path still passes one, up to 16 more rounds of 15 iterations charge every rate
//    above 90% of its limit 100 times its own term on the excess, each round reweighting the
//    rates still above it by (rate / aim)^2 (Lawson, towards the least largest rate); the
//    round with the least largest rate ratio is kept. If the optimized path is clear but still
//    over a rate limit, by a time scaling up to 3 or on at most 2/3 of its samples (a jump
//    between branches; a path over its rates nearly everywhere is too fast for any start),
//    the other forward starts that are clear are optimized too, wide
//    margins first (they pass obstacles with room to slow down), until one is within the
//    limits; the path needing the least time scaling is kept. Still over a rate, by any
//    share: a start of another kind, tracked in the joint angles themselves (start 8:
//    resolved-rate motion, the least joint motion weighted by the velocity limits that keeps
//    the hand on the path, damped least squares, with the bends led out of their spinning
//    band in the hand's null space; each sub-step projected onto the constraints by the
//    tracker), is optimized too where it is clear: the Cartesian starts move the sites the
//    least, which near a straight or folded joint winds an azimuth onto a branch no local
//    step leaves. The first sample stays where the arm is.
//    Arms of more than 32 joint angles (its cost grows with their cube) keep the driver's path.
// 3. The motion check: every step certifies the motion into it from the step before (the
//    joint angles interpolated linearly, as a servo does; planning/swept_clearance.h): its
//    min_clearance is the least clearance of that motion, and a motion that touches an obstacle
//    or another limb makes the step IN_COLLISION.
//    The rate check: joint velocities and accelerations (finite differences of the unwrapped
//    angles) against the arm's JointRateLimit; a REACHED sample that passes a limit becomes
//    VELOCITY_LIMITED or ACCELERATION_LIMITED, and the summary gives the smallest stretch of
//    the timing at which none would (v scales as 1/s, a as 1/s^2).
// 4. Every start above follows from the trials' seed and the cost weights: where the optimized
//    plan still fails samples that another could pass (in collision or over a rate; not clamped
//    nor limit-blocked), steps 1-3 are run again, up to 4 times until one is usable: replan r from
//    the seed options.seed + r, and on even r with the bending weight raised to 0.1 (a stiffer
//    arm, held straighter, passes an obstacle on another side). The plan reaching the most
//    samples, then within the least time scaling, is kept.
// Deterministic: the same seed gives the same bytes.
#pragma once

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/ik/arm.h"
#include "ikd/ik/tracker.h"
#include "ikd/ik/trajectory.h"
#include "ikd/planning/scene.h"
#include "ikd/planning/step_status.h"

namespace ikd::ik {

// The counts by status (not_converged stays 0: an industrial arm's status), then the path's own.
struct PathSummary : planning::StepCounts {
  // Of the samples in collision, those clear themselves whose motion in touches (step 3).
  int collided_between = 0;
  double max_hand_error = 0.0;           // m
  double max_constraint_residual = 0.0;  // relative
  double min_clearance = std::numeric_limits<double>::infinity();  // m (+inf: nothing near)
  // Largest joint speed (acceleration) over the path as a fraction of its joint's limit.
  double max_velocity_ratio = 0.0, max_acceleration_ratio = 0.0;
  double max_jerk_ratio = 0.0;  // as above, for the jerk (where a joint declares one)
  // Smallest factor by which to stretch the timing so that every limit holds: <= 1 when the
  // requested timing does; 0 when the arm declares no rate limits.
  double feasible_time_scaling = 0.0;
  // The driver start the path came from: 0 the options' seed, 1-3 other seeds of the
  // trials, 4-6 the safety margin widened, 7 joined with the driver run backwards from the end,
  // 8 tracked in the joint angles (resolved rates).
  int start = 0;
  int optimizer_iterations = 0;  // 0: not optimized (off, under 3 samples, over 32 angles)

  // One line: counts by status, the ratios, the scaling and the worst residuals.
  std::string BriefReport() const;
};

struct PathResult {
  std::vector<IkResult> steps;  // one per sample time
  PathSummary summary;
};

// Step 1 alone, sample by sample: for a caller that streams a path too long to plan as a
// whole. The trajectory, arm and scene must outlive the driver.
class PathDriver {
 public:
  static absl::StatusOr<PathDriver> Create(const Arm& arm, const planning::Scene* scene,
                                           const Trajectory& trajectory, const IkOptions& options,
                                           std::optional<Eigen::Matrix3Xd> initial_sites = {});
  // The step of sample time t (increasing from call to call): the hand follows the path
  // from the last sample's time (the first: straight from where the arm is).
  absl::StatusOr<IkResult> StepTo(double t);

 private:
  PathDriver(ArmTracker tracker, const Trajectory& trajectory, double max_step);
  ArmTracker tracker_;
  const Trajectory* trajectory_;
  double max_step_;
  std::optional<double> previous_;  // the last sample's time
};

// Asked between samples and optimizer iterations: true stops the plan (Cancelled).
using StopCheck = std::function<bool()>;

// Plans the joint path for the hand path sampled at `times` (increasing, from
// Trajectory::SampleTimes), from `initial_sites` (default: home). Errors for bad input only,
// and Cancelled when `stop` says so.
absl::StatusOr<PathResult> PlanPath(const Arm& arm, const planning::Scene* scene,
                                    const Trajectory& trajectory, const std::vector<double>& times,
                                    const IkOptions& options,
                                    std::optional<Eigen::Matrix3Xd> initial_sites = {},
                                    const StopCheck& stop = {});

// Step 3 alone: checks the motion into every step after the first against `scene` (null: free
// space) and the arm itself (planning/swept_clearance.h: each step's min_clearance becomes the
// least of the motion into it, IN_COLLISION where that touches), sets the rate statuses of
// `steps` (sampled at their `time`s) and fills the summary's counts, ratios, scaling and
// residuals.
PathSummary SummarizePath(const Arm& arm, const planning::Scene* scene,
                          std::vector<IkResult>& steps);

}  // namespace ikd::ik
