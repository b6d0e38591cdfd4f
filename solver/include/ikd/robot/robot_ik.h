// Inverse kinematics of industrial arms by Cartesian continuation (Kastenmeier & Vesely 1996
// step (a)-(b), with tool sites in place of the hand): the tool sites are moved in small steps
// from their current pose to the target pose (position interpolated linearly, orientation by
// slerp), and after every step the matrix method restores the link clusters with the base and
// the driven tool sites fixed. A step that does not converge (a singular configuration on the
// way) is bisected. A joint that would pass a limit is locked at it for the rest of the move by
// one more distance constraint across its hinge (an active set, as the planar arms' bend
// limits), so a redundant arm goes on with its other joints. A single-pose solve starts from
// the robot's seed atlas entry or the given configuration whose tool is nearest the target
// (SolveStarts) and restarts from the next nearest, then from seeds drawn from the options'
// seed, so a solve is deterministic. The steps of a path (StepTo outside a Solve) start from
// the least joint motion, weighted by the joints' velocity limits, that moves the tool
// (Whitney's weighted resolved rate), with the redundant directions drawing joints off their
// limits and back to the path's starting posture (solver/robot/motion.h): slow tool motion never
// needs fast joints, and a closed tool path gives a closed joint path. A single-pose Solve
// steps by secant (its path is only a way to get there).
//
// One vocabulary with the chain-arm tracker (ik/tracker.h): RobotIkOptions / RobotIkResult here
// are IkOptions / IkResult there, both with one status enum, planning::StepStatus (the wire's
// StepStatus values), StepTo is a tracker's move to its next target, and RobotPathSummary's
// counts take PathSummary's names.
//
//   auto robot = ikd::robot::Robot::Create(ikd::robot::presets::Panda());
//   auto target = ikd::robot::ToolTarget::Pose(p_WT, quaternion_WT);  // or ::Position(p_WT)
//   auto result = ikd::robot::SolveRobotIk(*robot, *target, robot->MidRange(), options);
//   if (result.ok() && result->status == ikd::planning::StepStatus::kReached) use(result->q);
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "absl/status/statusor.h"
#include "ikd/constraints/solver.h"
#include "ikd/planning/scene.h"
#include "ikd/planning/step_status.h"
#include "ikd/robot/robot.h"

namespace ikd::robot {

struct ToolTarget {
  Eigen::Vector3d position = Eigen::Vector3d::Zero();     // of the tool centre point, world
  std::optional<Eigen::Quaterniond> orientation;         // none: a position-only target

  // Errors name the field: non-finite values, a quaternion whose norm is not 1 within 1e-6.
  static absl::StatusOr<ToolTarget> Position(const Eigen::Vector3d& position);
  static absl::StatusOr<ToolTarget> Pose(const Eigen::Vector3d& position,
                                         const Eigen::Quaterniond& orientation);
  TargetMode mode() const { return orientation ? TargetMode::kPose : TargetMode::kPosition; }
};

// Where the attempts of a single-pose solve start. The seed atlas (seed_atlas.h) is the robot's
// fixed sample of configurations; random seeds follow when the listed starts are used up.
enum class SolveStarts {
  // The tracker's configuration and the RobotTracker::kAtlasStarts atlas entries nearest the
  // target, in order of their tool's distance to it: the first answer found, which need not be
  // the one nearest the given configuration (TRAC-IK's "Speed" mode does the same).
  kNearestFirst,
  // The tracker's configuration first (its branch when continuation from it gets there: the
  // first target of a path), then the nearest atlas entries.
  kGivenFirst,
  // The tracker's configuration, then random seeds only (no atlas is built).
  kGivenThenRandom,
};

// What answers a single-pose solve. kAuto: the closed form (analytic_ik.h) for pose targets of
// arms that have one, numeric otherwise and where it finds no clear branch; a 7R arm at the value
// of its locked joint that continuation to the target reaches (AnalyticIk::ContinuedLockedValue),
// else the joint's sweep; numeric with starts other than kNearestFirst (a path's first target).
// kAnalytic: the closed form for 7R arms too (AnalyticIk::SolveNearest's sweep), and an arm
// without one is refused when the tracker is created. kNumeric: never the closed form.
enum class IkSolver { kAuto, kAnalytic, kNumeric };

struct RobotIkOptions {
  uint64_t seed = 1;                 // restart seeds are drawn from it: same seed, same answer
  double position_tolerance = 1e-5;  // m: tool position error of a success, by forward kinematics
  double rotation_tolerance = 1e-5;  // rad: tool rotation error of a success (pose targets)
  double max_step_fraction = 1.0;    // largest tool-site move per step, fraction of the spacing
  int max_bisections = 8;            // halvings of a step that does not converge
  int max_restarts = 30;             // new seeds after a blocked or singular path
  int max_steps = 4000;              // projections per attempt: bounds the work of a solve
  // Wall-clock budget of a single-pose solve (s; 0: none): no new attempt starts once the solve
  // has run this long (TRAC-IK's timeout; max_restarts still bounds the attempts). With a budget
  // the answer depends on the machine's speed: leave it 0 where answers must be reproducible.
  double time_budget = 0.0;
  // Starts of a single-pose solve (Solve, SolveRobotIk); paths (StepTo) always continue from
  // where they are. See SolveStarts.
  SolveStarts starts = SolveStarts::kNearestFirst;
  IkSolver solver = IkSolver::kAuto;
  // Obstacle avoidance (a tracker with a scene; Kastenmeier & Vesely step (c)): after a step
  // whose link capsules come closer than the margin to an obstacle, this many random
  // displacements of the free sites, each re-projected and kept when the cost falls (clearance
  // below the margin, joint motion). Only redundant arms (more joints than the target fixes)
  // have room to move.
  int trials_per_step = 24;
  double safety_margin = 0.01;       // m
  double clearance_weight = 1e6;     // per m^2 below the margin
  double motion_weight = 1.0;        // per rad^2 of joint motion over the step

