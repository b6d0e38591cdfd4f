// Closed-form inverse kinematics of revolute arms by subproblem decomposition (Paden-Kahan
// subproblems 1-4 in the least-squares forms of Elias & Wen's IK-Geo): every branch of a tool
// pose in microseconds, for the arm families whose axes allow it, found from the chain's own
// geometry whether it came from a URDF, a DH table or a preset:
//   kThreeParallel:        6R with axes 2, 3, 4 parallel and axes 5, 6 intersecting (the UR
//                          family), or the same read from the tool back to the base;
//   kSphericalWristElbow:  6R with axes 4, 5, 6 through one point and axes 2, 3 parallel (Puma,
//                          KUKA KR, ABB, Fanuc class);
//   kSphericalWristShoulder: 6R with axes 4, 5, 6 through one point and axes 1, 2 intersecting
//                          (a 7R arm with one joint locked: the iiwa14 at joint 3, the Panda at
//                          joint 7 read from the tool back).
// A 7R arm is solved with one joint locked at a value the caller gives (sweep it for the
// redundancy). Geometry tests tolerate round-off (AnalyticOptions::geometry_tolerance); the
// deviation is reported (geometry_error) and every branch is polished by Newton steps on the
// chain's exact kinematics, so what the tolerance costs is left in no answer.
//
//   auto ik = ikd::robot::AnalyticIk::Create(ikd::robot::presets::Ur5());
//   for (const AnalyticSolution& s : ik->Solve(X_WT)) Use(s.q);   // up to 8 branches
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "absl/status/statusor.h"
#include "ikd/robot/chain.h"
#include "ikd/robot/robot.h"

namespace ikd::robot {

namespace internal {
struct RawSolution;  // robot/analytic_families.h
}  // namespace internal

enum class AnalyticFamily { kThreeParallel, kSphericalWristElbow, kSphericalWristShoulder };
const char* AnalyticFamilyName(AnalyticFamily family);

struct AnalyticOptions {
  // rad (angle between axes called parallel) and m (distance between axes called intersecting).
  double geometry_tolerance = 1e-6;
  // A branch whose tool pose misses the target by more than this (m, rad) after polishing is
  // not a solution (the target is out of reach on that branch).
  double tolerance = 1e-10;
  // Every full-turn copy q + 2 pi k within a joint's limits as a solution of its own (a UR5's
  // +-2 pi joints give up to 64 per branch; at most kMaxTurnCopies per joint, those nearest
  // `near`); otherwise one copy per branch, nearest `near`.
  bool every_turn = false;
  // 7R arms: the joint to lock (0-based); -1 tries joint 3, then joint 7, then the others.
  int locked_joint = -1;

  // OK, or InvalidArgument naming the field and its bound.
  absl::Status Validate() const;
};

struct AnalyticSolution {
  Eigen::VectorXd q;  // within the joint limits
  // A representative of a continuum: the wrist axes aligned (only a sum of two joints is
  // fixed) or the wrist centre on the first axis (that joint is free); the free joint is 0.
  bool singular = false;
  int branch = 0;               // which branch (0-7) of the decomposition
  double position_error = 0.0;  // m, by the chain's forward kinematics
  double rotation_error = 0.0;  // rad
};

// How a tool pose stands to the arm's reach, by its closed form.
struct AnalyticReach {
  bool within_limits = false;  // some branch is on the pose within every joint limit
  bool past_limits = false;    // some branch is on the pose, but only past a joint limit
  // Where no branch is on the pose: the least position (m) and rotation (rad) miss of the
  // decomposition's least-squares branches (about how far out of reach the pose is; +inf where
  // it gave none); 0 where some branch is on it.
  double position_miss = 0.0, rotation_miss = 0.0;
};

class AnalyticIk {
 public:
  static constexpr int kMaxTurnCopies = 4;

  // Errors (InvalidArgument): a prismatic joint; not 6 moving joints (7 with a joint to lock);
  // an arm in no family, with every family's failed condition named ("kThreeParallel: axes 3
  // and 4 not parallel (0.2 rad)").
  static absl::StatusOr<AnalyticIk> Create(const ChainSpec& spec,
                                           const AnalyticOptions& options = {});

