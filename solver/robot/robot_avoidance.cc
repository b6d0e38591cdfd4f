// Kastenmeier & Vesely step (c) for industrial arms: after an accepted step whose links come near
// an obstacle or each other, random displacements of the free sites, each re-projected and kept
// when the cost falls (RobotIkOptions::trials_per_step).
#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "ikd/robot/robot_ik.h"
#include "motion.h"

namespace ikd::robot {
namespace {

// Step (c) keeps the links this many safety margins clear, above the margin itself, as the chain
// arms' tracker does (their kMarginBuffer).
constexpr double kTrialBuffer = 1.25;
// Sites farther than this fraction of the spacing from the forward kinematics of their own
// angles are a mirror image, not the arm (a converged step projection is within 1e-5).
constexpr double kMirrorMismatch = 1e-3;

// The clearances step (c) keeps above kTrialBuffer margins, the arm's own links at
// kSelfBufferShare of it (motion.h).
std::vector<double> TrialClearances(const Robot& robot, const planning::Scene* scene,
                                    const Eigen::VectorXd& q, double margin) {
  return internal::LinkClearances(robot, scene, q, internal::SelfShift(kTrialBuffer, margin));
}

// Step (c)'s cost of joint values q whose TrialClearances are `clearances`: the motion from
// q_before, and how far each clearance falls short of kTrialBuffer margins.
double TrialCost(const RobotIkOptions& options, const Eigen::VectorXd& q,
                 const Eigen::VectorXd& q_before, const std::vector<double>& clearances) {
  const double margin = kTrialBuffer * options.safety_margin;
  double cost = options.motion_weight * (q - q_before).squaredNorm();
  for (const double d : clearances) {
    cost += options.clearance_weight * std::pow(std::max(0.0, margin - d), 2);
  }
  return cost;
}

}  // namespace

double RobotTracker::Cost(const Eigen::VectorXd& q, const Eigen::VectorXd& q_before) const {
  return TrialCost(options_, q, q_before,
                   TrialClearances(*robot_, scene_, q, options_.safety_margin));
}

bool RobotTracker::WithinVelocityLimits(const Eigen::VectorXd& q) const {
  if (!(move_duration_ > 0.0)) return true;
  for (int k = 0; k < q.size(); ++k) {
    const auto& limits = robot_->spec().joints[k].limits;
    if (!limits || !std::isfinite(limits->max_velocity)) continue;
    if (std::abs(q[k] - move_start_[k]) > limits->max_velocity * move_duration_) return false;
  }
  return true;
}

bool RobotTracker::TryCandidate(TargetMode mode, Eigen::Matrix3Xd candidate,
                                const Eigen::VectorXd& q_before, double& cost,
                                RobotIkResult& result) {
  auto summary = ProjectorsFor(mode).Step().ProjectPositions(sites_, candidate);
  ++result.projections;
  if (!summary.ok() || !summary->converged()) return false;
  result.iterations += summary->iterations;
  Eigen::VectorXd q = robot_->AnglesFromSites(candidate, &q_);
  // A displacement of the order of the spacing can flip a site through the face it is tied to:
  // every distance holds, but the sites are no longer the arm's (its angles put the tool cm off).
  const double mismatch = (robot_->SitesFromAngles(q) - candidate).cwiseAbs().maxCoeff();
  if (!(mismatch <= kMirrorMismatch * robot_->spacing())) return false;
  // A trial may not take a joint past its position or velocity limit (the clearance's weight
  // would otherwise buy any motion: a jump the controller could not follow).
  if (robot_->LimitViolation(q) > 0.0 || !WithinVelocityLimits(q)) return false;
  const double candidate_cost = Cost(q, q_before);
  if (!(candidate_cost < cost)) return false;
  cost = candidate_cost;
  sites_ = std::move(candidate);
  q_ = std::move(q);
  return true;
}

void RobotTracker::AvoidObstacles(TargetMode mode, const Eigen::VectorXd& q_before,
                                  RobotIkResult& result) {
  const int redundancy = robot_->num_joints() - internal::ToolRows(mode);
  if (!internal::ChecksClearance(*robot_, scene_) || redundancy <= 0 ||
      options_.trials_per_step == 0) {
    return;
  }
  const double buffer = kTrialBuffer * options_.safety_margin;
  const std::vector<double> near = TrialClearances(*robot_, scene_, q_, options_.safety_margin);
  if (std::none_of(near.begin(), near.end(), [&](double d) { return d < buffer; })) return;
  const Eigen::VectorXd& w = robot_->model(mode).inverse_masses();  // locks keep the masses
  std::normal_distribution<double> gauss(0.0, 1.0);
  const double sigma_max = robot_->spacing(), sigma_min = 1e-6 * robot_->spacing();
  double cost = TrialCost(options_, q_, q_before, near);  // the clearances just found
  for (int trial = 0; trial < options_.trials_per_step; ++trial) {
    // Kastenmeier & Vesely (c): a random displacement of the free sites, re-projected.
    Eigen::Matrix3Xd candidate = sites_;
    for (int i = 0; i < candidate.cols(); ++i) {
      if (w[i] > 0.0)
        candidate.col(i) += sigma_ * Eigen::Vector3d(gauss(rng_), gauss(rng_), gauss(rng_));
    }
    const bool kept = TryCandidate(mode, std::move(candidate), q_before, cost, result);
    if (kept) ++result.trials_accepted;
    // The 1/5 success rule, as the chain arms' optimizer.
    sigma_ = std::clamp(kept ? sigma_ * 1.5 : sigma_ * std::pow(1.5, -0.25), sigma_min, sigma_max);
  }
  last_interval_ = 0.0;  // the optimizer's moves are no motion to extrapolate
}

}  // namespace ikd::robot