  // OK, or InvalidArgument naming the field and its bound.
  absl::Status Validate() const;
};

struct RobotIkResult {
  planning::StepStatus status = planning::StepStatus::kNotConverged;
  int iterations = 0;            // chord iterations of all projections
  Eigen::VectorXd q;             // joint values (the closest attempt's when not solved)
  Eigen::Matrix3Xd sites;
  double position_error = 0.0;   // |p(q) - target| by forward kinematics (m)
  double rotation_error = 0.0;   // angle of R(q)^T R_target (rad); 0 for position targets
  int restarts = 0;
  int projections = 0;
  double max_joint_change = 0.0;  // largest |q_k(end) - q_k(start)| of the move (rad)
  // Largest |q_k(end) - q_k(start)| / (max_velocity_k * duration); 0 without a duration.
  double velocity_ratio = 0.0;
  // Min signed distance of the link capsules to the scene and between the link pairs
  // self_collision.h checks (m); +infinity with neither.
  double min_clearance = std::numeric_limits<double>::infinity();
  int trials_accepted = 0;
  IkSolver solver = IkSolver::kNumeric;  // which answered: kAnalytic or kNumeric
};

// Moves an arm's tool along successive targets by continuation from its current joint values
// (paths: each target continues from the last; a blocked move leaves the arm where it was).
class RobotTracker {
 public:
  // `robot` must outlive the tracker. Errors: invalid options, q0 of the wrong size or
  // non-finite.
  // `scene` (may be null: free space) must outlive the tracker and may change between moves.
  static absl::StatusOr<RobotTracker> Create(const Robot& robot, const RobotIkOptions& options,
                                             const Eigen::VectorXd& q0,
                                             const planning::Scene* scene = nullptr);

  // For one constraint model: a step projector, a final one at full precision, and the step
  // projector of single-pose attempts, which iterates longer. Each is built on first use:
  // factorizing the model costs far more than a closed-form answer that needs none of them.
  struct Projectors {
    explicit Projectors(const constraints::ConstraintModel* model) : model(model) {}
    const constraints::ConstraintModel* model;
    constraints::ConstraintSolver& Step();
    constraints::ConstraintSolver& Polish();
    constraints::ConstraintSolver& Reach();

   private:
    std::unique_ptr<constraints::ConstraintSolver> step_, polish_, reach_;
  };

  // Drives the tool to `target`; the status says whether it got there (within the tolerances)
  // and within the joint limits, and, given the move's duration in seconds (> 0), whether
  // every joint kept within its velocity limit.
  RobotIkResult StepTo(const ToolTarget& target, double duration = 0.0);

  // Single-pose IK from the current configuration: StepTo, then restarts from new seeds drawn
  // from the options' seed when blocked (as SolveRobotIk). The tracker ends at the answer (the
  // closest attempt's configuration when not solved). Reusing one tracker for many solves
  // (Reset to the seed, then Solve) saves building its solvers each time.
  RobotIkResult Solve(const ToolTarget& target);
  // The closed form's answer to a Solve (RobotIkOptions::solver): the branch nearest the
  // tracker's configuration clear of the safety margin (else clear of the scene), the tracker
  // moved there; none where it does not apply or finds no clear branch.
  std::optional<RobotIkResult> SolveAnalytic(const ToolTarget& target);
  // Seed atlas entries a Solve tries (RobotIkOptions::starts) before random seeds.
  static constexpr int kAtlasStarts = 8;

  const Eigen::VectorXd& q() const { return q_; }
  // Min clearance of the link capsules of q to the scene (+infinity without one).
  double MinClearance(const Eigen::VectorXd& q) const;
  const Eigen::Matrix3Xd& sites() const { return sites_; }
  // Jumps to joint values q (a restart seed; the posture later path steps keep to); sizes are
  // the caller's to check.
  void Reset(const Eigen::VectorXd& q);

