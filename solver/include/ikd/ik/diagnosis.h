// Why an answer is not on its target, read from the answer itself (its configuration, the
// target, the arm and the scene), not from the solver's trail: the pairs in collision or
// inside the safety margin with their obstacle and distance, the joints at a position limit,
// a target beyond the reach, a singular tool Jacobian, the error left. What a failed or clamped
// Solve answers beside its status (issue 18: Intrinsic's per-candidate debug information).
//
//   std::vector<ikd::ik::Reason> why = ikd::ik::DiagnoseChain(arm, &scene, step.sites, target,
//                                                              options.safety_margin);
#pragma once

#include <string>
#include <vector>

#include <Eigen/Core>

#include "ikd/ik/arm.h"
#include "ikd/planning/scene.h"

namespace ikd::ik {

struct Reason {
  enum class Kind {
    kCollision,      // `link` penetrates `obstacle` or `other_link`: distance < 0
    kNearCollision,  // within the safety margin: 0 <= distance < margin (= bound)
    kJointLimit,     // angle `joint` at or past its position limit: value, bound
    kOutOfReach,     // the target lies `distance` beyond the reachable shell
    kSingular,       // the tool Jacobian's least singular value `value` (`bound`: the
                     // threshold); `direction`: its left singular vector's linear part (its
                     // rotation part where that is nil), unit, world: what the tool can barely do
    kResidual,       // the hand (tool) is `value` m from its target (`bound`: the tolerance;
                     // `direction`: towards the target)
    kRotationResidual,  // an industrial arm's tool is turned `value` rad from its target
                        // orientation (`bound`: the tolerance; `direction`: the axis)
  };
  Kind kind = Kind::kResidual;
  int link = -1;        // limb (chain arm) or link (industrial arm); -1: none
  int other_link = -1;  // the other limb / link of a self-collision; -1: none
  int obstacle = -1;    // index into Scene::obstacles(); -1: none
  int joint = -1;       // index into the answer's joint positions; -1: none
  double distance = 0.0;
  double value = 0.0;
  double bound = 0.0;
  Eigen::Vector3d direction = Eigen::Vector3d::Zero();
};

const char* ReasonKindName(Reason::Kind kind);

// Reasons are listed worst first within each kind: collisions (every limb-obstacle and limb-limb
// pair below zero), then the closest pair inside the margin, joints at their limits (within
// kAtLimit rad), the reach, the hand error (above 1e-9 of the reach). `scene` may be null.
std::vector<Reason> DiagnoseChain(const Arm& arm, const planning::Scene* scene,
                                  const Eigen::Matrix3Xd& sites, const Eigen::Vector3d& target,
                                  double safety_margin);

// A joint within this of a position limit (or past it) is at the limit, rad.
inline constexpr double kAtLimit = 1e-6;

}  // namespace ikd::ik
