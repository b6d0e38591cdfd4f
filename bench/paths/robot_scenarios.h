// Industrial-arm scenarios of the witness-based joint-path benchmark: UR5, Panda and iiwa14
// (ikd::robot::presets) with a smooth random joint motion (the witness) inside the position
// limits and at most half the declared velocity and acceleration limits, away from
// singularities; the request is the witness's TCP path (position only or full pose) from the
// witness's own start configuration, and for the -obstacles kinds spheres the witness clears by
// a gap, put preferably where a plain per-sample solve's links go. A feasible answer exists, so
// every collision or limit violation is the solver's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "ikd/planning/scene.h"
#include "ikd/robot/chain.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"
#include "robot_checker.h"

namespace ikd::bench::paths {

// The three arms, each loaded once: the preset with its collision model (or kLinkRadius
// capsules on every link: SetBodies), the ikd::robot::Robot built from it (seed atlas built) and
// the checker's own copy of the chain.
enum class ArmId { kUr5, kPanda, kIiwa14 };
inline constexpr ArmId kArms[] = {ArmId::kUr5, ArmId::kPanda, ArmId::kIiwa14};
inline constexpr double kLinkRadius = 0.05;  // m: every link capsule's radius (--nobodies)

struct RobotArm {
  ArmId id;
  const char* name;  // "ur5", "panda", "iiwa14"
  robot::ChainSpec spec;
  std::unique_ptr<robot::Robot> robot;
  RobotCheckModel model;    // no obstacles, position only
  Eigen::VectorXd ready;    // bench/robot/robot_bench.cc's ready pose
  bool line_down = false;   // robot_bench.cc's line direction: down, else towards the base
};
// Loaded on first use; aborts when the checker's kinematics (forward kinematics and link
// capsules) differ from the library's (ToolPose, LinkSegments) by more than 1e-9 anywhere on
// 200 random configurations.
const RobotArm& GetArm(ArmId id);
// Before the first GetArm: `bodies`: the presets' collision models (presets::*WithBody), their
// links checked against each other as the library does by default and by the checker (its own
// SelfPairs and distances); else kLinkRadius capsules on the joint origins, checked against each
// other by the library where `self_collision` says (the checker then counts no self-contact:
// those capsules are not the links' shapes).
void SetBodies(bool bodies, bool self_collision);
// What SetBodies chose, in a sentence for the tables' legend.
std::string LinksDescription();

struct RobotKind {
  ArmId arm;
  bool pose;       // full TCP pose targets, else TCP position only
  bool obstacles;  // spheres beside the witness
  // With obstacles: placed one by one where the plain per-sample solve, given the scene so
  // far, still goes, until it collides, else on another witness, up to 8 (-blocking kinds).
  bool blocking = false;
  // Position targets whose witness comes close to the arm itself, where a solve that folds the
  // arm differently may run into itself: -near-base (the TCP passes within kNearBase of the
  // base's vertical axis), -folded (two links at least three joints apart come within
  // kFoldedGap of each other, as a wrist folded toward the upper arm).
  enum class Self { kNone, kNearBase, kFolded } self = Self::kNone;
};
inline constexpr double kNearBase = 0.2;    // m, horizontal distance of the TCP from the base axis
inline constexpr double kFoldedGap = 0.04;  // m
// ur5-position, ur5-pose, panda-..., iiwa14-..., then the same with -obstacles, then the
// -blocking kinds of the arms and targets whose plain solve has room to leave the witness (all
// but the UR5's full pose, whose plain solve follows the witness's own branch), then every
// arm's -near-base and the UR5's and Panda's -folded position kinds.
const std::vector<RobotKind>& RobotKinds();
std::string RobotKindName(const RobotKind& kind);
std::optional<RobotKind> ParseRobotKind(std::string_view name);

struct RobotScenario {
  RobotKind kind;
  int index = 0;
  uint64_t fingerprint = 0;  // hash of the witness and the obstacles
  const RobotArm* arm = nullptr;
  planning::Scene scene;
  std::vector<robot::ToolTarget> targets;  // one per sample
  std::vector<double> times;               // 0, 0.01, ..., 2 s
  std::vector<ToolRequest> request;        // the checker's copy of the targets
  Eigen::VectorXd q0;                      // the witness's start: the request's start
  RobotCheckModel model;                   // with the obstacles and the target mode
  Eigen::MatrixXd witness_q;               // rows: samples
  RateMaxima witness;                      // WeightedRates of the witness
  double witness_min_sigma = 0.0;          // least singular value of the used Jacobian rows
  int draws = 0;                           // witnesses drawn until one was accepted
  int obstacles_near_plain = 0;            // obstacles the plain free-space path hits
  bool plain_collides = false;             // the plain free-space path hits an obstacle
};

// Deterministic in (seed, kind, index) alone.
RobotScenario MakeRobotScenario(const RobotKind& kind, int index, uint64_t seed);

// A scenario of `kind` with its arm and model set, and nothing else (no path, no q0): what
// MakeRobotScenario and the fixed paths start from.
RobotScenario EmptyRobotScenario(const RobotKind& kind, int index);

// The plain baseline: one RobotTracker made at q0 with default options (and the scene), and
// RobotTracker::Solve for every target in turn; numeric for 7R arms, as when the -blocking kinds'
// obstacles were placed where it goes and measured over seeds 1-20 (AUTO answers their unary
// solves by the closed form since; the scenario sets stay the same).
std::vector<robot::RobotIkResult> PlainSolve(const robot::Robot& robot,
                                             const planning::Scene* scene,
                                             const std::vector<robot::ToolTarget>& targets,
                                             const Eigen::VectorXd& q0);

// Rows of a matrix of joint values from results.
Eigen::MatrixXd JointRows(const std::vector<robot::RobotIkResult>& results);

}  // namespace ikd::bench::paths