 private:
  RobotTracker(const Robot& robot, const RobotIkOptions& options, Projectors position,
               Projectors pose, const planning::Scene* scene);
  // Clearance below the margin and joint motion from q_before: what step (c) lowers.
  double Cost(const Eigen::VectorXd& q, const Eigen::VectorXd& q_before) const;
  // Whether every joint of q is within its velocity limit from the move's start over its
  // duration (always, for a move without a duration).
  bool WithinVelocityLimits(const Eigen::VectorXd& q) const;
  // Kastenmeier & Vesely step (c) after an accepted step (see RobotIkOptions).
  void AvoidObstacles(TargetMode mode, const Eigen::VectorXd& q_before, RobotIkResult& result);
  // One trial of step (c): the candidate sites projected, and taken (with `cost` lowered to its
  // cost) when the projection converges within the limits at a lower cost.
  bool TryCandidate(TargetMode mode, Eigen::Matrix3Xd candidate, const Eigen::VectorXd& q_before,
                    double& cost, RobotIkResult& result);
  // The tool's way from `start` to `goal`, `travel` long (tool-site metres), for one move.
  struct Path {
    Eigen::Isometry3d start, goal;
    double travel = 0.0;
    TargetMode mode = TargetMode::kPose;
  };
  // Moves the tool sites along `path` from parameter t0 to t1 (already a short step); bisects
  // on failure. False when blocked (limit) or not converged; the tracker then keeps its state.
  bool Step(const Path& path, double t0, double t1, int depth, RobotIkResult& result,
            bool& limit_hit);
  // Locks every joint of q outside its limits at the bound it crossed; false when a locked
  // joint is crossed again or the locked set cannot be built.
  bool LockViolatedJoints(const Eigen::VectorXd& q, TargetMode mode);
  // The model and projectors with the locks of lock_key_.
  struct LockedSet;
  absl::StatusOr<LockedSet> BuildLockedSet(TargetMode mode) const;
  Projectors& ProjectorsFor(TargetMode mode);
  // The listed starts of a Solve (RobotIkOptions::starts): the `count` seed atlas entries
  // nearest the target and the configuration the solve began from (`given`, its tool at
  // X_given) in order of distance.
  struct Start {
    Eigen::VectorXd q;
    bool given = false;
  };
  std::vector<Start> Starts(const ToolTarget& target, const Eigen::VectorXd& given,
                            const Eigen::Isometry3d& X_given, int count) const;
  // Restores the constraints to full precision at the end of a move; false if that fails.
  bool Polish(TargetMode mode, RobotIkResult& result);
  // The result at q_: its errors by forward kinematics, limits, clearance (`clearance`: q_'s,
  // where the caller has just computed it) and status.
  RobotIkResult Finish(const ToolTarget& target, const Eigen::VectorXd& q_start, double duration,
                       planning::StepStatus status, RobotIkResult result,
                       std::optional<double> clearance = std::nullopt) const;

  const Robot* robot_;
  RobotIkOptions options_;
  Projectors position_, pose_;
  // The joints locked during the current move, with their model and projectors.
  // A lock holds its joint at a bound by a distance the bound alone fixes, so the model and
  // projectors of a set of locks are kept for the next move that locks the same joints at the
  // same bounds in the same order (building them costs as much as a dozen projections).
  // Key: per lock 2 joint + (1 at the upper bound), then the mode; lock_key_ holds the current
  // move's locks in that form.
  struct LockedSet {
    std::unique_ptr<constraints::ConstraintModel> model;
    Projectors projectors;
  };
  static constexpr size_t kMaxLockedSets = 64;
  std::vector<int> lock_key_;
  std::map<std::vector<int>, LockedSet> locked_sets_;
  Projectors* locked_projectors_ = nullptr;  // in locked_sets_; null: no lock in this move
  Eigen::VectorXd q_;
  Eigen::Matrix3Xd sites_;
  // The last accepted step's site motion and its length in tool-site metres: the predictor.
  Eigen::Matrix3Xd last_motion_;
  double last_interval_ = 0.0;
  // The current move's start and duration (0: none): step (c) keeps within the velocity limits.
  Eigen::VectorXd move_start_;
  double move_duration_ = 0.0;
  const planning::Scene* scene_ = nullptr;
  std::mt19937_64 rng_;
  Eigen::VectorXd motion_weights_;  // internal::MotionWeights: a path step's metric
  // The configuration a path started from (Create, Reset, a solved Solve): path steps of a
  // redundant arm are drawn back to it (internal::PullToPosture).
  Eigen::VectorXd posture_;
  double sigma_ = 0.0;  // trial displacement (m), adapted by the 1/5 success rule
  int bisection_limit_ = 0;  // halvings of a step in the current attempt
  bool solving_ = false;     // in a Solve: steps project with Projectors::Reach
};

// Single-pose IK: continuation from `seed` (e.g. Robot::MidRange()), then from new seeds drawn
// inside the limits when a path is blocked (RobotTracker::Solve on a new tracker). Errors only
// for bad input (sizes, non-finite values, invalid options).
absl::StatusOr<RobotIkResult> SolveRobotIk(const Robot& robot, const ToolTarget& target,
                                           const Eigen::VectorXd& seed,
                                           const RobotIkOptions& options);

}  // namespace ikd::robot
