// A chain arm's body for the motion check, against the test's own kinematics: no point of a
// limb travels farther than its sweep bound, and the swept clearance brackets a dense sampling
// of the motion measured with the test's own distances.
#include "ikd/ik/arm_body.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace ikd::ik {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int kFine = 2000;  // sub-steps of the test's own sampling of a motion

Arm PlanarArm() {
  ArmSpec spec;
  spec.planar = true;
  spec.limbs = {{0.5, 0.02}, {0.4, 0.03}, {0.3, 0.01}};
  return *Arm::Create(spec);
}

Arm SpatialArm() {
  ArmSpec spec;
  spec.planar = false;
  spec.limbs = {{0.4, 0.02}, {0.4, 0.02}, {0.3, 0.02}};
  return *Arm::Create(spec);
}

// The test's planar forward kinematics: headings summed from the base's x axis.
Eigen::Matrix3Xd PlanarSites(const Arm& arm, const Eigen::VectorXd& q) {
  Eigen::Matrix3Xd sites = Eigen::Matrix3Xd::Zero(3, arm.num_sites());
  double heading = 0.0;
  for (int k = 0; k < arm.num_limbs(); ++k) {
    heading += q[k];
    sites.col(k + 1) = sites.col(k) + arm.spec().limbs[k].length *
                                          Eigen::Vector3d(std::cos(heading), std::sin(heading), 0);
  }
  return sites;
}

// Points of limb k's capsule surface at sites: along the axis, offset by the radius in the
// plane and out of it.
std::vector<Eigen::Vector3d> SurfacePoints(const Eigen::Matrix3Xd& sites, int k, double radius) {
  const Eigen::Vector3d a = sites.col(k), b = sites.col(k + 1);
  const Eigen::Vector3d u = (b - a).normalized();
  const Eigen::Vector3d w = Eigen::Vector3d::UnitZ().cross(u);
  std::vector<Eigen::Vector3d> points;
  for (double t : {0.0, 0.5, 1.0}) {
    for (const Eigen::Vector3d& offset :
         {Eigen::Vector3d(radius * w), Eigen::Vector3d(-radius * w),
          Eigen::Vector3d(radius * u), Eigen::Vector3d(radius * Eigen::Vector3d::UnitZ())}) {
      points.push_back(a + t * (b - a) + offset);
    }
  }
  return points;
}

TEST(ChainArmBodyTest, PlanarLimbPointsTravelWithinTheirBounds) {
  const Arm arm = PlanarArm();
  const ChainArmBody body(arm);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> angle(-kPi, kPi), move(-0.8, 0.8);
  for (int trial = 0; trial < 50; ++trial) {
    Eigen::VectorXd a(3), b(3);
    for (int j = 0; j < 3; ++j) a[j] = angle(rng), b[j] = a[j] + move(rng);
    Eigen::VectorXd bounds;
    body.SweepBounds(a, b, &bounds);
    for (int k = 0; k < 3; ++k) {
      const double radius = arm.spec().limbs[k].radius;
      std::vector<Eigen::Vector3d> before = SurfacePoints(PlanarSites(arm, a), k, radius);
      std::vector<double> travel(before.size(), 0.0);
      for (int i = 1; i <= kFine; ++i) {
        const Eigen::VectorXd q = a + (b - a) * (static_cast<double>(i) / kFine);
        const std::vector<Eigen::Vector3d> now = SurfacePoints(PlanarSites(arm, q), k, radius);
        for (size_t p = 0; p < now.size(); ++p) travel[p] += (now[p] - before[p]).norm();
        before = now;
      }
      for (double t : travel) EXPECT_LE(t, bounds[k] * (1 + 1e-9)) << trial << " limb " << k;
    }
  }
}

