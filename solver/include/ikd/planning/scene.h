// Scene model of the Cartesian IK engine (Kastenmeier & Vesely 1996; Vesely 2013 sec. VII B):
// obstacles (spheres, capsules, oriented boxes, half-spaces) and exact signed distances from a
// limb's capsule (segment p-q swept by a ball of radius r) to an obstacle and between limbs.
//
// Signed distance: positive = clearance, negative = -(penetration depth), i.e. the distance
// from the capsule's axis to the shape's surface (negative inside) minus the radii.
// All routines are closed form or exact piecewise minimizations (no sampling, no iteration);
// the results are exact up to rounding. Inputs must be finite and shapes valid (ValidateShape);
// a Scene guarantees that for its obstacles.
//
//   auto scene = ikd::planning::Scene::Create({{"table", ikd::planning::Box{c, q, h}},
//                                        {"floor", ikd::planning::HalfSpace{{0, 0, 1}, 0.0}}});
//   double clearance = scene->MinSignedDistance(sites.col(k), sites.col(k + 1), radius);
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ikd::planning {

struct Sphere {
  Eigen::Vector3d center = Eigen::Vector3d::Zero();
  double radius = 0.0;  // >= 0
};

// Segment a-b swept by a ball (a == b is a sphere).
struct Capsule {
  Eigen::Vector3d a = Eigen::Vector3d::Zero();
  Eigen::Vector3d b = Eigen::Vector3d::Zero();
  double radius = 0.0;  // >= 0
};

// Oriented box: the points center + R(orientation) y with |y_i| <= half_extents_i. The
// orientation need not be normalized (it is normalized on use); zero half extents are allowed
// (a rectangle, a segment or a point).
struct Box {
  Eigen::Vector3d center = Eigen::Vector3d::Zero();
  Eigen::Quaterniond orientation = Eigen::Quaterniond::Identity();
  Eigen::Vector3d half_extents = Eigen::Vector3d::Zero();  // each >= 0
};

// The solid region normal . x <= offset (normal need not be unit length: the region is the same
// after dividing both by |normal|). A floor at z = 0: normal (0, 0, 1), offset 0.
struct HalfSpace {
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
  double offset = 0.0;
};

using Shape = std::variant<Sphere, Capsule, Box, HalfSpace>;

struct Obstacle {
  std::string id;  // unique in a scene, non-empty
  Shape shape;
};

// OK, or InvalidArgument naming `field` + the member and its bound, e.g.
// "obstacles[2].radius must be finite and >= 0, got -1": non-finite numbers, negative radius or
// half extents, zero-norm normal or orientation.
absl::Status ValidateShape(const Shape& shape, const std::string& field);

// Signed distance of a point to the shape's surface (negative inside).
double PointSignedDistance(const Shape& shape, const Eigen::Vector3d& x);

// The closest approach of a capsule (segment p + t (q - p), t in [0, 1], radius r) to a shape.
struct CapsuleApproach {
  double distance = 0.0;  // signed: clearance > 0, -(penetration depth) < 0
  double t = 0.0;         // segment parameter of a closest axis point x* (one of them on ties)
  // Unit gradient of the shape's point signed distance at x* (the direction that increases the
  // clearance; a subgradient where the distance is not smooth). By the envelope theorem
  // d distance / dp = (1 - t) normal and d distance / dq = t normal where x* is unique.
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
};
CapsuleApproach ClosestApproach(const Shape& shape, const Eigen::Vector3d& p,
                                const Eigen::Vector3d& q, double radius);

// Exact signed distance from the capsule (segment p-q, radius) to the shape.
double SignedDistance(const Shape& shape, const Eigen::Vector3d& p, const Eigen::Vector3d& q,
                      double radius);

// Distance from point x to the segment a-b (a == b allowed).
double PointSegmentDistance(const Eigen::Vector3d& x, const Eigen::Vector3d& a,
                            const Eigen::Vector3d& b);

// The closest points of segments p0-p1 and q0-q1: p0 + s (p1 - p0) and q0 + t (q1 - q0), and
// their distance; exact for parallel, collinear and zero-length segments (ties: one of them).
struct SegmentPair {
  double s = 0.0, t = 0.0;  // parameters in [0, 1] on the first and the second segment
  double distance = std::numeric_limits<double>::infinity();
};
SegmentPair ClosestSegmentPair(const Eigen::Vector3d& p0, const Eigen::Vector3d& p1,
                               const Eigen::Vector3d& q0, const Eigen::Vector3d& q1);

// Closest distance between segments p0-p1 and q0-q1; exact for parallel, collinear and
// zero-length segments.
double SegmentSegmentDistance(const Eigen::Vector3d& p0, const Eigen::Vector3d& p1,
                              const Eigen::Vector3d& q0, const Eigen::Vector3d& q1);

// Self-collision of a chain of limbs: limb k is the capsule sites.col(k)-sites.col(k+1) with
// radius radii[k] (radii.size() == sites.cols() - 1). Returns the min clearance over pairs of
// non-adjacent limbs (|i - j| >= 2; adjacent limbs share a joint), +infinity if there is no
// such pair, and optionally the pair (limb_i < limb_j; -1 if none).
double MinSelfClearance(const Eigen::Matrix3Xd& sites, const std::vector<double>& radii,
                        int* limb_i = nullptr, int* limb_j = nullptr);

// Bounding balls of a chain's limbs (as in MinSelfClearance) and of blocks of kBlock
// consecutive limbs. Their gaps are lower bounds of limb-limb clearances, so that pairs that
// cannot come closer than a cutoff skip the exact segment distance: a bent snake of N limbs
// then costs O(N) exact distances instead of O(N^2).
//
//   LimbPairCulling culling;
//   culling.Reset(sites, radii);
//   for (int i = 0; i < limbs; ++i) culling.ForEachNear(i, margin, [&](int j) { ... });
class LimbPairCulling {
 public:
  static constexpr int kBlock = 8;

  // Bounds of this configuration; storage is reused between calls.
  void Reset(const Eigen::Matrix3Xd& sites, const std::vector<double>& radii);

  // Calls visit(j) for the limbs j >= i + 2, in ascending order, whose bound with limb i is
  // below `cutoff`: every j whose clearance to limb i is below it, and maybe others. The
  // cutoff is read before each block and each limb, so a running minimum may tighten it.
  // Only the limbs j in [first, end).
  template <typename Visit>
  void ForEachNear(int i, const double& cutoff, Visit&& visit, int first = 0,
                   int end = std::numeric_limits<int>::max()) const;

  // MinSelfClearance of the configuration given to Reset.
  double MinClearance(const Eigen::Matrix3Xd& sites, int* limb_i = nullptr,
                      int* limb_j = nullptr) const;
  // The same per group of pairs by their separation j - i: group g holds the separations
  // (last[g - 1], last[g]] (the first from 2); out[g] is its least clearance, +infinity where
  // it has no pair.
  void MinClearanceBySeparation(const Eigen::Matrix3Xd& sites, const std::vector<int>& last,
                                double* out) const;

 private:
  // Whether the balls of limbs i and j come closer than `cutoff` (squared: no root).
  bool LimbsNear(int i, int j, double cutoff) const {
    const double reach = cutoff + limb_reach_[i] + limb_reach_[j];
    return reach > 0.0 && (limb_center_.col(i) - limb_center_.col(j)).squaredNorm() < reach * reach;
  }

  int limbs_ = 0, blocks_ = 0;
  std::vector<double> radii_;
  Eigen::Matrix3Xd limb_center_;
  std::vector<double> limb_reach_;  // half length + radius
  Eigen::Matrix3Xd block_center_;
  std::vector<double> block_reach_;
  std::vector<double> block_gap_;  // blocks_ x blocks_, row-major
};

template <typename Visit>
void LimbPairCulling::ForEachNear(int i, const double& cutoff, Visit&& visit, int first,
                                  int end) const {
  const int a = i / kBlock;
  const int stop = std::min(limbs_, end);
  for (int b = std::max(a, first / kBlock); b * kBlock < stop; ++b) {
    if (b > a && block_gap_[a * blocks_ + b] >= cutoff) continue;
    const int last = std::min(stop, (b + 1) * kBlock);
    for (int j = std::max({i + 2, first, b * kBlock}); j < last; ++j) {
      if (LimbsNear(i, j, cutoff)) visit(j);
    }
  }
}

class Scene {
 public:
  static constexpr int kMaxObstacles = 10000;

  Scene() = default;  // empty scene

  // Errors (InvalidArgument naming "obstacles[k]..."): invalid shape, empty or duplicate id,
  // more than kMaxObstacles obstacles. Box orientations and half-space normals are stored
  // normalized.
  static absl::StatusOr<Scene> Create(std::vector<Obstacle> obstacles);

  const std::vector<Obstacle>& obstacles() const { return obstacles_; }
  int size() const { return static_cast<int>(obstacles_.size()); }
  // Index of the obstacle with this id, or -1.
  int Find(const std::string& id) const;

  // InvalidArgument for a bad obstacle or a full scene, AlreadyExists for a duplicate id.
  absl::Status Add(Obstacle obstacle);
  // NotFound for an unknown id.
  absl::Status Remove(const std::string& id);
  // Rigid motion of one obstacle (moving obstacles between steps): every point x of the
  // obstacle goes to rotation * x + translation (world frame; to spin an obstacle about its own
  // center c pass translation = c - rotation * c). NotFound for an unknown id, InvalidArgument
  // for a non-finite translation or a zero / non-finite rotation (normalized on use).
  absl::Status Move(const std::string& id, const Eigen::Vector3d& translation,
                    const Eigen::Quaterniond& rotation = Eigen::Quaterniond::Identity());

  // Min signed distance from the capsule to any obstacle (+infinity for an empty scene);
  // optionally the index of the closest obstacle (-1 for an empty scene). Obstacles whose
  // bounding ball lies `cutoff` or more from the capsule's are skipped: the result is exact
  // when below the cutoff and otherwise only known to be >= it (the default gives the exact
  // minimum everywhere; bounds against the running minimum skip far obstacles either way).
  double MinSignedDistance(const Eigen::Vector3d& p, const Eigen::Vector3d& q, double radius,
                           int* closest = nullptr,
                           double cutoff = std::numeric_limits<double>::infinity()) const;

  // The obstacles (index, signed distance) closer than `cutoff` to the capsule.
  std::vector<std::pair<int, double>> SignedDistancesBelow(const Eigen::Vector3d& p,
                                                           const Eigen::Vector3d& q, double radius,
                                                           double cutoff) const;

 private:
  // Calls visit(k) for every obstacle k whose bounds do not rule out a distance below limit()
  // (asked before each obstacle, so that a running minimum may tighten it).
  template <typename Limit, typename Visit>
  void ForEachWithin(const Eigen::Vector3d& p, const Eigen::Vector3d& q, double radius,
                     Limit&& limit, Visit&& visit) const;

  struct Ball {
    Eigen::Vector3d center = Eigen::Vector3d::Zero();
    double radius = 0.0;  // +infinity: unbounded (half-spaces)
  };
  static Ball BoundingBall(const Shape& shape);

  explicit Scene(std::vector<Obstacle> obstacles);
  std::vector<Obstacle> obstacles_;
  std::vector<Ball> bounds_;  // one per obstacle
};

}  // namespace ikd::planning
