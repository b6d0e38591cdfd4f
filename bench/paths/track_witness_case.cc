#include "track_witness_case.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "checker.h"
#include "ikd/ik/rate_limit.h"
#include "ikd/robot/robot_rate_limit.h"
#include "paths_util.h"
#include "robot_checker.h"

namespace ikd::bench::paths {
namespace {

constexpr double kReachedShareTarget = 0.9;
constexpr double kMedianLagTarget = 0.02;  // m
constexpr double kOnTarget = 1e-6;         // m: the checker's "the hand is on its target"

// One scenario streamed to Track, as the checker sees it.
struct TrackRun {
  int index = 0;
  PathMeasures m;  // rates against the declared limits, collisions at and between answers
  int answers = 0, reached = 0;
  int reached_off_target = 0;              // answers saying REACHED with the hand off its target
  double median_lag = 0.0, max_lag = 0.0;  // m
  double speed_over_limit = 0.0, acceleration_over_limit = 0.0, jerk_over_limit = 0.0;
  double limb_turn_ratio = 0.0;  // the fastest limb turn in the world over the witness's
  double seconds = 0.0;
  double reached_share() const { return answers > 0 ? double(reached) / answers : 0.0; }
  bool misses() const {
    return m.any_limit_violation() || m.collided || reached_share() < kReachedShareTarget ||
           median_lag > kMedianLagTarget || reached_off_target > 0;
  }
};

Scenario WithTrackLimits(Scenario s, double jerk_factor) {
  const ik::JointRateLimit limit{
      kTrackVelocityFactor * s.witness.speed, kTrackAccelerationFactor * s.witness.acceleration,
      jerk_factor > 0.0 ? jerk_factor * s.witness.jerk : std::numeric_limits<double>::infinity()};
  return WithRateLimits(std::move(s), limit);
}

TrackRun RunTrack(const Scenario& s, std::FILE* dump) {
  const planning::Scene* scene = s.scene.size() > 0 ? &s.scene : nullptr;
  auto tracker =
      Unwrap(ik::RateLimitedTracker::Create(s.arm, scene, ik::IkOptions{}, s.initial_sites),
             "RateLimitedTracker::Create");
  TrackRun run;
  run.index = s.index;
  std::vector<Eigen::Matrix3Xd> sites;
  std::vector<double> lags;
  const auto start = std::chrono::steady_clock::now();
  for (size_t k = 0; k < s.hand.size(); ++k) {
    const ik::IkResult step = Unwrap(tracker.StepTo(s.hand[k], s.times[k]), "StepTo");
    const double lag = (step.sites.col(step.sites.cols() - 1) - s.hand[k]).norm();
    run.reached += step.status == planning::StepStatus::kReached;
    run.reached_off_target += step.status == planning::StepStatus::kReached && lag > kOnTarget;
    lags.push_back(lag);
    sites.push_back(step.sites);
    if (dump) {
      const double clearance = std::min(MinObstacleClearance(s.model, step.sites),
                                        MinSelfClearance(s.model, step.sites));
      std::fprintf(dump, "%s,%d,%zu,%s,%.17g,%.17g", KindName(s.kind), s.index, k,
                   planning::StepStatusName(step.status), lag, clearance);
      for (double angle : step.angles) std::fprintf(dump, ",%.17g", angle);
      std::fprintf(dump, "\n");
    }
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.answers = static_cast<int>(sites.size());
  run.m = CheckPath(s.model, sites, s.hand, kSamplePeriod);
  run.median_lag = Percentile(lags, 0.5);
  run.max_lag = Percentile(lags, 1.0);
  run.speed_over_limit = run.m.max_speed / s.model.max_velocity;
  run.acceleration_over_limit = run.m.max_acceleration / s.model.max_acceleration;
  run.jerk_over_limit = run.m.max_jerk / s.model.max_jerk;
  run.limb_turn_ratio = run.m.max_limb_turn_speed / s.witness_limb_turn_speed;
  return run;
}

struct TrackTally {
  int scenarios = 0, over_limit = 0, collided = 0, between = 0, under_reached = 0, lagging = 0;
  int off_target = 0, answers = 0;
  double seconds = 0.0;
  std::vector<double> reached_share, median_lag, speed, acceleration, jerk, limb_turn;
  std::vector<TrackRun> missed;

  void Add(const TrackRun& r) {
    ++scenarios;
    over_limit += r.m.any_limit_violation();
    collided += r.m.collided;
    between += r.m.motion_collisions > 0;
    under_reached += r.reached_share() < kReachedShareTarget;
    lagging += r.median_lag > kMedianLagTarget;
    off_target += r.reached_off_target > 0;
    answers += r.answers;
    seconds += r.seconds;
    reached_share.push_back(r.reached_share());
    median_lag.push_back(r.median_lag);
    speed.push_back(r.speed_over_limit);
    acceleration.push_back(r.acceleration_over_limit);
    jerk.push_back(r.jerk_over_limit);
    limb_turn.push_back(r.limb_turn_ratio);
    if (r.misses()) missed.push_back(r);
  }
};

void PrintLegend(int count, uint64_t seed, bool declared, double jerk_factor) {
  std::printf(
      "## Track on the witness scenarios%s\n\n"
      "Seed %llu, %d scenarios per kind: each hand path streamed target by target (100 Hz, 201 "
      "targets) to the rate-limited tracker (ik::RateLimitedTracker, IkOptions defaults) from the "
      "witness's first configuration, ",
      declared ? "" : " without declared limits", static_cast<unsigned long long>(seed), count);
  if (declared) {
    std::printf(
        "with every joint's servo limits declared at %.1fx the witness's top joint speed and "
        "%.0fx its top acceleration. ",
        kTrackVelocityFactor, kTrackAccelerationFactor);
    if (jerk_factor > 0.0) {
      std::printf("Every joint also declares a jerk limit of %gx the witness's top jerk. ",
                  jerk_factor);
    }
  } else {
    std::printf("with no servo limit declared (the rate-limited tracker is then the plain one). ");
  }
  std::printf(
      "Measured by the checker from the answers' sites: over a limit = scenarios with a joint "
      "(its own coordinates: spatial bend and azimuth) beyond its range, velocity or "
      "acceleration (or jerk) limit by the checker's slack; collided = clearance < 0 at an answer "
      "or on "
      "the motion between two (the checker's subdivision; in parentheses: between answers "
      "only); REACHED = the answers' own status (off target: REACHED with the hand over 1 um "
      "from its target); lag = |hand - target| per answer; limb turn = the fastest turn of any "
      "limb in the world over the witness's. Targets (issue 35): 0 over a limit, 0 collided, at "
      "least %.0f%% REACHED and the median lag at most %.0f cm on every scenario.\n\n",
      100 * kReachedShareTarget, 100 * kMedianLagTarget);
  std::printf(
      "| kind | scenarios | over a limit | collided (between) | under %.0f%% REACHED | REACHED "
      "min / median | median lag over %.0f cm | median lag median / max (m) | speed / limit "
      "max | acceleration / limit max | jerk / limit max | limb turn median / max | off target | "
      "us per answer |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
      100 * kReachedShareTarget, 100 * kMedianLagTarget);
}

void PrintRow(Kind kind, const TrackTally& t) {
  std::printf(
      "| %s | %d | %d | %d (%d) | %d | %.3f / %.3f | %d | %.3g / %.3g | %.3g | %.3g | %.3g | "
      "%.3g / %.3g | %d | %.0f |\n",
      KindName(kind), t.scenarios, t.over_limit, t.collided, t.between, t.under_reached,
      Percentile(t.reached_share, 0.0), Percentile(t.reached_share, 0.5), t.lagging,
      Percentile(t.median_lag, 0.5), Percentile(t.median_lag, 1.0), Percentile(t.speed, 1.0),
      Percentile(t.acceleration, 1.0), Percentile(t.jerk, 1.0), Percentile(t.limb_turn, 0.5),
      Percentile(t.limb_turn, 1.0), t.off_target,
      t.answers > 0 ? 1e6 * t.seconds / t.answers : 0.0);
}

void PrintMisses(Kind kind, const TrackTally& t) {
  for (const TrackRun& r : t.missed) {
    std::printf(
        "- %s #%d: REACHED %.3f, lag median %.3g m max %.3g m, speed %.3g and acceleration "
        "%.3g of the limits, %d position violations, min clearance %.3g m (motions %.3g m)%s\n",
        KindName(kind), r.index, r.reached_share(), r.median_lag, r.max_lag, r.speed_over_limit,
        r.acceleration_over_limit, r.m.position_violations,
        std::min(r.m.min_obstacle_clearance, r.m.min_self_clearance), r.m.min_motion_clearance,
        r.reached_off_target > 0 ? ", REACHED off target" : "");
  }
}

std::string Verdict(const TrackTally& t) {
  std::string failed;
  auto fail = [&](int n, const char* what) {
    if (n == 0) return;
    failed += (failed.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  fail(t.over_limit, "over a limit");
  fail(t.collided, "collided");
  fail(t.under_reached, "under the REACHED share");
  fail(t.lagging, "over the median lag");
  fail(t.off_target, "REACHED off target");
  return failed.empty() ? "MET" : "NOT MET (" + failed + ")";
}

// One industrial scenario streamed to Track with the preset's own servo limits (the witness
// keeps to half of them), as the robot checker sees it.
struct RobotTrackRun {
  int index = 0;
  RobotPathMeasures m;
  int answers = 0, reached = 0;
  double median_lag = 0.0, max_lag = 0.0;  // m: the TCP's distance from its target
  double max_rotation_lag = 0.0;           // rad
  double seconds = 0.0;
  double reached_share() const { return answers > 0 ? double(reached) / answers : 0.0; }
};

RobotTrackRun RunRobotTrack(const RobotScenario& s) {
  const planning::Scene* scene = s.scene.size() > 0 ? &s.scene : nullptr;
  auto tracker = Unwrap(
      robot::RateLimitedRobotTracker::Create(*s.arm->robot, robot::RobotIkOptions{}, s.q0, scene),
      "RateLimitedRobotTracker::Create");
  RobotTrackRun run;
  run.index = s.index;
  Eigen::MatrixXd q(static_cast<int>(s.targets.size()), s.q0.size());
  std::vector<double> lags;
  const auto start = std::chrono::steady_clock::now();
  for (size_t k = 0; k < s.targets.size(); ++k) {
    const robot::RobotIkResult step = tracker.StepTo(s.targets[k], s.times[k]);
    run.reached += step.status == planning::StepStatus::kReached;
    q.row(static_cast<int>(k)) = step.q.transpose();
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int k = 0; k < q.rows(); ++k) {
    const RobotKinematics fk = ForwardKinematics(s.model, q.row(k).transpose());
    lags.push_back((fk.tool.p - s.request[k].position).norm());
    if (s.model.pose) {
      run.max_rotation_lag =
          std::max(run.max_rotation_lag, RotationAngleBetween(fk.tool.R, s.request[k].rotation));
    }
  }
  run.answers = static_cast<int>(q.rows());
  run.m = CheckRobotPath(s.model, q, s.request, kSamplePeriod);
  run.median_lag = Percentile(lags, 0.5);
  run.max_lag = Percentile(lags, 1.0);
  return run;
}

void RunRobotTrackKind(const RobotKind& kind, int count, uint64_t seed) {
  int over = 0, collided = 0, between = 0, under = 0, lagging = 0, answers = 0;
  double seconds = 0.0;
  std::vector<double> share, median_lag;
  std::vector<RobotTrackRun> missed;
  for (int index = 0; index < count; ++index) {
    const RobotTrackRun r = RunRobotTrack(MakeRobotScenario(kind, index, seed));
    over += r.m.any_limit_violation();
    collided += r.m.collided;
    between += r.m.motion_collisions > 0;
    under += r.reached_share() < kReachedShareTarget;
    lagging += r.median_lag > kMedianLagTarget;
    answers += r.answers;
    seconds += r.seconds;
    share.push_back(r.reached_share());
    median_lag.push_back(r.median_lag);
    if (r.m.any_limit_violation() || r.m.collided || r.median_lag > kMedianLagTarget) {
      missed.push_back(r);
    }
  }
  std::printf("| %s | %d | %d | %d (%d) | %d | %.3f / %.3f | %d | %.3g / %.3g | %.0f |\n",
              RobotKindName(kind).c_str(), count, over, collided, between, under,
              Percentile(share, 0.0), Percentile(share, 0.5), lagging, Percentile(median_lag, 0.5),
              Percentile(median_lag, 1.0), answers > 0 ? 1e6 * seconds / answers : 0.0);
  for (const RobotTrackRun& r : missed) {
    std::fprintf(stderr,
                 "  %s #%d: REACHED %.3f, lag median %.3g m max %.3g m, %d velocity and %d "
                 "acceleration violations, min clearance %.3g m (motions %.3g m)\n",
                 RobotKindName(kind).c_str(), r.index, r.reached_share(), r.median_lag, r.max_lag,
                 r.m.velocity_violations, r.m.acceleration_violations, r.m.min_clearance,
                 r.m.min_motion_clearance);
  }
}

}  // namespace

void RunRobotTrackWitnessCase(const std::vector<RobotKind>& kinds, int count, uint64_t seed) {
  std::printf(
      "\n## Track on the industrial witness scenarios\n\n"
      "Seed %llu, %d scenarios per kind: each tool path streamed to the rate-limited tracker "
      "(robot::RateLimitedRobotTracker, RobotIkOptions defaults) from the witness's start, with "
      "the preset's own servo limits (the witness keeps to half of them); %s. Measured by the "
      "robot checker from the answers' joint values: limits, collisions at and between answers "
      "(in parentheses: between only), REACHED = the answers' own status, lag = the TCP's "
      "distance from its target per answer (scenarios over a limit, colliding or lagging are "
      "listed on stderr).\n\n"
      "| kind | scenarios | over a limit | collided (between) | under %.0f%% REACHED | REACHED "
      "min / median | median lag over %.0f cm | median lag median / max (m) | us per answer |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
      static_cast<unsigned long long>(seed), count, LinksDescription().c_str(),
      100 * kReachedShareTarget, 100 * kMedianLagTarget);
  for (const RobotKind& kind : kinds) RunRobotTrackKind(kind, count, seed);
}

void RunTrackWitnessCase(const std::vector<Kind>& kinds, int count, uint64_t seed, bool declared,
                         double jerk_factor, std::FILE* dump) {
  if (dump) std::fprintf(dump, "kind,index,sample,status,lag,clearance,joint values...\n");
  std::vector<TrackTally> tallies(kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) {
    for (int index = 0; index < count; ++index) {
      Scenario s = MakeScenario(kinds[i], index, seed);
      tallies[i].Add(RunTrack(
          declared ? WithTrackLimits(std::move(s), jerk_factor) : WithoutRateLimits(std::move(s)),
          dump));
    }
  }
  PrintLegend(count, seed, declared, jerk_factor);
  for (size_t i = 0; i < kinds.size(); ++i) PrintRow(kinds[i], tallies[i]);
  std::printf("\n");
  for (size_t i = 0; i < kinds.size(); ++i) PrintMisses(kinds[i], tallies[i]);
  std::printf("\n");
  for (size_t i = 0; i < kinds.size(); ++i) {
    std::printf("- %s: %s\n", KindName(kinds[i]), Verdict(tallies[i]).c_str());
  }
}

}  // namespace ikd::bench::paths