TEST(ChainArmBodyTest, SpatialSitesTravelWithinTheirBounds) {
  // Bends across the whole range, azimuths turning fast: the rotation about a turning axis.
  const Arm arm = SpatialArm();
  const ChainArmBody body(arm);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> bend(0.0, kPi), azimuth(-kPi, kPi), move(-1.0, 1.0);
  for (int trial = 0; trial < 50; ++trial) {
    Eigen::VectorXd a(6), b(6);
    for (int k = 0; k < 3; ++k) {
      a[2 * k] = bend(rng), a[2 * k + 1] = azimuth(rng);
      b[2 * k] = std::clamp(a[2 * k] + 0.5 * move(rng), 0.0, kPi);
      b[2 * k + 1] = a[2 * k + 1] + 2.0 * move(rng);
    }
    Eigen::VectorXd bounds;
    body.SweepBounds(a, b, &bounds);
    auto sites = [&](const Eigen::VectorXd& q) {
      return *arm.SitesFromAngles(std::vector<double>(q.data(), q.data() + q.size()));
    };
    Eigen::Matrix3Xd before = sites(a);
    Eigen::VectorXd travel = Eigen::VectorXd::Zero(arm.num_sites());
    for (int i = 1; i <= kFine; ++i) {
      const Eigen::Matrix3Xd now = sites(a + (b - a) * (static_cast<double>(i) / kFine));
      travel += (now - before).colwise().norm().transpose();
      before = now;
    }
    // Site k + 1 ends limb k: within limb k's bound.
    for (int k = 0; k < 3; ++k) {
      EXPECT_LE(travel[k + 1], bounds[k] * (1 + 1e-9)) << trial << " limb " << k;
    }
  }
}

// Paths that are not straight in the joints (joint j at a_j + (b_j - a_j) t^p_j, the powers
// apart, as a stop brakes each joint on its own schedule): every site and, planar, every
// surface point travels (the test's own sum over a fine sampling) within its limb's
// TravelBounds of the joints' travels |b - a| (site k + 1 ends limb k), so within TravelBound.
TEST(ChainArmBodyTest, PointsTravelWithinTheTravelBoundsOnAnyPath) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> angle(-kPi, kPi), bend(0.2, kPi - 0.2), move(-1.0, 1.0),
      power(0.3, 3.0);
  for (const bool planar : {true, false}) {
    const Arm arm = planar ? PlanarArm() : SpatialArm();
    const ChainArmBody body(arm);
    const int n = arm.num_angles();
    for (int trial = 0; trial < 30; ++trial) {
      Eigen::VectorXd a(n), b(n), p(n);
      for (int j = 0; j < n; ++j) {
        const bool is_bend = !planar && j % 2 == 0;
        a[j] = is_bend ? bend(rng) : angle(rng);
        b[j] = is_bend ? std::clamp(a[j] + 0.5 * move(rng), 0.0, kPi) : a[j] + 2.0 * move(rng);
        p[j] = power(rng);
      }
      auto at = [&](double t) {
        Eigen::VectorXd q(n);
        for (int j = 0; j < n; ++j) q[j] = a[j] + (b[j] - a[j]) * std::pow(t, p[j]);
        return q;
      };
      // (limb, point) pairs: the far site of each limb and, planar, its surface points.
      auto points = [&](const Eigen::VectorXd& q) {
        std::vector<std::pair<int, Eigen::Vector3d>> out;
        const Eigen::Matrix3Xd sites =
            planar ? PlanarSites(arm, q)
                   : *arm.SitesFromAngles(std::vector<double>(q.data(), q.data() + q.size()));
        for (int k = 0; k < arm.num_limbs(); ++k) {
          out.emplace_back(k, sites.col(k + 1));
          if (!planar) continue;
          for (const Eigen::Vector3d& x : SurfacePoints(sites, k, arm.spec().limbs[k].radius)) {
            out.emplace_back(k, x);
          }
        }
        return out;
      };
      Eigen::VectorXd bounds;
      body.TravelBounds((b - a).cwiseAbs(), &bounds);
      ASSERT_EQ(bounds.size(), arm.num_limbs());
      EXPECT_DOUBLE_EQ(body.TravelBound((b - a).cwiseAbs()), bounds.maxCoeff());
      std::vector<std::pair<int, Eigen::Vector3d>> before = points(a);
      std::vector<double> travel(before.size(), 0.0);
      for (int i = 1; i <= kFine; ++i) {
        const auto now = points(at(static_cast<double>(i) / kFine));
        for (size_t k = 0; k < now.size(); ++k) {
          travel[k] += (now[k].second - before[k].second).norm();
        }
        before = now;
      }
      for (size_t k = 0; k < travel.size(); ++k) {
        EXPECT_LE(travel[k], bounds[before[k].first] * (1 + 1e-9))
            << (planar ? "planar " : "spatial ") << trial << " limb " << before[k].first;
      }
    }
  }
}

