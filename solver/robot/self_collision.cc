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

// Slack on the bounding radii: the centres are found from transformed end points, whose rounding
// may put them a few ulps off the rigid image of the link-frame mean.
constexpr double kBoundSlack = 1e-9;

// Per link of `spec`, the farthest reach of its capsules from the mean of their end points, in the
// link's frame (where LinkCapsulesAt takes them from): SelfCollisionMatrix::bounding_radii.
std::vector<double> BoundingRadii(const ChainSpec& spec) {
  std::vector<double> radii;
  for (const std::vector<LinkShape>& shapes : LinkShapesOf(spec)) {
    Eigen::Vector3d centre = Eigen::Vector3d::Zero();
    for (const LinkShape& shape : shapes) centre += 0.5 * (shape.a + shape.b);
    centre /= std::max<double>(1.0, shapes.size());
    double radius = 0.0;
    for (const LinkShape& shape : shapes) {
      radius = std::max(
          radius, std::max((shape.a - centre).norm(), (shape.b - centre).norm()) + shape.radius);
    }
    radii.push_back(radius + kBoundSlack);
  }
  return radii;
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
  m.bounding_radii_ = BoundingRadii(spec);
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

std::vector<Eigen::Vector3d> LinkCentres(const LinkCapsules& links) {
  std::vector<Eigen::Vector3d> centres(links.num_links(), Eigen::Vector3d::Zero());
  for (int k = 0; k < links.num_links(); ++k) {
    for (int i = links.first[k]; i < links.first[k + 1]; ++i) {
      centres[k] += 0.5 * (links.capsules[i].a + links.capsules[i].b);
    }
    centres[k] /= std::max(1, links.first[k + 1] - links.first[k]);
  }
  return centres;
}

SelfContact LeastSelfClearance(const SelfCollisionMatrix& matrix, const LinkCapsules& links) {
  SelfContact least{-1, -1, std::numeric_limits<double>::infinity()};
  const std::vector<Eigen::Vector3d> centres = LinkCentres(links);
  for (const auto& [a, b] : matrix.checked()) {
    if (matrix.ClearanceLowerBound(centres, a, b) >= least.clearance) continue;
    const double clearance = LinkPairClearance(links, a, b);
    if (clearance < least.clearance) least = {a, b, clearance};
  }
  return least;
}

std::vector<SelfContact> SelfContactsBelow(const SelfCollisionMatrix& matrix,
                                           const LinkCapsules& links, double bound) {
  std::vector<SelfContact> below;
  const std::vector<Eigen::Vector3d> centres = LinkCentres(links);
  for (const auto& [a, b] : matrix.checked()) {
    if (matrix.ClearanceLowerBound(centres, a, b) >= bound) continue;
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
  const std::vector<Eigen::Vector3d> centres = LinkCentres(links);
  for (const auto& [a, b] : matrix.checked()) {
    const double lower = matrix.ClearanceLowerBound(centres, a, b) + shift;
    if (lower >= clearances[a] && lower >= clearances[b]) continue;  // lowers neither
    const double clearance = LinkPairClearance(links, a, b) + shift;
    clearances[a] = std::min(clearances[a], clearance);
    clearances[b] = std::min(clearances[b], clearance);
  }
}

}  // namespace ikd::robot
