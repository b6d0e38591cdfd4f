// The chain-arm tracker's cost (tracker.h, Kastenmeier & Vesely 1996 step (c)): its terms at a
// configuration, their gradients, the descent step of the prediction, and the cheap bounds that
// tell when an arm is far from every contact.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "ikd/ik/tracker.h"
#include "tracker_state.h"
#include "tracker_terms.h"

namespace ikd::ik {
namespace {

using internal::kMarginBuffer;
using internal::kObstacleBand;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double Square(double x) { return x * x; }

// atan2(y, x) for y >= 0 (an angle in [0, pi]) to 1e-11 rad, for the bending term of the cost:
// reduced to [0, tan(pi/12)] (octant, then atan t = pi/6 + atan((t sqrt3 - 1) / (t + sqrt3)))
// and the odd Taylor series to t^15, several times cheaper than the library's exact atan2.
double BendAngle(double y, double x) {
  constexpr double kPi = std::numbers::pi, kSqrt3 = std::numbers::sqrt3;
  constexpr double kTanPi12 = 2.0 - kSqrt3;
  const double ax = std::abs(x);
  const bool steep = y > ax;
  double t = steep ? ax / y : (ax > 0.0 ? y / ax : 0.0);  // in [0, 1]
  double base = 0.0;
  if (t > kTanPi12) {
    t = (t * kSqrt3 - 1.0) / (t + kSqrt3);
    base = kPi / 6.0;
  }
  const double t2 = t * t;
  const double series =
      t * (1.0 + t2 * (-1.0 / 3 + t2 * (1.0 / 5 + t2 * (-1.0 / 7 + t2 * (1.0 / 9 +
          t2 * (-1.0 / 11 + t2 * (1.0 / 13 - t2 / 15)))))));
  const double angle = steep ? kPi / 2.0 - (base + series) : base + series;
  return x < 0.0 ? kPi - angle : angle;
}

}  // namespace

double ArmTracker::State::ObstacleClearanceBelow(const Eigen::Matrix3Xd& sites,
                                                 double clearance) const {
  if (scene_ == nullptr) return clearance;
  for (int k = 0; k < arm_->num_limbs(); ++k) {
    // Only an obstacle closer than the running minimum can lower it.
    clearance = std::min(clearance, scene_->MinSignedDistance(sites.col(k), sites.col(k + 1),
                                                              radii_[k], nullptr, clearance));
  }
  return clearance;
}

double ArmTracker::State::Cost(const Eigen::Matrix3Xd& sites) const { return Terms(sites).Total(); }

ArmTracker::State::CostTerms ArmTracker::State::Terms(const Eigen::Matrix3Xd& sites) const {
  CostTerms terms = ConstraintTerms(sites);
  AddSmoothTerms(sites, terms);
  return terms;
}

ArmTracker::State::CostTerms ArmTracker::State::ConstraintTerms(const Eigen::Matrix3Xd& sites,
                                                                double obstacle_reach) const {
  const CostWeights& w = options_.weights;
  const double margin = kMarginBuffer * options_.safety_margin;
  const double reach = std::max(margin, obstacle_reach);
  CostTerms terms;
  // Bounding balls skip the pairs and obstacles that cannot come inside the margin; all pairs
  // are skipped while the arm is too close to its last measured pose for any to be inside.
  const bool self = w.self_clearance > 0.0 && MayBeInSelfMargin(sites, margin);
  if (self) culling_.Reset(sites, radii_);
  for (int k = 0; k < arm_->num_limbs(); ++k) {
    if (scene_ != nullptr && w.clearance > 0.0) {
      const double d =
          scene_->MinSignedDistance(sites.col(k), sites.col(k + 1), radii_[k], nullptr, reach);
      terms.clearance += w.clearance * Square(std::max(0.0, margin - d));
      terms.near_obstacle = terms.near_obstacle || d < reach;
    }
    if (!self) continue;
    culling_.ForEachNear(k, margin, [&](int m) {
      const double d = planning::SegmentSegmentDistance(sites.col(k), sites.col(k + 1),
                                                        sites.col(m), sites.col(m + 1)) -
                       radii_[k] - radii_[m];
      terms.self_clearance += w.self_clearance * Square(std::max(0.0, margin - d));
    });
  }
  if (w.joint_limit > 0.0) terms.joint_limit = w.joint_limit * Square(arm_->LimitViolation(sites));
  return terms;
}

void ArmTracker::State::AddSmoothTerms(const Eigen::Matrix3Xd& sites, CostTerms& terms) const {
  const CostWeights& w = options_.weights;
  for (int i = 1; i < arm_->hand(); ++i) {
    terms.motion += w.velocity * (sites.col(i) - current_.col(i)).squaredNorm() +
                    w.acceleration * (sites.col(i) - coasting_.col(i)).squaredNorm();
  }
  if (w.bending > 0.0) {
    // Bailey eq. 22's elastic-filament energy keeps a long arm from curling up on itself.
    Eigen::Vector3d b = Direction(sites, 0);
    for (int k = 1; k < arm_->num_limbs(); ++k) {
      const Eigen::Vector3d a = b;
      b = Direction(sites, k);
      terms.bending += w.bending * Square(BendAngle(a.cross(b).norm(), a.dot(b)));
    }
  }
}

double ArmTracker::State::MovedSinceMeasured(const Eigen::Matrix3Xd& sites) const {
  if (measured_sites_.cols() != sites.cols()) return kInfinity;  // nothing measured yet
  double moved_squared = 0.0;
  for (int i = 0; i < sites.cols(); ++i) {
    moved_squared = std::max(moved_squared, (sites.col(i) - measured_sites_.col(i)).squaredNorm());
  }
  return std::sqrt(moved_squared);
}

// A limb moves by at most the larger move of its two ends, so it comes closer to an obstacle
// by at most the largest site move since the measurement, and to another limb by twice that.
// The slack covers rounding; a NaN bound counts as near.
bool ArmTracker::State::MayBeInSelfMargin(const Eigen::Matrix3Xd& sites, double margin) const {
  const double bound = measured_self_clearance_ - 2.0 * MovedSinceMeasured(sites);
  return !(bound > margin + 1e-9 * arm_->shortest_limb());
}

// Obstacles moved since the measurement only change which prediction a sub-step takes: the
// decision to skip the trials (Optimize) measures the obstacles of the scene as it is.
bool ArmTracker::State::FarFromContact(const Eigen::Matrix3Xd& sites) const {
  const CostWeights& w = options_.weights;
  const double margin = kMarginBuffer * options_.safety_margin;
  if (w.self_clearance > 0.0 && MayBeInSelfMargin(sites, margin)) return false;
  const double bound = measured_obstacle_clearance_ - MovedSinceMeasured(sites);
  return w.clearance == 0.0 || bound > kObstacleBand * margin + 1e-9 * arm_->shortest_limb();
}

Eigen::Vector3d ArmTracker::State::Direction(const Eigen::Matrix3Xd& sites, int k) const {
  return (sites.col(k + 1) - sites.col(k)) * inverse_length_[k];
}

void ArmTracker::State::AddBendingGradient(const Eigen::Matrix3Xd& sites,
                                           Eigen::Matrix3Xd& gradient,
                                           Eigen::VectorXd& curvature) const {
  const double w = options_.weights.bending;
  if (!(w > 0.0)) return;
  Eigen::Vector3d t1 = Direction(sites, 0);  // each limb's direction serves two joints
  for (int k = 1; k < arm_->num_limbs(); ++k) {
    // d theta^2 = 2 theta d theta; with t the unit limb directions, d theta / d r_{k+1} =
    // -(t_{k-1} - cos theta t_k) / (l_k sin theta) and d theta / d r_{k-1} = (t_k - cos theta
    // t_{k-1}) / (l_{k-1} sin theta); site k takes minus their sum.
    const double a = inverse_length_[k - 1], b = inverse_length_[k];
    const Eigen::Vector3d t0 = t1;
    t1 = Direction(sites, k);
    const double cosine = t0.dot(t1);
    const Eigen::Vector3d e1 = t0 - cosine * t1, e0 = t1 - cosine * t0;  // |e| = sin theta
    const double sine = e1.norm();
    if (sine > 0.0) {
      const double f = 2.0 * w * BendAngle(sine, cosine) / sine;
      gradient.col(k + 1) -= f * b * e1;
      gradient.col(k - 1) += f * a * e0;
      gradient.col(k) += f * (b * e1 - a * e0);
    }
    // Gauss-Newton Hessian 2 w grad theta grad theta^T, |grad theta| <= (a, a + b, b) on sites
    // k - 1, k, k + 1, bounded by its row sums (Gershgorin).
    const double row = 2.0 * w * 2.0 * (a + b);
    curvature[k - 1] += row * a;
    curvature[k] += row * (a + b);
    curvature[k + 1] += row * b;
  }
}

bool ArmTracker::State::AddClearanceGradient(int k, const planning::CapsuleApproach& approach,
                                             double weight, double spread,
                                             Eigen::Matrix3Xd& gradient,
                                             Eigen::VectorXd& curvature) const {
  // d/dr of w (m - d)^2 with d d / d r_k = (1 - t) n, d d / d r_{k+1} = t n (envelope theorem);
  // curvature: the Gershgorin bound of its Gauss-Newton Hessian 2 w grad d grad d^T, whose
  // rows sum over `spread` (1 for an obstacle, 2 for a pair of limbs) times the end's share.
  const double margin = kMarginBuffer * options_.safety_margin;
  const double deficit = margin - approach.distance;
  if (!(deficit > 0.0)) return false;
  gradient.col(k) -= 2.0 * weight * deficit * (1.0 - approach.t) * approach.normal;
  gradient.col(k + 1) -= 2.0 * weight * deficit * approach.t * approach.normal;
  curvature[k] += 2.0 * weight * spread * (1.0 - approach.t);
  curvature[k + 1] += 2.0 * weight * spread * approach.t;
  return true;
}

bool ArmTracker::State::AddClearanceGradients(const Eigen::Matrix3Xd& sites,
                                              Eigen::Matrix3Xd& gradient,
                                              Eigen::VectorXd& curvature) const {
  const CostWeights& w = options_.weights;
  bool added = false;
  const double margin = kMarginBuffer * options_.safety_margin;
  const bool self = w.self_clearance > 0.0 && MayBeInSelfMargin(sites, margin);
  if (self) culling_.Reset(sites, radii_);
  for (int k = 0; k < arm_->num_limbs(); ++k) {
    if (scene_ != nullptr && w.clearance > 0.0) {
      int closest = -1;  // the cost counts the closest obstacle of each limb
      scene_->MinSignedDistance(sites.col(k), sites.col(k + 1), radii_[k], &closest, margin);
      if (closest >= 0) {
        added |= AddClearanceGradient(
            k,
            planning::ClosestApproach(scene_->obstacles()[closest].shape, sites.col(k),
                                      sites.col(k + 1), radii_[k]),
            w.clearance, 1.0, gradient, curvature);
      }
    }
    if (!self) continue;
    culling_.ForEachNear(k, margin, [&](int m) {
      const planning::Capsule limb_m{sites.col(m), sites.col(m + 1), radii_[m]};
      const planning::Capsule limb_k{sites.col(k), sites.col(k + 1), radii_[k]};
      added |= AddClearanceGradient(
          k, planning::ClosestApproach(limb_m, sites.col(k), sites.col(k + 1), radii_[k]),
          w.self_clearance, 2.0, gradient, curvature);
      added |= AddClearanceGradient(
          m, planning::ClosestApproach(limb_k, sites.col(m), sites.col(m + 1), radii_[m]),
          w.self_clearance, 2.0, gradient, curvature);
    });
  }
  return added;
}

void ArmTracker::State::NewtonStep(const Eigen::Matrix3Xd& gradient,
                                   const Eigen::VectorXd& curvature, double cap,
                                   Eigen::Matrix3Xd& step) const {
  // Heavier sites move less; a planar arm moves in its plane; no site moves more than `cap`
  // (the direction kept).
  const Eigen::VectorXd& inverse_mass = arm_->chain_model().inverse_masses();
  const double w_max = inverse_mass.maxCoeff();
  const Eigen::Vector3d normal = arm_->R_WB().col(2);
  step.setZero(3, arm_->num_sites());
  double largest_squared = 0.0;  // one square root, for the scaling only
  for (int i = 1; i < arm_->hand(); ++i) {
    Eigen::Vector3d move = -(inverse_mass[i] / w_max / curvature[i]) * gradient.col(i);
    if (arm_->planar()) move -= move.dot(normal) * normal;
    step.col(i) = move;
    largest_squared = std::max(largest_squared, move.squaredNorm());
  }
  if (largest_squared > cap * cap) step *= cap / std::sqrt(largest_squared);
}

void ArmTracker::State::DescentStep(const Eigen::Matrix3Xd& sites, double smooth_cap,
                                    Eigen::Matrix3Xd& step) {
  // Diagonally preconditioned gradient step: every term's curvature bound on the diagonal, a
  // majorizer of the smooth terms, so that the step is a Newton step of the motion terms.
  const CostWeights& w = options_.weights;
  const int n = arm_->num_sites();
  smooth_gradient_.setZero(3, n);
  clearance_gradient_.setZero(3, n);
  curvature_.setZero(n);
  for (int i = 1; i < arm_->hand(); ++i) {
    smooth_gradient_.col(i) = 2.0 * w.velocity * (sites.col(i) - current_.col(i)) +
                              2.0 * w.acceleration * (sites.col(i) - coasting_.col(i));
    curvature_[i] = 2.0 * (w.velocity + w.acceleration);
  }
  AddBendingGradient(sites, smooth_gradient_, curvature_);
  const bool clearance = AddClearanceGradients(sites, clearance_gradient_, curvature_);
  for (int i = 1; i < arm_->hand(); ++i) {
    if (!(curvature_[i] > 0.0)) curvature_[i] = 1.0;  // all weights 0: nothing pulls the site
  }
  // The smooth terms move the arm no faster than its hand; the clearance terms as far as the
  // projection can follow (a fraction of the shortest limb).
  NewtonStep(smooth_gradient_, curvature_, smooth_cap, step);
  if (!clearance) return;
  NewtonStep(clearance_gradient_, curvature_,
             options_.max_step_fraction * arm_->shortest_limb(), clearance_step_);
  step += clearance_step_;
}

}  // namespace ikd::ik