  // Every branch of tool pose X_WT within the joint limits, in branch order. 7R arms: the
  // locked joint is held at `locked_value` (outside its limits: no solution). `near`, when
  // given, picks each joint's full-turn copy (see every_turn).
  std::vector<AnalyticSolution> Solve(const Eigen::Isometry3d& X_WT, double locked_value = 0.0,
                                      const Eigen::VectorXd* near = nullptr) const;

  // Every solution, nearest `seed` first (least sum of squared joint differences, each joint's
  // full-turn copy nearest the seed's): the branches of a 6R arm; for a 7R arm those at the
  // seed's own value of the locked joint and at `samples` values spread evenly across its limits
  // (+-pi where it has none).
  std::vector<AnalyticSolution> SolveByDistance(const Eigen::Isometry3d& X_WT,
                                                const Eigen::VectorXd& seed,
                                                int samples = 64) const;
  // The first of SolveByDistance; none when the pose has no branch.
  std::optional<AnalyticSolution> SolveNearest(const Eigen::Isometry3d& X_WT,
                                               const Eigen::VectorXd& seed, int samples = 64) const;
  // SolveByDistance's solutions, nearest `seed` first, handed to `take` until it takes one
  // (returns true); that one, or none. Each branch comes at its full-turn copy nearest the seed,
  // ordered by that copy before it is checked, and only the branches handed over are checked
  // (forward kinematics, polish); a spherical wrist's branches are made only when their arm
  // part, keyed by the distance of its own joints, comes first: the nearest clear branch of a
  // 7R sweep costs the arm parts of every value and the wrists and checks of a few.
  std::optional<AnalyticSolution> FirstByDistance(
      const Eigen::Isometry3d& X_WT, const Eigen::VectorXd& seed, int samples,
      const std::function<bool(const AnalyticSolution&)>& take) const;
  // FirstByDistance over the given values of a 7R arm's locked joint only (a 6R arm: its
  // branches, the values unused).
  std::optional<AnalyticSolution> FirstByDistanceAt(
      const Eigen::Isometry3d& X_WT, const Eigen::VectorXd& seed,
      std::span<const double> locked_values,
      const std::function<bool(const AnalyticSolution&)>& take) const;

  // Where a 7R arm's self-motion takes its locked joint as the arm follows the straight pose
  // path from `seed` to X_WT by resolved rates (the joints' least-norm motion), clamped into the
  // joint's limits; 0 for a 6R arm. The closed form at this value is the
  // continuation's answer without its cost: a small move keeps the branch and the redundancy
  // where the arm is, as the numeric solve's continuation does. IkSolver::kAuto answers a 7R
  // arm's unary solve (starts kNearestFirst) at this value; paths' first samples (kGivenFirst)
  // stay numeric.
  double ContinuedLockedValue(const Eigen::Isometry3d& X_WT, const Eigen::VectorXd& seed) const;

  // Whether X_WT is reached within the limits, only past them, or not at all (the least miss).
  // Exact for a 6R arm (its branches are every solution); a 7R arm's answer is for the seed's
  // value of the locked joint and `samples` values across its range.
  AnalyticReach Reach(const Eigen::Isometry3d& X_WT, const Eigen::VectorXd& seed,
                      int samples = 64) const;

  AnalyticFamily family() const { return family_; }
  bool reversed() const { return reversed_; }   // the family read from the tool back
  int locked_joint() const { return locked_; }  // -1 for a 6R arm
  int num_joints() const { return static_cast<int>(h_.size()); }
  // The largest deviation of the axes from the family's conditions (rad or m).
  double geometry_error() const { return geometry_error_; }

