#include "ikd/robot/link_geometry.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>

#include <Eigen/Eigenvalues>

namespace ikd::robot {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double CapsuleVolume(const LinkShape& c) {
  return std::numbers::pi * c.radius * c.radius * ((c.b - c.a).norm() + 4.0 / 3.0 * c.radius);
}

// The least capsule about the line through `centre` along unit `axis` that holds every point:
// the radius is the farthest point's distance from the line; the segment the shortest that
// comes within that radius of every point (each point asks for some segment point within
// sqrt(R^2 - rho^2) of its own axial coordinate t).
LinkShape CapsuleAlong(const std::vector<Eigen::Vector3d>& points, const Eigen::Vector3d& centre,
                       const Eigen::Vector3d& axis) {
  double radius = 0.0;
  for (const Eigen::Vector3d& p : points) {
    const Eigen::Vector3d r = p - centre;
    radius = std::max(radius, (r - r.dot(axis) * axis).norm());
  }
  double lowest_top = kInfinity, highest_bottom = -kInfinity;
  for (const Eigen::Vector3d& p : points) {
    const Eigen::Vector3d r = p - centre;
    const double t = r.dot(axis);
    const double reach = std::sqrt(std::max(radius * radius - (r - t * axis).squaredNorm(), 0.0));
    lowest_top = std::min(lowest_top, t + reach);
    highest_bottom = std::max(highest_bottom, t - reach);
  }
  // [min, max] meets every point's interval (a single point where they all overlap).
  double from = std::min(lowest_top, highest_bottom), to = std::max(lowest_top, highest_bottom);
  if (lowest_top > highest_bottom) from = to = 0.5 * (lowest_top + highest_bottom);
  return {centre + from * axis, centre + to * axis, radius};
}

Eigen::Vector3d Mean(const std::vector<Eigen::Vector3d>& points) {
  Eigen::Vector3d sum = Eigen::Vector3d::Zero();
  for (const Eigen::Vector3d& p : points) sum += p;
  return sum / std::max<size_t>(points.size(), 1);
}

Eigen::Vector3d PrincipalAxis(const Eigen::Matrix3Xd& vertices, const Eigen::Vector3d& mean) {
  const Eigen::Matrix3Xd centred = vertices.colwise() - mean;
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eigen(centred * centred.transpose());
  return eigen.eigenvectors().col(2).normalized();  // eigenvalues ascend
}

// The mesh in `slabs` equal thirds (halves, ...) along the axis, each triangle in the slab of
// its centroid, one capsule per non-empty slab about the slab's own principal axis or the whole's,
// whichever is smaller.
std::vector<LinkShape> SlabCapsules(const Eigen::Matrix3Xd& vertices,
                                    const std::vector<std::array<int, 3>>& triangles,
                                    const Eigen::Vector3d& axis, double low, double high,
                                    int slabs) {
  std::vector<std::vector<Eigen::Vector3d>> points(slabs);
  const double width = std::max(high - low, 1e-12) / slabs;
  for (const auto& triangle : triangles) {
    const Eigen::Vector3d centroid =
        (vertices.col(triangle[0]) + vertices.col(triangle[1]) + vertices.col(triangle[2])) / 3.0;
    const int slab = std::clamp(static_cast<int>((centroid.dot(axis) - low) / width), 0, slabs - 1);
    for (int v : triangle) points[slab].push_back(vertices.col(v));
  }
  std::vector<LinkShape> capsules;
  for (const auto& slab : points) {
    if (slab.empty()) continue;
    // Each piece along its own principal axis: the legs of an L are not along the whole's.
    const Eigen::Vector3d centre = Mean(slab);
    const Eigen::Map<const Eigen::Matrix3Xd> matrix(slab[0].data(), 3, slab.size());
    LinkShape own = CapsuleAlong(slab, centre, PrincipalAxis(matrix, centre));
    LinkShape along = CapsuleAlong(slab, centre, axis);
    capsules.push_back(CapsuleVolume(own) <= CapsuleVolume(along) ? own : along);
  }
  return capsules;
}

}  // namespace

