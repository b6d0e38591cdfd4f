#include "path_optimizer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include "motion.h"

namespace ikd::robot::internal {
namespace {

// Linearizations of the path (each one sparse solve, a few more when a step is refused).
constexpr int kLinearizations = 10;
constexpr int kAttempts = 6;            // damping raises within one linearization
// A step some of whose samples could not move (out of their limits, tolerances or clearance)
// is solved again with those samples held, up to this many times a linearization: otherwise
// the step's gain rests on moves that are refused, and only more damping is tried.
constexpr int kResolves = 3;
constexpr double kHeldStiffness = 1e12;  // a held block's added diagonal, relative
// Marquardt's damping, relative to the system's diagonal: small, because the path's long
// swings are the second-difference operator's smallest eigenvalues, ~(pi / samples)^4 of its
// diagonal, and a larger damping holds them back (1e-3 took 10 linearizations to what 1e-8
// reached in 3 on bench/paths' UR5 scenarios).
constexpr double kInitialDamping = 1e-8;
constexpr double kLeastDamping = 1e-12;
// A linearization that lowered the cost by less than this fraction (and reweighted nothing)
// ends the optimization.
constexpr double kConverged = 1e-3;
// Newton steps that put the tool back after a move in the null space (quadratic: 2-3 suffice
// for a small move), stopped once a step is below kSettled.
constexpr int kNewtonSteps = 8;
constexpr double kSettled = 1e-13;  // rad
// Rates are aimed at kRateAim of their limits (path_optimizer.h). Stiffer hinges (1e3, 1e4)
// slowed the convergence and left more Panda paths over their acceleration limits on
// bench/paths.
constexpr double kMaxEmphasis = 1e4;   // largest reweighting of one acceleration
// Weight of the hinges on velocities and declared accelerations above kRateAim of their limits.
constexpr double kRateHingeWeight = 100.0;
// The joint speeds over their limits, squared, weigh this much beside the accelerations: the
// least joint motion (item 5's preference) where the accelerations leave a choice.
constexpr double kSpeedWeight = 1.0;
// The joints' distance from the tracker's path, squared (rad^2), weighs this much: that path
// carries the tracker's posture pull (motion.h), so that a closed tool path closes the
// joint path too instead of letting the redundant joints drift from turn to turn.
constexpr double kPostureWeight = 1.0;
// Links closer than this many safety margins to an obstacle are pushed out (the tracker's pull
// starts there too), with this weight per (margin)^2 below it.
constexpr double kClearanceBuffer = 3.0;
constexpr double kClearanceWeight = 3.0;

// A sample on its target, the ones the optimizer may move (one in collision too: the
// clearance term pushes it out).
bool Reached(planning::StepStatus status) {
  return status == planning::StepStatus::kReached ||
         status == planning::StepStatus::kVelocityLimited ||
         status == planning::StepStatus::kInCollision;
}

// Per joint its velocity, acceleration and jerk limits (+infinity where none) and the scale of
// its acceleration: the acceleration limit, else the velocity limit per second, else 1.
struct RateScales {
  Eigen::VectorXd velocity, acceleration_limit, acceleration, jerk;
};

RateScales ScalesOf(const Robot& robot) {
  const int n = robot.num_joints();
  RateScales s{Eigen::VectorXd(n), Eigen::VectorXd(n), Eigen::VectorXd::Ones(n),
               Eigen::VectorXd(n)};
  for (int j = 0; j < n; ++j) {
    s.velocity[j] = VelocityLimit(robot, j);
    s.jerk[j] = JerkLimit(robot, j);
    s.acceleration_limit[j] = AccelerationLimit(robot, j);
    if (std::isfinite(s.acceleration_limit[j])) {
      s.acceleration[j] = s.acceleration_limit[j];
    } else if (std::isfinite(s.velocity[j])) {
      s.acceleration[j] = s.velocity[j];
    }
  }
  return s;
}

// The path as the terms see it: joint values and, with a scene, every link's clearance.
struct PathState {
  std::vector<Eigen::VectorXd> q;
  std::vector<std::vector<double>> clearances;
};

double MinOf(const std::vector<double>& d) {
  return d.empty() ? std::numeric_limits<double>::infinity()
                   : *std::min_element(d.begin(), d.end());
}

// The free coordinates: per sample a basis of its tool Jacobian's null space (n x r_k; r_k = 0
// holds the sample) and where its block starts in z.
struct NullSpaces {
  std::vector<Eigen::MatrixXd> basis;
  std::vector<int> offset;
  int size = 0;
};

NullSpaces FreeDirections(const Robot& robot, const std::vector<ToolTarget>& targets,
                          const std::vector<RobotIkResult>& samples, const PathState& state,
                          bool free_end) {
  const int n = robot.num_joints();
  NullSpaces spaces;
  spaces.basis.resize(samples.size());
  spaces.offset.assign(samples.size(), 0);  // a held sample's offset is never read
  // The last sample stays too, unless `free_end`: the tracker's posture pull ends it where a
  // closed tool path started, and a free end would let the redundant joints drift off that
  // (3 Panda circles drifted 0.03 rad).
  const size_t end = free_end ? samples.size() : samples.size() - 1;
  for (size_t k = 1; k < end; ++k) {
    spaces.offset[k] = spaces.size;
    if (n <= ToolRows(targets[k].mode()) || !Reached(samples[k].status)) continue;
    spaces.basis[k] = ToolNullSpace(robot, state.q[k], targets[k].mode());
    spaces.size += static_cast<int>(spaces.basis[k].cols());
  }
  return spaces;
}

// Residuals r and, when asked, their Jacobian in z: the Gauss-Newton model |r + A z|^2.
class LeastSquares {
 public:
  // Without gradients only the residuals (a candidate's cost over the same terms).
  LeastSquares(const NullSpaces& spaces, bool gradients) : spaces_(spaces), gradients_(gradients) {}

