#include "path_contacts.h"

#include <algorithm>

namespace ikd::ik::internal {

PathContactFinder::PathContactFinder(const Arm& arm, const planning::Scene* scene, double reach)
    : arm_(arm), scene_(scene), reach_(reach) {
  for (const Limb& limb : arm.spec().limbs) radii_.push_back(limb.radius);
}

void PathContactFinder::Find(int sample, const Eigen::Matrix3Xd& sites,
                             std::vector<PathContact>& out) {
  for (int l = 0; scene_ != nullptr && l < arm_.num_limbs(); ++l) {
    const Eigen::Vector3d a = sites.col(l), b = sites.col(l + 1);
    int closest = -1;
    scene_->MinSignedDistance(a, b, radii_[l], &closest, reach_);
    if (closest < 0) continue;
    const planning::CapsuleApproach near =
        planning::ClosestApproach(scene_->obstacles()[closest].shape, a, b, radii_[l]);
    if (near.distance < reach_) {
      out.push_back({sample, l, near.t, -1, 0.0, near.normal, reach_ - near.distance});
    }
  }
  culling_.Reset(sites, radii_);
  for (int l = 0; l < arm_.num_limbs(); ++l) {
    culling_.ForEachNear(l, reach_, [&](int o) {
      const Eigen::Vector3d a = sites.col(o), b = sites.col(o + 1);
      const planning::CapsuleApproach near = planning::ClosestApproach(
          planning::Capsule{a, b, radii_[o]}, sites.col(l), sites.col(l + 1), radii_[l]);
      if (near.distance >= reach_) return;
      const Eigen::Vector3d x = (1.0 - near.t) * sites.col(l) + near.t * sites.col(l + 1);
      const double span = (b - a).squaredNorm();
      const double other_t = span > 0.0 ? std::clamp((x - a).dot(b - a) / span, 0.0, 1.0) : 0.0;
      out.push_back({sample, l, near.t, o, other_t, near.normal, reach_ - near.distance});
    });
  }
}

void SiteJacobians(const Arm& arm, const Eigen::Matrix3Xd& sites, const Eigen::RowVectorXd& q,
                   std::vector<Eigen::Matrix3Xd>& out) {
  const int m = arm.num_angles();
  out.resize(m);
  if (arm.planar()) {
    const Eigen::Vector3d normal = arm.R_WB().col(2);
    for (int j = 0; j < m; ++j) {
      out[j].setZero(3, sites.cols());
      for (int i = j + 1; i < sites.cols(); ++i) {
        out[j].col(i) = normal.cross(sites.col(i) - sites.col(j));
      }
    }
    return;
  }
  constexpr double kDelta = 1e-7;
  std::vector<double> angles(q.data(), q.data() + m);
  const absl::StatusOr<Eigen::Matrix3Xd> base = arm.SitesFromAngles(angles);
  for (int j = 0; j < m; ++j) {
    angles[j] += kDelta;
    out[j] = (*arm.SitesFromAngles(angles) - *base) / kDelta;
    angles[j] = q[j];
  }
}

Eigen::RowVectorXd ContactGradient(const PathContact& c, const Eigen::Matrix3Xd* jacobians, int m) {
  Eigen::RowVectorXd g(m);
  for (int j = 0; j < m; ++j) {
    const Eigen::Matrix3Xd& d = jacobians[j];
    Eigen::Vector3d moved = (1.0 - c.t) * d.col(c.limb) + c.t * d.col(c.limb + 1);
    if (c.other >= 0) {
      moved -= (1.0 - c.other_t) * d.col(c.other) + c.other_t * d.col(c.other + 1);
    }
    g[j] = c.normal.dot(moved);
  }
  return g;
}

}  // namespace ikd::ik::internal
