// Joint paths of industrial arms for a tool path known in full (SolveTrajectory), the
// counterpart of ik/path.h for the chain arms.
//
//   std::vector<ikd::robot::ToolTarget> targets = ...;   // one per sample time
//   auto plan = ikd::robot::PlanRobotPath(*robot, scene, targets, times, options, q0);
//   if (!plan->summary.IsSolutionUsable()) std::puts(plan->summary.BriefReport().c_str());
//   for (const ikd::robot::RobotIkResult& s : plan->samples) { /* s.q, s.status */ }
//
// 1. The first sample is a single-pose solve from q0 (its branch first: SolveStarts::kGivenFirst,
//    so that a start at a singular home still gets going); every later one continues from the
//    last (RobotTracker::StepTo over the sample interval), whose steps take the least joint
//    motion, weighted by the joints' velocity limits, that keeps the tool on its path, and use
//    the redundant directions to keep away from the joint limits (robot_ik.h).
// 2. A redundant arm's path is then optimized as a whole in its redundant directions (the
//    null space of each sample's tool Jacobian), Gauss-Newton on all samples at once: least
//    squared joint acceleration and speed over the joints' limits, hinges on the rates above
//    90% of the limits and on clearances below 3 safety margins, close to step 1's path; each
//    tool put back on its target by Newton steps, a move kept only within the limits, the
//    tolerances and its clearance (solver/robot/path_optimizer.h). The first sample stays; the
//    last too where step 1's path came back to its first configuration (a closed tool path
//    closes the joint path), else it is free.
// 3. The motion check: every sample certifies the motion into it from the sample before (the
//    joints interpolated linearly, as a servo does; planning/swept_clearance.h): its
//    min_clearance is the least clearance of that motion, and a motion that touches an obstacle
//    makes the sample IN_COLLISION, which the starts of steps 4-6 then repair as any collision.
//    The rate check: joint velocities and accelerations (finite differences of q) against the
//    joints' max_velocity and max_acceleration; a REACHED sample that passes a limit becomes
//    VELOCITY_LIMITED or ACCELERATION_LIMITED, and the summary gives the
//    smallest stretch of the timing at which none would (v scales as 1/s, a as 1/s^2).
// 4. Where that path has a sample in collision or limit-blocked, or passes a rate limit (by a
//    time scaling up to 3, or on at most 2/3 of its samples: a path over its limits nearly
//    everywhere is too fast for any start, one over them on a stretch met a branch switch), steps
//    1-3 are run again with the tracker's safety margin widened to 0.03, 0.1 and 0.2 m (those
//    wider than the options' margin; a tracker that keeps a wide berth turns the links away
//    from an obstacle before they are squeezed past it, and the optimizer works to the margin
//    as given), until none of those remain. Each keeps start 0's first sample, solved with
//    the margin as given (at q0 when q0 is on the first target; where it failed, a start
//    solves its own with its widened margin): the widened tracker
//    takes up the path from it (starts 1-3), else from its own solve of the first target
//    (starts 4-6), into which the optimizer eases a redundant arm from the first sample (a
//    jump it cannot ease is counted by the rate check), the last
//    sample left free too. The path with the fewest failed samples (not converged included),
//    then the least time scaling, is kept.
// 5. Where that path still has a sample in collision, limit-blocked or not converged, the
//    tracker is run backwards from its end (a single-pose solve there if the end failed) to
//    the first target, and the two are joined where both are placed: forward, ten samples
//    blended in joint space (each tool put back on its target), backward; of the windows
//    before forward's first failure, the join that fails least, optimized as in step 2 and
//    kept when it is better (solver/robot/path_backward.h). A greedy forward pass cannot see
//    an obstacle coming; from the other side the arm often passes it.
// 6. Where the kept path still has a sample in collision or limit-blocked or passes a rate
//    limit (step 4's rule), or runs a rate above 90% of its limit (the optimizer's aim: little
//    to spare), a ladder of postures (solver/robot/path_ladder.h): every fifth sample up to 16
//    postures on the target, clear by the safety margin, the children of the last rung's
//    postures (put on the new target as they are and after random moves in their redundant
//    directions) ranked by the fastest joint from rung to rung; the best end traced back, the
//    samples between rungs interpolated and put on their targets, optimized as in step 2 and
//    kept when better (where the kept path was only above the aim: with every rate within it
//    and no closer to an obstacle than that path or the margin). The beam is random: where it
//    dies out or its path still fails (step 4's rule), it is climbed again with other seeds, up
//    to 8 climbs in all. The tracker and the
//    optimizer are local: near a shoulder singularity (the tool close to the base axis) the
//    least joint motion of each step can wind the arm into a posture where the base has to
//    spin, which no small change of the path leaves. A 6R arm with a closed form on full-pose
//    targets has no redundancy to climb: its branch graph (solver/robot/path_branch_graph.h)
//    instead, every branch of every sample, each within the joints' velocity limits of its
//    parent (no jump between branches) and out of collision, the cheapest joint motion from q0
//    by dynamic programming, optimized and kept as the ladder's path is.
// Deterministic: the same options' seed gives the same bytes.
#pragma once

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/planning/scene.h"
#include "ikd/planning/step_status.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot {

