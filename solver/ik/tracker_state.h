// Internal to the chain-arm tracker (tracker.cc, tracker_cost.cc): its state, scratch and helpers.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/constraints/solver.h"
#include "ikd/ik/arm.h"
#include "ikd/ik/tracker.h"
#include "ikd/planning/scene.h"

namespace ikd::ik {

// What ArmTracker holds through its pointer: the public calls as tracker.h documents them,
// then the machinery behind them.
class ArmTracker::State {
 public:
  State(const Arm& arm, const planning::Scene* scene, const IkOptions& options,
        std::unique_ptr<constraints::ConstraintSolver> solver, Eigen::Matrix3Xd initial);

  absl::StatusOr<IkResult> StepTo(const Eigen::Vector3d& target, double time);
  const Eigen::Matrix3Xd& sites() const { return current_; }
  void Restart(const Eigen::Matrix3Xd& sites);
  double Cost(const Eigen::Matrix3Xd& sites) const;
  double MinClearance(const Eigen::Matrix3Xd& sites, double cutoff) const;
  bool Project(const Eigen::Matrix3Xd& reference, Eigen::Matrix3Xd& sites);
  bool PushOut(Eigen::Matrix3Xd& sites);

 private:
  Eigen::Vector3d ClampTarget(const Eigen::Vector3d& target) const;
  bool SubStep(const Eigen::Vector3d& hand, int depth, IkResult& step);
  // Projects `sites` onto the limb lengths (and the violated joint limits), adding the solver
  // iterations to `iterations`; false when that fails.
  bool ProjectWithLimits(const Eigen::Matrix3Xd& reference, Eigen::Matrix3Xd& sites,
                         int& iterations);
  Eigen::Matrix3Xd StraightArm(const Eigen::Vector3d& hand, bool folded) const;
  // A Jacobian-free way to a configuration with the hand at `hand`, for when the projection
  // fails near full stretch; false if even that cannot be projected exactly.
  bool ReachFallback(const Eigen::Vector3d& hand, Eigen::Matrix3Xd& sites, IkResult& step);
  // The cost split by kind. The clearance and joint-limit terms are zero unless the arm is
  // inside the margin or beyond a limit ("constrained"); motion and bending are smooth.
  struct CostTerms {
    double clearance = 0.0, self_clearance = 0.0, joint_limit = 0.0, motion = 0.0, bending = 0.0;
    bool near_obstacle = false;  // see ConstraintTerms
    double Total() const { return clearance + self_clearance + joint_limit + motion + bending; }
    bool Constrained() const {
      return clearance > 0.0 || self_clearance > 0.0 || joint_limit > 0.0;
    }
  };
  CostTerms Terms(const Eigen::Matrix3Xd& sites) const;
  // False only when no pair of limbs of `sites` can be inside `margin`: bounded from the last
  // exact self-clearance (measured_*) and how far the sites moved since.
  bool MayBeInSelfMargin(const Eigen::Matrix3Xd& sites, double margin) const;
  // True when, by the same bound, no limb of `sites` is inside the self-clearance margin and
  // none is near an obstacle (kObstacleBand margins).
  bool FarFromContact(const Eigen::Matrix3Xd& sites) const;
  // Largest site move from measured_sites_ (infinite before the first measurement).
  double MovedSinceMeasured(const Eigen::Matrix3Xd& sites) const;
  // min(clearance, min over limbs of the obstacle clearance).
  double ObstacleClearanceBelow(const Eigen::Matrix3Xd& sites, double clearance) const;
  // The clearance and limit terms only; obstacles are searched out to `obstacle_reach` (at
  // least the buffered margin) for near_obstacle.
  CostTerms ConstraintTerms(const Eigen::Matrix3Xd& sites, double obstacle_reach = 0.0) const;
  void AddSmoothTerms(const Eigen::Matrix3Xd& sites, CostTerms& terms) const;
  // Unit direction of limb k (its nominal length: exact on the constraint surface).
  Eigen::Vector3d Direction(const Eigen::Matrix3Xd& sites, int k) const;