double PointToSegment(const Eigen::Vector3d& x, const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  const Eigen::Vector3d d = b - a;
  const double t = std::clamp((x - a).dot(d) / d.squaredNorm(), 0.0, 1.0);
  return (a + t * d - x).norm();
}

// Two segments in the plane: 0 where they cross, else the least end-to-segment distance.
double PlanarSegments(const Eigen::Vector3d& a, const Eigen::Vector3d& b, const Eigen::Vector3d& c,
                      const Eigen::Vector3d& d) {
  auto side = [](const Eigen::Vector3d& p, const Eigen::Vector3d& q, const Eigen::Vector3d& r) {
    return (q.x() - p.x()) * (r.y() - p.y()) - (q.y() - p.y()) * (r.x() - p.x());
  };
  if (side(a, b, c) * side(a, b, d) < 0 && side(c, d, a) * side(c, d, b) < 0) return 0.0;
  return std::min({PointToSegment(a, c, d), PointToSegment(b, c, d), PointToSegment(c, a, b),
                   PointToSegment(d, a, b)});
}

// The test's own clearance of a planar configuration: each limb to a ball (centre to segment,
// minus radii), and limb 0 to limb 2 (the only non-adjacent pair of three).
double PlanarClearance(const Arm& arm, const Eigen::VectorXd& q, const Eigen::Vector3d& centre,
                       double rho) {
  const Eigen::Matrix3Xd sites = PlanarSites(arm, q);
  const auto& limbs = arm.spec().limbs;
  double least = PlanarSegments(sites.col(0), sites.col(1), sites.col(2), sites.col(3)) -
                 limbs[0].radius - limbs[2].radius;
  for (int k = 0; k < arm.num_limbs(); ++k) {
    least = std::min(least, PointToSegment(centre, sites.col(k), sites.col(k + 1)) - rho -
                                limbs[k].radius);
  }
  return least;
}

TEST(ChainArmBodyTest, SweptClearanceBracketsADenseSampling) {
  const Arm arm = PlanarArm();
  const ChainArmBody body(arm);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> angle(-kPi, kPi), move(-1.2, 1.2), where(-1.0, 1.0);
  const planning::SweptClearanceOptions options;
  int touching = 0, clear = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const Eigen::Vector3d centre(where(rng), where(rng), 0.0);
    const double rho = 0.05;
    const planning::Scene scene = *planning::Scene::Create({{"ball", planning::Sphere{centre, rho}}});
    Eigen::VectorXd a(3), b(3);
    for (int j = 0; j < 3; ++j) a[j] = angle(rng), b[j] = a[j] + move(rng);
    if (PlanarClearance(arm, a, centre, rho) < 0 || PlanarClearance(arm, b, centre, rho) < 0) continue;
    double sampled = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= kFine; ++i) {
      sampled = std::min(sampled,
                         PlanarClearance(arm, a + (b - a) * (static_cast<double>(i) / kFine), centre, rho));
    }
    const planning::SweptClearance swept = planning::SweptClearanceOf(body, &scene, a, b, options);
    if (sampled < 0.0) {
      ++touching;
      EXPECT_LT(swept.min_clearance, 0.0) << trial;
      continue;
    }
    ++clear;
    EXPECT_LE(swept.min_clearance, sampled + 1e-12) << trial;
    // The dense sampling misses the true least by at most its step's travel (~1e-3 m).
    EXPECT_GE(swept.min_clearance, sampled - options.relative_tolerance * sampled - 2e-3)
        << trial << " evaluations " << swept.evaluations << " at " << swept.at;
  }
  EXPECT_GE(touching, 5);  // both kinds of motion were tried
  EXPECT_GE(clear, 5);
}

// A planar chain of n limbs of `length` and `radius`, limb 0 along x.
Arm LongPlanarArm(int n, double length, double radius) {
  ArmSpec spec;
  spec.planar = true;
  for (int k = 0; k < n; ++k) spec.limbs.push_back({length, radius});
  return *Arm::Create(spec);
}

