#include "ikd/ik/arm_body.h"

#include <algorithm>
#include <cmath>

namespace ikd::ik {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Largest angular speed of limb k's frame per unit of the motion (ik/arm_body.h).
double TurnRate(const Arm& arm, int k, const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  if (arm.planar()) return std::abs(b[k] - a[k]);
  const double bend = std::min(kPi, std::max(std::abs(a[2 * k]), std::abs(b[2 * k])));
  return std::abs(b[2 * k] - a[2 * k]) + 2.0 * std::sin(0.5 * bend) * std::abs(b[2 * k + 1] - a[2 * k + 1]);
}

}  // namespace

ChainArmBody::ChainArmBody(const Arm& arm) : arm_(&arm) {
  const int limbs = arm.num_limbs();
  reach_ = Eigen::MatrixXd::Zero(limbs, limbs);
  for (const Limb& limb : arm.spec().limbs) radii_.push_back(limb.radius);
  for (int k = 0; k < limbs; ++k) {
    double along = 0.0;
    for (int limb = k; limb < limbs; ++limb) {
      along += arm.spec().limbs[limb].length;
      reach_(k, limb) = along + radii_[limb];
    }
  }
}

void ChainArmBody::Links(const Eigen::VectorXd& angles,
                         std::vector<planning::Capsule>* links) const {
  const std::vector<double> values(angles.data(), angles.data() + angles.size());
  // Finite angles of the right count (the caller's): forward kinematics cannot fail.
  const Eigen::Matrix3Xd sites = *arm_->SitesFromAngles(values);
  links->resize(arm_->num_limbs());
  for (int k = 0; k < arm_->num_limbs(); ++k) {
    (*links)[k] = {sites.col(k), sites.col(k + 1), radii_[k]};
  }
}

void ChainArmBody::SweepBounds(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                               Eigen::VectorXd* bounds) const {
  const int limbs = arm_->num_limbs();
  bounds->setZero(limbs);
  for (int k = 0; k < limbs; ++k) {
    const double rate = TurnRate(*arm_, k, a, b);
    if (rate == 0.0) continue;
    for (int limb = k; limb < limbs; ++limb) (*bounds)[limb] += rate * reach_(k, limb);
  }
}

double ChainArmBody::SelfClearance(const std::vector<planning::Capsule>& links) const {
  Eigen::Matrix3Xd sites(3, static_cast<int>(links.size()) + 1);
  for (size_t k = 0; k < links.size(); ++k) sites.col(k) = links[k].a;
  sites.col(links.size()) = links.back().b;
  return planning::MinSelfClearance(sites, radii_);
}

}  // namespace ikd::ik
