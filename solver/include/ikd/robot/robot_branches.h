// Every solution of one tool target (issue 18: all IK branches): a 6-DOF arm has up to 8
// (shoulder, elbow and wrist each one way or the other), a redundant one a continuum of which
// this returns distinct samples. Single-pose solves by continuation from the seed, from the
// seed atlas entries whose tools are nearest the target (half the attempts) and from random
// configurations inside the joint limits (each attempt converges to the branch of its start),
// every success checked by forward kinematics; solutions closer than
// `min_separation` to one already found (joint angles compared modulo a full turn: q and
// q + 2 pi are one pose of the arm) are the same branch. Sorted by distance to the seed.
//
//   auto all = ikd::robot::SolveBranches(*robot, *target, seed, options, {.max_solutions = 8});
//   for (const RobotIkResult& branch : *all) Use(branch.q);   // nearest to the seed first
#pragma once

#include <functional>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/planning/scene.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"

namespace ikd::robot {

struct BranchOptions {
  int max_solutions = 8;  // the nearest this many to the seed, >= 1
  int attempts = 128;     // single-pose solves, the seed's first, >= 1
  double min_separation = 0.1;  // rad: the largest joint difference between two branches
  // rad: only solutions whose largest joint difference to the seed is at most this.
  double max_seed_distance = std::numeric_limits<double>::infinity();

  // OK, or InvalidArgument naming the field and its bound.
  absl::Status Validate() const;
};

// The largest difference between two joint vectors, each joint's taken modulo a full turn.
double BranchDistance(const Eigen::VectorXd& a, const Eigen::VectorXd& b);

// The distinct solutions of `target` (status kReached each: with a `scene`, clear of it),
// nearest to `seed` first (by BranchDistance); empty when no attempt solves it. `stop`, asked
// before every attempt, ends the search with Cancelled (a cancelled call or its deadline).
// Other errors only for bad input (sizes, non-finite values, invalid options).
absl::StatusOr<std::vector<RobotIkResult>> SolveBranches(
    const Robot& robot, const ToolTarget& target, const Eigen::VectorXd& seed,
    const RobotIkOptions& options, const BranchOptions& branches,
    const planning::Scene* scene = nullptr, const std::function<bool()>& stop = {});

}  // namespace ikd::robot