  int Add(double value) {
    cost_ += value * value;
    values_.push_back(value);
    return static_cast<int>(values_.size()) - 1;
  }
  // d r_row / d q_k = `coefficient` times unit vector j (a rate term of joint j).
  void AddJointEntry(int row, size_t k, int j, double coefficient) {
    if (!gradients_) return;
    const Eigen::MatrixXd& basis = spaces_.basis[k];
    for (int c = 0; c < basis.cols(); ++c) {
      entries_.emplace_back(row, spaces_.offset[k] + c, coefficient * basis(j, c));
    }
  }
  // d r_row / d q_k = `gradient` (joint space).
  void AddGradient(int row, size_t k, const Eigen::VectorXd& gradient) {
    if (!gradients_) return;
    const Eigen::VectorXd in_z = spaces_.basis[k].transpose() * gradient;
    for (int c = 0; c < in_z.size(); ++c) {
      entries_.emplace_back(row, spaces_.offset[k] + c, in_z[c]);
    }
  }
  bool wants_gradients() const { return gradients_; }
  bool free(size_t k) const { return spaces_.basis[k].cols() > 0; }
  double cost() const { return cost_; }

  // The damped normal equations (A^T A + damping diag(A^T A)) z = -A^T r, solved; the blocks
  // of samples marked `held` are pinned at zero.
  Eigen::VectorXd Step(double damping, const std::vector<bool>& held) const {
    Eigen::SparseMatrix<double> A(static_cast<int>(values_.size()), spaces_.size);
    A.setFromTriplets(entries_.begin(), entries_.end());
    const Eigen::Map<const Eigen::VectorXd> r(values_.data(), values_.size());
    Eigen::SparseMatrix<double> H = A.transpose() * A;
    const Eigen::VectorXd g = A.transpose() * r;
    Eigen::SparseMatrix<double> D(spaces_.size, spaces_.size);
    D.reserve(Eigen::VectorXi::Constant(spaces_.size, 1));
    for (int i = 0; i < spaces_.size; ++i) D.insert(i, i) = damping * H.coeff(i, i) + 1e-12;
    for (size_t k = 0; k < held.size(); ++k) {
      if (!held[k] || !free(k)) continue;
      for (int c = 0; c < spaces_.basis[k].cols(); ++c) {
        const int i = spaces_.offset[k] + c;
        D.coeffRef(i, i) += kHeldStiffness * (H.coeff(i, i) + 1.0);
      }
    }
    const Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> solver(H + D);
    if (solver.info() != Eigen::Success) return Eigen::VectorXd::Zero(spaces_.size);
    return -solver.solve(g);
  }

 private:
  const NullSpaces& spaces_;
  bool gradients_;
  double cost_ = 0.0;
  std::vector<double> values_;
  std::vector<Eigen::Triplet<double>> entries_;
};

class PathCost {
 public:
  PathCost(const Robot& robot, const planning::Scene* scene, const std::vector<double>& times,
           double margin, std::vector<Eigen::VectorXd> reference)
      : robot_(robot),
        scene_(scene),
        times_(times),
        margin_(margin),
        scales_(ScalesOf(robot)),
        reference_(std::move(reference)) {}