 private:
  AnalyticIk() = default;
  // Joint values on the stack (at most 7 joints): a 7R sweep makes hundreds of branches a pose.
  using JointValues = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 7, 1>;
  // A branch of the decomposition as joint values (the locked joint at its value), unchecked.
  struct Branch {
    JointValues q;
    bool singular = false;
    int index = 0;
  };
  // Every branch of X_WT at one value of the locked joint (none outside its limits).
  std::vector<Branch> Branches(const Eigen::Isometry3d& X_WT, double locked_value) const;
  // One value of the locked joint: the 6R arm in solve order and the pose it solves for
  // (defined in analytic_ik.cc).
  struct Frame;
  bool FrameAt(const Eigen::Isometry3d& X_WT, double locked_value, Frame& frame) const;
  // A raw solution (solve order) as joint values.
  JointValues JointsOf(const internal::RawSolution& raw, double locked_value) const;
  // The squared distance from `seed` of an arm part's joints and the locked joint, each at its
  // copy nearest the seed; none where one has no copy within its limits.
  std::optional<double> PartDistance(const internal::RawSolution& part, double locked_value,
                                     const Eigen::VectorXd& seed) const;
  // Joint j's full-turn copy of `value` nearest `near` (or 0) within its limits, if any.
  std::optional<double> NearestCopy(int j, double value, const Eigen::VectorXd* near) const;
  // Forward kinematics of the exact chain (product of exponentials) as a rotation and a
  // translation: one quaternion turn of a fixed vector per joint.
  struct ToolQuaternion {
    Eigen::Quaterniond rotation;
    Eigen::Vector3d translation;
  };
  // The half angles' cosines and sines of the last q a joint took: branches share joint values
  // (a UR5's 8 share 2 values of joint 1, 4 of joints 5 and 6; a 7R arm its locked value).
  struct HalfAngles {
    std::array<double, 7> q, cos, sin;
    std::array<bool, 7> known{};
  };
  ToolQuaternion ToolQuaternionAt(const Eigen::Ref<const Eigen::VectorXd>& q,
                                  HalfAngles& memo) const;
  // The geometric Jacobian (translation rows, then rotation) of the tool at `tool` (its
  // position at q): every joint's column, or the free joints' only (the locked one left out).
  using ToolJacobianMatrix = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 7>;
  ToolJacobianMatrix JacobianAt(const Eigen::Ref<const Eigen::VectorXd>& q, HalfAngles& memo,
                                const Eigen::Vector3d& tool, bool with_locked) const;
  Eigen::Quaterniond HalfTurn(int j, double value, HalfAngles& memo) const;
  // The pose errors (m, rad) of q against a target given both ways (its quaternion spares the
  // check of every branch a rotation matrix), after Newton steps where they are above
  // round-off and below a miss.
  std::pair<double, double> Polish(const Eigen::Isometry3d& X_WT,
                                   const Eigen::Quaterniond& target_rotation, HalfAngles& memo,
                                   Eigen::Ref<Eigen::VectorXd> q) const;
  // every_turn's copies of q (at most kMaxTurnCopies per joint); none when a joint has none.
  std::vector<double> LockedSamples(int count) const;  // none for a 6R arm
  std::vector<Eigen::VectorXd> TurnCopies(const Eigen::VectorXd& q,
                                          const Eigen::VectorXd* near) const;
  // q's joints moved to their full-turn copies nearest `near` within the limits; false when a
  // joint has none there.
  bool ToNearestCopy(Eigen::Ref<Eigen::VectorXd> q, const Eigen::VectorXd* near) const;

  AnalyticOptions options_;
  AnalyticFamily family_ = AnalyticFamily::kThreeParallel;
  bool reversed_ = false;
  int locked_ = -1;
  double geometry_error_ = 0.0;
  // The arm at q = 0 in product-of-exponentials form (world frame): joint k turns about the
  // line along h_[k] through origin_[k]; home_ is the tool pose.
  std::vector<Eigen::Vector3d> h_, origin_;
  std::vector<Eigen::Vector3d> point_;  // per joint: the family's chosen point on its axis
  // ToolQuaternionAt's fixed vectors: origin_[j + 1] - origin_[j], then the tool's translation
  // less the last origin; and home_'s rotation.
  std::vector<Eigen::Vector3d> link_;
  Eigen::Quaterniond home_rotation_ = Eigen::Quaterniond::Identity();
  std::array<int, 6> free_{};           // the joints solved for, base to tool
  std::array<double, 6> sign_{};        // in solve order: h[k] = sign[k] h[1] where parallel
  Eigen::Isometry3d home_ = Eigen::Isometry3d::Identity();
  std::vector<JointLimits> limits_;  // per joint; continuous joints: +-inf
};

// The robot's closed form with default options, built on first use and kept with the robot;
// null when its arm fits no family.
const AnalyticIk* AnalyticIkOf(const Robot& robot);

}  // namespace ikd::robot
