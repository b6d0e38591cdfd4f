#include "track_case.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <numbers>
#include <vector>

#include "absl/strings/str_format.h"
#include "checker.h"
#include "ikd/ik/rate_limit.h"
#include "ikd/planning/scene.h"
#include "paths_util.h"

namespace ikd::bench::paths {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kPeriod = 0.01;  // s between targets: a 100 Hz controller
const Eigen::Vector3d kCentre(0.8, 0.0, 0.0);
constexpr double kRadius = 0.3;

// The quick-start arm (7 limbs of 0.2 m in the plane z = 0) with one servo limit for all joints.
ik::Arm SevenLinkArm(ik::JointRateLimit limit) {
  ik::ArmSpec spec;
  for (int k = 0; k < 7; ++k) spec.limbs.push_back({0.2, 0.02});
  spec.default_rate_limit = limit;
  return Unwrap(ik::Arm::Create(spec), "Arm::Create");
}

// The arm's surroundings: free space, or the quick-start scene's three pillars (vertical
// capsules through the arm's plane; its floor and crate lie below that plane).
struct Surroundings {
  const char* name;
  std::vector<CheckCapsule> obstacles;
};

std::vector<Surroundings> AllSurroundings() {
  const Eigen::Vector3d up(0.0, 0.0, 0.6);
  auto pillar = [&](double x, double y, double r) {
    return CheckCapsule{Eigen::Vector3d(x, y, 0.0) - up, Eigen::Vector3d(x, y, 0.0) + up, r};
  };
  return {
      {"free", {}},
      {"pillars", {pillar(0.55, 0.35, 0.06), pillar(0.55, -0.35, 0.06), pillar(-0.4, 0.6, 0.08)}}};
}

planning::Scene SceneOf(const Surroundings& surroundings) {
  std::vector<planning::Obstacle> obstacles;
  for (const CheckCapsule& o : surroundings.obstacles) {
    obstacles.push_back(
        {"pillar" + std::to_string(obstacles.size()), planning::Capsule{o.a, o.b, o.radius}});
  }
  return Unwrap(planning::Scene::Create(std::move(obstacles)), "Scene::Create");
}

// The checker's copy of the arm and its surroundings (its own distances).
CheckModel CheckModelOf(const Surroundings& surroundings) {
  CheckModel model;
  model.lengths.assign(7, 0.2);
  model.radii.assign(7, 0.02);
  model.obstacles = surroundings.obstacles;
  return model;
}

Eigen::Vector3d OnCircle(double angle) {
  return kCentre + kRadius * Eigen::Vector3d(std::cos(angle), std::sin(angle), 0.0);
}

// The checker's planar joint angles (checker.h), each continued from `previous` (empty: none)
// across +-pi.
std::vector<double> ContinuedAngles(const Eigen::Matrix3Xd& sites,
                                    const std::vector<double>& previous) {
  std::vector<double> q = PlanarAngles(sites);
  for (size_t j = 0; j < previous.size(); ++j) {
    q[j] = previous[j] + std::remainder(q[j] - previous[j], 2 * kPi);
  }
  return q;
}

// The unlimited tracker of `free_arm` in `scene` (both must outlive it), settled at the
// circle's start: 200 held targets from home.
ik::ArmTracker SettledAtStart(const ik::Arm& free_arm, const planning::Scene& scene) {
  auto tracker = Unwrap(ik::ArmTracker::Create(free_arm, &scene, ik::IkOptions{}), "Create");
  for (int k = 0; k < 200; ++k) Unwrap(tracker.StepTo(OnCircle(0.0), k * kPeriod), "StepTo");
  return tracker;
}

struct TrackFigures {
  int answers = 0, reached = 0, velocity_limited = 0, acceleration_limited = 0, other = 0;
  double max_lag = 0.0, late_lag = 0.0;  // m
  double speed_ratio = 0.0, acceleration_ratio = 0.0, jerk_ratio = 0.0;
  double min_clearance = std::numeric_limits<double>::infinity();  // m: obstacles and self
  double microseconds = 0.0;  // per answer
};

// One turn of the circle at `speed` m/s, the arm first settled at the circle's start by the
// unlimited tracker (200 held targets from home), then streamed to the rate-limited tracker.
TrackFigures RunOne(ik::JointRateLimit limit, double speed, const Surroundings& surroundings,
                    std::FILE* dump) {
  const ik::Arm free_arm = SevenLinkArm({});
  const ik::Arm arm = SevenLinkArm(limit);
  const planning::Scene scene = SceneOf(surroundings);
  const CheckModel model = CheckModelOf(surroundings);
  const ik::ArmTracker settled = SettledAtStart(free_arm, scene);
  auto limited = Unwrap(
      ik::RateLimitedTracker::Create(arm, &scene, ik::IkOptions{}, settled.sites()), "Create");
  const int n = static_cast<int>(std::ceil(2 * kPi * kRadius / speed / kPeriod));
  TrackFigures f;
  std::vector<double> q_last, v_last, a_last;
  double late_sum = 0.0;
  int late_count = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k <= n; ++k) {
    const double t = k * kPeriod;
    const Eigen::Vector3d target = OnCircle(speed * t / kRadius);
    const ik::IkResult step = Unwrap(limited.StepTo(target, t), "StepTo");
    ++f.answers;
    if (dump) {
      std::fprintf(dump, "chain,%s,%g,%g,%g,%d,%s", surroundings.name, limit.max_velocity,
                   limit.max_acceleration, speed, k, planning::StepStatusName(step.status));
      for (const double angle : step.angles) std::fprintf(dump, ",%.17g", angle);
      std::fprintf(dump, ",%.17g\n", step.min_clearance);
    }
    switch (step.status) {
      case planning::StepStatus::kReached:
        ++f.reached;
        break;
      case planning::StepStatus::kVelocityLimited:
        ++f.velocity_limited;
        break;
      case planning::StepStatus::kAccelerationLimited:
        ++f.acceleration_limited;
        break;
      default: ++f.other; break;
    }
    const double lag = (step.sites.col(arm.hand()) - target).norm();
    f.max_lag = std::max(f.max_lag, lag);
    f.min_clearance = std::min({f.min_clearance, MinObstacleClearance(model, step.sites),
                                MinSelfClearance(model, step.sites)});
    if (2 * k >= n) late_sum += lag, ++late_count;
    const std::vector<double> q = ContinuedAngles(step.sites, q_last);
    if (!q_last.empty()) {
      std::vector<double> v;
      for (size_t j = 0; j < q.size(); ++j) {
        v.push_back((q[j] - q_last[j]) / kPeriod);
        f.speed_ratio = std::max(f.speed_ratio, std::abs(v[j]) / limit.max_velocity);
      }
      if (!v_last.empty()) {
        std::vector<double> a;
        for (size_t j = 0; j < q.size(); ++j) {
          a.push_back((v[j] - v_last[j]) / kPeriod);
          f.acceleration_ratio =
              std::max(f.acceleration_ratio, std::abs(a[j]) / limit.max_acceleration);
          if (!a_last.empty()) {
            f.jerk_ratio =
                std::max(f.jerk_ratio, std::abs(a[j] - a_last[j]) / kPeriod / limit.max_jerk);
          }
        }
        a_last = a;
      }
      v_last = v;
    }
    q_last = q;
  }
  f.microseconds = std::chrono::duration<double, std::micro>(
                       std::chrono::steady_clock::now() - start).count() / f.answers;
  f.late_lag = late_sum / late_count;
  return f;
}