  // Every residual of `state`, weighted by `emphasis` (samples x joints, the accelerations').
  void AddTo(const PathState& state, const Eigen::MatrixXd& emphasis, LeastSquares& ls) const {
    AddAccelerations(state, emphasis, ls);
    AddJerks(state, ls);
    AddVelocities(state, ls);
    if (ChecksClearance(robot_, scene_)) AddClearances(state, ls);
    AddPosture(state, ls);
  }

  bool acceleration_limited(int j) const { return std::isfinite(scales_.acceleration_limit[j]); }

  // The acceleration of joint j at sample k over its scale.
  double AccelerationRatio(const PathState& state, size_t k, int j) const {
    const auto [before, at, after] = SecondDifference(k);
    return (before * state.q[k - 1][j] + at * state.q[k][j] + after * state.q[k + 1][j]) /
           scales_.acceleration[j];
  }

 private:
  struct Coefficients {
    double before, at, after;
  };
  // a_k = 2 / (t_{k+1} - t_{k-1}) ((q_{k+1} - q_k) / (t_{k+1} - t_k)
  //                                 - (q_k - q_{k-1}) / (t_k - t_{k-1}))
  Coefficients SecondDifference(size_t k) const {
    const double dt1 = times_[k] - times_[k - 1], dt2 = times_[k + 1] - times_[k];
    const double s = 2.0 / (dt1 + dt2);
    return {s / dt1, -s * (1.0 / dt1 + 1.0 / dt2), s / dt2};
  }

  void AddAccelerations(const PathState& state, const Eigen::MatrixXd& emphasis,
                        LeastSquares& ls) const {
    for (size_t k = 1; k + 1 < state.q.size(); ++k) {
      const auto [before, at, after] = SecondDifference(k);
      for (int j = 0; j < robot_.num_joints(); ++j) {
        const double w = std::sqrt(emphasis(k, j)) / scales_.acceleration[j];
        const double a =
            before * state.q[k - 1][j] + at * state.q[k][j] + after * state.q[k + 1][j];
        const int row = ls.Add(w * a);
        ls.AddJointEntry(row, k - 1, j, w * before);
        ls.AddJointEntry(row, k, j, w * at);
        ls.AddJointEntry(row, k + 1, j, w * after);
        const double aim = kRateAim * scales_.acceleration[j];
        if (!acceleration_limited(j) || !(std::abs(a) > aim)) continue;
        // A hinge on an acceleration above kRateAim of its declared limit, as on velocities.
        const double h = std::sqrt(kRateHingeWeight) / scales_.acceleration[j];
        const int hinge = ls.Add(h * (a - std::copysign(aim, a)));
        ls.AddJointEntry(hinge, k - 1, j, h * before);
        ls.AddJointEntry(hinge, k, j, h * at);
        ls.AddJointEntry(hinge, k + 1, j, h * after);
      }
    }
  }

  // Jerk-limited joints: their jerks over the limit (least jerk, as least acceleration), and a
  // hinge on every jerk above kRateAim of it; j_k = (a_k - a_{k-1}) / (t_k - t_{k-1}) with the
  // central accelerations (planning::RatesOfPath's).
  void AddJerks(const PathState& state, LeastSquares& ls) const {
    for (int j = 0; j < robot_.num_joints(); ++j) {
      const double limit = scales_.jerk[j];
      if (!std::isfinite(limit)) continue;
      for (size_t k = 2; k + 1 < state.q.size(); ++k) {
        const auto [b0, b1, b2] = SecondDifference(k - 1);
        const auto [c1, c2, c3] = SecondDifference(k);
        const double u = 1.0 / (times_[k] - times_[k - 1]);
        const double c[4] = {-u * b0, u * (c1 - b1), u * (c2 - b2), u * c3};
        double jerk = 0.0;
        for (int i = 0; i < 4; ++i) jerk += c[i] * state.q[k - 2 + i][j];
        const auto add = [&](double w, double value) {
          const int row = ls.Add(w * value);
          for (int i = 0; i < 4; ++i) ls.AddJointEntry(row, k - 2 + i, j, w * c[i]);
        };
        add(1.0 / limit, jerk);
        const double aim = kRateAim * limit;
        if (std::abs(jerk) > aim) {
          add(std::sqrt(kRateHingeWeight) / limit, jerk - std::copysign(aim, jerk));
        }
      }
    }
  }