// The test's own self clearance of a planar chain: every non-adjacent pair, exhaustively.
double PlanarSelfClearance(const Arm& arm, const Eigen::VectorXd& q) {
  const Eigen::Matrix3Xd sites = PlanarSites(arm, q);
  const auto& limbs = arm.spec().limbs;
  double least = std::numeric_limits<double>::infinity();
  for (int i = 0; i < arm.num_limbs(); ++i) {
    for (int j = i + 2; j < arm.num_limbs(); ++j) {
      least = std::min(
          least, PlanarSegments(sites.col(i), sites.col(i + 1), sites.col(j), sites.col(j + 1)) -
                     limbs[i].radius - limbs[j].radius);
    }
  }
  return least;
}

// Self pairs grouped by separation (each group bounded by the joints between its limbs): a
// 24-limb hairpin (10 limbs out, two joints turning about pi in all, the rest back along the
// first ten, one limb length apart) whose legs close in or open up as each joint moves by up to
// 0.04 rad; neighbours in the U and limbs 10-20 apart along the chain come close. The swept self
// clearance brackets the test's own dense sampling of each motion, near contact included (a
// motion that touches is the 3-limb test's).
TEST(ChainArmBodyTest, LongChainSweptSelfClearanceBracketsADenseSampling) {
  const Arm arm = LongPlanarArm(24, 0.05, 0.005);
  const ChainArmBody body(arm);
  ASSERT_GE(body.NumSelfGroups(), 3);  // separations 2..4, 5..8, 9..16, 17..23
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> turn(0.97, 1.05), wobble(-0.01, 0.01), move(-0.04, 0.04);
  const planning::SweptClearanceOptions options;
  constexpr int kSamples = 400;
  int touching = 0, clear = 0, close = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Eigen::VectorXd a(24), b(24);
    const double u = turn(rng) * kPi / 2;
    for (int j = 0; j < 24; ++j) {
      a[j] = (j == 10 || j == 11 ? u : 0.0) + wobble(rng);
      b[j] = a[j] + move(rng);
    }
    if (PlanarSelfClearance(arm, a) < 0 || PlanarSelfClearance(arm, b) < 0) continue;
    double sampled = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= kSamples; ++i) {
      sampled = std::min(sampled, PlanarSelfClearance(arm, a + (b - a) * (i / double(kSamples))));
    }
    const planning::SweptClearance swept = planning::SweptClearanceOf(body, nullptr, a, b, options);
    if (sampled < 0.0) {
      ++touching;
      EXPECT_LT(swept.min_clearance, 0.0) << trial;
      continue;
    }
    ++clear;
    if (sampled < 0.02) ++close;
    EXPECT_LE(swept.min_clearance, sampled + 1e-12) << trial;
    // A sample step moves a point by at most 24 * 0.04 rad * 1.2 m / 400 = 0.3 mm.
    EXPECT_GE(swept.min_clearance, sampled - options.relative_tolerance * sampled - 1e-3)
        << trial << " evaluations " << swept.evaluations;
  }
  EXPECT_GE(clear, 50) << touching;
  EXPECT_GE(close, 10);  // within 2 cm of contact somewhere on the way (4 cm at rest)
}