std::vector<std::vector<LinkShape>> LinkShapesOf(const ChainSpec& spec) {
  if (!spec.link_shapes.empty()) return spec.link_shapes;
  // Joint k's origin is link k's frame origin; joint k+1's (or the tool's) is fixed in it.
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(NumMovingJoints(spec));
  const std::vector<Eigen::Isometry3d> poses = LinkPoses(spec, zero);
  const auto segments = LinkSegments(spec, zero);
  std::vector<std::vector<LinkShape>> shapes(segments.size());
  for (size_t k = 0; k < segments.size(); ++k) {
    const Eigen::Isometry3d X_LW = poses[k].inverse();
    shapes[k].push_back({X_LW * segments[k].first, X_LW * segments[k].second,
                         spec.link_radii.empty() ? 0.0 : spec.link_radii[k]});
  }
  return shapes;
}

std::vector<int> LinkCapsuleOffsets(const ChainSpec& spec) {
  const int links = NumMovingJoints(spec);
  std::vector<int> first(links + 1, 0);
  for (int k = 0; k < links; ++k) {
    first[k + 1] = first[k] + (spec.link_shapes.empty() ? 1 : spec.link_shapes[k].size());
  }
  return first;
}

LinkCapsules LinkCapsulesAt(const ChainSpec& spec, const Eigen::VectorXd& q) {
  return spec.link_shapes.empty() ? LinkCapsulesAt(spec, q, {})
                                  : LinkCapsulesAt(spec, q, LinkPoses(spec, q));
}

LinkCapsules LinkCapsulesAt(const ChainSpec& spec, const Eigen::VectorXd& q,
                            const std::vector<Eigen::Isometry3d>& poses) {
  LinkCapsules links;
  links.first = LinkCapsuleOffsets(spec);
  if (spec.link_shapes.empty()) {
    const auto segments = LinkSegments(spec, q);
    for (size_t k = 0; k < segments.size(); ++k) {
      links.capsules.push_back({segments[k].first, segments[k].second,
                                spec.link_radii.empty() ? 0.0 : spec.link_radii[k]});
    }
    return links;
  }
  links.capsules.reserve(links.first.back());
  for (size_t k = 0; k < poses.size(); ++k) {
    for (const LinkShape& shape : spec.link_shapes[k]) {
      links.capsules.push_back({poses[k] * shape.a, poses[k] * shape.b, shape.radius});
    }
  }
  return links;
}

bool HasLinkVolume(const ChainSpec& spec) {
  if (spec.link_shapes.empty()) {
    return std::any_of(spec.link_radii.begin(), spec.link_radii.end(),
                       [](double r) { return r > 0.0; });
  }
  for (const auto& shapes : spec.link_shapes) {
    for (const LinkShape& shape : shapes) {
      if (shape.radius > 0.0) return true;
    }
  }
  return false;
}

// m: what rounding may put a capsule's ball gap above its true distance by, and more.
constexpr double kBallSlack = 1e-9;

double CapsuleBallGap(const planning::Capsule& x, const planning::Capsule& y) {
  return (0.5 * (x.a + x.b - y.a - y.b)).norm() - 0.5 * (x.b - x.a).norm() -
         0.5 * (y.b - y.a).norm() - x.radius - y.radius - kBallSlack;
}

double LinkPairClearance(const LinkCapsules& links, int a, int b) {
  return LinkPairClearance(links.capsules, links.first, a, b);
}

double LinkPairClearance(const std::vector<planning::Capsule>& capsules,
                         const std::vector<int>& first, int a, int b) {
  double least = kInfinity;
  for (int i = first[a]; i < first[a + 1]; ++i) {
    const planning::Capsule& x = capsules[i];
    for (int j = first[b]; j < first[b + 1]; ++j) {
      const planning::Capsule& y = capsules[j];
      if (CapsuleBallGap(x, y) >= least) continue;
      least = std::min(least,
                       planning::SegmentSegmentDistance(x.a, x.b, y.a, y.b) - x.radius - y.radius);
    }
  }
  return least;
}

