#include "path_backward.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>

#include "ikd/planning/swept_clearance.h"
#include "ikd/robot/robot_body.h"
#include "motion.h"

namespace ikd::robot::internal {
namespace {

// Samples over which forward and backward joint values are blended: long enough that the
// optimizer can smooth the seam, short enough to fit between an obstacle and the path's ends.
constexpr int kJoinWindow = 10;
constexpr int kJoinStride = 5;  // samples between the windows tried

int FailedCount(const std::vector<RobotIkResult>& samples) {
  return static_cast<int>(std::count_if(samples.begin(), samples.end(), FailedSample));
}

// The tracker from `q_end` at the last target back to the first; entry k answers targets[k].
absl::StatusOr<std::vector<RobotIkResult>> TrackBackward(
    const Robot& robot, const planning::Scene* scene, const std::vector<ToolTarget>& targets,
    const std::vector<double>& times, const RobotIkOptions& options, const RobotIkResult& last,
    const std::function<bool()>& stop) {
  absl::StatusOr<RobotTracker> tracker = RobotTracker::Create(robot, options, last.q, scene);
  if (!tracker.ok()) return tracker.status();
  std::vector<RobotIkResult> samples(targets.size());
  samples.back() = last;
  for (size_t k = targets.size() - 1; k-- > 0;) {
    if (stop && stop()) return absl::CancelledError("stopped while planning the path");
    samples[k] = tracker->StepTo(targets[k], times[k + 1] - times[k]);
  }
  return samples;
}

// Where the backward pass starts: forward's last sample, or where it failed, a single-pose
// solve (restarts included) from it.
absl::StatusOr<RobotIkResult> PlacedEnd(const Robot& robot, const planning::Scene* scene,
                                        const ToolTarget& target, const RobotIkOptions& options,
                                        const RobotIkResult& forward_last) {
  if (!FailedSample(forward_last)) return forward_last;
  absl::StatusOr<RobotTracker> tracker =
      RobotTracker::Create(robot, options, forward_last.q, scene);
  if (!tracker.ok()) return tracker.status();
  return tracker->Solve(target);
}

// Each joint's least and greatest value over a path.
struct JointSpan {
  Eigen::VectorXd lo, hi;
};

JointSpan SpanOf(const std::vector<RobotIkResult>& path) {
  JointSpan span{path.front().q, path.front().q};
  for (const RobotIkResult& sample : path) {
    span.lo = span.lo.cwiseMin(sample.q);
    span.hi = span.hi.cwiseMax(sample.q);
  }
  return span;
}

// The whole turns (rad, per joint) that bring each revolute joint of the backward path, at
// `backward_q` there, nearest forward's `forward_q`, where the turned joint stays within its
// limits on every sample (`span`: the backward path's): the same motion of the arm, and no blend
// across a full turn of a joint (bench/paths seed 7, ur5-position-blocking #8: the blend swung
// the elbow by 2 pi through the obstacles). Zero for the other joints.
Eigen::VectorXd NearestTurns(const Robot& robot, const JointSpan& span,
                             const Eigen::VectorXd& backward_q, const Eigen::VectorXd& forward_q) {
  constexpr double kTurn = 2.0 * std::numbers::pi;
  Eigen::VectorXd offset = Eigen::VectorXd::Zero(backward_q.size());
  for (int j = 0; j < robot.num_joints(); ++j) {
    const JointSpec& joint = robot.spec().joints[j];
    if (joint.type != JointType::kRevolute) continue;
    const double turn = std::round((forward_q[j] - backward_q[j]) / kTurn) * kTurn;
    const bool within = !joint.limits || (span.lo[j] + turn >= joint.limits->lower &&
                                          span.hi[j] + turn <= joint.limits->upper);
    if (within) offset[j] = turn;
  }
  return offset;
}

// `sample` with its joints turned by `turns` (the same configuration).
RobotIkResult Turned(RobotIkResult sample, const Eigen::VectorXd& turns) {
  sample.q += turns;
  return sample;
}

// Motions into samples [from, to) of `path` that pass through an obstacle (between samples,
// as SummarizeRobotPath checks them).
int CollidingMotions(const RobotBody& body, const planning::Scene* scene,
                     const std::vector<RobotIkResult>& path, int from, int to) {
  int colliding = 0;
  for (int k = std::max(from, 1); k < to; ++k) {
    colliding +=
        planning::SweptClearanceOf(body, scene, path[k - 1].q, path[k].q).min_clearance < 0.0;
  }
  return colliding;
}

// Forward's first failed sample (n when none).
int FirstFailure(const std::vector<RobotIkResult>& forward) {
  int k = 0;
  while (k < static_cast<int>(forward.size()) && !FailedSample(forward[k])) ++k;
  return k;
}

// Sample k of the window that starts at `start`: forward's and backward's joint values
// (backward's turned by `turns`) blended, the tool put back on its target.
RobotIkResult BlendedSample(const Robot& robot, const planning::Scene* scene,
                            const std::vector<ToolTarget>& targets, const RobotIkOptions& options,
                            const std::vector<RobotIkResult>& forward,
                            const std::vector<RobotIkResult>& backward,
                            const Eigen::VectorXd& turns, int start, int k) {
  const double s = static_cast<double>(k - start + 1) / (kJoinWindow + 1);
  return PlacedSample(robot, scene, targets[k], options,
                      (1.0 - s) * forward[k].q + s * (backward[k].q + turns));
}

// Forward before `start`, the two blended over [start, start + kJoinWindow), backward (turned
// by `turns`) after.
std::vector<RobotIkResult> Joined(const Robot& robot, const planning::Scene* scene,
                                  const std::vector<ToolTarget>& targets,
                                  const RobotIkOptions& options,
                                  const std::vector<RobotIkResult>& forward,
                                  const std::vector<RobotIkResult>& backward,
                                  const Eigen::VectorXd& turns, int start) {
  std::vector<RobotIkResult> joined(forward.begin(), forward.begin() + start);
  for (int k = start; k < start + kJoinWindow; ++k) {
    joined.push_back(
        BlendedSample(robot, scene, targets, options, forward, backward, turns, start, k));
  }
  for (size_t k = start + kJoinWindow; k < backward.size(); ++k) {
    joined.push_back(Turned(backward[k], turns));
  }
  return joined;
}

}  // namespace

bool FailedSample(const RobotIkResult& sample) {
  return sample.status == planning::StepStatus::kInCollision ||
         sample.status == planning::StepStatus::kJointLimitBlocked ||
         sample.status == planning::StepStatus::kNotConverged;
}

absl::StatusOr<std::optional<std::vector<RobotIkResult>>> JoinBackwardRobotPath(
    const Robot& robot, const planning::Scene* scene, const std::vector<ToolTarget>& targets,
    const std::vector<double>& times, const RobotIkOptions& options,
    const std::vector<RobotIkResult>& forward, const std::function<bool()>& stop) {
  const std::optional<std::vector<RobotIkResult>> none;
  if (forward.size() < 3) return none;
  absl::StatusOr<RobotIkResult> last = PlacedEnd(robot, scene, targets.back(), options,
                                                 forward.back());
  if (!last.ok()) return last.status();
  if (FailedSample(*last)) return none;
  absl::StatusOr<std::vector<RobotIkResult>> backward =
      TrackBackward(robot, scene, targets, times, options, *last, stop);
  if (!backward.ok()) return backward.status();
  // Every window before forward's first failure, every kJoinStride samples, latest first: the
  // join that fails least wins (a blend across an obstacle passes through it), and only one
  // that fails less than forward. Forward's part of a join has no failure, so a join fails on
  // its blended samples, on the motions into them and out of the window, and on backward's
  // samples and motions after the window (whole turns of a joint leave those as they are).
  const int n = static_cast<int>(forward.size());
  const RobotBody body(robot);
  // Failed samples of backward[k, n) and colliding motions between them.
  std::vector<int> failed_after(n + 1, 0);
  for (int k = n - 1; k >= 0; --k) {
    failed_after[k] = failed_after[k + 1] + FailedSample((*backward)[k]) +
                      CollidingMotions(body, scene, *backward, k + 1, std::min(k + 2, n));
  }
  int best_start = -1, best_failures = FailedCount(forward);
  Eigen::VectorXd best_turns;
  const JointSpan span = SpanOf(*backward);
  for (int start = FirstFailure(forward) - kJoinWindow; start >= 1 && best_failures > 0;
       start -= kJoinStride) {
    if (stop && stop()) return absl::CancelledError("stopped while planning the path");
    const Eigen::VectorXd turns = NearestTurns(robot, span, (*backward)[start].q, forward[start].q);
    // Forward's last sample before the window, the blend, and backward's first after it.
    std::vector<RobotIkResult> seam = {forward[start - 1]};
    int failures = failed_after[start + kJoinWindow];
    for (int k = start; k < start + kJoinWindow && failures < best_failures; ++k) {
      seam.push_back(
          BlendedSample(robot, scene, targets, options, forward, *backward, turns, start, k));
      failures += FailedSample(seam.back());
    }
    if (failures >= best_failures) continue;
    seam.push_back(Turned((*backward)[start + kJoinWindow], turns));
    failures += CollidingMotions(body, scene, seam, 1, static_cast<int>(seam.size()));
    if (failures < best_failures) {
      best_failures = failures;
      best_start = start;
      best_turns = turns;
    }
  }
  if (best_start < 0) return none;
  return Joined(robot, scene, targets, options, forward, *backward, best_turns, best_start);
}

}  // namespace ikd::robot::internal
