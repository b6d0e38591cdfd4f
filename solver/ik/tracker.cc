#include "ikd/ik/tracker.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ikd/world.h"
#include "tracker_state.h"
#include "tracker_terms.h"
#include "ziggurat.h"

namespace ikd::ik {

using constraints::ConstraintModel;
using constraints::ConstraintSolver;
using constraints::MakeConstraintSolver;
using constraints::ProjectionOptions;

namespace {

using internal::kMarginBuffer;
using internal::kObstacleBand;

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr int kMaxBisections = 6;
constexpr int kMaxLimitRounds = 6;
constexpr int kPushTrials = 4;
constexpr int kDescentTrials = 1;

absl::Status RangeError(const char* field, const char* bound, double got) {
  return absl::InvalidArgumentError(absl::StrCat(field, " must be ", bound, ", got ", got));
}

// SplitMix64: decorrelates (seed, step) pairs so that each step draws its own stream.
uint64_t MixSeed(uint64_t seed, uint64_t step) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (step + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

absl::Status IkOptions::Validate() const {
  if (trials_per_step < 0 || trials_per_step > 100000) {
    return RangeError("trials_per_step", "in [0, 100000]", trials_per_step);
  }
  if (patience < 0 || patience > 100000) return RangeError("patience", "in [0, 100000]", patience);
  if (!std::isfinite(time_budget_seconds) || time_budget_seconds < 0.0 ||
      time_budget_seconds > 3600.0) {
    return RangeError("time_budget_seconds", "in [0, 3600]", time_budget_seconds);
  }
  if (absl::Status s = CheckWorldLength(safety_margin, "safety_margin", true); !s.ok()) return s;
  if (!std::isfinite(max_step_fraction) || max_step_fraction <= 0.0 || max_step_fraction > 1.0) {
    return RangeError("max_step_fraction", "in (0, 1]", max_step_fraction);
  }
  if (!std::isfinite(tolerance) || tolerance < 1e-15 || tolerance > 1e-3) {
    return RangeError("tolerance", "in [1e-15, 1e-3]", tolerance);
  }
  if (!std::isfinite(initial_sigma_fraction) || initial_sigma_fraction <= 0.0 ||
      initial_sigma_fraction > 0.5) {
    return RangeError("initial_sigma_fraction", "in (0, 0.5]", initial_sigma_fraction);
  }
  const std::pair<const char*, double> weights[] = {
      {"weights.clearance", this->weights.clearance},
      {"weights.self_clearance", this->weights.self_clearance},
      {"weights.velocity", this->weights.velocity},
      {"weights.acceleration", this->weights.acceleration},
      {"weights.joint_limit", this->weights.joint_limit},
      {"weights.bending", this->weights.bending}};
  for (const auto& [name, value] : weights) {
    if (!std::isfinite(value) || value < 0.0) return RangeError(name, "finite and >= 0", value);
  }
  return absl::OkStatus();
}

absl::StatusOr<ArmTracker> ArmTracker::Create(const Arm& arm, const planning::Scene* scene,
                                              const IkOptions& options,
                                              std::optional<Eigen::Matrix3Xd> initial_sites) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  Eigen::Matrix3Xd initial = initial_sites ? *std::move(initial_sites) : arm.HomeSites();
  const ConstraintModel& model = arm.chain_model();
  if (absl::Status s = model.CheckCoordinates(initial, "initial_sites"); !s.ok()) return s;
  if (model.MaxRelativeViolation(initial) > 1e-9) {
    return absl::InvalidArgumentError(absl::StrCat(
        "initial_sites: limb lengths violated by ", model.MaxRelativeViolation(initial),
        " (relative), more than 1e-9"));
  }
  if ((initial.col(0) - arm.base()).norm() > 1e-9 * arm.max_reach()) {
    return absl::InvalidArgumentError("initial_sites[0] must be at the arm's base position");
  }
  ProjectionOptions projection;
  projection.tolerance = options.tolerance;
  projection.max_iterations = 200;
  auto solver = MakeConstraintSolver(constraints::Method::kMilcShake, model, projection);
  if (!solver.ok()) return solver.status();
  return ArmTracker(
      std::make_unique<State>(arm, scene, options, *std::move(solver), std::move(initial)));
}

// The public calls, on the state (tracker_state.h).
ArmTracker::ArmTracker(std::unique_ptr<State> state) : state_(std::move(state)) {}
ArmTracker::ArmTracker(ArmTracker&&) noexcept = default;
ArmTracker& ArmTracker::operator=(ArmTracker&&) noexcept = default;
ArmTracker::~ArmTracker() = default;

absl::StatusOr<IkResult> ArmTracker::StepTo(const Eigen::Vector3d& target, double time) {
  return state_->StepTo(target, time);
}
const Eigen::Matrix3Xd& ArmTracker::sites() const { return state_->sites(); }
void ArmTracker::Restart(const Eigen::Matrix3Xd& sites) { state_->Restart(sites); }
double ArmTracker::Cost(const Eigen::Matrix3Xd& sites) const { return state_->Cost(sites); }
double ArmTracker::MinClearance(const Eigen::Matrix3Xd& sites, double cutoff) const {
  return state_->MinClearance(sites, cutoff);
}
bool ArmTracker::Project(const Eigen::Matrix3Xd& reference, Eigen::Matrix3Xd& sites) {
  return state_->Project(reference, sites);
}
bool ArmTracker::PushOut(Eigen::Matrix3Xd& sites) { return state_->PushOut(sites); }

ArmTracker::State::State(const Arm& arm, const planning::Scene* scene, const IkOptions& options,
                         std::unique_ptr<ConstraintSolver> solver, Eigen::Matrix3Xd initial)
    : arm_(&arm),
      scene_(scene),
      options_(options),
      solver_(std::move(solver)),
      current_(initial),
      previous_(std::move(initial)),
      sigma_(options.initial_sigma_fraction * arm.shortest_limb()) {
  for (const Limb& limb : arm.spec().limbs) {
    radii_.push_back(limb.radius);
    inverse_length_.push_back(1.0 / limb.length);
  }
  UpdateCoasting();
}

Eigen::Vector3d ArmTracker::State::ClampTarget(const Eigen::Vector3d& target) const {
  Eigen::Vector3d p_B = arm_->ToArmFrame(target);
  if (arm_->planar()) p_B.z() = 0.0;  // the closest point of the arm's plane
  const double r = p_B.norm();
  if (r > arm_->max_reach()) p_B *= arm_->max_reach() / r;
  if (r < arm_->min_reach()) {
    // Straight out along the current hand direction when the target sits on the base.
    Eigen::Vector3d dir = r > 1e-12 * arm_->max_reach()
                              ? Eigen::Vector3d(p_B / r)
                              : arm_->ToArmFrame(current_.col(arm_->hand()));
    if (arm_->planar()) dir.z() = 0.0;
    if (dir.norm() < 1e-300) dir = Eigen::Vector3d::UnitX();
    p_B = dir.normalized() * arm_->min_reach();
  }
  return arm_->ToWorld(p_B);
}

Eigen::Matrix3Xd ArmTracker::State::StraightArm(const Eigen::Vector3d& hand, bool folded) const {
  // Collinear along base -> hand: stretched (every limb outwards) or, at the minimal reach,
  // folded (the longest limb outwards, all others back towards the base).
  const auto& limbs = arm_->spec().limbs;
  int longest = 0;
  for (int k = 1; k < arm_->num_limbs(); ++k) {
    if (limbs[k].length > limbs[longest].length) longest = k;
  }
  Eigen::Vector3d dir = hand - arm_->base();
  if (dir.norm() < 1e-300) dir = arm_->R_WB().col(0);
  dir.normalize();
  Eigen::Matrix3Xd sites(3, arm_->num_sites());
  sites.col(0) = arm_->base();
  for (int k = 0; k < arm_->num_limbs(); ++k) {
    const double sign = !folded || k == longest ? 1.0 : -1.0;
    sites.col(k + 1) = sites.col(k) + sign * limbs[k].length * dir;
  }
  return sites;
}

double ArmTracker::State::MinClearance(const Eigen::Matrix3Xd& sites, double cutoff) const {
  culling_.Reset(sites, radii_);
  return ObstacleClearanceBelow(sites, std::min(culling_.MinClearance(sites), cutoff));
}

bool ArmTracker::State::Project(const Eigen::Matrix3Xd& reference, Eigen::Matrix3Xd& sites) {
  int iterations = 0;
  return ProjectWithLimits(reference, sites, iterations);
}

bool ArmTracker::State::PushOut(Eigen::Matrix3Xd& sites) {
  if (!PushOutOfMargin(sites)) return false;
  int iterations = 0;
  return ProjectWithLimits(push_origin_, sites, iterations);
}

bool ArmTracker::State::ProjectWithLimits(const Eigen::Matrix3Xd& reference,
                                          Eigen::Matrix3Xd& sites, int& iterations) {
  auto summary = solver_->ProjectPositions(reference, sites);
  if (!summary.ok() || !summary->converged()) return false;
  iterations += summary->iterations;
  const auto& limits = arm_->spec().joint_limits;
  if (limits.empty()) return true;
  // Active set: a violated limit becomes a distance constraint across the joint at its bound.
  std::vector<constraints::DistanceConstraint>& active = limit_constraints_;
  active.clear();
  limit_active_.assign(limits.size(), false);
  for (int round = 0; round < kMaxLimitRounds; ++round) {
    bool added = false;
    for (size_t j = 0; j < limits.size(); ++j) {
      if (!limits[j] || limit_active_[j]) continue;
      const int k = static_cast<int>(j) + 1;
      const double angle = arm_->JointAngle(sites, k);
      const double excess = std::max(limits[j]->min - angle, angle - limits[j]->max);
      if (excess <= 1e-12) continue;
      const double bound = angle > limits[j]->max ? limits[j]->max : limits[j]->min;
      if (active.empty()) active = arm_->chain_model().constraints();
      active.push_back({k - 1, k + 1, arm_->SpanAtBend(k, std::abs(bound))});
      limit_active_[j] = added = true;
    }
    if (!added) return arm_->LimitViolation(sites) <= 1e-9;
    auto model = ConstraintModel::Create(arm_->chain_model().inverse_masses(), active);
    if (!model.ok()) return false;
    ProjectionOptions projection;
    projection.tolerance = options_.tolerance;
    projection.max_iterations = 200;
    auto solver = MakeConstraintSolver(constraints::Method::kMatrix, *model, projection);
    if (!solver.ok()) return false;
    auto limited = (*solver)->ProjectPositions(reference, sites);
    if (!limited.ok() || !limited->converged()) return false;
    iterations += limited->iterations;
  }
  return arm_->LimitViolation(sites) <= 1e-9;
}

void ArmTracker::State::PushLimb(int k, const planning::Shape& away_from, double strength,
                                 Eigen::Matrix3Xd& sites, bool& moved) const {
  const double margin = kMarginBuffer * options_.safety_margin;
  const planning::CapsuleApproach approach =
      planning::ClosestApproach(away_from, sites.col(k), sites.col(k + 1), radii_[k]);
  if (approach.distance >= margin) return;
  // d clearance / d r_k = (1 - t) n and / d r_{k+1} = t n (envelope theorem); overshoot a
  // little so that the re-projection, which pulls back, still leaves the margin.
  const double gap = strength * 1.5 * (margin - approach.distance);
  Eigen::Vector3d n = approach.normal;
  if (arm_->planar()) n -= n.dot(arm_->R_WB().col(2)) * arm_->R_WB().col(2);
  const Eigen::VectorXd& w = arm_->chain_model().inverse_masses();
  if (w[k] > 0.0) sites.col(k) += gap * (1.0 - approach.t) * n;
  if (w[k + 1] > 0.0) sites.col(k + 1) += gap * approach.t * n;
  moved = moved || w[k] > 0.0 || w[k + 1] > 0.0;
}

bool ArmTracker::State::PushOutOfMargin(Eigen::Matrix3Xd& sites) {
  bool moved = false;
  const double margin = kMarginBuffer * options_.safety_margin;
  push_origin_ = sites;  // every push is computed on the same configuration
  const Eigen::Matrix3Xd& before = push_origin_;
  culling_.Reset(before, radii_);
  for (int k = 0; k < arm_->num_limbs(); ++k) {
    if (scene_ != nullptr && scene_->size() > 0) {
      int closest = -1;
      scene_->MinSignedDistance(before.col(k), before.col(k + 1), radii_[k], &closest, margin);
      if (closest >= 0) PushLimb(k, scene_->obstacles()[closest].shape, 1.0, sites, moved);
    }
    culling_.ForEachNear(k, margin, [&](int m) {
      // Two limbs share the way out: each moves half the gap away from the other.
      PushLimb(k, planning::Capsule{before.col(m), before.col(m + 1), radii_[m]}, 0.5, sites,
               moved);
      PushLimb(m, planning::Capsule{before.col(k), before.col(k + 1), radii_[k]}, 0.5, sites,
               moved);
    });
  }
  return moved;
}

bool ArmTracker::State::OutOfTime() const {
  return options_.time_budget_seconds > 0.0 && std::chrono::steady_clock::now() >= deadline_;
}

bool ArmTracker::State::TryCandidate(Search& search) {
  if (!ProjectWithLimits(search.sites, candidate_, search.step.iterations)) return false;
  const CostTerms terms = Terms(candidate_);
  if (!(terms.Total() < search.terms.Total())) return false;
  search.sites.swap(candidate_);
  search.terms = terms;
  ++search.step.trials_accepted;
  return true;
}

void ArmTracker::State::PushTrials(Search& search) {
  for (int push = 0; push < kPushTrials && search.terms.Constrained(); ++push) {
    candidate_ = search.sites;
    if (!PushOutOfMargin(candidate_) || !TryCandidate(search)) return;
  }
}

void ArmTracker::State::DescentTrials(double smooth_cap, Search& search) {
  for (int descent = 0; descent < kDescentTrials && !OutOfTime(); ++descent) {
    DescentStep(search.sites, smooth_cap, descent_);
    candidate_ = search.sites + descent_;
    if (!TryCandidate(search)) return;
  }
}

void ArmTracker::State::RandomTrials(double hand_step, double smooth_cap, Search& search) {
  const ikd::internal::ZigguratNormal gauss;
  const Eigen::Matrix3d& R_WB = arm_->R_WB();
  const Eigen::VectorXd& w = arm_->chain_model().inverse_masses();
  const double w_max = w.maxCoeff();
  const double limb = arm_->shortest_limb();
  // Trial moves scale with the hand's own move, so a slow hand never gets a jerking arm; only
  // to leave the margin or a joint limit may they be larger than the hand's.
  const double sigma_min = 1e-9 * limb;
  const double sigma_max =
      std::min(options_.max_step_fraction * limb, std::max(2.0 * hand_step, 0.01 * limb));
  if (!rng_seeded_) {  // seeding costs ~3,000 instructions: only steps that draw pay it
    rng_.seed(rng_stream_);
    rng_seeded_ = true;
  }
  int rejected = 0;
  for (int trial = 0; trial < options_.trials_per_step; ++trial) {
    if (OutOfTime() || (options_.patience > 0 && rejected >= options_.patience)) return;
    const double cap = search.terms.Constrained() ? sigma_max : std::min(sigma_max, smooth_cap);
    sigma_ = std::clamp(sigma_, sigma_min, std::max(sigma_min, cap));
    candidate_ = search.sites;
    for (int i = 1; i < arm_->hand(); ++i) {
      Eigen::Vector3d kick(gauss(rng_), gauss(rng_), arm_->planar() ? 0.0 : gauss(rng_));
      candidate_.col(i) += (sigma_ * std::sqrt(w[i] / w_max)) * (R_WB * kick);
    }
    if (TryCandidate(search)) {
      rejected = 0;
      sigma_ *= 1.5;  // 1/5 success rule: grow on success ...
    } else {
      ++rejected;
      sigma_ *= std::pow(1.5, -0.25);  // ... shrink on failure
    }
  }
}

double ArmTracker::State::SmoothCap(double hand_step) const {
  return std::max(2.0 * hand_step, 1e-9 * arm_->shortest_limb());
}

void ArmTracker::State::Optimize(double hand_step, bool far, Eigen::Matrix3Xd& sites,
                                 IkResult& step) {
  if (options_.trials_per_step == 0 || arm_->num_limbs() < 2) return;
  // Kastenmeier & Vesely step (c): trials re-projected and kept when the cost falls. Pushes out
  // of the margin along the clearance normal and a descent step come first, deterministic;
  // then the random trials of the paper.
  const double margin = kMarginBuffer * options_.safety_margin;
  Search search{sites, ConstraintTerms(sites, kObstacleBand * margin), step};
  // A sub-step that began clear of every margin took its descent step in the prediction; if
  // no clearance or limit term is active after the projection either and no obstacle is near,
  // the cost is smooth and that step was the optimization (random trials would trade jitter
  // for rounding-level gains). Otherwise every trial runs, as in the paper.
  if (far && !search.terms.Constrained() && !search.terms.near_obstacle &&
      !options_.explore_unconstrained) {
    return;
  }
  AddSmoothTerms(sites, search.terms);
  const double smooth_cap = SmoothCap(hand_step);
  PushTrials(search);
  DescentTrials(smooth_cap, search);
  RandomTrials(hand_step, smooth_cap, search);
}

void ArmTracker::State::Commit(const Eigen::Matrix3Xd& sites) {
  previous_ = current_;
  current_ = sites;
  UpdateCoasting();
}

void ArmTracker::State::Restart(const Eigen::Matrix3Xd& sites) {
  previous_ = current_ = sites;
  measured_sites_.resize(3, 0);  // no exact clearance measured here yet
  UpdateCoasting();
}

void ArmTracker::State::UpdateCoasting() {
  coasting_ = current_ + momentum_ * (current_ - previous_);
}

bool ArmTracker::State::ReachFallback(const Eigen::Vector3d& hand, Eigen::Matrix3Xd& sites,
                                      IkResult& step) {
  // Near full stretch the linearized projection is (nearly) singular. FABRIK-style reaching
  // sweeps (hand to base placing each site at its limb length, then base to hand) need no
  // Jacobian; a small sideways kink first breaks the symmetry of a straight arm.
  const int h = arm_->hand();
  const auto& limbs = arm_->spec().limbs;
  sites = current_;
  const Eigen::Vector3d axis = (hand - arm_->base()).normalized();
  Eigen::Vector3d side = arm_->planar() ? arm_->R_WB().col(2).cross(axis)
                                        : axis.unitOrthogonal();
  for (int i = 1; i < h; ++i) sites.col(i) += (i % 2 ? 1e-3 : -1e-3) * limbs[i].length * side;
  for (int sweep = 0; sweep < 500; ++sweep) {
    sites.col(h) = hand;
    for (int i = h - 1; i > 0; --i) {
      const Eigen::Vector3d d = sites.col(i) - sites.col(i + 1);
      if (d.norm() > 0.0) sites.col(i) = sites.col(i + 1) + limbs[i].length * d.normalized();
    }
    for (int i = 1; i <= h; ++i) {
      const Eigen::Vector3d d = sites.col(i) - sites.col(i - 1);
      if (d.norm() > 0.0) sites.col(i) = sites.col(i - 1) + limbs[i - 1].length * d.normalized();
    }
    if ((sites.col(h) - hand).norm() <= 1e-3 * arm_->shortest_limb()) break;
  }
  // Finish exactly: the hand on its target, then a projection from this near-solution.
  const Eigen::Matrix3Xd reference = sites;
  sites.col(h) = hand;
  return ProjectWithLimits(reference, sites, step.iterations);
}

bool ArmTracker::State::SubStep(const Eigen::Vector3d& hand, int depth, IkResult& step) {
  const int h = arm_->hand();
  const double distance = (hand - arm_->base()).norm();
  const bool stretched = distance >= arm_->max_reach() * (1.0 - 1e-9);
  const bool folded = arm_->min_reach() > 0.0 && distance <= arm_->min_reach() * (1.0 + 1e-9);
  if (stretched || folded || h == 1) {
    // On the reach shell the only solution is collinear (the projection is singular there).
    Eigen::Matrix3Xd straight = StraightArm(hand, folded && !stretched);
    if (h == 1 || arm_->LimitViolation(straight) <= 1e-9) {
      Commit(straight);
      return true;
    }
    return false;
  }
  // (b) predict interior sites by extrapolating the last two steps, then project.
  // The extrapolation is scaled by this hand step over the last one: a hand that slows down
  // (the end of a path) must not be overrun by the arm's momentum. An arm clear of contact
  // (FarFromContact) first takes one descent step of the cost in the prediction, so that a
  // projection that finds no clearance or limit term active is the step's answer (Optimize).
  const double hand_step = (hand - current_.col(h)).norm();
  const double last_step = (current_.col(h) - previous_.col(h)).norm();
  momentum_ = last_step > 0.0 ? std::min(1.0, hand_step / last_step) : 0.0;
  UpdateCoasting();
  Eigen::Matrix3Xd& predicted = predicted_;  // scratch (the bisection below reuses it only
  predicted = coasting_;                      // after this sub-step has given up on it)
  predicted.col(0) = arm_->base();
  predicted.col(h) = hand;
  const double smooth_cap = SmoothCap(hand_step);
  const bool far = options_.trials_per_step > 0 && arm_->num_limbs() >= 2 &&
                   FarFromContact(predicted);
  if (far) {
    DescentStep(predicted, smooth_cap, descent_);
    predicted += descent_;
  }
  if (!ProjectWithLimits(current_, predicted, step.iterations)) {
    predicted = current_;
    predicted.col(h) = hand;
    if (!ProjectWithLimits(current_, predicted, step.iterations) &&
        !ReachFallback(hand, predicted, step)) {
      if (depth >= kMaxBisections) return false;
      const Eigen::Vector3d middle = 0.5 * (current_.col(h) + hand);
      return SubStep(middle, depth + 1, step) && SubStep(hand, depth + 1, step);
    }
  }
  // (c) stochastic optimization of obstacle clearance, smoothness and limits.
  Optimize(hand_step, far, predicted, step);
  Commit(predicted);
  return true;
}

absl::StatusOr<IkResult> ArmTracker::State::StepTo(const Eigen::Vector3d& target, double time) {
  if (absl::Status s = CheckInWorld(target, "target"); !s.ok()) return s;
  rng_stream_ = MixSeed(options_.seed, step_index_++);
  rng_seeded_ = false;
  if (options_.time_budget_seconds > 0.0) {
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(options_.time_budget_seconds));
  }
  IkResult step;
  step.time = time;
  const Eigen::Vector3d goal = ClampTarget(target);
  const Eigen::Vector3d start = current_.col(arm_->hand());
  const double max_step = options_.max_step_fraction * arm_->shortest_limb();
  const int sub_steps = std::max(1, static_cast<int>(std::ceil((goal - start).norm() / max_step)));
  bool blocked = false;
  for (int s = 1; s <= sub_steps && !blocked; ++s) {
    blocked = !SubStep(start + (goal - start) * (double(s) / sub_steps), 0, step);
  }
  step.sites = current_;
  step.angles = arm_->AnglesFromSites(current_);
  step.hand_error = (current_.col(arm_->hand()) - target).norm();
  step.clamp_distance = (goal - target).norm();
  // Exact, and remembered: the next steps' cost skips the limb pairs while the arm has not
  // moved far enough from here to bring any of them inside the margin.
  culling_.Reset(current_, radii_);
  measured_sites_ = current_;
  measured_self_clearance_ = culling_.MinClearance(current_);
  measured_obstacle_clearance_ = ObstacleClearanceBelow(current_, kInfinity);
  step.min_clearance = std::min(measured_self_clearance_, measured_obstacle_clearance_);
  step.constraint_residual = arm_->chain_model().MaxRelativeViolation(current_);
  const double goal_distance = (goal - arm_->base()).norm();
  const bool on_shell = arm_->num_limbs() > 1 &&
                        (goal_distance >= arm_->max_reach() * (1.0 - 1e-9) ||
                         goal_distance <= arm_->min_reach() * (1.0 + 1e-9));
  if (blocked) {
    step.status = planning::StepStatus::kJointLimitBlocked;
  } else if (step.min_clearance < 0.0) {
    step.status = planning::StepStatus::kInCollision;
  } else if (step.clamp_distance > 1e-12 * arm_->max_reach() || on_shell) {
    step.status = planning::StepStatus::kClampedUnreachable;
  }
  return step;
}

absl::StatusOr<IkResult> SolvePose(const Arm& arm, const planning::Scene* scene,
                                   const Eigen::Vector3d& target, const IkOptions& options,
                                   std::optional<Eigen::Matrix3Xd> initial_sites) {
  auto tracker = ArmTracker::Create(arm, scene, options, std::move(initial_sites));
  if (!tracker.ok()) return tracker.status();
  return tracker->StepTo(target);
}

}  // namespace ikd::ik
