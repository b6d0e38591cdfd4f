#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "ikd/planning/scene.h"
#include "testing/eigen_matchers.h"

namespace ikd::planning {
namespace {

using ::ikd::testing::CompareMatrices;
using ::testing::HasSubstr;
using V = Eigen::Vector3d;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------------------------
// Independent references: point-to-shape signed distances written differently from the library
// (cross-product line distance, clamp-to-box nearest point).

double RefPointSegment(const V& x, const V& a, const V& b) {
  const V d = b - a;
  if (d.squaredNorm() == 0.0) return (x - a).norm();
  const double u = (x - a).dot(d) / d.squaredNorm();
  if (u <= 0.0) return (x - a).norm();
  if (u >= 1.0) return (x - b).norm();
  return (x - a).cross(d).norm() / d.norm();
}

double RefPointBox(const V& x, const Box& box) {
  const V y = box.orientation.normalized().conjugate() * (x - box.center);
  const V h = box.half_extents;
  const V nearest = y.cwiseMax(-h).cwiseMin(h);
  const double outside = (y - nearest).norm();
  if (outside > 0.0) return outside;
  double depth = kInf;  // distance to the nearest face
  for (int i = 0; i < 3; ++i) depth = std::min(depth, h[i] - std::abs(y[i]));
  return -depth;
}

double RefPointShape(const Shape& shape, const V& x) {
  if (const auto* s = std::get_if<Sphere>(&shape)) return (x - s->center).norm() - s->radius;
  if (const auto* c = std::get_if<Capsule>(&shape))
    return RefPointSegment(x, c->a, c->b) - c->radius;
  if (const auto* b = std::get_if<Box>(&shape)) return RefPointBox(x, *b);
  const auto& hs = std::get<HalfSpace>(shape);
  return (hs.normal.dot(x) - hs.offset) / hs.normal.norm();
}

V RandomVector(std::mt19937_64& rng, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  return V(u(rng), u(rng), u(rng));
}

Eigen::Quaterniond RandomRotation(std::mt19937_64& rng) {
  std::normal_distribution<double> n;
  return Eigen::Quaterniond(n(rng), n(rng), n(rng), n(rng)).normalized();
}

Shape RandomShape(std::mt19937_64& rng, int kind) {
  std::uniform_real_distribution<double> size(0.1, 1.5);
  switch (kind) {
    case 0:
      return Sphere{RandomVector(rng, 1.0), size(rng)};
    case 1:
      return Capsule{RandomVector(rng, 1.5), RandomVector(rng, 1.5), 0.5 * size(rng)};
    case 2:
      return Box{RandomVector(rng, 1.0), RandomRotation(rng), V(size(rng), size(rng), size(rng))};
    default:  // deliberately not unit length
      return HalfSpace{RandomVector(rng, 2.0), std::uniform_real_distribution<double>(-1, 1)(rng)};
  }
}

// A box with half extents (1, 2, 3) at c, rotated by Q; Local() maps box-frame points to world,
// so hand-computed box-frame distances hold for the rotated box.
struct RotatedBox {
  V c{0.3, -0.7, 1.1};
  Eigen::Quaterniond Q{Eigen::AngleAxisd(0.9, V(1, -2, 0.5).normalized())};
  Box box{c, Q, V(1, 2, 3)};
  V Local(const V& y) const { return c + Q * y; }
  double Distance(const V& a, const V& b, double r = 0.0) const {
    return SignedDistance(box, Local(a), Local(b), r);
  }
};

// ---------------------------------------------------------------------------------------------
// Analytic cases

// Sphere R = 1 at (1,2,3): a segment 3 above the centre (closest at its midpoint), one ending 3
// from the centre, one through the centre; capsule r = 0.5. Reference: |x - c| - R - r (1e-14).
TEST(SceneTest, SphereAnalytic) {
  const Sphere s{V(1, 2, 3), 1.0};
  const CapsuleApproach above = ClosestApproach(s, V(-1, 2, 6), V(3, 2, 6), 0.5);
  EXPECT_NEAR(above.distance, 1.5, 1e-14);
  EXPECT_NEAR(above.t, 0.5, 1e-14);
  EXPECT_TRUE(CompareMatrices(above.normal, V(0, 0, 1), 1e-14));
  EXPECT_NEAR(SignedDistance(s, V(4, 2, 3), V(7, 2, 3), 0.5), 1.5, 1e-14);
  EXPECT_NEAR(SignedDistance(s, V(-1, 2, 3), V(3, 2, 3), 0.5), -1.5, 1e-14);
}

// Capsule obstacle (axis (0,0,0)-(4,0,0), R = 0.3) and a limb r = 0.2: parallel and overlapping
// at offset 2 -> 2 - 0.5; partly overlapping at offset 1 -> 0.5; collinear with a gap of 2 ->
// 1.5; skew perpendicular 2 apart -> 1.5. Reference: hand geometry (1e-14).
TEST(SceneTest, CapsuleAnalytic) {
  const Capsule c{V(0, 0, 0), V(4, 0, 0), 0.3};
  EXPECT_NEAR(SignedDistance(c, V(1, 2, 0), V(3, 2, 0), 0.2), 1.5, 1e-14);
  EXPECT_NEAR(SignedDistance(c, V(3, 1, 0), V(7, 1, 0), 0.2), 0.5, 1e-14);
  EXPECT_NEAR(SignedDistance(c, V(6, 0, 0), V(8, 0, 0), 0.2), 1.5, 1e-14);
  const CapsuleApproach skew = ClosestApproach(c, V(2, -1, 2), V(2, 1, 2), 0.2);
  EXPECT_NEAR(skew.distance, 1.5, 1e-14);
  EXPECT_NEAR(skew.t, 0.5, 1e-14);
  EXPECT_TRUE(CompareMatrices(skew.normal, V(0, 0, 1), 1e-14));
  // Crossing axes (penetration 0.5): the common normal is the escape direction.
  const CapsuleApproach cross = ClosestApproach(c, V(2, -1, 0), V(2, 1, 0), 0.2);
  EXPECT_NEAR(cross.distance, -0.5, 1e-14);
  EXPECT_NEAR(std::abs(cross.normal.z()), 1.0, 1e-14);
}

// Box (1,2,3), rotated and shifted; segments given in the box frame. Face region: closest
// z = 4 -> 1; parallel to the face at z = 5 -> 2; edge region parallel to the (x=1, y=2) edge
// -> sqrt 2; edge region, interior minimum at x = 2.5, y = 3.5 -> sqrt 4.5; corner region,
// minimum at the midpoint (2,3,4) -> sqrt 3; a segment crossing edge-face-edge regions at y = 3
// -> 1. Reference: hand geometry (1e-13).
TEST(SceneTest, BoxOutsideRegions) {
  const RotatedBox b;
  EXPECT_NEAR(b.Distance(V(-0.5, -1, 5), V(0.5, 1, 4)), 1.0, 1e-13);
  EXPECT_NEAR(b.Distance(V(-0.5, -1, 5), V(0.5, 1, 4), 0.25), 0.75, 1e-13);
  EXPECT_NEAR(b.Distance(V(-0.5, 0, 5), V(0.5, 0, 5)), 2.0, 1e-13);
  EXPECT_NEAR(b.Distance(V(2, 3, -1), V(2, 3, 1)), std::sqrt(2.0), 1e-13);
  const CapsuleApproach edge = ClosestApproach(b.box, b.Local(V(2, 4, 0)), b.Local(V(4, 2, 0)), 0);
  EXPECT_NEAR(edge.distance, std::sqrt(4.5), 1e-13);
  EXPECT_NEAR(edge.t, 0.25, 1e-12);
  EXPECT_TRUE(CompareMatrices(edge.normal, b.Q * V(1, 1, 0).normalized(), 1e-12));
  const CapsuleApproach corner =
      ClosestApproach(b.box, b.Local(V(1.5, 3.5, 4)), b.Local(V(2.5, 2.5, 4)), 0);
  EXPECT_NEAR(corner.distance, std::sqrt(3.0), 1e-13);
  EXPECT_NEAR(corner.t, 0.5, 1e-12);
  EXPECT_TRUE(CompareMatrices(corner.normal, b.Q * V(1, 1, 1).normalized(), 1e-12));
  const CapsuleApproach face = ClosestApproach(b.box, b.Local(V(-3, 3, 0)), b.Local(V(3, 3, 0)), 0);
  EXPECT_NEAR(face.distance, 1.0, 1e-13);
  EXPECT_TRUE(CompareMatrices(face.normal, b.Q * V(0, 1, 0), 1e-13));
}

// Segments piercing the box (1,2,3): along z at x = 0.5 -> depth 0.5 (nearest face x = +1),
// minus r = 0.1 -> -0.6; the diagonal through the centre -> -1; along x at y = 1.5 -> -0.5; in
// z = 0 from (0,-3) to (0.9,3) the max of |x|-1 and |y|-2 is least where they cross, at
// s = 2/6.9 -> -17/23. Reference: hand geometry (1e-13).
TEST(SceneTest, BoxPenetrationDepth) {
  const RotatedBox b;
  const CapsuleApproach pierce =
      ClosestApproach(b.box, b.Local(V(0.5, 0, -10)), b.Local(V(0.5, 0, 10)), 0.1);
  EXPECT_NEAR(pierce.distance, -0.6, 1e-13);
  EXPECT_TRUE(CompareMatrices(pierce.normal, b.Q * V(1, 0, 0), 1e-13));
  EXPECT_NEAR(b.Distance(V(-2, -4, -6), V(2, 4, 6)), -1.0, 1e-13);
  EXPECT_NEAR(b.Distance(V(-5, 1.5, 0), V(5, 1.5, 0)), -0.5, 1e-13);
  const CapsuleApproach kink =
      ClosestApproach(b.box, b.Local(V(0, -3, 0)), b.Local(V(0.9, 3, 0)), 0);
  EXPECT_NEAR(kink.distance, -17.0 / 23.0, 1e-13);
  EXPECT_NEAR(kink.t, 2.0 / 6.9, 1e-12);
  // A point inside (zero-length segment): depth to the nearest face z = 3 is 0.5.
  EXPECT_NEAR(b.Distance(V(0.2, 0.3, 2.5), V(0.2, 0.3, 2.5)), -0.5, 1e-13);
}

// Floor z <= 0: a segment 1 above (closest end) with r = 0.1 -> 0.9; dipping to z = -0.5 ->
// -0.6; tilted non-unit normal (3,0,4), offset 10, i.e. 0.6 x + 0.8 z <= 2: (0,0,5) -> 2.
// Reference: plane distance n.x - offset over |n| (1e-14).
TEST(SceneTest, HalfSpaceAnalytic) {
  const HalfSpace floor{V(0, 0, 1), 0.0};
  const CapsuleApproach above = ClosestApproach(floor, V(0, 0, 1), V(1, 0, 2), 0.1);
  EXPECT_NEAR(above.distance, 0.9, 1e-14);
  EXPECT_EQ(above.t, 0.0);
  EXPECT_TRUE(CompareMatrices(above.normal, V(0, 0, 1), 0.0));
  const CapsuleApproach dip = ClosestApproach(floor, V(0, 0, 1), V(1, 0, -0.5), 0.1);
  EXPECT_NEAR(dip.distance, -0.6, 1e-14);
  EXPECT_EQ(dip.t, 1.0);
  const HalfSpace tilted{V(3, 0, 4), 10.0};
  EXPECT_NEAR(SignedDistance(tilted, V(0, 0, 5), V(5, 0, 5), 0.0), 2.0, 1e-14);
  EXPECT_NEAR(PointSignedDistance(tilted, V(5, 0, 5)), 5.0, 1e-14);
}

// ---------------------------------------------------------------------------------------------
// Brute-force cross-check

// 4001 samples along random segments against random shapes with the independent point
// distances above: the exact minimum is <= every sample (1e-12) and within L / (2 * 4000) of the
// best sample (signed distances are 1-Lipschitz); the reported t attains the value (1e-12).
TEST(SceneTest, MatchesDenseSamplingForRandomShapes) {
  std::mt19937_64 rng(7);
  constexpr int kSamples = 4001;
  int negative = 0, positive = 0;
  for (int kind = 0; kind < 4; ++kind) {
    for (int trial = 0; trial < 150; ++trial) {
      const Shape shape = RandomShape(rng, kind);
      const V p = RandomVector(rng, 2.5);
      const V q = trial % 10 == 0 ? p : V(p + RandomVector(rng, 1.5));
      const double r = 0.1 * (trial % 3);
      const CapsuleApproach exact = ClosestApproach(shape, p, q, r);
      double best_sample = kInf;
      for (int k = 0; k < kSamples; ++k) {
        const double t = static_cast<double>(k) / (kSamples - 1);
        const double sample = RefPointShape(shape, (1 - t) * p + t * q) - r;
        ASSERT_LE(exact.distance, sample + 1e-12) << "kind " << kind << " trial " << trial;
        best_sample = std::min(best_sample, sample);
      }
      const double bound = (q - p).norm() / (2.0 * (kSamples - 1));
      ASSERT_GE(exact.distance, best_sample - bound - 1e-12)
          << "kind " << kind << " trial " << trial;
      ASSERT_NEAR(RefPointShape(shape, (1 - exact.t) * p + exact.t * q) - r, exact.distance, 1e-12);
      (exact.distance < 0 ? negative : positive) += 1;
    }
  }
  EXPECT_GT(negative, 50);  // both clearance and penetration are exercised
  EXPECT_GT(positive, 50);
}

// The reported normal is the gradient: d distance / dp = (1 - t) n, d distance / dq = t n for
// separated capsules (distance to a convex set is C1 outside). Reference: central differences,
// step 1e-6 (tolerance 1e-6).
TEST(SceneTest, NormalIsTheDistanceGradient) {
  std::mt19937_64 rng(11);
  int checked = 0;
  for (int kind = 0; kind < 4; ++kind) {
    for (int trial = 0; trial < 100; ++trial) {
      const Shape shape = RandomShape(rng, kind);
      const V p = RandomVector(rng, 3.0), q = p + RandomVector(rng, 1.5);
      const CapsuleApproach a = ClosestApproach(shape, p, q, 0.05);
      if (a.distance < 0.05) continue;
      ASSERT_NEAR(a.normal.norm(), 1.0, 1e-14);
      constexpr double h = 1e-6;
      for (int i = 0; i < 3; ++i) {
        const V e = h * V::Unit(i);
        const double dp =
            (SignedDistance(shape, p + e, q, 0.05) - SignedDistance(shape, p - e, q, 0.05)) /
            (2 * h);
        const double dq =
            (SignedDistance(shape, p, q + e, 0.05) - SignedDistance(shape, p, q - e, 0.05)) /
            (2 * h);
        ASSERT_NEAR(dp, (1 - a.t) * a.normal[i], 1e-6) << "kind " << kind << " trial " << trial;
        ASSERT_NEAR(dq, a.t * a.normal[i], 1e-6) << "kind " << kind << " trial " << trial;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 150);
}

// ---------------------------------------------------------------------------------------------
// Segment-segment distance (limb-limb self-collision)

// Random segments: 4001 samples on the first against the reference point-segment distance to
// the second bound the exact value as above (1e-12); swapping the segments or reversing either
// one gives the same value (1e-14).
TEST(SceneTest, SegmentSegmentMatchesSamplingAndIsSymmetric) {
  std::mt19937_64 rng(3);
  constexpr int kSamples = 4001;
  for (int trial = 0; trial < 300; ++trial) {
    const V p0 = RandomVector(rng, 1.0), p1 = p0 + RandomVector(rng, 2.0);
    const V q0 = RandomVector(rng, 1.0), q1 = q0 + RandomVector(rng, 2.0);
    const double d = SegmentSegmentDistance(p0, p1, q0, q1);
    double best = kInf;
    for (int k = 0; k < kSamples; ++k) {
      const double s = static_cast<double>(k) / (kSamples - 1);
      const double sample = RefPointSegment((1 - s) * p0 + s * p1, q0, q1);
      ASSERT_LE(d, sample + 1e-12);
      best = std::min(best, sample);
    }
    ASSERT_GE(d, best - (p1 - p0).norm() / (2.0 * (kSamples - 1)) - 1e-12);
    EXPECT_NEAR(SegmentSegmentDistance(q0, q1, p0, p1), d, 1e-14);
    EXPECT_NEAR(SegmentSegmentDistance(p1, p0, q1, q0), d, 1e-14);
    EXPECT_NEAR(SegmentSegmentDistance(q1, q0, p0, p1), d, 1e-14);
  }
}

// Degenerate and parallel cases against hand geometry (1e-15): point-point 5 (3-4-5 triangle),
// point-segment 1 either way round, collinear overlapping 0, collinear gap 2, parallel offset 1
// overlapping, parallel offset 1 with gap 1 -> sqrt 2, and nearly parallel skew segments
// (crossing 1e-6 apart at slope 1e-4, where every endpoint is ~1e-4 away) -> 1e-6 (1e-12).
TEST(SceneTest, SegmentSegmentDegenerateAndParallel) {
  EXPECT_NEAR(SegmentSegmentDistance(V(0, 0, 0), V(0, 0, 0), V(3, 4, 0), V(3, 4, 0)), 5.0, 1e-15);
  EXPECT_NEAR(SegmentSegmentDistance(V(0, 1, 0), V(0, 1, 0), V(-1, 0, 0), V(1, 0, 0)), 1.0, 1e-15);
  EXPECT_NEAR(SegmentSegmentDistance(V(-1, 0, 0), V(1, 0, 0), V(0, 1, 0), V(0, 1, 0)), 1.0, 1e-15);
  EXPECT_NEAR(SegmentSegmentDistance(V(0, 0, 0), V(2, 0, 0), V(1, 0, 0), V(3, 0, 0)), 0.0, 1e-15);
  EXPECT_NEAR(SegmentSegmentDistance(V(0, 0, 0), V(1, 0, 0), V(3, 0, 0), V(5, 0, 0)), 2.0, 1e-15);
  EXPECT_NEAR(SegmentSegmentDistance(V(0, 0, 0), V(2, 0, 0), V(3, 1, 0), V(1, 1, 0)), 1.0, 1e-15);
  EXPECT_NEAR(SegmentSegmentDistance(V(0, 0, 0), V(1, 0, 0), V(2, 0, 1), V(4, 0, 1)),
              std::sqrt(2.0), 1e-15);
  EXPECT_NEAR(SegmentSegmentDistance(V(-1, 0, 0), V(1, 0, 0), V(-1, -1e-4, 1e-6), V(1, 1e-4, 1e-6)),
              1e-6, 1e-12);
}

// A chain along x (unit limbs, radii 0.1): non-adjacent limbs 0 and 2 are 1 apart -> 0.8; a
// folded 3-limb chain whose limb 2 passes 0.05 above limb 0 -> 0.05 - 0.2 = -0.15. Reference:
// hand geometry (1e-14); fewer than 3 limbs -> +inf.
TEST(SceneTest, SelfClearanceOfNonAdjacentLimbs) {
  Eigen::Matrix3Xd straight(3, 5);
  straight << 0, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0;
  int i = -2, j = -2;
  EXPECT_NEAR(MinSelfClearance(straight, {0.1, 0.1, 0.1, 0.1}, &i, &j), 0.8, 1e-14);
  EXPECT_EQ(i, 0);
  EXPECT_EQ(j, 2);
  Eigen::Matrix3Xd folded(3, 4);
  folded << 0, 1, 1, 0.5, 0, 0, 1, -1, 0, 0, 0.05, 0.05;
  EXPECT_NEAR(MinSelfClearance(folded, {0.1, 0.1, 0.1}), -0.15, 1e-14);
  EXPECT_EQ(MinSelfClearance(straight.leftCols(3), {0.1, 0.1}, &i, &j), kInf);
  EXPECT_EQ(i, -1);
}

// Random-walk chains of 3-120 limbs (crumpled, so that far-apart limbs touch): the culled
// MinSelfClearance gives exactly the exhaustive double loop's value and pair, and
// LimbPairCulling::ForEachNear visits, in ascending order, every limb whose clearance is below
// the cutoff.
TEST(SceneTest, CulledSelfClearanceMatchesExhaustiveSearch) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int limbs = 3 + static_cast<int>(rng() % 118);
    Eigen::Matrix3Xd sites(3, limbs + 1);
    sites.col(0).setZero();
    std::vector<double> radii;
    for (int k = 0; k < limbs; ++k) {
      sites.col(k + 1) = sites.col(k) + RandomVector(rng, 0.1);
      radii.push_back(0.01 * static_cast<double>(rng() % 3));
    }
    double best = kInf;
    int best_i = -1, best_j = -1;
    for (int i = 0; i < limbs; ++i) {
      for (int j = i + 2; j < limbs; ++j) {
        const double d =
            SegmentSegmentDistance(sites.col(i), sites.col(i + 1), sites.col(j), sites.col(j + 1)) -
            radii[i] - radii[j];
        if (d < best) best = d, best_i = i, best_j = j;
      }
    }
    int i = -2, j = -2;
    ASSERT_EQ(MinSelfClearance(sites, radii, &i, &j), best);
    EXPECT_EQ(i, best_i);
    EXPECT_EQ(j, best_j);
    LimbPairCulling culling;
    culling.Reset(sites, radii);
    const double cutoff = 0.02;
    for (int a = 0; a < limbs; ++a) {
      std::vector<int> visited;
      culling.ForEachNear(a, cutoff, [&](int b) { visited.push_back(b); });
      ASSERT_TRUE(std::is_sorted(visited.begin(), visited.end()));
      for (int b = a + 2; b < limbs; ++b) {
        const double d =
            SegmentSegmentDistance(sites.col(a), sites.col(a + 1), sites.col(b), sites.col(b + 1)) -
            radii[a] - radii[b];
        if (d < cutoff) {
          EXPECT_NE(std::find(visited.begin(), visited.end(), b), visited.end())
              << "limbs " << a << ", " << b << " at " << d;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Scene

// 30 random obstacles of every kind, moved, added and removed: the bounding-ball culled
// MinSignedDistance equals the minimum over every obstacle's SignedDistance, with the first
// closest index; with a cutoff it is that minimum when below the cutoff and >= it otherwise;
// SignedDistancesBelow lists exactly the obstacles nearer than the cutoff.
TEST(SceneTest, CulledMinSignedDistanceMatchesExhaustiveSearch) {
  std::mt19937_64 rng(13);
  std::vector<Obstacle> obstacles;
  for (int k = 0; k < 30; ++k) {
    obstacles.push_back({"o" + std::to_string(k), RandomShape(rng, k % 7 == 6 ? 3 : k % 3)});
  }
  auto scene = Scene::Create(obstacles);
  ASSERT_TRUE(scene.ok()) << scene.status();
  ASSERT_TRUE(scene->Move("o4", RandomVector(rng, 1.0), RandomRotation(rng)).ok());
  ASSERT_TRUE(scene->Remove("o7").ok());
  ASSERT_TRUE(scene->Add({"late", Sphere{RandomVector(rng, 1.0), 0.2}}).ok());
  for (int trial = 0; trial < 2000; ++trial) {
    const V p = RandomVector(rng, 3.0), q = p + RandomVector(rng, 0.5);
    const double radius = 0.05;
    double best = kInf;
    int best_k = -1;
    for (int k = 0; k < scene->size(); ++k) {
      const double d = SignedDistance(scene->obstacles()[k].shape, p, q, radius);
      if (d < best) best = d, best_k = k;
    }
    int closest = -2;
    ASSERT_EQ(scene->MinSignedDistance(p, q, radius, &closest), best);
    EXPECT_EQ(closest, best_k);
    const double cutoff = 0.3;
    const double culled = scene->MinSignedDistance(p, q, radius, &closest, cutoff);
    if (best < cutoff) {
      EXPECT_EQ(culled, best);
      EXPECT_EQ(closest, best_k);
    } else {
      EXPECT_GE(culled, cutoff);
    }
    // Every obstacle below the cutoff, in index order with its exact distance, and no other.
    std::vector<std::pair<int, double>> below;
    for (int k = 0; k < scene->size(); ++k) {
      const double d = SignedDistance(scene->obstacles()[k].shape, p, q, radius);
      if (d < cutoff) below.emplace_back(k, d);
    }
    EXPECT_EQ(scene->SignedDistancesBelow(p, q, radius, cutoff), below) << "trial " << trial;
  }
}

// Moving an obstacle by x -> R x + t is the same as moving the limb by the inverse motion:
// distance(moved shape, p, q) == distance(shape, R^T (p - t), R^T (q - t)) for every shape kind,
// over three composed moves (1e-12).
TEST(SceneTest, MoveIsARigidMotion) {
  std::mt19937_64 rng(5);
  std::vector<Obstacle> obstacles;
  for (int kind = 0; kind < 4; ++kind)
    obstacles.push_back({"o" + std::to_string(kind), RandomShape(rng, kind)});
  const std::vector<Obstacle> original = obstacles;
  auto scene = Scene::Create(obstacles);
  ASSERT_TRUE(scene.ok()) << scene.status();
  Eigen::Quaterniond total_R = Eigen::Quaterniond::Identity();
  V total_t = V::Zero();
  for (int move = 0; move < 3; ++move) {
    const Eigen::Quaterniond R = RandomRotation(rng);
    const V t = RandomVector(rng, 2.0);
    for (const Obstacle& o : original) ASSERT_TRUE(scene->Move(o.id, t, R).ok());
    total_R = R * total_R;
    total_t = R * total_t + t;
    for (int trial = 0; trial < 50; ++trial) {
      const V p = RandomVector(rng, 3.0), q = p + RandomVector(rng, 1.5);
      const V p_back = total_R.conjugate() * (p - total_t),
              q_back = total_R.conjugate() * (q - total_t);
      for (int k = 0; k < 4; ++k) {
        ASSERT_NEAR(SignedDistance(scene->obstacles()[k].shape, p, q, 0.1),
                    SignedDistance(original[k].shape, p_back, q_back, 0.1), 1e-12)
            << "kind " << k << " move " << move;
      }
    }
  }
}

// Hand-transformed shapes: a unit sphere at the origin moved by (3,0,0) is 2 - 1 = 1 from the
// segment (3,0,2)-(4,0,2); the floor z <= 0 rotated +90 deg about x and lifted by (0,1,0) is
// y >= 1, so (0,-1,0) is 2 away; a box spun about its own centre keeps its centre. (1e-14)
TEST(SceneTest, MoveAnalytic) {
  auto scene =
      Scene::Create({{"ball", Sphere{V::Zero(), 1.0}},
                     {"floor", HalfSpace{V(0, 0, 1), 0.0}},
                     {"crate", Box{V(1, 2, 3), Eigen::Quaterniond::Identity(), V(1, 1, 1)}}});
  ASSERT_TRUE(scene.ok()) << scene.status();
  ASSERT_TRUE(scene->Move("ball", V(3, 0, 0)).ok());
  EXPECT_NEAR(SignedDistance(scene->obstacles()[0].shape, V(3, 0, 2), V(4, 0, 2), 0.0), 1.0, 1e-14);
  const Eigen::Quaterniond quarter(Eigen::AngleAxisd(std::numbers::pi / 2, V::UnitX()));
  ASSERT_TRUE(scene->Move("floor", V(0, 1, 0), quarter).ok());
  EXPECT_NEAR(PointSignedDistance(scene->obstacles()[1].shape, V(0, -1, 0)), 2.0, 1e-14);
  EXPECT_NEAR(PointSignedDistance(scene->obstacles()[1].shape, V(5, 1, -7)), 0.0, 1e-14);
  const V c(1, 2, 3);
  ASSERT_TRUE(scene->Move("crate", c - quarter * c, quarter).ok());
  EXPECT_TRUE(CompareMatrices(std::get<Box>(scene->obstacles()[2].shape).center, c, 1e-14));
}

// Min over obstacles and the index of the closest: sphere 3 away vs floor 1 away -> 1 from
// index 1; an empty scene -> +inf and index -1 (exact).
TEST(SceneTest, MinSignedDistanceAndClosest) {
  auto scene =
      Scene::Create({{"ball", Sphere{V(0, 0, 6), 1.0}}, {"floor", HalfSpace{V(0, 0, 1), 0.0}}});
  ASSERT_TRUE(scene.ok());
  int closest = -2;
  EXPECT_NEAR(scene->MinSignedDistance(V(0, 0, 2), V(1, 0, 2), 1.0, &closest), 1.0, 1e-15);
  EXPECT_EQ(closest, 1);
  EXPECT_NEAR(scene->MinSignedDistance(V(0, 0, 4), V(0, 0, 4.5), 0.0, &closest), 0.5, 1e-15);
  EXPECT_EQ(closest, 0);
  const Scene empty;
  EXPECT_EQ(empty.MinSignedDistance(V::Zero(), V::UnitX(), 0.1, &closest), kInf);
  EXPECT_EQ(closest, -1);
}

// Add / Remove / Move bookkeeping: duplicate id -> AlreadyExists, unknown id -> NotFound,
// removal drops exactly that obstacle and frees its id.
TEST(SceneTest, AddRemoveErrors) {
  auto scene = Scene::Create({{"a", Sphere{V::Zero(), 1.0}}});
  ASSERT_TRUE(scene.ok());
  EXPECT_TRUE(scene->Add({"b", HalfSpace{}}).ok());
  const absl::Status dup = scene->Add({"a", Sphere{V::Ones(), 1.0}});
  EXPECT_EQ(dup.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(dup.message(), HasSubstr("\"a\""));
  EXPECT_EQ(scene->size(), 2);
  EXPECT_EQ(scene->Remove("zz").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(scene->Move("zz", V::Zero()).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(scene->Remove("a").ok());
  EXPECT_EQ(scene->size(), 1);
  EXPECT_EQ(scene->obstacles()[0].id, "b");
  EXPECT_EQ(scene->Find("a"), -1);
  EXPECT_TRUE(scene->Add({"a", Sphere{V::Ones(), 1.0}}).ok());
  EXPECT_EQ(scene->Find("a"), 1);
}

// Every validation error names its field and bound (InvalidArgument).
TEST(SceneTest, ValidationErrorsNameTheField) {
  const Eigen::Quaterniond zero_q(0, 0, 0, 0);
  struct Case {
    Shape shape;
    std::string message;
  };
  const std::vector<Case> cases = {
      {Sphere{V::Zero(), -1.0}, "obstacles[2].radius must be finite and in [0, 1e+06] m, got -1"},
      {Sphere{V(kNan, 0, 0), 1.0},
       "obstacles[2].center must be finite and within 1e+06 m of the origin in every coordinate, "
       "got (nan, 0, 0)"},
      {Sphere{V(0, 0, -2e6), 1.0}, "obstacles[2].center must be finite and within 1e+06 m"},
      {Sphere{V::Zero(), 1e7}, "obstacles[2].radius must be finite and in [0, 1e+06] m"},
      {Capsule{V::Zero(), V(0, kInf, 0), 1.0}, "obstacles[2].b must be finite"},
      {Capsule{V(kNan, 0, 0), V::Zero(), 1.0}, "obstacles[2].a must be finite"},
      {Capsule{V::Zero(), V::Ones(), kNan}, "obstacles[2].radius must be finite and in [0, "},
      {Capsule{V::Zero(), V(3e6, 0, 0), 1.0}, "obstacles[2].b must be finite and within 1e+06 m"},
      {Box{V(kInf, 0, 0), Eigen::Quaterniond::Identity(), V::Ones()}, "obstacles[2].center"},
      {Box{V::Zero(), zero_q, V::Ones()}, "obstacles[2].orientation must be a finite quaternion"},
      {Box{V::Zero(), Eigen::Quaterniond(kNan, 0, 0, 0), V::Ones()}, "obstacles[2].orientation"},
      {Box{V::Zero(), Eigen::Quaterniond::Identity(), V(1, -1, 2)},
       "obstacles[2].half_extents must be finite and in [0, 1e+06] m, got (1, -1, 2)"},
      {Box{V::Zero(), Eigen::Quaterniond::Identity(), V(1, 1, 1e300)},
       "obstacles[2].half_extents must be finite and in [0, 1e+06] m"},
      {HalfSpace{V::Zero(), 0.0}, "obstacles[2].normal must be finite with norm >= 1e-09"},
      {HalfSpace{V(0, kNan, 1), 0.0}, "obstacles[2].normal"},
      {HalfSpace{V::UnitZ(), kInf},
       "obstacles[2].offset must be finite with |offset| / |normal| <= 1e+06 m, got inf"},
      {HalfSpace{V::UnitZ(), -2e6}, "obstacles[2].offset must be finite with |offset| / |normal|"},
      {HalfSpace{V(0, 0, 1e-6), 2.0},
       "obstacles[2].offset must be finite with |offset| / |normal|"},
  };
  for (const Case& c : cases) {
    const absl::Status direct = ValidateShape(c.shape, "obstacles[2]");
    EXPECT_EQ(direct.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(direct.message(), HasSubstr(c.message));
    auto created = Scene::Create({{"x", Sphere{V::Zero(), 1}}, {"y", HalfSpace{}}, {"z", c.shape}});
    EXPECT_THAT(created.status().message(), HasSubstr(c.message));
    Scene scene = *Scene::Create({{"x", Sphere{}}, {"y", Sphere{}}});
    EXPECT_THAT(scene.Add({"z", c.shape}).message(), HasSubstr(c.message));
    EXPECT_EQ(scene.size(), 2);
  }
  EXPECT_THAT(Scene::Create({{"a", Sphere{}}, {"", Sphere{}}}).status().message(),
              HasSubstr("obstacles[1].id must be non-empty"));
  const auto dup = Scene::Create({{"a", Sphere{}}, {"a", HalfSpace{}}});
  EXPECT_EQ(dup.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(dup.status().message(),
              HasSubstr("obstacles[1].id \"a\" duplicates obstacles[0].id"));
  std::vector<Obstacle> many;
  for (int k = 0; k <= Scene::kMaxObstacles; ++k) many.push_back({std::to_string(k), Sphere{}});
  EXPECT_THAT(Scene::Create(many).status().message(), HasSubstr("at most 10000"));
  many.pop_back();
  Scene full = *Scene::Create(many);
  EXPECT_THAT(full.Add({"extra", Sphere{}}).message(), HasSubstr("at most 10000"));
  EXPECT_THAT(full.Move("0", V(kNan, 0, 0)).message(), HasSubstr("translation must be finite"));
  EXPECT_THAT(full.Move("0", V::Zero(), zero_q).message(),
              HasSubstr("rotation must be a finite quaternion"));
}

// Moves add up, so each one is checked where it leaves the obstacle: the second 0.6e6 m move
// would put the sphere 1.2e6 m out, beyond the world (ikd/world.h), and is refused whole.
TEST(SceneTest, MoveOutOfTheWorldIsRefusedAndKeepsTheObstacle) {
  Scene scene = *Scene::Create({{"s", Sphere{V(0.5, 0, 0), 0.1}}});
  ASSERT_TRUE(scene.Move("s", V(6e5, 0, 0)).ok());
  const absl::Status second = scene.Move("s", V(6e5, 0, 0));
  EXPECT_EQ(second.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(second.message(),
              HasSubstr("obstacle \"s\" moved.center must be finite and within 1e+06 m"));
  EXPECT_EQ(std::get<Sphere>(scene.obstacles()[0].shape).center, V(6e5 + 0.5, 0, 0));
}

// Create stores unit normals and orientations describing the same solid: the floor given as
// (0,0,2), offset 2 (z <= 1) is 1 below the point (0,0,2) (1e-15).
TEST(SceneTest, CreateNormalizes) {
  auto scene = Scene::Create({{"f", HalfSpace{V(0, 0, 2), 2.0}},
                              {"b", Box{V::Zero(), Eigen::Quaterniond(2, 0, 0, 0), V::Ones()}}});
  ASSERT_TRUE(scene.ok());
  const auto& floor = std::get<HalfSpace>(scene->obstacles()[0].shape);
  EXPECT_NEAR(floor.normal.norm(), 1.0, 1e-15);
  EXPECT_NEAR(PointSignedDistance(floor, V(0, 0, 2)), 1.0, 1e-15);
  EXPECT_NEAR(std::get<Box>(scene->obstacles()[1].shape).orientation.norm(), 1.0, 1e-15);
}

}  // namespace
}  // namespace ikd::planning