// The unlimited tracker's joint speeds on the same turn (median, 90th percentile and largest
// over the answers of each answer's fastest joint, rad/s): what the limiter has to cut.
std::vector<double> UnlimitedSpeeds(double speed, const Surroundings& surroundings) {
  const ik::Arm arm = SevenLinkArm({});
  const planning::Scene scene = SceneOf(surroundings);
  ik::ArmTracker tracker = SettledAtStart(arm, scene);
  const int n = static_cast<int>(std::ceil(2 * kPi * kRadius / speed / kPeriod));
  std::vector<double> q_last, fastest;
  for (int k = 0; k <= n; ++k) {
    const double t = k * kPeriod;
    const ik::IkResult step = Unwrap(tracker.StepTo(OnCircle(speed * t / kRadius), t), "StepTo");
    const std::vector<double> q = ContinuedAngles(step.sites, q_last);
    if (!q_last.empty()) {
      double largest = 0.0;
      for (size_t j = 0; j < q.size(); ++j) {
        largest = std::max(largest, std::abs(q[j] - q_last[j]) / kPeriod);
      }
      fastest.push_back(largest);
    }
    q_last = q;
  }
  std::sort(fastest.begin(), fastest.end());
  return {fastest[fastest.size() / 2], fastest[fastest.size() * 9 / 10], fastest.back()};
}

}  // namespace

