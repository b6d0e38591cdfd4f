#include "path_backward.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>

#include "ikd/ik/arm_body.h"
#include "ikd/planning/swept_clearance.h"
#include "path_optimizer.h"

namespace ikd::ik::internal {
namespace {

constexpr double kPi = std::numbers::pi;
// The blend turns the joints at about this speed (rad/s) where the arm declares no velocity
// limit, and at half its tightest limit where it does; the path optimizer smooths it after.
constexpr double kBlendSpeed = 1.0;
// Join windows tried, centred where the two paths' angles are closest.
constexpr int kJoinCandidates = 3;

double BlendSpeed(const Arm& arm) {
  double tightest = std::numeric_limits<double>::infinity();
  for (int joint = 0; joint < arm.num_limbs(); ++joint) {
    tightest = std::min(tightest, arm.RateLimit(joint).max_velocity);
  }
  return std::isfinite(tightest) ? 0.5 * tightest : kBlendSpeed;
}

// The largest angle difference between two samples, turns taken the short way.
double AngleDistance(const IkResult& a, const IkResult& b) {
  double largest = 0.0;
  for (size_t j = 0; j < a.angles.size(); ++j) {
    largest = std::max(largest, std::abs(std::remainder(b.angles[j] - a.angles[j], 2.0 * kPi)));
  }
  return largest;
}

// `forward` moved `share` of the way to `backward` in joint angles, rebuilt, its hand put back
// where forward's is, projected onto the limb lengths and joint limits and pushed out of the
// safety margin where it entered it; nullopt when that fails or the result collides.
std::optional<IkResult> Blended(const Arm& arm, double margin, ArmTracker& projector,
                                const IkResult& forward, const IkResult& backward, double share) {
  std::vector<double> angles = forward.angles;
  for (size_t j = 0; j < angles.size(); ++j) {
    angles[j] += share * std::remainder(backward.angles[j] - forward.angles[j], 2.0 * kPi);
  }
  absl::StatusOr<Eigen::Matrix3Xd> rebuilt = arm.SitesFromAngles(angles);
  if (!rebuilt.ok()) return std::nullopt;
  IkResult step = forward;  // time, hand error, clamp distance and status of the forward sample
  step.sites = *rebuilt;
  step.sites.col(arm.hand()) = forward.sites.col(arm.hand());
  if (!projector.Project(*rebuilt, step.sites)) return std::nullopt;
  step.min_clearance = projector.MinClearance(step.sites);
  if (step.min_clearance < margin) {
    Eigen::Matrix3Xd pushed = step.sites;
    if (projector.PushOut(pushed)) {
      if (const double c = projector.MinClearance(pushed); c > step.min_clearance) {
        step.sites.swap(pushed);
        step.min_clearance = c;
      }
    }
  }
  if (!(step.min_clearance >= 0.0)) return std::nullopt;
  step.angles = arm.AnglesFromSites(step.sites);
  step.constraint_residual = arm.chain_model().MaxRelativeViolation(step.sites);
  step.iterations = 0;
  step.trials_accepted = 0;
  return step;
}

// The motions through steps[from..to] in turn (the servo's, angles unwrapped as the rate check
// reads them): entry k - from is the motion into step k + 1.
std::vector<planning::SweptClearance> MotionsThrough(const Arm& arm, const planning::Scene* scene,
                                                     const std::vector<IkResult>& steps, int from,
                                                     int to) {
  if (to <= from) return {};
  // Unwrapped along the whole path: within the run the same motions as unwrapped from its start.
  return planning::SweptClearancesAlong(ChainArmBody(arm), scene,
                                        UnwrappedAngles(steps).middleRows(from, to - from + 1));
}

// Per step whether it failed (Failed) or the motion into it touches something.
std::vector<bool> FailedOrMovedInto(const Arm& arm, const planning::Scene* scene,
                                    const std::vector<IkResult>& steps) {
  const int n = static_cast<int>(steps.size());
  const std::vector<planning::SweptClearance> motions = MotionsThrough(arm, scene, steps, 0, n - 1);
  std::vector<bool> failed(n);
  for (int k = 0; k < n; ++k) {
    failed[k] = Failed(steps[k]) || (k > 0 && motions[k - 1].min_clearance < 0.0);
  }
  return failed;
}

}  // namespace

bool Failed(const IkResult& step) {
  return step.status == planning::StepStatus::kInCollision ||
         step.status == planning::StepStatus::kJointLimitBlocked;
}

absl::StatusOr<std::vector<IkResult>> TrackBackward(const Arm& arm, const planning::Scene* scene,
                                                    const Trajectory& trajectory,
                                                    const std::vector<double>& times,
                                                    const IkOptions& options,
                                                    const Eigen::Matrix3Xd& end_sites,
                                                    const StopCheck& stop) {
  auto tracker = ArmTracker::Create(arm, scene, options, end_sites);
  if (!tracker.ok()) return tracker.status();
  const double max_step = options.max_step_fraction * arm.shortest_limb();
  std::vector<IkResult> steps(times.size());
  for (size_t k = times.size(); k-- > 0;) {
    if (stop && stop()) return absl::CancelledError("stopped while tracking the path");
    if (k + 1 < times.size()) {
      // The sub-steps from sample k to k + 1 (the last is k + 1's time), walked back.
      auto sub_times = trajectory.SubSteps(times[k], times[k + 1], max_step);
      if (!sub_times.ok()) return sub_times.status();
      for (size_t i = sub_times->size() - 1; i-- > 0;) {
        auto sub = tracker->StepTo(trajectory.PositionAt((*sub_times)[i]));
        if (!sub.ok()) return sub.status();
      }
    }
    auto step = tracker->StepTo(trajectory.PositionAt(times[k]), times[k]);
    if (!step.ok()) return step.status();
    steps[k] = *std::move(step);
  }
  return steps;
}

absl::StatusOr<std::optional<std::vector<IkResult>>> JoinBackwardPath(
    const Arm& arm, const planning::Scene* scene, const Trajectory& trajectory,
    const std::vector<double>& times, const IkOptions& options, ArmTracker& projector,
    const std::vector<IkResult>& forward, const StopCheck& stop) {
  const int n = static_cast<int>(forward.size());
  if (n < 3 || Failed(forward.back())) return std::nullopt;
  auto backward = TrackBackward(arm, scene, trajectory, times, options, forward.back().sites, stop);
  if (!backward.ok()) return backward.status();
  // The join lies where both are clear, their motions included: forward before its first
  // failure, backward after its last.
  const std::vector<bool> forward_failed = FailedOrMovedInto(arm, scene, forward);
  const std::vector<bool> backward_failed = FailedOrMovedInto(arm, scene, *backward);
  int last = 0;  // the last forward sample before its first failure
  while (last + 1 < n && !forward_failed[last + 1]) ++last;
  int first = n - 1;  // the first backward sample after its last failure
  while (first > 0 && !backward_failed[first] && !Failed((*backward)[first - 1])) --first;
  if (first > last) return std::nullopt;
  std::vector<int> centres;
  for (int k = first; k <= last; ++k) centres.push_back(k);
  std::stable_sort(centres.begin(), centres.end(), [&](int a, int b) {
    return AngleDistance(forward[a], (*backward)[a]) < AngleDistance(forward[b], (*backward)[b]);
  });
  const double speed = BlendSpeed(arm);
  int tried = 0;
  std::vector<std::pair<int, int>> windows;  // tried, [from, to]
  for (int centre : centres) {
    if (tried == kJoinCandidates) break;
    if (std::any_of(windows.begin(), windows.end(), [&](const std::pair<int, int>& w) {
          return centre >= w.first && centre <= w.second;
        })) {
      continue;
    }
    ++tried;
    // The blend runs from forward's sample `from` (share 0) to backward's sample `to` (1),
    // smoothstep in time, over distance / speed seconds about the centre where they fit.
    const double half = 0.5 * AngleDistance(forward[centre], (*backward)[centre]) / speed;
    int from = centre, to = centre;
    while (from > first && times[centre] - times[from] < half) --from;
    while (to < last && times[to] - times[centre] < half) ++to;
    windows.emplace_back(from, to);
    std::vector<IkResult> joined(forward.begin(), forward.begin() + from + 1);
    bool clear = true;
    for (int k = from + 1; k < to && clear; ++k) {
      const double x = (times[k] - times[from]) / (times[to] - times[from]);
      const double share = x * x * (3.0 - 2.0 * x);  // smoothstep
      std::optional<IkResult> step =
          Blended(arm, options.safety_margin, projector, forward[k], (*backward)[k], share);
      clear = step.has_value();
      if (clear) joined.push_back(*std::move(step));
    }
    if (!clear) continue;
    joined.insert(joined.end(), backward->begin() + std::max(to, from + 1), backward->end());
    // Clear at every sample is not enough: the seam's motions, from forward's last sample to
    // backward's first, must be too (a blend can swing a limb through an obstacle between two).
    const std::vector<planning::SweptClearance> seam =
        MotionsThrough(arm, scene, joined, from, std::max(to, from + 1));
    if (std::any_of(seam.begin(), seam.end(),
                    [](const planning::SweptClearance& m) { return m.min_clearance < 0.0; })) {
      continue;
    }
    return joined;
  }
  return std::nullopt;
}

}  // namespace ikd::ik::internal