  // The joint speeds over their limits (least motion), and a hinge on every velocity above
  // kRateAim of its limit.
  void AddVelocities(const PathState& state, LeastSquares& ls) const {
    for (size_t k = 1; k < state.q.size(); ++k) {
      const double dt = times_[k] - times_[k - 1];
      for (int j = 0; j < robot_.num_joints(); ++j) {
        const double v = (state.q[k][j] - state.q[k - 1][j]) / dt;
        if (std::isfinite(scales_.velocity[j])) {
          const double w = std::sqrt(kSpeedWeight) / scales_.velocity[j];
          const int row = ls.Add(w * v);
          ls.AddJointEntry(row, k, j, w / dt);
          ls.AddJointEntry(row, k - 1, j, -w / dt);
        }
        const double aim = kRateAim * scales_.velocity[j];
        if (!(std::abs(v) > aim)) continue;
        const double w = std::sqrt(kRateHingeWeight) / scales_.velocity[j];
        const int row = ls.Add(w * (v - std::copysign(aim, v)));
        ls.AddJointEntry(row, k, j, w / dt);
        ls.AddJointEntry(row, k - 1, j, -w / dt);
      }
    }
  }

  // The free samples' distance from the tracker's path.
  void AddPosture(const PathState& state, LeastSquares& ls) const {
    const double w = std::sqrt(kPostureWeight);
    for (size_t k = 1; k < state.q.size(); ++k) {
      if (!ls.free(k)) continue;
      for (int j = 0; j < robot_.num_joints(); ++j) {
        const int row = ls.Add(w * (state.q[k][j] - reference_[k][j]));
        ls.AddJointEntry(row, k, j, w);
      }
    }
  }

  // A hinge on every link clearance of a free sample below the buffer (the arm's own links
  // seen SelfShift farther, motion.h).
  void AddClearances(const PathState& state, LeastSquares& ls) const {
    const double buffer = kClearanceBuffer * margin_;
    const double w = std::sqrt(kClearanceWeight) / margin_;
    const double self_shift = SelfShift(kClearanceBuffer, margin_);
    for (size_t k = 1; k < state.q.size(); ++k) {
      if (!ls.free(k) || !(MinOf(state.clearances[k]) < buffer)) continue;
      const std::vector<double> pulled = LinkClearances(robot_, scene_, state.q[k], self_shift);
      Eigen::MatrixXd gradient;
      if (ls.wants_gradients()) {
        gradient = LinkClearanceGradients(robot_, scene_, state.q[k], self_shift);
      }
      for (size_t l = 0; l < pulled.size(); ++l) {
        const double d = pulled[l];
        if (!(d < buffer)) continue;
        const int row = ls.Add(w * (d - buffer));
        if (ls.wants_gradients()) ls.AddGradient(row, k, w * gradient.row(l).transpose());
      }
    }
  }

