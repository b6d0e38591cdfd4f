// A preferred posture for redundant arms (issue 18: Spot's nominal arm configuration, bio_ik's
// regularization). A redundant arm reaches a target in a continuum of configurations; with a
// posture, single-pose IK answers the one of them that is locally least in
//
//   cost(q) = sum_j (d(q_j, seed_j)^2 + weight * d(q_j, posture_j)^2) / scale_j^2
//
// (d: the difference, modulo a full turn for a joint that turns freely; scale: a joint's
// range, or 1), so a large weight
// gives the configuration nearest the posture and a small one stays near the seed. The descent
// is ikd's own: pull the joints towards the cost's free minimum, re-project onto the target
// with the arm's constraint solver, keep the result when the cost fell (Kastenmeier & Vesely's
// accept-when-lower rule, with a deterministic displacement).
//
//   ik::Posture posture{.q = nominal, .weight = 10.0};
//   auto step = ik::SolvePoseWithPosture(arm, scene, target, options, seed_sites, posture);
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include <Eigen/Core>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ikd/ik/arm.h"
#include "ikd/ik/tracker.h"
#include "ikd/planning/scene.h"

namespace ikd::ik {

struct Posture {
  Eigen::VectorXd q;    // preferred joint values (chain arms: the arm's angles, arm.h)
  double weight = 1.0;  // of the distance to q against the distance to the seed, in (0, 1e6]

  // OK, or InvalidArgument naming "posture" (the size, a non-finite value) or "posture_weight".
  absl::Status Validate(int size) const;
};

// How the cost measures joint differences: per joint a scale (its range, or 1) and whether it
// turns freely (a continuous joint, a free angle: differences modulo a full turn; a limited
// joint's difference is the way it must sweep).
struct JointMetric {
  Eigen::VectorXd scale;
  std::vector<bool> turns;
};

// The cost above at q.
double PostureCost(const Eigen::VectorXd& q, const Eigen::VectorXd& seed, const Posture& posture,
                   const JointMetric& metric);

// Re-projection of a pulled configuration onto the target: the configuration reached (the
// target reached, within the limits, clear of the scene), or none.
using ProjectOntoTarget =
    std::function<std::optional<Eigen::VectorXd>(const Eigen::VectorXd& pulled)>;

// The Jacobian of the target's coordinates (hand position; tool position and rotation) at q.
using TargetJacobian = std::function<Eigen::MatrixXd(const Eigen::VectorXd& q)>;

// From q (on the target), at most `max_projections` pulls, each re-projected by `project`; a
// projection is kept when it lowers the cost (and `kept` is told so), otherwise the pull is
// halved. A pull is the cost's Newton step (towards its free minimum, per joint
// (seed_j + weight posture_j) / (1 + weight), a turning joint the shorter way round) restricted
// to the null space of the target's Jacobian in the cost's metric: the target moves only to
// second order, so the re-projection is short and does not undo the pull. `stop`, asked before
// every pull, ends the descent early (a cancelled call). Returns the last q kept.
Eigen::VectorXd DescendToPosture(Eigen::VectorXd q, const Eigen::VectorXd& seed,
                                 const Posture& posture, const JointMetric& metric,
                                 const TargetJacobian& jacobian, const ProjectOntoTarget& project,
                                 const std::function<void()>& kept,
                                 const std::function<bool()>& stop = {},
                                 int max_projections = 40);

// A chain arm's metric: scale 1; every angle turns but a planar joint's limited relative angle
// and a spatial bend (in [0, pi]).
JointMetric ChainJointMetric(const Arm& arm);

// SolvePose, then, when the target was reached, DescendToPosture over the arm's angles
// (ChainJointMetric; every re-projection a SolvePose from the pulled angles). The seed is the
// initial angles. `stop` ends the descent early with the configuration kept so far.
absl::StatusOr<IkResult> SolvePoseWithPosture(const Arm& arm, const planning::Scene* scene,
                                              const Eigen::Vector3d& target,
                                              const IkOptions& options,
                                              std::optional<Eigen::Matrix3Xd> initial_sites,
                                              const Posture& posture,
                                              const std::function<bool()>& stop = {});

}  // namespace ikd::ik