void RunTrackCase(std::FILE* dump) {
  std::printf(
      "Track (rate-limited, future unknown): the quick-start arm (7 limbs of 0.2 m, planar), in "
      "free space and among the quick-start scene's pillars (capsules of radius 0.06 m about "
      "(0.55, +-0.35) and 0.08 m about (-0.4, 0.6)), hand once round a circle of radius %.1f m "
      "about (%.1f, %.1f) at a constant speed, a target every %.0f ms, the arm settled at the "
      "start first. Lag: |hand - target| of each answer (largest; mean over the second half of "
      "the turn). Rates: finite differences of the checker's joint angles over the declared "
      "limits (<= 1: within; the first answer starts from rest). Clearance: the checker's own "
      "distances, obstacles and limb to limb.\n\n",
      kRadius, kCentre.x(), kCentre.y(), kPeriod * 1e3);
  const std::vector<Surroundings> all = AllSurroundings();
  std::printf(
      "| scene | hand speed (m/s) | the unlimited tracker's fastest joint per answer: "
      "median / p90 / max (rad/s) |\n|---|---:|---:|\n");
  for (const Surroundings& surroundings : all) {
    for (const double speed : {0.2, 0.4, 0.8}) {
      const std::vector<double> s = UnlimitedSpeeds(speed, surroundings);
      std::printf("| %s | %.1f | %.2f / %.2f / %.2f |\n", surroundings.name, speed, s[0], s[1],
                  s[2]);
    }
  }
  std::printf("\n");
  std::printf(
      "| scene | servo limits (rad/s, rad/s^2[, rad/s^3]) | hand speed (m/s) | answers | "
      "reached / velocity- / acceleration-limited | max lag (m) | mean lag, 2nd half (m) | max "
      "speed / acceleration / jerk over the limits | min clearance (m) | us per answer |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  constexpr double kNone = std::numeric_limits<double>::infinity();
  for (const Surroundings& surroundings : all) {
    for (const ik::JointRateLimit limit :
         {ik::JointRateLimit{4.0, 200.0, kNone}, ik::JointRateLimit{2.0, 50.0, kNone},
          ik::JointRateLimit{4.0, 200.0, 20000.0}, ik::JointRateLimit{4.0, 200.0, 2000.0}}) {
      for (const double speed : {0.2, 0.4, 0.8}) {
        const TrackFigures f = RunOne(limit, speed, surroundings, dump);
        const std::string jerk =
            std::isfinite(limit.max_jerk) ? absl::StrFormat(", %.0f", limit.max_jerk) : "";
        const std::string jerk_ratio =
            std::isfinite(limit.max_jerk) ? absl::StrFormat(" / %.3g", f.jerk_ratio) : " / -";
        std::printf(
            "| %s | %.0f, %.0f%s | %.1f | %d | %d / %d / %d%s | %.3g | %.3g | %.3g / %.3g%s | "
            "%.3g | %.0f |\n",
            surroundings.name, limit.max_velocity, limit.max_acceleration, jerk.c_str(), speed,
            f.answers, f.reached, f.velocity_limited, f.acceleration_limited,
            f.other > 0 ? (" (+" + std::to_string(f.other) + " other)").c_str() : "", f.max_lag,
            f.late_lag, f.speed_ratio, f.acceleration_ratio, jerk_ratio.c_str(), f.min_clearance,
            f.microseconds);
      }
    }
  }
}

}  // namespace ikd::bench::paths
