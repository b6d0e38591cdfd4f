// Live Track of the industrial arms within their datasheet limits (issue 16, item 4): the
// rate-limited robot tracker of robot/robot_rate_limit.h on a horizontal tool circle about each
// arm's ready pose at rising speeds, measured by the robot checker (its own kinematics).
#include "track_case.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include "ikd/robot/robot_rate_limit.h"
#include "robot_checker.h"
#include "robot_scenarios.h"

namespace ikd::bench::paths {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kPeriod = 0.01;  // s between targets: a 100 Hz controller
constexpr double kRadius = 0.1;   // m

struct RobotTrackFigures {
  int answers = 0, solved = 0, limited = 0, other = 0;
  double max_lag = 0.0, late_lag = 0.0;  // m: the checker's TCP against the target
  double max_rotation = 0.0;             // rad (pose targets)
  RateMaxima rates;                      // the checker's, as fractions of the declared limits
  double microseconds = 0.0;             // per answer
};

// One turn at `speed` m/s from the ready pose, the first target on the circle (a single-pose
// solve, not limited), then one target every kPeriod.
RobotTrackFigures RunOne(const RobotArm& arm, bool pose, double speed, std::FILE* dump) {
  const Eigen::Vector3d centre = ForwardKinematics(arm.model, arm.ready).tool.p;
  const Eigen::Matrix3d held = ForwardKinematics(arm.model, arm.ready).tool.R;
  auto limited =
      robot::RateLimitedRobotTracker::Create(*arm.robot, robot::RobotIkOptions{}, arm.ready);
  if (!limited.ok()) std::abort();
  const int n = static_cast<int>(std::ceil(2 * kPi * kRadius / speed / kPeriod));
  RobotTrackFigures f;
  Eigen::MatrixXd q(n + 1, arm.ready.size());
  double late_sum = 0.0;
  int late_count = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k <= n; ++k) {
    const double angle = speed * k * kPeriod / kRadius;
    robot::ToolTarget target;
    target.position = centre + kRadius * Eigen::Vector3d(std::cos(angle), std::sin(angle), 0.0);
    if (pose) target.orientation = Eigen::Quaterniond(held);
    const robot::RobotIkResult result = limited->StepTo(target, k * kPeriod);
    ++f.answers;
    if (dump) {
      std::fprintf(dump, "robot,%s,%s,%g,%d,%s", arm.name, pose ? "pose" : "position", speed, k,
                   planning::StepStatusName(result.status));
      for (const double value : result.q) std::fprintf(dump, ",%.17g", value);
      std::fprintf(dump, ",%.17g\n", result.min_clearance);
    }
    if (result.status == planning::StepStatus::kReached) {
      ++f.solved;
    } else if (result.status == planning::StepStatus::kVelocityLimited ||
               result.status == planning::StepStatus::kAccelerationLimited) {
      ++f.limited;
    } else {
      ++f.other;
    }
    q.row(k) = result.q.transpose();
    const RobotKinematics fk = ForwardKinematics(arm.model, result.q);
    const double lag = (fk.tool.p - target.position).norm();
    f.max_lag = std::max(f.max_lag, lag);
    if (pose) f.max_rotation = std::max(f.max_rotation, RotationAngleBetween(fk.tool.R, held));
    if (2 * k >= n) late_sum += lag, ++late_count;
  }
  f.microseconds =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      f.answers;
  f.late_lag = late_sum / late_count;
  f.rates = WeightedRates(arm.model, q.bottomRows(n), kPeriod);  // from rest: sample 1 on
  return f;
}

}  // namespace

void RunRobotTrackCase(std::FILE* dump) {
  std::printf(
      "\nTrack of the industrial arms (rate-limited, future unknown): from each arm's ready pose, "
      "the tool once round a horizontal circle of radius %.0f cm about the ready TCP at a "
      "constant speed, position only or holding the ready orientation, a target every %.0f ms, "
      "within the arms' declared limits. Lag: the checker's TCP (robot_checker.cc) against the "
      "target (largest; mean over the second half of the turn). Rates: the checker's finite "
      "differences over the declared limits (from sample 1 on; <= 1: within; the UR5 and the "
      "iiwa14 declare no accelerations: theirs is |a| / max_velocity per second, not a limit).\n\n",
      kRadius * 100, kPeriod * 1e3);
  std::printf(
      "| arm | target | tool speed (m/s) | answers | REACHED / limited | max lag (m) | "
      "mean lag, 2nd half (m) | max rotation (rad) | max speed / acceleration over the "
      "limits | us per answer |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const ArmId id : kArms) {
    const RobotArm& arm = GetArm(id);
    for (const bool pose : {false, true}) {
      for (const double speed : {0.2, 0.4, 0.8}) {
        const RobotTrackFigures f = RunOne(arm, pose, speed, dump);
        std::printf(
            "| %s | %s | %.1f | %d | %d / %d%s | %.3g | %.3g | %.3g | %.3g / %.3g | %.0f |\n",
            arm.name, pose ? "pose" : "position", speed, f.answers, f.solved, f.limited,
            f.other > 0 ? (" (+" + std::to_string(f.other) + " other)").c_str() : "", f.max_lag,
            f.late_lag, f.max_rotation, f.rates.speed, f.rates.acceleration, f.microseconds);
      }
    }
  }
}

}  // namespace ikd::bench::paths
