#include "ikd/systems/kramers.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <random>

#include <Eigen/Geometry>

#include "absl/strings/str_cat.h"
#include "ikd/constraints/integrators.h"
#include "ikd/constraints/model.h"
#include "ikd/constraints/solver.h"
#include "ikd/systems/chains.h"

namespace ikd::systems {

using constraints::BrownianStep;
using constraints::ConstraintModel;
using constraints::ConstraintSolver;
using constraints::MakeConstraintSolver;
using constraints::MaxKeepingNan;
using constraints::ProjectionSummary;

namespace {

constexpr int64_t kMaxTotalSteps = int64_t{1} << 40;

void AddBondAngles(const Eigen::Matrix3Xd& r, AngleHistogram& histogram) {
  const int bins = static_cast<int>(histogram.counts.size());
  for (Eigen::Index k = 0; k + 2 < r.cols(); ++k) {
    const double phi = AngleBetween(r.col(k + 1) - r.col(k), r.col(k + 2) - r.col(k + 1));
    const int bin = std::min(bins - 1, static_cast<int>(phi / histogram.bin_width));
    ++histogram.counts[bin];
    ++histogram.total;
  }
}

double MaxBondError(const Eigen::Matrix3Xd& r, double bond_length) {
  double worst = 0.0;
  for (Eigen::Index k = 0; k + 1 < r.cols(); ++k) {
    worst = MaxKeepingNan(worst, std::abs((r.col(k + 1) - r.col(k)).norm() - bond_length));
  }
  return worst / bond_length;
}

}  // namespace

absl::Status KramersWalkOptions::Validate() const {
  if (num_sites < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_sites must be >= 3 (a bond angle needs two bonds), got ", num_sites));
  }
  if (!std::isfinite(bond_length) || bond_length <= 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bond_length must be finite and > 0, got ", bond_length));
  }
  if (!std::isfinite(step_sigma) || step_sigma <= 0.0 || step_sigma > bond_length) {
    return absl::InvalidArgumentError(absl::StrCat(
        "step_sigma must be in (0, bond_length = ", bond_length, "], got ", step_sigma));
  }
  if (warmup_steps < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("warmup_steps must be >= 0, got ", warmup_steps));
  }
  if (steps_per_sample < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("steps_per_sample must be >= 1, got ", steps_per_sample));
  }
  if (num_samples < 1) {
    return absl::InvalidArgumentError(absl::StrCat("num_samples must be >= 1, got ", num_samples));
  }
  if (warmup_steps > kMaxTotalSteps || num_samples > kMaxTotalSteps / steps_per_sample ||
      num_samples * steps_per_sample > kMaxTotalSteps - warmup_steps) {
    return absl::InvalidArgumentError(
        absl::StrCat("warmup_steps + num_samples * steps_per_sample must be <= 2^40"));
  }
  if (histogram_bins < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("histogram_bins must be >= 1, got ", histogram_bins));
  }
  return projection.Validate();
}

double AngleHistogram::Density(int bin) const {
  if (total == 0 || bin < 0 || bin >= static_cast<int>(counts.size())) return 0.0;
  return static_cast<double>(counts[bin]) / (static_cast<double>(total) * bin_width);
}

double AngleBetween(const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  return std::atan2(a.cross(b).norm(), a.dot(b));
}

absl::StatusOr<KramersWalkResult> RunKramersWalk(const KramersWalkOptions& options,
                                                 const KramersSampleObserver& observer) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  const int n = options.num_sites;
  absl::StatusOr<ConstraintModel> model = ConstraintModel::Create(
      Eigen::VectorXd::Ones(n), ChainConstraints(n, options.bond_length, /*ring=*/false));
  if (!model.ok()) return model.status();
  absl::StatusOr<std::unique_ptr<ConstraintSolver>> solver =
      MakeConstraintSolver(options.method, *model, options.projection);
  if (!solver.ok()) return solver.status();

  std::mt19937_64 rng(options.seed);
  KramersWalkResult result;
  result.positions = RandomCoil(n, options.bond_length, options.planar, rng);
  result.histogram.bin_width = std::numbers::pi / options.histogram_bins;
  result.histogram.counts.assign(options.histogram_bins, 0);

  auto step = [&]() -> absl::Status {
    absl::StatusOr<ProjectionSummary> summary =
        BrownianStep(*model, **solver, options.step_sigma, options.planar, rng, result.positions);
    if (!summary.ok()) return summary.status();
    ++result.steps;
    if (summary->converged()) {
      result.max_solver_violation =
          std::max(result.max_solver_violation, summary->max_relative_violation);
    } else {
      ++result.rejected_steps;
    }
    return absl::OkStatus();
  };

  for (int64_t k = 0; k < options.warmup_steps; ++k) {
    if (absl::Status s = step(); !s.ok()) return s;
  }
  for (int64_t sample = 0; sample < options.num_samples; ++sample) {
    for (int64_t k = 0; k < options.steps_per_sample; ++k) {
      if (absl::Status s = step(); !s.ok()) return s;
    }
    // The walk is translation invariant; recentering keeps the free centre-of-mass
    // diffusion from eating into the coordinates' precision.
    result.positions.colwise() -= result.positions.rowwise().mean();
    AddBondAngles(result.positions, result.histogram);
    result.max_sampled_bond_error = std::max(result.max_sampled_bond_error,
                                             MaxBondError(result.positions, options.bond_length));
    if (observer) observer(result.positions);
  }
  return result;
}

}  // namespace ikd::systems
