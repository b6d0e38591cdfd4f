// mock_arm's own geometry: the controller's copy of the scene (read from the wire messages and
// kept in step with the scene updates it sends) and the clearances of limb capsules, written
// here rather than taken from the solver (ikd::planning::Scene), so that the mock's collision check
// is a second opinion on the server's. Capsule: the segment p-q swept by a ball of radius r.
// Signed clearance: the distance between the shapes, negative = -(penetration depth).
//
// Formulations (each a distance between actual points, so never below the true one):
//  - point-segment: the foot of the perpendicular clamped to the segment;
//  - segment-segment: the minimum of a convex quadratic over the unit square of parameters,
//    at the interior stationary point when it lies inside, else on an edge (an endpoint of one
//    segment against the other segment);
//  - capsule-half-space: the lower end along the normal (linear along the segment);
//  - capsule-box, in the box's frame: outside, the squared distance to the box along the
//    segment is a convex quadratic between the parameters where a coordinate crosses a face
//    plane, minimized piece by piece; inside, the depth min_i (h_i - |y_i|) is concave and
//    piecewise linear, largest at an end or where two of its six linear pieces cross.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ikd/v1/kinematics_service.pb.h"
#include "ikd/v1/types.pb.h"

namespace ikd::clients::mock {

double PointSegmentDistance(const Eigen::Vector3d& x, const Eigen::Vector3d& a,
                            const Eigen::Vector3d& b);

double SegmentSegmentDistance(const Eigen::Vector3d& p0, const Eigen::Vector3d& p1,
                              const Eigen::Vector3d& q0, const Eigen::Vector3d& q1);

// Signed distance from the segment p-q to the box {center + R y : |y_i| <= h_i} (the segment's
// axis, before its radius): the distance outside, -(largest depth) inside.
double SegmentBoxSignedDistance(const Eigen::Vector3d& p, const Eigen::Vector3d& q,
                                const Eigen::Vector3d& center, const Eigen::Matrix3d& R,
                                const Eigen::Vector3d& h);

// Min clearance between non-adjacent limbs (|i - j| >= 2) of a chain whose limb k is the capsule
// sites.col(k)-sites.col(k+1) of radius radii[k]; +infinity without such a pair.
double ChainSelfClearance(const Eigen::Matrix3Xd& sites, const std::vector<double>& radii);

// The least clearance(q_a + s dq) inside a motion, at s = i / n for 0 < i < n, with
// n = max(16, ceil(max_j |dq_j| / step)): a sampled check (not a bound) of the motion a servo
// is commanded through when every joint moves linearly from q_a to q_a + dq. +infinity when
// every sample is (or the motion has none).
double LeastClearanceInside(const Eigen::VectorXd& q_a, const Eigen::VectorXd& dq, double step,
                            const std::function<double(const Eigen::VectorXd&)>& clearance);

// A link's piece in the world: the points within `radius` of the segment a-b.
struct LinkCapsule {
  Eigen::Vector3d a = Eigen::Vector3d::Zero(), b = Eigen::Vector3d::Zero();
  double radius = 0.0;
};
using LinkBodies = std::vector<std::vector<LinkCapsule>>;  // per link, its capsules

// The link pairs (a, b), b >= a + 2, that an industrial arm's controller checks against each
// other: every non-adjacent pair except those that touch in every one of `samples`
// configurations `random_links` draws (the links on either side of a zero-length one).
// Stricter than the server's matrix, which also allows pairs that never touch in its samples.
std::vector<std::pair<int, int>> LinkPairsToCheck(int links, int samples,
                                                  const std::function<LinkBodies()>& random_links);

// The least clearance of the given link pairs (+infinity for none): every capsule pair.
double LinkPairsClearance(const LinkBodies& links, const std::vector<std::pair<int, int>>& pairs);

struct Obstacle {
  enum class Kind { kSphere, kCapsule, kBox, kHalfSpace };
  std::string id;
  Kind kind = Kind::kSphere;
  Eigen::Vector3d a = Eigen::Vector3d::Zero();             // sphere and box centre, capsule end
  Eigen::Vector3d b = Eigen::Vector3d::Zero();             // capsule end
  double radius = 0.0;                                     // sphere, capsule
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();  // box axes (columns)
  Eigen::Vector3d half_extents = Eigen::Vector3d::Zero();  // box
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();       // half-space, unit: normal . x <= offset
  double offset = 0.0;
};

// Signed clearance of the capsule p-q of radius r from the obstacle.
double CapsuleClearance(const Obstacle& obstacle, const Eigen::Vector3d& p,
                        const Eigen::Vector3d& q, double r);

class Scene {
 public:
  // The obstacles of a scene as sent on the wire (box orientations and half-space normals
  // normalized here). InvalidArgument for an obstacle without a shape or a zero quaternion or
  // normal (the server validates everything else).
  static absl::StatusOr<Scene> FromProto(const v1::SceneSpec& spec);

  // ADD, MOVE (x -> rotation x + translation) and REMOVE, as the server applies them.
  absl::Status Apply(const v1::SceneUpdate& update);

  // Min signed clearance of the capsule from every obstacle; +infinity for an empty scene.
  double MinClearance(const Eigen::Vector3d& p, const Eigen::Vector3d& q, double r) const;

  const std::vector<Obstacle>& obstacles() const { return obstacles_; }

 private:
  std::vector<Obstacle> obstacles_;
};

}  // namespace ikd::clients::mock