// The counts by status (clamped stays 0: a chain arm's status), then the path's own.
struct RobotPathSummary : planning::StepCounts {
  double max_position_error = 0.0;  // m, by forward kinematics
  double max_rotation_error = 0.0;  // rad (pose targets)
  double min_clearance = std::numeric_limits<double>::infinity();  // m (+inf: no scene)
  // Largest joint speed (acceleration) over the path as a fraction of its joint's limit
  // (joints without a limit are not counted).
  double max_velocity_ratio = 0.0, max_acceleration_ratio = 0.0;
  double max_jerk_ratio = 0.0;  // as above, for the jerk (where a joint declares one)
  // Smallest factor by which to stretch the timing so that every limit holds: <= 1 when the
  // requested timing does; 0 when no joint declares a rate limit.
  double feasible_time_scaling = 0.0;
  // The start the path came from: 0 the options' margin, 1-3 and 4-6 the tracker's widened
  // (step 4: from the first sample, from its own first solve), 7 the backward join (step 5),
  // 8 the ladder, 9 the branch graph (step 6).
  int start = 0;

  // One line: counts by status, the ratios, the scaling and the worst errors.
  std::string BriefReport() const;
};

struct RobotPathResult {
  std::vector<RobotIkResult> samples;  // one per sample time
  RobotPathSummary summary;
};

// Asked between samples and optimizer linearizations: true stops the plan (Cancelled).
using RobotStopCheck = std::function<bool()>;

// Plans the joint path through `targets` at `times` (as many, increasing, finite) from joint
// values q0. `scene` may be null (free space). Errors for bad input only (sizes, non-finite or
// non-increasing times, invalid options), and Cancelled when `stop` says so.
absl::StatusOr<RobotPathResult> PlanRobotPath(const Robot& robot, const planning::Scene* scene,
                                              const std::vector<ToolTarget>& targets,
                                              const std::vector<double>& times,
                                              const RobotIkOptions& options,
                                              const Eigen::VectorXd& q0,
                                              const RobotStopCheck& stop = {});

// Step 3 alone: checks the motion into every sample after the first against `scene` (null:
// free space; planning/swept_clearance.h: each sample's min_clearance becomes the least of the
// motion into it, IN_COLLISION where that touches), sets the rate statuses of `samples` (at
// `times`) and fills the summary.
RobotPathSummary SummarizeRobotPath(const Robot& robot, const planning::Scene* scene,
                                    const std::vector<double>& times,
                                    std::vector<RobotIkResult>& samples);

}  // namespace ikd::robot
