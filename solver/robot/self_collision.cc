#include "ikd/robot/self_collision.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <random>

#include "absl/base/call_once.h"
#include "ikd/planning/scene.h"
#include "ikd/robot/link_geometry.h"

namespace ikd::robot {
namespace {

// A configuration drawn uniformly within every joint's limits (a continuous joint: a full turn).
Eigen::VectorXd RandomConfiguration(const ChainSpec& spec, std::mt19937_64& rng) {
  Eigen::VectorXd q(NumMovingJoints(spec));
  int j = 0;
  for (const JointSpec& joint : spec.joints) {
    if (joint.type == JointType::kFixed) continue;
    const double lower = joint.limits ? joint.limits->lower : -std::numbers::pi;
    const double upper = joint.limits ? joint.limits->upper : std::numbers::pi;
    q[j++] = std::uniform_real_distribution<double>(lower, upper)(rng);
  }
  return q;
}

}  // namespace

const char* PairRuleName(PairRule rule) {
  switch (rule) {
    case PairRule::kChecked:
      return "checked";
    case PairRule::kAdjacent:
      return "adjacent";
    case PairRule::kAlwaysTouching:
      return "always touching";
    case PairRule::kNeverTouching:
      return "never touching";
    case PairRule::kAllowedBySpec:
      return "allowed by the spec";
    case PairRule::kOff:
      return "self-collision off";
  }
  return "unknown";
}

SelfCollisionMatrix SelfCollisionMatrix::Compute(const ChainSpec& spec, int samples,
                                                 uint64_t seed) {
  SelfCollisionMatrix m;
  m.links_ = NumMovingJoints(spec);
  samples = std::max(samples, 1);
  const int n = m.links_;
  m.rules_.assign(n * n, PairRule::kChecked);
  std::vector<int> touches(n * n, 0);
  // Lines (radius 0) never penetrate each other: without volume every pair is never touching.
  const bool checks = spec.ChecksSelfCollision();
  const bool has_volume = HasLinkVolume(spec);
  std::mt19937_64 rng(seed);
  for (int s = 0; checks && has_volume && s < samples; ++s) {
    const LinkCapsules links = LinkCapsulesAt(spec, RandomConfiguration(spec, rng));
    for (int a = 0; a < n; ++a) {
      for (int b = a + 2; b < n; ++b) touches[a * n + b] += LinkPairClearance(links, a, b) < 0.0;
    }
  }
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      PairRule rule = PairRule::kChecked;
      if (b == a + 1) {
        rule = PairRule::kAdjacent;
      } else if (!checks) {
        rule = PairRule::kOff;
      } else if (touches[a * n + b] == samples) {
        rule = PairRule::kAlwaysTouching;
      } else if (touches[a * n + b] == 0) {
        rule = PairRule::kNeverTouching;
      }
      m.rules_[a * n + b] = m.rules_[b * n + a] = rule;
    }
  }
  for (const auto& [a, b] : spec.allowed_collisions) {
    if (m.rules_[a * n + b] != PairRule::kOff) {
      m.rules_[a * n + b] = m.rules_[b * n + a] = PairRule::kAllowedBySpec;
    }
  }
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      if (m.rules_[a * n + b] == PairRule::kChecked) m.checked_.emplace_back(a, b);
    }
  }
  return m;
}

const SelfCollisionMatrix& SelfCollisionMatrixOf(const Robot& robot) {
  Robot::IkCache& cache = robot.self_collision_cache();
  absl::call_once(cache.once, [&] {
    cache.value =
        std::make_shared<const SelfCollisionMatrix>(SelfCollisionMatrix::Compute(robot.spec()));
  });
  return *static_cast<const SelfCollisionMatrix*>(cache.value.get());
}

bool ChecksSelfCollision(const Robot& robot) {
  return !SelfCollisionMatrixOf(robot).checked().empty();
}

SelfContact LeastSelfClearance(const SelfCollisionMatrix& matrix, const LinkCapsules& links) {
  SelfContact least{-1, -1, std::numeric_limits<double>::infinity()};
  for (const auto& [a, b] : matrix.checked()) {
    const double clearance = LinkPairClearance(links, a, b);
    if (clearance < least.clearance) least = {a, b, clearance};
  }
  return least;
}

std::vector<SelfContact> SelfContactsBelow(const SelfCollisionMatrix& matrix,
                                           const LinkCapsules& links, double bound) {
  std::vector<SelfContact> below;
  for (const auto& [a, b] : matrix.checked()) {
    const double clearance = LinkPairClearance(links, a, b);
    if (clearance < bound) below.push_back({a, b, clearance});
  }
  std::stable_sort(below.begin(), below.end(), [](const SelfContact& x, const SelfContact& y) {
    return x.clearance < y.clearance;
  });
  return below;
}

void LowerBySelfClearances(const SelfCollisionMatrix& matrix, const LinkCapsules& links,
                           std::vector<double>& clearances, double shift) {
  for (const auto& [a, b] : matrix.checked()) {
    const double clearance = LinkPairClearance(links, a, b) + shift;
    clearances[a] = std::min(clearances[a], clearance);
    clearances[b] = std::min(clearances[b], clearance);
  }
}

}  // namespace ikd::robot
