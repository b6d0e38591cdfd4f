// Collision geometry of an industrial arm's links (issue 33, item 2): the capsules that stand
// for each link, in the world at joint values q, and conservative capsule covers of the shapes
// robot descriptions use (spheres, cylinders, boxes, triangle meshes), so that every distance
// and sweep bound of the solver stays one capsule formula.
//
// Without ChainSpec::link_shapes a link is one capsule from its joint's origin to the next
// joint's (the last to the tool centre point) of radius link_radii[k] (0 without), as before.
//
//   ikd::robot::LinkCapsules links = ikd::robot::LinkCapsulesAt(spec, q);
//   double d = ikd::robot::LinkPairClearance(links, 1, 4);   // < 0: links 1 and 4 overlap
#pragma once

#include <array>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "ikd/planning/scene.h"
#include "ikd/robot/chain.h"

namespace ikd::robot {

// The links' capsules in the world frame, link by link.
struct LinkCapsules {
  std::vector<planning::Capsule> capsules;
  std::vector<int> first;  // link k's capsules are [first[k], first[k + 1])

  int num_links() const { return static_cast<int>(first.size()) - 1; }
};

// The capsules at joint values q.
LinkCapsules LinkCapsulesAt(const ChainSpec& spec, const Eigen::VectorXd& q);
// The same where the caller has the link frames already (`poses`: LinkPoses(spec, q)).
LinkCapsules LinkCapsulesAt(const ChainSpec& spec, const Eigen::VectorXd& q,
                            const std::vector<Eigen::Isometry3d>& poses);
// Where LinkCapsulesAt puts each link's capsules (q does not change it).
std::vector<int> LinkCapsuleOffsets(const ChainSpec& spec);
// The link capsules in their own link's frame: link_shapes, or the joint-origin capsules.
std::vector<std::vector<LinkShape>> LinkShapesOf(const ChainSpec& spec);
// Whether some capsule has a radius > 0 (segments of radius 0 never overlap each other).
bool HasLinkVolume(const ChainSpec& spec);

// The least signed distance (m, < 0 overlapping) between links a and b: every pair of their
// capsules; +infinity when either has none.
double LinkPairClearance(const LinkCapsules& links, int a, int b);
// A lower bound on the signed distance between two capsules, less a slack for the rounding:
// the gap between the balls about their axes' middles that hold them (what a closest-points
// computation can skip when it is no nearer than the least found).
double CapsuleBallGap(const planning::Capsule& x, const planning::Capsule& y);
// The same over capsules laid out as LinkCapsules' (`first` its offsets), without a copy.
double LinkPairClearance(const std::vector<planning::Capsule>& capsules,
                         const std::vector<int>& first, int a, int b);
// The least signed distance of link k to the scene (+infinity: no capsule or no obstacle).
double LinkSceneClearance(const LinkCapsules& links, const planning::Scene& scene, int k);
// Every obstacle within `bound` of link k, with its least signed distance, closest first.
std::vector<std::pair<int, double>> LinkObstaclesBelow(const LinkCapsules& links,
                                                       const planning::Scene& scene, int k,
                                                       double bound);

// Conservative covers: every point of the shape lies inside one of the capsules. X_LG places
// the shape's own frame G in the link frame L (a URDF <collision> <origin>).
struct CapsuleCover {
  std::vector<LinkShape> capsules;
  // How far the cover reaches beyond the shape at most (m): 0 for a sphere.
  double overshoot = 0.0;
};
CapsuleCover CoverSphere(const Eigen::Isometry3d& X_LG, double radius);
// A cylinder about G's z axis, centred on G's origin (URDF's convention).
CapsuleCover CoverCylinder(const Eigen::Isometry3d& X_LG, double radius, double length);
// A box of full edge lengths `size` centred on G's origin: capsules along its longest edge, its
// second longest split into up to 4 strips so that a flat box is not one fat capsule.
CapsuleCover CoverBox(const Eigen::Isometry3d& X_LG, const Eigen::Vector3d& size);
// A triangle mesh (vertices already in the link frame): 1 to 3 capsules along its principal
// axis, whichever count has the least volume, each holding every vertex of the triangles whose
// centroids fall in its third (so every triangle lies inside one convex capsule). overshoot is
// the largest capsule radius (a bound: the mesh's own surface is not measured).
CapsuleCover CoverMesh(const Eigen::Matrix3Xd& vertices,
                       const std::vector<std::array<int, 3>>& triangles);

}  // namespace ikd::robot