  // The optimization of one sub-step (Kastenmeier & Vesely step (c)): the best configuration
  // so far and its cost; every trial is re-projected and kept when the cost falls.
  struct Search {
    Eigen::Matrix3Xd& sites;
    CostTerms terms;
    IkResult& step;
  };
  // `far`: the sub-step began clear of every margin (and its prediction took the descent
  // step).
  void Optimize(double hand_step, bool far, Eigen::Matrix3Xd& sites, IkResult& step);
  // How far the smooth terms may move a site in one sub-step: twice the hand's move.
  double SmoothCap(double hand_step) const;
  // Projects candidate_ and keeps it in `search` when its cost is lower.
  bool TryCandidate(Search& search);
  void PushTrials(Search& search);
  void DescentTrials(double smooth_cap, Search& search);
  void RandomTrials(double hand_step, double smooth_cap, Search& search);
  bool OutOfTime() const;  // the time budget of this StepTo is spent

  // A diagonally preconditioned step down the cost gradient: smooth terms (motion, bending)
  // moving no site more than `smooth_cap`, clearance terms up to a tenth of the shortest limb.
  void DescentStep(const Eigen::Matrix3Xd& sites, double smooth_cap, Eigen::Matrix3Xd& step);
  void AddBendingGradient(const Eigen::Matrix3Xd& sites, Eigen::Matrix3Xd& gradient,
                          Eigen::VectorXd& curvature) const;
  // False when no limb is inside the margin (nothing added).
  bool AddClearanceGradients(const Eigen::Matrix3Xd& sites, Eigen::Matrix3Xd& gradient,
                             Eigen::VectorXd& curvature) const;
  // Gradient of w (margin - d)^2 for the limb k of `approach`; `spread` 1 for an obstacle, 2
  // for a pair of limbs (both move).
  bool AddClearanceGradient(int k, const planning::CapsuleApproach& approach, double weight,
                            double spread, Eigen::Matrix3Xd& gradient,
                            Eigen::VectorXd& curvature) const;
  // -gradient / curvature per site, in the arm's plane if planar, scaled to move <= cap.
  void NewtonStep(const Eigen::Matrix3Xd& gradient, const Eigen::VectorXd& curvature, double cap,
                  Eigen::Matrix3Xd& step) const;
  // Moves the movable ends of every limb closer than the margin to an obstacle or to another
  // limb outwards along the separating normal; false when nothing is in the margin.
  bool PushOutOfMargin(Eigen::Matrix3Xd& sites);
  // Adds to `sites` the move of limb k's movable ends away from `away_from` when the limb is
  // inside the (buffered) margin, scaled by `strength`.
  void PushLimb(int k, const planning::Shape& away_from, double strength, Eigen::Matrix3Xd& sites,
                bool& moved) const;
  void Commit(const Eigen::Matrix3Xd& sites);
  // current + momentum (current - previous): where the arm would coast to.
  void UpdateCoasting();

  const Arm* arm_;
  const planning::Scene* scene_;
  IkOptions options_;
  std::unique_ptr<constraints::ConstraintSolver> solver_;
  Eigen::Matrix3Xd current_, previous_;  // the last two committed configurations
  uint64_t step_index_ = 0;
  uint64_t rng_stream_ = 0;  // the seed of this StepTo's random stream
  bool rng_seeded_ = false;  // rng_ seeded with rng_stream_ (on the first draw of a step)
  std::mt19937_64 rng_;
  double sigma_;
  double momentum_ = 1.0;  // this sub-step's hand move over the last one, capped at 1
  std::chrono::steady_clock::time_point deadline_;  // of the current StepTo when budgeted
  std::vector<double> radii_;  // limb collision radii
  std::vector<double> inverse_length_;
  Eigen::Matrix3Xd coasting_;  // current + momentum (current - previous)
  Eigen::Matrix3Xd measured_sites_;       // the last StepTo's result (none: 0 columns) ...
  double measured_self_clearance_ = 0.0;  // ... its exact self-clearance ...
  double measured_obstacle_clearance_ = 0.0;  // ... and obstacle clearance (+inf: none)
  // Scratch storage, kept so that trials do not allocate.
  mutable planning::LimbPairCulling culling_;  // of Terms, PushOutOfMargin and MinClearance
  Eigen::Matrix3Xd predicted_;       // the configuration of SubStep
  Eigen::Matrix3Xd candidate_;       // the trial configuration of Optimize
  Eigen::Matrix3Xd push_origin_;     // the configuration PushOutOfMargin pushes from
  Eigen::Matrix3Xd descent_, smooth_gradient_, clearance_gradient_, clearance_step_;
  Eigen::VectorXd curvature_;
  std::vector<constraints::DistanceConstraint> limit_constraints_;  // limbs + active joint limits
  std::vector<bool> limit_active_;
};

}  // namespace ikd::ik