  const Robot& robot_;
  const planning::Scene* scene_;
  const std::vector<double>& times_;
  double margin_;
  RateScales scales_;
  std::vector<Eigen::VectorXd> reference_;  // the tracker's path
};

// The path moved by z: each free sample by its null-space block, its tool put back on target;
// a sample that would leave its limits, tolerances or clearance stays where it was.
PathState Moved(const Robot& robot, const planning::Scene* scene,
                const std::vector<ToolTarget>& targets, const RobotIkOptions& options,
                const PathState& state, const NullSpaces& spaces, const Eigen::VectorXd& z,
                std::vector<bool>& refused) {
  const Eigen::VectorXd weights = MotionWeights(robot);
  const Eigen::VectorXd none = Eigen::VectorXd::Zero(robot.num_joints());
  PathState moved = state;
  for (size_t k = 1; k < state.q.size(); ++k) {
    const Eigen::MatrixXd& basis = spaces.basis[k];
    if (basis.cols() == 0) continue;
    const ToolTarget& target = targets[k];
    Eigen::VectorXd q = state.q[k] + basis * z.segment(spaces.offset[k], basis.cols());
    const Eigen::Isometry3d goal = ToolGoal(target, ToolPose(robot.spec(), q));
    for (int n = 0; n < kNewtonSteps; ++n) {
      const Eigen::VectorXd step = ToolStep(robot, q, goal, target.mode(), weights, none);
      q += step;
      if (!(step.cwiseAbs().maxCoeff() > kSettled)) break;
    }
    const auto [position_error, rotation_error] = ToolErrors(robot, q, target);
    if (!(position_error <= options.position_tolerance) ||
        !(rotation_error <= options.rotation_tolerance) || robot.LimitViolation(q) > 0.0) {
      refused[k] = true;
      continue;
    }
    if (ChecksClearance(robot, scene)) {
      std::vector<double> d = LinkClearances(robot, scene, q);
      if (MinOf(d) < std::min(MinOf(state.clearances[k]), options.safety_margin)) {
        refused[k] = true;
        continue;
      }
      moved.clearances[k] = std::move(d);
    }
    moved.q[k] = std::move(q);
  }
  return moved;
}

// Marks the refused samples held; whether any was not held yet.
bool Holds(const std::vector<bool>& refused, std::vector<bool>& held) {
  bool more = false;
  for (size_t k = 0; k < refused.size(); ++k) {
    if (refused[k] && !held[k]) held[k] = more = true;
  }
  return more;
}

// Lawson's reweighting: an acceleration still above kRateAim of its limit weighs more next
// time (joints without an acceleration limit keep the least squares).
// Returns whether some weight changed.
bool Reweigh(const PathCost& cost, const PathState& state, Eigen::MatrixXd& emphasis) {
  bool changed = false;
  for (size_t k = 1; k + 1 < state.q.size(); ++k) {
    for (int j = 0; j < emphasis.cols(); ++j) {
      if (!cost.acceleration_limited(j)) continue;
      const double ratio = std::abs(cost.AccelerationRatio(state, k, j)) / kRateAim;
      if (ratio > 1.0 && emphasis(k, j) < kMaxEmphasis) {
        emphasis(k, j) = std::min(emphasis(k, j) * ratio * ratio, kMaxEmphasis);
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace

absl::Status OptimizeRobotPath(const Robot& robot, const planning::Scene* scene,
                               const std::vector<ToolTarget>& targets,
                               const std::vector<double>& times, const RobotIkOptions& options,
                               std::vector<RobotIkResult>& samples,
                               const std::function<bool()>& stop, bool free_end) {
  if (samples.size() < 3) return absl::OkStatus();
  PathState state;
  for (const RobotIkResult& sample : samples) {
    state.q.push_back(sample.q);
    state.clearances.push_back(ChecksClearance(robot, scene)
                                   ? LinkClearances(robot, scene, sample.q)
                                   : std::vector<double>{});
  }
  const PathCost cost(robot, scene, times, options.safety_margin, state.q);
  Eigen::MatrixXd emphasis = Eigen::MatrixXd::Ones(samples.size(), robot.num_joints());
  double damping = kInitialDamping;
  for (int iteration = 0; iteration < kLinearizations; ++iteration) {
    if (stop && stop()) return absl::CancelledError("stopped while optimizing the path");
    const NullSpaces spaces = FreeDirections(robot, targets, samples, state, free_end);
    if (spaces.size == 0) break;
    LeastSquares model(spaces, /*gradients=*/true);
    cost.AddTo(state, emphasis, model);
    bool accepted = false;
    double decrease = 0.0;
    std::vector<bool> held(samples.size(), false);
    for (int attempt = 0, resolves = 0; attempt < kAttempts && !accepted; ++attempt) {
      std::vector<bool> refused(samples.size(), false);
      PathState candidate =
          Moved(robot, scene, targets, options, state, spaces, model.Step(damping, held), refused);
      if (resolves < kResolves && Holds(refused, held)) {
        ++resolves, --attempt;  // solved again with those samples held, at the same damping
        continue;
      }
      LeastSquares check(spaces, /*gradients=*/false);
      cost.AddTo(candidate, emphasis, check);
      if (check.cost() < model.cost()) {
        decrease = (model.cost() - check.cost()) / model.cost();
        state = std::move(candidate);
        damping = std::max(damping / 3.0, kLeastDamping);
        accepted = true;
      } else {
        damping *= 10.0;
      }
    }
    if (!accepted) break;
    if (!Reweigh(cost, state, emphasis) && decrease < kConverged) break;
  }
  for (size_t k = 1; k < samples.size(); ++k) {
    if (state.q[k] == samples[k].q) continue;
    RobotIkResult& sample = samples[k];
    sample.q = state.q[k];
    sample.sites = robot.SitesFromAngles(sample.q);
    std::tie(sample.position_error, sample.rotation_error) =
        ToolErrors(robot, sample.q, targets[k]);
    if (ChecksClearance(robot, scene)) sample.min_clearance = MinOf(state.clearances[k]);
    if (sample.status == planning::StepStatus::kInCollision && sample.min_clearance >= 0.0) {
      sample.status = planning::StepStatus::kReached;  // the rate check follows
    }
  }
  return absl::OkStatus();
}

}  // namespace ikd::robot::internal