double LinkSceneClearance(const LinkCapsules& links, const planning::Scene& scene, int k) {
  double least = kInfinity;
  for (int i = links.first[k]; i < links.first[k + 1]; ++i) {
    const planning::Capsule& c = links.capsules[i];
    least = std::min(least, scene.MinSignedDistance(c.a, c.b, c.radius));
  }
  return least;
}

std::vector<std::pair<int, double>> LinkObstaclesBelow(const LinkCapsules& links,
                                                       const planning::Scene& scene, int k,
                                                       double bound) {
  std::map<int, double> least;
  for (int i = links.first[k]; i < links.first[k + 1]; ++i) {
    const planning::Capsule& c = links.capsules[i];
    for (const auto& [obstacle, distance] : scene.SignedDistancesBelow(c.a, c.b, c.radius, bound)) {
      auto [it, inserted] = least.emplace(obstacle, distance);
      if (!inserted) it->second = std::min(it->second, distance);
    }
  }
  std::vector<std::pair<int, double>> below(least.begin(), least.end());
  std::stable_sort(below.begin(), below.end(),
                   [](const auto& x, const auto& y) { return x.second < y.second; });
  return below;
}

CapsuleCover CoverSphere(const Eigen::Isometry3d& X_LG, double radius) {
  const Eigen::Vector3d centre = X_LG.translation();
  return {{{centre, centre, radius}}, 0.0};
}

CapsuleCover CoverCylinder(const Eigen::Isometry3d& X_LG, double radius, double length) {
  // The rim of each end face lies at exactly `radius` from the segment's end: no shorter
  // segment holds it, so the rounded ends reach `radius` beyond the flat ones.
  const Eigen::Vector3d half = 0.5 * length * Eigen::Vector3d::UnitZ();
  return {{{X_LG * (-half), X_LG * half, radius}}, radius};
}

CapsuleCover CoverBox(const Eigen::Isometry3d& X_LG, const Eigen::Vector3d& size) {
  int order[3] = {0, 1, 2};
  std::sort(order, order + 3, [&](int i, int j) { return size[i] > size[j]; });
  const double length = size[order[0]], width = size[order[1]], height = size[order[2]];
  constexpr int kMaxStrips = 4;
  const int strips =
      std::clamp(static_cast<int>(std::round(width / std::max(height, 1e-12))), 1, kMaxStrips);
  // A strip's cross-section is (width / strips) x height; its corner sets the radius.
  const double radius = std::hypot(0.5 * width / strips, 0.5 * height);
  const Eigen::Vector3d along = Eigen::Vector3d::Unit(order[0]) * 0.5 * length;
  CapsuleCover cover;
  for (int s = 0; s < strips; ++s) {
    const Eigen::Vector3d offset =
        Eigen::Vector3d::Unit(order[1]) * width * ((s + 0.5) / strips - 0.5);
    cover.capsules.push_back({X_LG * (offset - along), X_LG * (offset + along), radius});
  }
  cover.overshoot = radius;  // the rounded ends past the end faces
  return cover;
}

CapsuleCover CoverMesh(const Eigen::Matrix3Xd& vertices,
                       const std::vector<std::array<int, 3>>& triangles) {
  CapsuleCover best;
  if (triangles.empty()) return best;
  const Eigen::Vector3d mean = vertices.rowwise().mean();
  const Eigen::Vector3d axis = PrincipalAxis(vertices, mean);
  const Eigen::VectorXd t = axis.transpose() * vertices;
  double best_volume = kInfinity;
  for (int slabs = 1; slabs <= 3; ++slabs) {
    std::vector<LinkShape> capsules =
        SlabCapsules(vertices, triangles, axis, t.minCoeff(), t.maxCoeff(), slabs);
    double volume = 0.0, overshoot = 0.0;
    for (const LinkShape& c : capsules) {
      volume += CapsuleVolume(c);
      overshoot = std::max(overshoot, c.radius);
    }
    if (volume < best_volume) best_volume = volume, best = {std::move(capsules), overshoot};
  }
  return best;
}

}  // namespace ikd::robot
