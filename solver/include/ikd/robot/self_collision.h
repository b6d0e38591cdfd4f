// Self-collision of an industrial arm (issue 33, item 3): which pairs of its links are checked
// against each other, decided once per arm the way MoveIt's setup assistant builds its
// allowed-collision matrix, and the clearances of the checked pairs. Only for a spec that
// checks self-collision (ChainSpec::ChecksSelfCollision: by default where it has link_shapes;
// chain.h says why not on joint-origin capsules). A pair is allowed (never checked) when
//  - the links are adjacent (they share a joint, so their shapes meet or nearly so);
//  - the capsules touch in every one of N random configurations within the joint limits (e.g.
//    the two links on either side of a zero-length one): a check could never pass;
//  - they touch in none of them: the arm's own geometry keeps them apart;
//  - the spec lists it in ChainSpec::allowed_collisions.
// Links are link_geometry.h's capsules (link k moved by joint k; an arm whose capsules all have
// radius 0 checks no pair: lines never touch).
//
//   const auto& matrix = ikd::robot::SelfCollisionMatrixOf(robot);   // computed on first use
//   ikd::robot::SelfContact worst = ikd::robot::LeastSelfClearance(matrix, LinkCapsulesAt(spec,
//   q));
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "ikd/robot/chain.h"
#include "ikd/robot/link_geometry.h"
#include "ikd/robot/robot.h"

namespace ikd::robot {

enum class PairRule {
  kChecked,
  kAdjacent,
  kAlwaysTouching,  // in every sampled configuration
  kNeverTouching,   // in none of them
  kAllowedBySpec,   // ChainSpec::allowed_collisions
  kOff,             // the spec does not check self-collision (ChainSpec::ChecksSelfCollision)
};
const char* PairRuleName(PairRule rule);

class SelfCollisionMatrix {
 public:
  static constexpr int kDefaultSamples = 10000;  // MoveIt's setup assistant's default density

  // Samples every joint uniformly within its limits (continuous joints over a full turn) from a
  // fixed seed: the same spec gives the same matrix.
  static SelfCollisionMatrix Compute(const ChainSpec& spec, int samples = kDefaultSamples,
                                     uint64_t seed = 1);

  int num_links() const { return links_; }
  PairRule rule(int a, int b) const { return rules_[a * links_ + b]; }
  const std::vector<std::pair<int, int>>& checked() const { return checked_; }  // (a < b)
  // Per link, a radius about the mean of its capsules' end points (LinkCentres) that holds the
  // whole link: the mean moves with the link, so the ball holds it in every configuration.
  const std::vector<double>& bounding_radii() const { return bounding_radii_; }

  // A lower bound on the clearance of links a and b whose LinkCentres are `centres`: the gap
  // between their bounding balls (a pair that far apart needs no capsule distance).
  double ClearanceLowerBound(const std::vector<Eigen::Vector3d>& centres, int a, int b) const {
    return (centres[a] - centres[b]).norm() - bounding_radii_[a] - bounding_radii_[b];
  }

 private:
  int links_ = 0;
  std::vector<double> bounding_radii_;
  std::vector<PairRule> rules_;  // links x links, symmetric
  std::vector<std::pair<int, int>> checked_;
};

// The matrix of `robot`'s spec, computed on first use and kept with the robot (shared by its
// copies; thread-safe).
const SelfCollisionMatrix& SelfCollisionMatrixOf(const Robot& robot);

// Whether `robot` checks some pair of its links against each other.
bool ChecksSelfCollision(const Robot& robot);

struct SelfContact {
  int link_a = -1, link_b = -1;  // -1: no checked pair
  double clearance = 0.0;        // m, signed: < 0 is a penetration
};

// The checked pair closest to touching in the configuration of `links`; clearance +infinity
// when no pair is checked.
SelfContact LeastSelfClearance(const SelfCollisionMatrix& matrix, const LinkCapsules& links);

// Every checked pair with clearance below `bound`, closest first.
std::vector<SelfContact> SelfContactsBelow(const SelfCollisionMatrix& matrix,
                                           const LinkCapsules& links, double bound);

// The mean of each link's capsules' end points (the centres of SelfCollisionMatrix's bounding
// balls).
std::vector<Eigen::Vector3d> LinkCentres(const LinkCapsules& links);

// Lowers clearances[k] of each link k to its least clearance against the links it is checked
// against, plus `shift` (m; motion.h's soft pulls shift them, nothing that decides a status does).
void LowerBySelfClearances(const SelfCollisionMatrix& matrix, const LinkCapsules& links,
                           std::vector<double>& clearances, double shift = 0.0);

}  // namespace ikd::robot
