// Internal to the solver library: the contact terms of the chain-arm path optimizer
// (path_optimizer.cc): which limbs of one sample come closer than a reach to an obstacle or to
// another limb, and how the distance of each changes with the joint angles.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "ikd/ik/arm.h"
#include "ikd/planning/scene.h"

namespace ikd::ik::internal {

// A limb closer than the contact reach to an obstacle or to another limb at one sample: the
// closest axis points x* = (1 - t) r_limb + t r_limb+1 (and y* on the other limb, or -1),
// the unit normal that increases the distance, and how far short of the reach.
struct PathContact {
  int sample = 0;
  int limb = 0;
  double t = 0.0;
  int other = -1;
  double other_t = 0.0;
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
  double gap = 0.0;
};

// Finds the contacts of one sample's configuration.
class PathContactFinder {
 public:
  // scene: null or empty for none; reach: contacts are the pairs closer than it (m).
  PathContactFinder(const Arm& arm, const planning::Scene* scene, double reach);

  // The contacts of `sites` (sample number `sample`), appended to `out`: each limb's closest
  // obstacle, and each pair of limbs the culling finds near.
  void Find(int sample, const Eigen::Matrix3Xd& sites, std::vector<PathContact>& out);

 private:
  const Arm& arm_;
  const planning::Scene* scene_;
  double reach_;
  std::vector<double> radii_;
  planning::LimbPairCulling culling_;
};

// d sites / d q_j for every angle j of `arm` at `sites` (angles q), 3 x sites each, into
// `out`: about the plane's normal through the joint's site for planar arms, forward
// differences of forward kinematics for spatial ones.
void SiteJacobians(const Arm& arm, const Eigen::Matrix3Xd& sites, const Eigen::RowVectorXd& q,
                   std::vector<Eigen::Matrix3Xd>& out);

// d (contact distance) / d q (1 x m) from the site Jacobians of its sample.
Eigen::RowVectorXd ContactGradient(const PathContact& c, const Eigen::Matrix3Xd* jacobians, int m);

}  // namespace ikd::ik::internal