// Self groups along any path (joint j at a_j + (b_j - a_j) t^p_j, as a stop brakes each joint
// on its own schedule): the clearance of every pair of a 12-limb planar arm (the test's own
// segment distances) changes by at most its group's TravelGroupSweeps of |b - a|.
TEST(ChainArmBodyTest, SelfPairsChangeWithinTheirGroupsTravelSweepOnAnyPath) {
  const Arm arm = LongPlanarArm(12, 0.1, 0.01);
  const ChainArmBody body(arm);
  ASSERT_EQ(body.NumSelfGroups(), 3);  // separations 2..4, 5..8, 9..11
  auto group_of = [](int separation) { return separation <= 4 ? 0 : separation <= 8 ? 1 : 2; };
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> angle(-2.0, 2.0), move(-0.5, 0.5), power(0.3, 3.0);
  constexpr int kSamples = 400;
  for (int trial = 0; trial < 20; ++trial) {
    Eigen::VectorXd a(12), b(12), p(12);
    for (int j = 0; j < 12; ++j) a[j] = angle(rng), b[j] = a[j] + move(rng), p[j] = power(rng);
    auto pairs = [&](const Eigen::VectorXd& q) {
      const Eigen::Matrix3Xd sites = PlanarSites(arm, q);
      Eigen::MatrixXd d = Eigen::MatrixXd::Zero(12, 12);
      for (int i = 0; i < 12; ++i) {
        for (int j = i + 2; j < 12; ++j) {
          d(i, j) = PlanarSegments(sites.col(i), sites.col(i + 1), sites.col(j), sites.col(j + 1));
        }
      }
      return d;
    };
    planning::ArmBody::SelfGroups sweeps;
    Eigen::VectorXd bounds;
    body.TravelBounds((b - a).cwiseAbs(), &bounds);
    body.TravelGroupSweeps((b - a).cwiseAbs(), bounds, &sweeps);
    const Eigen::MatrixXd start = pairs(a);
    Eigen::MatrixXd changed = Eigen::MatrixXd::Zero(12, 12);
    for (int i = 1; i <= kSamples; ++i) {
      Eigen::VectorXd q(12);
      const double t = static_cast<double>(i) / kSamples;
      for (int j = 0; j < 12; ++j) q[j] = a[j] + (b[j] - a[j]) * std::pow(t, p[j]);
      changed = changed.cwiseMax((pairs(q) - start).cwiseAbs());
    }
    for (int i = 0; i < 12; ++i) {
      for (int j = i + 2; j < 12; ++j) {
        EXPECT_LE(changed(i, j), sweeps[group_of(j - i)] * (1 + 1e-9))
            << trial << " pair " << i << ", " << j;
      }
    }
  }
}

// The cost the grouping saves: a 100-limb snake bent into a gentle arc (0.03 rad a joint) whose
// every joint turns by up to 3 mrad (a Track step of the benchmark's snake) is settled from
// its two ends and at most two more configurations, where the two largest link sweeps
// together took 65 (measured with a body without the groups).
TEST(ChainArmBodyTest, ANeighbourlyMotionOfALongChainIsSettledFromFewConfigurations) {
  const Arm arm = LongPlanarArm(100, 0.014, 0.002);
  const ChainArmBody body(arm);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> move(-0.003, 0.003);
  for (int trial = 0; trial < 20; ++trial) {
    Eigen::VectorXd a = Eigen::VectorXd::Constant(100, 0.03), b(100);
    for (int j = 0; j < 100; ++j) b[j] = a[j] + move(rng);
    const planning::SweptClearance swept = planning::SweptClearanceOf(body, nullptr, a, b);
    EXPECT_LE(swept.evaluations, 4) << trial;
    EXPECT_GT(swept.min_clearance, 0.0) << trial;
    EXPECT_LE(swept.min_clearance,
              std::min(PlanarSelfClearance(arm, a), PlanarSelfClearance(arm, b)) + 1e-12);
  }
}

// A planar chain wiggling: its 100 joints turn by +-0.01 rad alternately, so each limb's
// heading turns by 0.01 rad or not at all and the tip moves about 0.5 * 1.4 m * 0.01 = 7 mm;
// the sweep bound of the tip is within twice the test's own largest displacement of a limb
// point (sampled along the motion), where summing |turn| x reach over the joints gave 0.7 m.
TEST(ChainArmBodyTest, APlanarChainsAlternatingTurnsCancelInItsSweepBound) {
  const Arm arm = LongPlanarArm(100, 0.014, 0.002);
  const ChainArmBody body(arm);
  Eigen::VectorXd a = Eigen::VectorXd::Constant(100, 0.02), b = a;
  for (int j = 0; j < 100; ++j) b[j] += j % 2 == 0 ? 0.01 : -0.01;
  Eigen::VectorXd bounds;
  body.SweepBounds(a, b, &bounds);
  double moved = 0.0;  // the tip's farthest excursion from where it started
  const Eigen::Matrix3Xd start = PlanarSites(arm, a);
  for (int i = 1; i <= kFine; ++i) {
    const Eigen::Matrix3Xd sites = PlanarSites(arm, a + (b - a) * (static_cast<double>(i) / kFine));
    moved = std::max(moved, (sites.col(100) - start.col(100)).norm());
  }
  EXPECT_GT(moved, 0.003);
  EXPECT_GE(bounds[99], moved);
  EXPECT_LE(bounds[99], 2.0 * moved);
}

}  // namespace
}  // namespace ikd::ik
