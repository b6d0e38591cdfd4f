// An industrial arm's body for the motion check: its links are the joint-origin capsules, and
// no point of a link travels farther than its sweep bound (measured from the arm's link poses,
// not from the capsules the body builds).
#include "ikd/robot/robot_body.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ikd/robot/link_geometry.h"
#include "ikd/robot/presets.h"
#include "ikd/robot/self_collision.h"
#include "solver/robot/own_capsule_distances.h"

namespace ikd::robot {
namespace {

constexpr int kFine = 1000;

// The test's own distance between segments p0-p1 and q0-q1: the stationary point of the two
// lines where it lies inside both, else the least of the four end points against the other
// segment (one of them holds the minimum when the stationary point is outside).
double OwnSegmentDistance(const Eigen::Vector3d& p0, const Eigen::Vector3d& p1,
                          const Eigen::Vector3d& q0, const Eigen::Vector3d& q1) {
  const auto point_to = test::DistanceToSegment;
  double best = std::min(
      {point_to(p0, q0, q1), point_to(p1, q0, q1), point_to(q0, p0, p1), point_to(q1, p0, p1)});
  const Eigen::Vector3d u = p1 - p0, v = q1 - q0, w = p0 - q0;
  const double uu = u.dot(u), uv = u.dot(v), vv = v.dot(v), uw = u.dot(w), vw = v.dot(w);
  const double det = uu * vv - uv * uv;
  if (det > 1e-14 * uu * vv) {
    const double s = (uv * vw - vv * uw) / det, t = (uu * vw - uv * uw) / det;
    if (s > 0 && s < 1 && t > 0 && t < 1) best = std::min(best, (w + s * u - t * v).norm());
  }
  return best;
}

// Signed clearance of links a and b of `spec` at q: the least over their capsules, placed by
// the link poses and the shapes as given.
double OwnPairClearance(const ChainSpec& spec, const Eigen::VectorXd& q, int a, int b) {
  const std::vector<Eigen::Isometry3d> poses = LinkPoses(spec, q);
  double least = INFINITY;
  for (const LinkShape& x : spec.link_shapes[a]) {
    for (const LinkShape& y : spec.link_shapes[b]) {
      least = std::min(least, OwnSegmentDistance(poses[a] * x.a, poses[a] * x.b, poses[b] * y.a,
                                                 poses[b] * y.b) -
                                  x.radius - y.radius);
    }
  }
  return least;
}

TEST(RobotBodyTest, LinksAreTheJointOriginCapsules) {
  ChainSpec spec = presets::Ur5();
  spec.link_radii.assign(NumMovingJoints(spec), 0.05);
  const Robot robot = *Robot::Create(spec);
  const RobotBody body(robot);
  const Eigen::VectorXd q = Eigen::VectorXd::LinSpaced(6, -1.0, 1.5);
  std::vector<planning::Capsule> links;
  body.Links(q, &links);
  ASSERT_EQ(static_cast<int>(links.size()), body.num_links());
  const std::vector<Eigen::Isometry3d> poses = LinkPoses(robot.spec(), q);
  for (int k = 0; k + 1 < body.num_links(); ++k) {
    EXPECT_LT((links[k].a - poses[k].translation()).norm(), 1e-12);
    EXPECT_LT((links[k].b - links[k + 1].a).norm(), 1e-12);
    EXPECT_EQ(links[k].radius, 0.05);
  }
  EXPECT_LT((links.back().b - ToolPose(robot.spec(), q).translation()).norm(), 1e-12);
}

TEST(RobotBodyTest, LinkPointsTravelWithinTheirBounds) {
  for (const ChainSpec& spec : {presets::Ur5(), presets::Panda(), presets::Iiwa14()}) {
    const Robot robot = *Robot::Create(spec);
    const RobotBody body(robot);
    const int n = robot.num_joints();
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> angle(-3.0, 3.0), move(-0.7, 0.7);
    for (int trial = 0; trial < 20; ++trial) {
      Eigen::VectorXd a(n), b(n);
      for (int j = 0; j < n; ++j) a[j] = angle(rng), b[j] = a[j] + move(rng);
      Eigen::VectorXd bounds;
      body.SweepBounds(a, b, &bounds);
      ASSERT_EQ(bounds.size(), body.num_links());
      // Each link's origin (its pose) and the tool centre point, the ends of the capsules.
      auto ends = [&](const Eigen::VectorXd& q) {
        std::vector<Eigen::Vector3d> points;
        for (const Eigen::Isometry3d& X : LinkPoses(robot.spec(), q)) points.push_back(X.translation());
        points.push_back(ToolPose(robot.spec(), q).translation());
        return points;
      };
      std::vector<Eigen::Vector3d> before = ends(a);
      std::vector<double> travel(before.size(), 0.0);
      for (int i = 1; i <= kFine; ++i) {
        const std::vector<Eigen::Vector3d> now = ends(a + (b - a) * (static_cast<double>(i) / kFine));
        for (size_t p = 0; p < now.size(); ++p) travel[p] += (now[p] - before[p]).norm();
        before = now;
      }
      // Point p + 1 ends link p; point p starts it.
      for (int k = 0; k < body.num_links(); ++k) {
        EXPECT_LE(travel[k], bounds[k] * (1 + 1e-9)) << spec.name << " " << trial << " link " << k;
        EXPECT_LE(travel[k + 1], bounds[k] * (1 + 1e-9)) << spec.name << " " << trial << " link " << k;
      }
    }
  }
}

// A path that is not straight in the joints (joint j at a_j + (b_j - a_j) t^p_j, as a stop
// brakes each joint on its own schedule): every link origin and the tool centre point travel
// (the test's own sum over a fine sampling of the link poses) within TravelBound of |b - a|.
TEST(RobotBodyTest, PointsTravelWithinTheTravelBoundOnAnyPath) {
  for (const ChainSpec& spec : {presets::Ur5(), presets::Panda(), presets::Iiwa14()}) {
    const Robot robot = *Robot::Create(spec);
    const RobotBody body(robot);
    const int n = robot.num_joints();
    std::mt19937 rng(9);
    std::uniform_real_distribution<double> angle(-3.0, 3.0), move(-0.7, 0.7), power(0.3, 3.0);
    for (int trial = 0; trial < 20; ++trial) {
      Eigen::VectorXd a(n), b(n), p(n);
      for (int j = 0; j < n; ++j) a[j] = angle(rng), b[j] = a[j] + move(rng), p[j] = power(rng);
      auto ends = [&](double t) {
        Eigen::VectorXd q(n);
        for (int j = 0; j < n; ++j) q[j] = a[j] + (b[j] - a[j]) * std::pow(t, p[j]);
        std::vector<Eigen::Vector3d> points;
        for (const Eigen::Isometry3d& X : LinkPoses(robot.spec(), q))
          points.push_back(X.translation());
        points.push_back(ToolPose(robot.spec(), q).translation());
        return points;
      };
      const double bound = body.TravelBound((b - a).cwiseAbs());
      std::vector<Eigen::Vector3d> before = ends(0.0);
      std::vector<double> travel(before.size(), 0.0);
      for (int i = 1; i <= kFine; ++i) {
        const std::vector<Eigen::Vector3d> now = ends(static_cast<double>(i) / kFine);
        for (size_t k = 0; k < now.size(); ++k) travel[k] += (now[k] - before[k]).norm();
        before = now;
      }
      for (double t : travel) EXPECT_LE(t, bound * (1 + 1e-9)) << spec.name << " " << trial;
    }
  }
}

// Links with shapes of their own (capsules off the joint axes, as a URDF's <collision> gives
// them): every point of every capsule, its ends and points on its surface, stays within the
// capsule's bound (positions from the link poses and the shapes as given, not from the body):
// SweepBounds on the straight motion, TravelBounds of |b - a| on one that is not (joint j at
// a_j + (b_j - a_j) t^p_j).
TEST(RobotBodyTest, PointsOfLinkShapesTravelWithinTheirBounds) {
  ChainSpec spec = presets::Ur5();
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> offset(-0.15, 0.15), radius(0.0, 0.06);
  spec.link_shapes.resize(6);
  for (auto& shapes : spec.link_shapes) {
    for (int i = 0; i < 2; ++i) {
      shapes.push_back({Eigen::Vector3d(offset(rng), offset(rng), offset(rng)),
                        Eigen::Vector3d(offset(rng), offset(rng), offset(rng)), radius(rng)});
    }
  }
  const Robot robot = *Robot::Create(spec);
  const RobotBody body(robot);
  ASSERT_EQ(body.num_links(), 12);
  // Points of each capsule in its link frame: both ends, and each end pushed out by the radius
  // along the six axis directions.
  std::vector<std::pair<int, Eigen::Vector3d>> points;  // (capsule, point in its link frame)
  for (int k = 0, c = 0; k < 6; ++k) {
    for (const LinkShape& shape : spec.link_shapes[k]) {
      for (const Eigen::Vector3d& end : {shape.a, shape.b}) {
        points.emplace_back(c, end);
        for (int axis = 0; axis < 6; ++axis) {
          points.emplace_back(
              c, end + (axis < 3 ? 1 : -1) * shape.radius * Eigen::Vector3d::Unit(axis % 3));
        }
      }
      ++c;
    }
  }
  auto link_of = [&](int capsule) { return capsule / 2; };
  std::uniform_real_distribution<double> angle(-3.0, 3.0), move(-0.7, 0.7), power(0.3, 3.0);
  for (int trial = 0; trial < 10; ++trial) {
    for (const bool straight : {true, false}) {
      Eigen::VectorXd a(6), b(6), pw = Eigen::VectorXd::Ones(6);
      for (int j = 0; j < 6; ++j) a[j] = angle(rng), b[j] = a[j] + move(rng);
      for (int j = 0; !straight && j < 6; ++j) pw[j] = power(rng);
      auto at = [&](double t) {
        Eigen::VectorXd q(6);
        for (int j = 0; j < 6; ++j) q[j] = a[j] + (b[j] - a[j]) * std::pow(t, pw[j]);
        return q;
      };
      Eigen::VectorXd bounds;
      if (straight) {
        body.SweepBounds(a, b, &bounds);
      } else {
        body.TravelBounds((b - a).cwiseAbs(), &bounds);
      }
      std::vector<double> travel(points.size(), 0.0);
      std::vector<Eigen::Isometry3d> before = LinkPoses(robot.spec(), a);
      for (int i = 1; i <= kFine; ++i) {
        const std::vector<Eigen::Isometry3d> now =
            LinkPoses(robot.spec(), at(static_cast<double>(i) / kFine));
        for (size_t p = 0; p < points.size(); ++p) {
          const int k = link_of(points[p].first);
          travel[p] += (now[k] * points[p].second - before[k] * points[p].second).norm();
        }
        before = now;
      }
      for (size_t p = 0; p < points.size(); ++p) {
        EXPECT_LE(travel[p], bounds[points[p].first] * (1 + 1e-9))
            << trial << (straight ? " straight" : " not straight") << " point " << p;
      }
    }
  }
}

// The self pairs' groups (one checked pair a group on these arms): along a straight joint
// motion (GroupSweeps) each pair's clearance (the test's own, from the link poses and the shapes)
// changes between two fine samples by at most its group's sweep times the samples' share of the
// motion; the groups' clearances are the pairs'. A motion of the first joint alone moves no
// link against another: every pair's sweep is 0 (where the two links' own sweeps are not).
TEST(RobotBodyTest, SelfPairsChangeWithinTheirGroupSweeps) {
  for (const ChainSpec& spec :
       {presets::Ur5WithBody(), presets::PandaWithBody(), presets::Iiwa14WithBody()}) {
    const Robot robot = *Robot::Create(spec);
    const RobotBody body(robot);
    const auto& pairs = SelfCollisionMatrixOf(robot).checked();
    ASSERT_FALSE(pairs.empty()) << spec.name;
    ASSERT_EQ(body.NumSelfGroups(), static_cast<int>(pairs.size())) << spec.name;
    const int n = robot.num_joints();
    std::mt19937 rng(13);
    std::uniform_real_distribution<double> unit(0.0, 1.0), move(-0.5, 0.5);
    int checked_steps = 0;
    for (int trial = 0; trial < 12; ++trial) {
      Eigen::VectorXd a(n), b(n);
      for (int j = 0; j < n; ++j) {
        const JointLimits& limits = *spec.joints[j].limits;
        a[j] = limits.lower + unit(rng) * (limits.upper - limits.lower);
        b[j] = a[j] + (trial % 4 == 0 && j > 0 ? 0.0 : move(rng));
      }
      Eigen::VectorXd bounds;
      body.SweepBounds(a, b, &bounds);
      planning::ArmBody::SelfGroups sweeps, groups;
      body.GroupSweeps(a, b, bounds, &sweeps);
      std::vector<planning::Capsule> links;
      body.Links(a, &links);
      body.SelfClearanceGroups(links, &groups);
      for (size_t p = 0; p < pairs.size(); ++p) {
        const auto [la, lb] = pairs[p];
        EXPECT_NEAR(groups[p], OwnPairClearance(spec, a, la, lb), 1e-12) << spec.name;
        if (trial % 4 == 0) {
          EXPECT_EQ(sweeps[p], 0.0) << spec.name << " pair " << p;
        }
        double before = OwnPairClearance(spec, a, la, lb);
        for (int i = 1; i <= 200; ++i) {
          const double now = OwnPairClearance(spec, a + (b - a) * (i / 200.0), la, lb);
          EXPECT_LE(std::abs(now - before), sweeps[p] / 200.0 * (1 + 1e-9) + 1e-12)
              << spec.name << " trial " << trial << " pair " << la << "-" << lb << " step " << i;
          before = now;
          ++checked_steps;
        }
      }
      // Along a path that is not straight (joint j at a_j + (b_j - a_j) t^w_j, each joint on
      // its own schedule, as a stop brakes them) the clearance's whole variation stays within
      // TravelGroupSweeps of the joints' travel.
      Eigen::VectorXd w(n), travel_bounds;
      for (int j = 0; j < n; ++j) w[j] = 0.3 + 2.7 * unit(rng);
      body.TravelBounds((b - a).cwiseAbs(), &travel_bounds);
      body.TravelGroupSweeps((b - a).cwiseAbs(), travel_bounds, &sweeps);
      for (size_t p = 0; p < pairs.size(); ++p) {
        const auto [la, lb] = pairs[p];
        double before = OwnPairClearance(spec, a, la, lb), variation = 0.0;
        for (int i = 1; i <= 200; ++i) {
          Eigen::VectorXd q(n);
          for (int j = 0; j < n; ++j) q[j] = a[j] + (b[j] - a[j]) * std::pow(i / 200.0, w[j]);
          const double now = OwnPairClearance(spec, q, la, lb);
          variation += std::abs(now - before);
          before = now;
        }
        EXPECT_LE(variation, sweeps[p] * (1 + 1e-9) + 1e-12)
            << spec.name << " trial " << trial << " pair " << la << "-" << lb;
      }
    }
    EXPECT_GT(checked_steps, 1000);
  }
}

}  // namespace
}  // namespace ikd::robot
