#include "ikd/ik/diagnosis.h"

#include <algorithm>
#include <cmath>

namespace ikd::ik {
namespace {

// Pairs listed per kind, worst first; the rest are left out of an answer.
constexpr size_t kMaxPairs = 8;

void SortAndCap(std::vector<Reason>& reasons) {
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const Reason& a, const Reason& b) { return a.distance < b.distance; });
  if (reasons.size() > kMaxPairs) reasons.resize(kMaxPairs);
}

// Every limb-obstacle and limb-limb pair (non-adjacent limbs) closer than `margin`.
std::vector<Reason> NearPairs(const Arm& arm, const planning::Scene* scene,
                              const Eigen::Matrix3Xd& sites, double margin) {
  std::vector<Reason> near;
  const auto& limbs = arm.spec().limbs;
  for (int k = 0; k < arm.num_limbs(); ++k) {
    if (scene != nullptr) {
      for (const auto& [obstacle, distance] :
           scene->SignedDistancesBelow(sites.col(k), sites.col(k + 1), limbs[k].radius, margin)) {
        Reason r;
        r.link = k, r.obstacle = obstacle, r.distance = distance;
        near.push_back(r);
      }
    }
    for (int j = k + 2; j < arm.num_limbs(); ++j) {
      const double distance = planning::SegmentSegmentDistance(sites.col(k), sites.col(k + 1),
                                                               sites.col(j), sites.col(j + 1)) -
                              limbs[k].radius - limbs[j].radius;
      if (distance >= margin) continue;
      Reason r;
      r.link = k, r.other_link = j, r.distance = distance;
      near.push_back(r);
    }
  }
  return near;
}

}  // namespace

const char* ReasonKindName(Reason::Kind kind) {
  switch (kind) {
    case Reason::Kind::kCollision: return "COLLISION";
    case Reason::Kind::kNearCollision: return "NEAR_COLLISION";
    case Reason::Kind::kJointLimit: return "JOINT_LIMIT";
    case Reason::Kind::kOutOfReach: return "OUT_OF_REACH";
    case Reason::Kind::kSingular: return "SINGULAR";
    case Reason::Kind::kResidual: return "RESIDUAL";
    case Reason::Kind::kRotationResidual: return "ROTATION_RESIDUAL";
  }
  return "?";
}

std::vector<Reason> DiagnoseChain(const Arm& arm, const planning::Scene* scene,
                                  const Eigen::Matrix3Xd& sites, const Eigen::Vector3d& target,
                                  double safety_margin) {
  std::vector<Reason> reasons, colliding, inside_margin;
  for (Reason& r : NearPairs(arm, scene, sites, safety_margin)) {
    r.bound = safety_margin;
    if (r.distance < 0.0) {
      r.kind = Reason::Kind::kCollision;
      colliding.push_back(r);
    } else {
      r.kind = Reason::Kind::kNearCollision;
      inside_margin.push_back(r);
    }
  }
  SortAndCap(colliding);
  SortAndCap(inside_margin);
  if (!inside_margin.empty()) inside_margin.resize(1);
  reasons.insert(reasons.end(), colliding.begin(), colliding.end());
  reasons.insert(reasons.end(), inside_margin.begin(), inside_margin.end());
  const auto& limits = arm.spec().joint_limits;
  for (size_t j = 0; j < limits.size(); ++j) {
    if (!limits[j]) continue;
    const int k = static_cast<int>(j) + 1;  // interior joint k bends limb k against limb k - 1
    const double angle = arm.JointAngle(sites, k);
    const bool low = angle <= limits[j]->min + kAtLimit, high = angle >= limits[j]->max - kAtLimit;
    if (!low && !high) continue;
    Reason r;
    r.kind = Reason::Kind::kJointLimit;
    r.joint = arm.planar() ? k : 2 * k;  // its angle in AnglesFromSites: the turn, or the bend
    r.value = angle;
    r.bound = low ? limits[j]->min : limits[j]->max;
    reasons.push_back(r);
  }
  const double from_base = (target - arm.base()).norm();
  if (from_base > arm.max_reach() || from_base < arm.min_reach()) {
    Reason r;
    r.kind = Reason::Kind::kOutOfReach;
    r.distance = from_base > arm.max_reach() ? from_base - arm.max_reach()
                                             : arm.min_reach() - from_base;
    r.value = from_base;
    r.bound = from_base > arm.max_reach() ? arm.max_reach() : arm.min_reach();
    reasons.push_back(r);
  }
  const double tolerance = 1e-9 * arm.max_reach();
  if (const double error = (sites.col(arm.hand()) - target).norm(); error > tolerance) {
    Reason r;
    r.kind = Reason::Kind::kResidual;
    r.value = error;
    r.bound = tolerance;
    r.direction = (target - sites.col(arm.hand())).normalized();
    reasons.push_back(r);
  }
  return reasons;
}

}  // namespace ikd::ik
