// Link collision geometry: the capsule covers hold every point of the shape they cover
// (sampled on its surface and measured with the test's own point-segment distance) and reach
// no farther beyond it than they say; link capsules follow their link's pose; link pair and
// scene clearances are the least over the capsules; the spec's shapes are validated by field.
#include "ikd/robot/link_geometry.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ikd/robot/presets.h"
#include "solver/robot/own_capsule_distances.h"

namespace ikd::robot {
namespace {

using ::testing::HasSubstr;
constexpr double kPi = 3.14159265358979323846;

using test::DistanceToSegment;

// How far x lies outside the cover (<= 0: inside some capsule).
double OutsideCover(const CapsuleCover& cover, const Eigen::Vector3d& x) {
  double least = INFINITY;
  for (const LinkShape& c : cover.capsules) {
    least = std::min(least, DistanceToSegment(x, c.a, c.b) - c.radius);
  }
  return least;
}

Eigen::Isometry3d SomePlacement() {
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  X.linear() = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  X.translation() = Eigen::Vector3d(0.1, -0.2, 0.3);
  return X;
}

TEST(LinkGeometryTest, SphereIsCoveredExactly) {
  const CapsuleCover cover = CoverSphere(SomePlacement(), 0.05);
  ASSERT_EQ(cover.capsules.size(), 1u);
  EXPECT_EQ(cover.overshoot, 0.0);
  std::mt19937 rng(1);
  std::normal_distribution<double> n;
  for (int i = 0; i < 200; ++i) {
    const Eigen::Vector3d u = Eigen::Vector3d(n(rng), n(rng), n(rng)).normalized();
    EXPECT_LE(OutsideCover(cover, SomePlacement().translation() + 0.05 * u), 1e-12);
  }
}

TEST(LinkGeometryTest, CylinderRimAndFacesAreInsideAndTheEndsReachTheRadiusBeyond) {
  const Eigen::Isometry3d X = SomePlacement();
  const double r = 0.04, length = 0.3;
  const CapsuleCover cover = CoverCylinder(X, r, length);
  for (int i = 0; i <= 36; ++i) {
    const double phi = 2 * kPi * i / 36;
    for (double z : {-length / 2, -0.05, 0.0, length / 2}) {
      for (double rho : {0.0, r / 2, r}) {
        const Eigen::Vector3d p(rho * std::cos(phi), rho * std::sin(phi), z);
        EXPECT_LE(OutsideCover(cover, X * p), 1e-12) << p.transpose();
      }
    }
  }
  // The farthest point of the cover along the axis: r past the flat end, as it says.
  EXPECT_NEAR(cover.overshoot, r, 1e-15);
  EXPECT_NEAR(OutsideCover(cover, X * Eigen::Vector3d(0, 0, length / 2 + r)), 0.0, 1e-12);
}

TEST(LinkGeometryTest, BoxCornersAndFacesAreInsideAFlatBoxTakesSeveralThinCapsules) {
  const Eigen::Isometry3d X = SomePlacement();
  for (const Eigen::Vector3d& size :
       {Eigen::Vector3d(0.4, 0.1, 0.1), Eigen::Vector3d(0.3, 0.02, 0.25),
        Eigen::Vector3d(0.1, 0.1, 0.1)}) {
    const CapsuleCover cover = CoverBox(X, size);
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    for (int i = 0; i < 2000; ++i) {
      Eigen::Vector3d y(u(rng), u(rng), u(rng));
      y[i % 3] = (i % 2 ? 0.5 : -0.5);  // on a face
      if (i < 8) y = Eigen::Vector3d(i & 1 ? 0.5 : -0.5, i & 2 ? 0.5 : -0.5, i & 4 ? 0.5 : -0.5);
      EXPECT_LE(OutsideCover(cover, X * size.cwiseProduct(y)), 1e-12) << size.transpose();
    }
    // No capsule point lies farther than `overshoot` from the box (the test's own box distance).
    for (const LinkShape& c : cover.capsules) {
      for (const Eigen::Vector3d& end : {c.a, c.b}) {
        const Eigen::Vector3d local = X.inverse() * end;
        const Eigen::Vector3d outside = (local.cwiseAbs() - size / 2).cwiseMax(0.0);
        EXPECT_LE(outside.norm() + c.radius, cover.overshoot + 1e-12);
      }
    }
  }
  // A 0.3 x 0.25 x 0.02 plate: strips, each far thinner than one capsule over the whole plate.
  const CapsuleCover plate = CoverBox(X, Eigen::Vector3d(0.3, 0.02, 0.25));
  EXPECT_EQ(plate.capsules.size(), 4u);
  EXPECT_LT(plate.capsules[0].radius, 0.05);
}

// A square tube from `from` to `to` (half width `half`) as an exporter writes one: rings of
// four corners every 2 cm, quads between them split into triangles, both ends capped.
void AddTube(const Eigen::Vector3d& from, const Eigen::Vector3d& to, double half,
             Eigen::Matrix3Xd& vertices, std::vector<std::array<int, 3>>& triangles) {
  const Eigen::Vector3d axis = (to - from).normalized();
  const Eigen::Vector3d u = axis.unitOrthogonal(), v = axis.cross(u);
  const int rings = 1 + static_cast<int>(std::ceil((to - from).norm() / 0.02));
  const int first = static_cast<int>(vertices.cols());
  vertices.conservativeResize(3, first + 4 * rings);
  for (int r = 0; r < rings; ++r) {
    const Eigen::Vector3d centre = from + (to - from) * (static_cast<double>(r) / (rings - 1));
    for (int c = 0; c < 4; ++c) {
      const double su = (c == 0 || c == 3) ? -half : half, sv = c < 2 ? -half : half;
      vertices.col(first + 4 * r + c) = centre + su * u + sv * v;
    }
  }
  for (int r = 0; r + 1 < rings; ++r) {
    for (int c = 0; c < 4; ++c) {
      const int a = first + 4 * r + c, b = first + 4 * r + (c + 1) % 4;
      triangles.push_back({a, b, b + 4});
      triangles.push_back({a, b + 4, a + 4});
    }
  }
  const int last = first + 4 * (rings - 1);
  triangles.push_back({first, first + 1, first + 2});
  triangles.push_back({first, first + 2, first + 3});
  triangles.push_back({last, last + 1, last + 2});
  triangles.push_back({last, last + 2, last + 3});
}

// An L of two square tubes (0.4 m along x, then 0.3 m up z, 0.06 m wide).
TEST(LinkGeometryTest, MeshTrianglesLieInsideTheCoverAndAnLTakesMoreThanOneCapsule) {
  Eigen::Matrix3Xd vertices(3, 0);
  std::vector<std::array<int, 3>> triangles;
  AddTube(Eigen::Vector3d(0, 0, 0), Eigen::Vector3d(0.4, 0, 0), 0.03, vertices, triangles);
  AddTube(Eigen::Vector3d(0.4, 0, 0), Eigen::Vector3d(0.4, 0, 0.3), 0.03, vertices, triangles);
  const CapsuleCover cover = CoverMesh(vertices, triangles);
  ASSERT_FALSE(cover.capsules.empty());
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (const auto& t : triangles) {
    for (int i = 0; i < 50; ++i) {
      double s = u(rng), w = u(rng);
      if (s + w > 1) s = 1 - s, w = 1 - w;
      const Eigen::Vector3d p = vertices.col(t[0]) + s * (vertices.col(t[1]) - vertices.col(t[0])) +
                                w * (vertices.col(t[2]) - vertices.col(t[0]));
      EXPECT_LE(OutsideCover(cover, p), 1e-12);
    }
  }
  // One capsule around the whole L would need a radius of about 0.15 m; the slabs do better.
  EXPECT_GT(cover.capsules.size(), 1u);
  EXPECT_LT(cover.overshoot, 0.15);
}

ChainSpec Ur5WithShapes() {
  ChainSpec spec = presets::Ur5();
  spec.link_shapes.resize(6);
  for (int k = 0; k < 6; ++k) {
    spec.link_shapes[k].push_back(
        {Eigen::Vector3d(0.01 * k, 0.05, 0), Eigen::Vector3d(0, 0.1, 0.02), 0.03});
    spec.link_shapes[k].push_back({Eigen::Vector3d(0, 0, 0), Eigen::Vector3d(0, 0, 0), 0.05});
  }
  return spec;
}

TEST(LinkGeometryTest, CapsulesFollowTheirLinkAndWithoutShapesAreTheJointOriginCapsules) {
  const Eigen::VectorXd q = Eigen::VectorXd::LinSpaced(6, -1.0, 1.2);
  ChainSpec plain = presets::Ur5();
  plain.link_radii.assign(6, 0.04);
  const LinkCapsules joint_origin = LinkCapsulesAt(plain, q);
  const auto segments = LinkSegments(plain, q);
  ASSERT_EQ(joint_origin.num_links(), 6);
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(joint_origin.first[k], k);
    EXPECT_EQ(joint_origin.capsules[k].a, segments[k].first);
    EXPECT_EQ(joint_origin.capsules[k].b, segments[k].second);
    EXPECT_EQ(joint_origin.capsules[k].radius, 0.04);
  }
  // In their own link frames they are the same segments.
  const std::vector<Eigen::Isometry3d> poses = LinkPoses(plain, q);
  const auto local = LinkShapesOf(plain);
  for (int k = 0; k < 6; ++k) {
    EXPECT_LT((poses[k] * local[k][0].a - segments[k].first).norm(), 1e-12);
    EXPECT_LT((poses[k] * local[k][0].b - segments[k].second).norm(), 1e-12);
  }
  const ChainSpec shaped = Ur5WithShapes();
  ASSERT_TRUE(shaped.Validate().ok());
  const LinkCapsules links = LinkCapsulesAt(shaped, q);
  ASSERT_EQ(links.capsules.size(), 12u);
  for (int k = 0; k < 6; ++k) {
    ASSERT_EQ(links.first[k + 1] - links.first[k], 2);
    // The sphere at each link's origin sits on joint k's origin; the offset capsule turns with it.
    const planning::Capsule& ball = links.capsules[links.first[k] + 1];
    EXPECT_LT((ball.a - segments[k].first).norm(), 1e-12);
    const planning::Capsule& c = links.capsules[links.first[k]];
    EXPECT_LT((c.a - poses[k] * shaped.link_shapes[k][0].a).norm(), 1e-12);
    EXPECT_NEAR((c.b - c.a).norm(),
                (shaped.link_shapes[k][0].b - shaped.link_shapes[k][0].a).norm(), 1e-12);
  }
}

TEST(LinkGeometryTest, ClearancesAreTheLeastOverTheCapsules) {
  LinkCapsules links;
  links.first = {0, 2, 3};
  // Link 0: a rod along x at the origin and a ball at (0, 1, 0); link 1: a ball at (0, 1.5, 0).
  links.capsules = {{Eigen::Vector3d(-1, 0, 0), Eigen::Vector3d(1, 0, 0), 0.1},
                    {Eigen::Vector3d(0, 1, 0), Eigen::Vector3d(0, 1, 0), 0.2},
                    {Eigen::Vector3d(0, 1.5, 0), Eigen::Vector3d(0, 1.5, 0), 0.1}};
  EXPECT_NEAR(LinkPairClearance(links, 0, 1), 0.5 - 0.2 - 0.1, 1e-15);
  std::vector<planning::Obstacle> obstacles;
  obstacles.push_back({"wall", planning::Sphere{Eigen::Vector3d(0.5, -0.5, 0), 0.1}});
  const auto scene = planning::Scene::Create(std::move(obstacles));
  ASSERT_TRUE(scene.ok()) << scene.status();
  EXPECT_NEAR(LinkSceneClearance(links, *scene, 0), 0.5 - 0.1 - 0.1, 1e-12);
  const auto below = LinkObstaclesBelow(links, *scene, 0, 1.0);
  ASSERT_EQ(below.size(), 1u);
  EXPECT_NEAR(below[0].second, 0.3, 1e-12);
  EXPECT_TRUE(LinkObstaclesBelow(links, *scene, 1, 1.0).size() <= 1u);
}

TEST(LinkGeometryTest, ShapesAreValidatedByField) {
  ChainSpec spec = Ur5WithShapes();
  spec.link_shapes[3][1].radius = -0.1;
  EXPECT_THAT(spec.Validate().message(), HasSubstr("link_shapes[3][1].radius"));
  spec = Ur5WithShapes();
  spec.link_shapes[2][0].b.x() = NAN;
  EXPECT_THAT(spec.Validate().message(), HasSubstr("link_shapes[2][0]"));
  spec = Ur5WithShapes();
  spec.link_shapes.pop_back();
  EXPECT_THAT(spec.Validate().message(), HasSubstr("one list per moving joint (6), got 5"));
  spec = Ur5WithShapes();
  spec.link_radii.assign(6, 0.05);
  EXPECT_THAT(spec.Validate().message(), HasSubstr("link_radii must be empty"));
  // Self-collision is checked by default where the links have their own shapes.
  EXPECT_TRUE(Ur5WithShapes().ChecksSelfCollision());
  EXPECT_FALSE(presets::Ur5().ChecksSelfCollision());
  spec = Ur5WithShapes();
  spec.check_self_collision = false;
  EXPECT_FALSE(spec.ChecksSelfCollision());
}

}  // namespace
}  // namespace ikd::robot
