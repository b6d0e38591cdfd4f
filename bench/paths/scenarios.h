// Scenarios of the witness-based joint-path benchmark: a random chain arm, a smooth random joint
// motion (the witness) whose hand path is the request, rate limits the witness meets, and for
// the -obstacles kinds obstacles the witness clears but a plain projection tends to hit. A
// solution is known to exist, so every collision or limit violation is the solver's.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "checker.h"
#include "ikd/ik/arm.h"
#include "ikd/ik/trajectory.h"
#include "ikd/planning/scene.h"

namespace ikd::bench::paths {

enum class Kind { kPlanarFree, kPlanarObstacles, kSpatialFree, kSpatialObstacles };
inline constexpr Kind kKinds[] = {Kind::kPlanarFree, Kind::kPlanarObstacles, Kind::kSpatialFree,
                                  Kind::kSpatialObstacles};
const char* KindName(Kind kind);
std::optional<Kind> ParseKind(std::string_view name);

inline constexpr double kPeriod = 2.0;         // s: the witness's period and the path's length
inline constexpr double kSamplePeriod = 0.01;  // s: 100 Hz, 201 samples
inline constexpr double kSafetyMargin = 0.01;  // m: IkOptions' default
inline constexpr double kWitnessGap = kSafetyMargin + 0.02;  // m: the witness's least clearance

struct Scenario {
  Kind kind;
  int index;
  uint64_t fingerprint;  // hash of the arm, witness and obstacles: same value, same problem
  ik::Arm arm;           // with the declared rate limits
  planning::Scene scene;
  ik::Trajectory hand_path;
  std::vector<double> times;  // hand_path.SampleTimes(kSamplePeriod)
  Eigen::Matrix3Xd initial_sites;
  CheckModel model;                  // the checker's copy of arm, limits and obstacles
  std::vector<Eigen::Vector3d> hand;  // requested hand position per sample
  RateMaxima witness;                // the witness's own max joint speed and acceleration
  std::vector<Eigen::Matrix3Xd> witness_sites;  // per sample (for --trace)
  double witness_limb_turn_speed = 0.0;         // rad/s: MaxLimbTurnSpeed of witness_sites
  int draws = 0;                     // witnesses drawn until one was accepted
  int obstacles_near_plain = 0;      // obstacles placed on the plain projection's path
  bool plain_collides = false;       // the plain projection's path hits an obstacle
};

// Deterministic in (seed, kind, index) alone: scenario i is the same whatever --scenarios or
// --only say.
Scenario MakeScenario(Kind kind, int index, uint64_t seed);

// The scene of the checker's obstacles: a sphere where a == b, else a capsule, named o0, o1, ...
planning::Scene SceneOf(const std::vector<CheckCapsule>& obstacles);

// The same scenario with no rate limit declared (the arm's and the checker's): a controller that
// sends none still expects the arm to move no faster than its hand path needs.
Scenario WithoutRateLimits(Scenario s);
// The same scenario with `limit` declared for every joint (0: none), the arm's and the checker's.
Scenario WithRateLimits(Scenario s, ik::JointRateLimit limit);

}  // namespace ikd::bench::paths
