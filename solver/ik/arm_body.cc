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
  along_.assign(limbs + 1, 0.0);
  for (int k = 0; k < limbs; ++k) {
    along_[k + 1] = along_[k] + arm.spec().limbs[k].length;
    double along = 0.0;
    for (int limb = k; limb < limbs; ++limb) {
      along += arm.spec().limbs[limb].length;
      reach_(k, limb) = along + radii_[limb];
    }
  }
  for (int last = kFirstGroupLast;; last *= 2) {
    group_last_.push_back(last);
    if (last >= limbs - 1 || static_cast<int>(group_last_.size()) == kMaxSelfGroups) break;
  }
  group_last_.back() = std::max(group_last_.back(), limbs - 1);  // the last takes the rest
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

void ChainArmBody::TurnRates(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                             Eigen::VectorXd* rates) const {
  rates->resize(arm_->num_limbs());
  for (int k = 0; k < rates->size(); ++k) (*rates)[k] = TurnRate(*arm_, k, a, b);
}

void ChainArmBody::HeadingTurns(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                                Eigen::VectorXd* turns) const {
  turns->resize(arm_->num_limbs());
  double heading = 0.0;
  for (int m = 0; m < turns->size(); ++m) (*turns)[m] = heading += b[m] - a[m];
}

void ChainArmBody::TravelTurns(const Eigen::VectorXd& travel, Eigen::VectorXd* turns) const {
  turns->resize(arm_->num_limbs());
  for (int k = 0; k < turns->size(); ++k) {
    (*turns)[k] = arm_->planar() ? std::abs(travel[k])
                                 : std::abs(travel[2 * k]) + 2.0 * std::abs(travel[2 * k + 1]);
  }
}

void ChainArmBody::TravelBounds(const Eigen::VectorXd& travel, Eigen::VectorXd* bounds) const {
  const int limbs = arm_->num_limbs();
  Eigen::VectorXd turns;
  TravelTurns(travel, &turns);
  bounds->setZero(limbs);
  for (int k = 0; k < limbs; ++k) {
    if (turns[k] == 0.0) continue;
    for (int limb = k; limb < limbs; ++limb) (*bounds)[limb] += turns[k] * reach_(k, limb);
  }
}

void ChainArmBody::TravelGroupSweeps(const Eigen::VectorXd& travel,
                                     const Eigen::VectorXd& /*bounds*/, SelfGroups* sweeps) const {
  Eigen::VectorXd turns;
  TravelTurns(travel, &turns);
  GroupSweepsOfTurns(turns, sweeps);
}

void ChainArmBody::SweepBounds(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                               Eigen::VectorXd* bounds) const {
  const int limbs = arm_->num_limbs();
  bounds->setZero(limbs);
  if (arm_->planar()) {
    // A planar limb m's heading turns at the constant Phi_m = sum_{k<=m} d theta_k over the
    // motion, so site j moves at most sum_{m<j} L_m |Phi_m| (turns of opposite signs cancel),
    // and limb j's points up to its far end and radius (L_j + r_j) |Phi_j| more.
    Eigen::VectorXd turns;
    HeadingTurns(a, b, &turns);
    const auto& spec = arm_->spec().limbs;
    double site = 0.0;
    for (int j = 0; j < limbs; ++j) {
      (*bounds)[j] = site + (spec[j].length + radii_[j]) * std::abs(turns[j]);
      site += spec[j].length * std::abs(turns[j]);
    }
    return;
  }
  for (int k = 0; k < limbs; ++k) {
    const double rate = TurnRate(*arm_, k, a, b);
    if (rate == 0.0) continue;
    for (int limb = k; limb < limbs; ++limb) (*bounds)[limb] += rate * reach_(k, limb);
  }
}

void ChainArmBody::GroupSweeps(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                               const Eigen::VectorXd& /*bounds*/, SelfGroups* sweeps) const {
  if (arm_->planar()) return PlanarGroupSweeps(a, b, sweeps);
  Eigen::VectorXd rates;
  TurnRates(a, b, &rates);
  GroupSweepsOfTurns(rates, sweeps);
}

void ChainArmBody::GroupSweepsOfTurns(const Eigen::VectorXd& rates, SelfGroups* sweeps) const {
  // sum_{k=k0..j} turn_k reach(k, j) with reach(k, j) = along_[j+1] - along_[k] + radius_j.
  const int limbs = arm_->num_limbs();
  std::vector<double> turns(limbs + 1, 0.0), moments(limbs + 1, 0.0);
  for (int k = 0; k < limbs; ++k) {
    turns[k + 1] = turns[k] + rates[k];
    moments[k + 1] = moments[k] + rates[k] * along_[k];
  }
  int first = 2;
  for (size_t g = 0; g < group_last_.size(); ++g) {
    double widest = 0.0;
    for (int j = first; j < limbs; ++j) {
      const int k0 = std::max(1, j - group_last_[g] + 1);
      const double far_end = along_[j + 1] + radii_[j];
      widest =
          std::max(widest, far_end * (turns[j + 1] - turns[k0]) - (moments[j + 1] - moments[k0]));
    }
    (*sweeps)[g] = widest * (1.0 + kRoundingSlack);
    first = group_last_[g] + 1;
  }
}

Eigen::Matrix3Xd ChainArmBody::SitesOf(const std::vector<planning::Capsule>& links) {
  Eigen::Matrix3Xd sites(3, static_cast<int>(links.size()) + 1);
  for (size_t k = 0; k < links.size(); ++k) sites.col(k) = links[k].a;
  sites.col(links.size()) = links.back().b;
  return sites;
}

double ChainArmBody::SelfClearance(const std::vector<planning::Capsule>& links) const {
  return planning::MinSelfClearance(SitesOf(links), radii_);
}

void ChainArmBody::PlanarGroupSweeps(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                                     SelfGroups* sweeps) const {
  // In limb i's frame the headings of limbs m > i turn at Phi_m - Phi_i, so limb j's segment
  // moves against limb i's by at most sum_{m=i+1..j} L_m |Phi_m - Phi_i| (the pair's clearance is
  // its segments' distance less the radii); that grows with j, so a group's widest pair from
  // each i bounds it.
  const int limbs = arm_->num_limbs();
  const auto& spec = arm_->spec().limbs;
  Eigen::VectorXd turns;
  HeadingTurns(a, b, &turns);
  int first = 2;
  for (size_t g = 0; g < group_last_.size(); ++g) {
    double widest = 0.0;
    for (int i = 0; i + first < limbs; ++i) {
      const int j = std::min(limbs - 1, i + group_last_[g]);
      double moved = 0.0;
      for (int m = i + 1; m <= j; ++m) moved += spec[m].length * std::abs(turns[m] - turns[i]);
      widest = std::max(widest, moved);
    }
    (*sweeps)[g] = widest * (1.0 + kRoundingSlack);
    first = group_last_[g] + 1;
  }
}

void ChainArmBody::SelfClearanceGroups(const std::vector<planning::Capsule>& links,
                                       SelfGroups* clearance) const {
  const Eigen::Matrix3Xd sites = SitesOf(links);
  planning::LimbPairCulling culling;
  culling.Reset(sites, radii_);
  culling.MinClearanceBySeparation(sites, group_last_, clearance->data());
}

}  // namespace ikd::ik
