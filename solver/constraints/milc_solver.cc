// MILC SHAKE solver (Bailey, Lowe & Sutton 2008): the strands and the position projection.
// The linearized constraint equations of a chain are tridiagonal (cyclic tridiagonal for a
// ring); factor the Jacobian once per projection and run chord iterations; velocity
// constraints are one direct solve (milc_velocity.cc).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_format.h"
#include "milc_strand.h"
#include "solver_base.h"
#include "solvers.h"

namespace ikd::constraints::internal {
namespace milc {
namespace {

// Slack between the squared-length estimate of the max relative violation and its exact
// value |sqrt(r^2) - l| / l: both are within a few ulps of 1 of the true value.
constexpr double kEstimateSlack = 1e-14;

Strand MakeStrand(const ConstraintModel& model, const ConstraintComponent& component) {
  const Eigen::VectorXd& w = model.inverse_masses();
  Strand s;
  s.ring = component.kind == TopologyKind::kRing;
  s.sites = component.sites;
  const int n = static_cast<int>(component.constraints.size());
  s.links = n;
  for (int k = 0; k < n; ++k) {
    const double l = model.constraints()[component.constraints[k]].length;
    s.length.push_back(l);
    s.length_squared.push_back(l * l);
    s.inverse_length.push_back(1.0 / l);
    s.inverse_length_squared.push_back(1.0 / (l * l));
  }
  s.site_at = s.sites;
  if (s.ring) s.site_at.push_back(s.sites[0]);
  for (int site : s.site_at) s.w_at.push_back(w[site]);
  for (int k = 0; k < n; ++k) s.w_sum.push_back(s.w_at[k] + s.w_at[k + 1]);
  s.first_site = s.sites[0];
  s.contiguous = true;
  for (int j = 0; j < s.num_sites(); ++j) s.contiguous &= s.sites[j] == s.first_site + j;
  s.d.assign(3 * (n + 2), 0.0);
  s.y.assign(n, 0.0);
  s.inner.assign(n, 0.0);
  s.z.assign(s.ring ? n : 0, 0.0);
  s.d_ref = Eigen::Matrix3Xd::Zero(3, n + 2);
  s.lower.assign(n, 0.0);
  s.diag.assign(n, 0.0);
  s.upper.assign(n, 0.0);
  s.rhs_total.assign(n, 0.0);
  s.lambda.assign(n + 2, 0.0);
  return s;
}

// Fills the two padding entries of a padded link array on a ring (see Strand); on a chain
// they stay the zeros they were created with.
void PadLinks(const Strand& s, Eigen::Matrix3Xd& padded) {
  if (!s.ring) return;
  padded.col(0) = padded.col(s.links);
  padded.col(s.links + 1) = padded.col(1);
}

void PadLambda(Strand& s) {
  if (!s.ring) return;
  s.lambda[0] = s.lambda[s.links];
  s.lambda[s.links + 1] = s.lambda[1];
}

// The position Jacobian's rows as SetUpPositions stored them; on a ring row 0's lower entry is
// the corner A(0, n-1) and row n-1's upper entry the corner A(n-1, 0).
struct StoredRow {
  const Strand& s;
  [[gnu::always_inline]] TridiagonalRow operator()(int k) const {
    return {s.lower[k], s.diag[k], s.upper[k]};
  }
};

bool Factor(Strand& s) {
  const StoredRow row{s};
  return s.ring ? s.ring_lu.Factor(s.links, row) : s.chain_lu.Factor(s.links, row);
}

// lambda <- A^-1 lambda, then pads it.
void Solve(Strand& s) {
  if (s.ring) {
    s.ring_lu.Solve(s.lambda.data() + 1);
  } else {
    s.chain_lu.Solve(s.lambda.data() + 1);
  }
  PadLambda(s);
}

// Bailey eq. 5: r_i = r~_i + w_i (lambda_k d_k - lambda_{k-1} d_{k-1}) with the reference
// links d, one write per site; with each new link, delta_k = l^2 - r_k^2 joins the chord
// right-hand side (eq. 13-14). Returns the max relative violation (eq. 24) estimated from the
// extremes of r^2 / l^2 - 1, without a square root per link; NaN when a link is not finite.
double UpdatePositions(Strand& s, const double* base, double* out) {
  const double* d = s.d_ref.data();
  const double* lambda = s.lambda.data();
  double e_max = 0.0, e_min = 0.0, finite = 0.0;
  auto measure = [&](int k, V3 head, V3 tail) {
    const V3 r = head - tail;
    const double squared = Dot(r, r);
    s.rhs_total[k] += s.length_squared[k] - squared;
    const double e = squared * s.inverse_length_squared[k] - 1.0;
    e_max = std::max(e_max, e);
    e_min = std::min(e_min, e);
    finite += e * 0.0;
  };
  V3 first{}, previous{};
  for (int j = 0; j < s.num_sites(); ++j) {
    const int site = s.site_at[j];
    const double w = s.w_at[j], after = lambda[j + 1], before = lambda[j];
    const V3 b = At(base, site);
    const double* dj = d + 3 * j;
    const V3 r{b.x + w * (after * dj[3] - before * dj[0]),
               b.y + w * (after * dj[4] - before * dj[1]),
               b.z + w * (after * dj[5] - before * dj[2])};
    Put(out, site, r);
    if (j > 0) {
      measure(j - 1, previous, r);
    } else {
      first = r;
    }
    previous = r;
  }
  if (s.ring) measure(s.links - 1, previous, first);
  if (!(finite == 0.0)) return std::numeric_limits<double>::quiet_NaN();
  return std::max(std::sqrt(1.0 + e_max) - 1.0, 1.0 - std::sqrt(1.0 + e_min));
}

// Max |r_ij - l| / l over the strand (Bailey eq. 24), exactly as the model measures it.
double MaxRelativeViolation(const Strand& s, const Eigen::Matrix3Xd& positions) {
  double worst = 0.0;
  for (int k = 0; k < s.links; ++k) {
    const double r = (positions.col(s.site_at[k]) - positions.col(s.site_at[k + 1])).norm();
    worst = MaxKeepingNan(worst, std::abs(r - s.length[k]) * s.inverse_length[k]);
  }
  return worst;
}

void RestoreSites(const Strand& s, const double* backup, double* m) {
  for (int site : s.sites) Put(m, site, At(backup, site));
}

class MilcSolver final : public SolverBase {
 public:
  MilcSolver(const ConstraintModel& model, const ProjectionOptions& options)
      : SolverBase(model, options) {
    std::vector<bool> in_strand(model.num_sites(), false);
    for (const ConstraintComponent& component : model.topology().components) {
      strands_.push_back(MakeStrand(model, component));
      for (int site : component.sites) in_strand[site] = true;
    }
    for (int site = 0; site < model.num_sites(); ++site) {
      if (!in_strand[site]) loose_sites_.push_back(site);
    }
  }
  Method method() const override { return Method::kMilcShake; }

  // The generic path's checks fused into the first pass (strand sites as their links are
  // built, the others here) and r~ copied as it is read; the chord iterations' estimate
  // stands in for its finiteness pass over the output.
  absl::StatusOr<ProjectionSummary> ProjectPositions(const Eigen::Matrix3Xd& reference,
                                                     Eigen::Matrix3Xd& positions) override {
    if (strands_.empty() || reference.cols() != model_.num_sites() ||
        positions.cols() != model_.num_sites() || !LooseSitesFinite(reference, positions)) {
      return SolverBase::ProjectPositions(reference, positions);  // its errors and messages
    }
    Eigen::Matrix3Xd& unconstrained = mutable_input();
    unconstrained.resize(3, model_.num_sites());  // allocates on the first call only
    double finite = 0.0;
    for (Strand& s : strands_) SetUpPositions(s, reference, positions, &unconstrained, finite);
    if (!(finite == 0.0)) return SolverBase::ProjectPositions(reference, positions);
    if (absl::Status st = model_.CheckFrozen(positions, options_.tolerance); !st.ok()) return st;
    ProjectionSummary summary = IteratePositions(positions);
    if (summary.outcome == ProjectionOutcome::kSingular ||
        summary.outcome == ProjectionOutcome::kNonFinite) {
      for (const Strand& s : strands_) RestoreSites(s, unconstrained.data(), positions.data());
    }
    return summary;
  }

  // The generic checks fused into the passes: strand sites are checked as their links are
  // built, the others here; old velocities are kept as they are overwritten.
  absl::StatusOr<ProjectionSummary> ProjectVelocities(const Eigen::Matrix3Xd& positions,
                                                      Eigen::Matrix3Xd& velocities) override {
    if (strands_.empty() || positions.cols() != model_.num_sites() ||
        velocities.cols() != model_.num_sites() || !LooseSitesFinite(positions, velocities)) {
      return SolverBase::ProjectVelocities(positions, velocities);  // its errors and messages
    }
    double finite = 0.0;
    const Strand* failed = PrepareVelocities(positions.data(), velocities.data(), finite);
    if (!(finite == 0.0)) return SolverBase::ProjectVelocities(positions, velocities);
    if (failed != nullptr) return SingularVelocities(*failed);
    Eigen::Matrix3Xd& backup = mutable_input();
    backup.resize(3, model_.num_sites());  // allocates on the first call only
    VelocityViolation violation;
    ApplyAllVelocities(velocities.data(), backup.data(), violation);
    if (!(violation.finite == 0.0) && !StrandsFinite(velocities)) {
      for (const Strand& s : strands_) RestoreSites(s, backup.data(), velocities.data());
      return NonFinite("velocities", 1);
    }
    AddFrozenVelocityViolations(positions, velocities, violation);
    return Converged(1, violation.Value());
  }

 protected:
  // The generic path (after its checks and copy: input() holds r~).
  ProjectionSummary DoProjectPositions(const Eigen::Matrix3Xd& reference,
                                       Eigen::Matrix3Xd& positions) override {
    double finite = 0.0;
    for (Strand& s : strands_) SetUpPositions(s, reference, input(), nullptr, finite);
    return IteratePositions(positions);
  }

  // The generic path's velocity step (after its checks and copy): the same passes.
  ProjectionSummary DoProjectVelocities(const Eigen::Matrix3Xd& positions,
                                        Eigen::Matrix3Xd& velocities) override {
    double finite = 0.0;
    const Strand* failed = PrepareVelocities(positions.data(), velocities.data(), finite);
    if (failed != nullptr) return SingularVelocities(*failed);
    Eigen::Matrix3Xd backup(3, model_.num_sites());
    VelocityViolation violation;
    ApplyAllVelocities(velocities.data(), backup.data(), violation);
    AddFrozenVelocityViolations(positions, velocities, violation);
    return Converged(1, violation.Value());
  }

 private:
  ProjectionSummary IteratePositions(Eigen::Matrix3Xd& positions) {
    int iterations = 0;
    double worst = 0.0;
    for (Strand& s : strands_) {
      ProjectionSummary one = ProjectStrandPositions(s, positions);
      if (!one.converged()) return one;
      iterations = std::max(iterations, one.iterations);
      worst = MaxKeepingNan(worst, one.max_relative_violation);
    }
    return Converged(iterations, worst);
  }

  // Link vectors of the reference, the chord right-hand side l^2 - |d~_k|^2 (Bailey eq.
  // 13-14) and the Jacobian's rows 2 d~_k . (-w_k d_{k-1}, w_sum d_k, -w_{k+1} d_{k+1})
  // (eq. 11-12; d~ from r~ = `unconstrained`); `finite` turns NaN on a non-finite coordinate.
  // With `copy`, r~ of the strand's sites is copied there as it is read.
  void SetUpPositions(Strand& s, const Eigen::Matrix3Xd& reference,
                      const Eigen::Matrix3Xd& unconstrained, Eigen::Matrix3Xd* copy,
                      double& finite) {
    const int n = s.links;
    const double* r = reference.data();
    const double* u = unconstrained.data();
    double* kept = copy != nullptr ? copy->data() : nullptr;
    double* d_ref = s.d_ref.data() + 3;
    double check = 0.0;
    V3 a_prev{}, b_prev{}, a_first{}, b_first{};
    for (int k = 0; k < n; ++k) {
      const int head = s.site_at[k], tail = s.site_at[k + 1];
      const V3 a = At(r, head) - At(r, tail);
      const V3 b = At(u, head) - At(u, tail);
      Put(d_ref, k, a);
      const double squared = Dot(b, b);
      s.rhs_total[k] = s.length_squared[k] - squared;
      s.diag[k] = 2.0 * s.w_sum[k] * Dot(b, a);
      if (k > 0) {
        s.lower[k] = -2.0 * s.w_at[k] * Dot(b, a_prev);
        s.upper[k - 1] = -2.0 * s.w_at[k] * Dot(b_prev, a);
      } else {
        a_first = a;
        b_first = b;
      }
      check += (a.x + a.y + a.z + squared) * 0.0;
      if (kept != nullptr) Put(kept, head, At(u, head));
      a_prev = a;
      b_prev = b;
    }
    s.lower[0] = s.ring ? -2.0 * s.w_at[0] * Dot(b_first, a_prev) : 0.0;
    s.upper[n - 1] = s.ring ? -2.0 * s.w_at[n] * Dot(b_prev, a_first) : 0.0;
    if (kept != nullptr && !s.ring) Put(kept, s.site_at[n], At(u, s.site_at[n]));
    PadLinks(s, s.d_ref);
    finite += check;
  }

  ProjectionSummary ProjectStrandPositions(Strand& s, Eigen::Matrix3Xd& positions) {
    const double* unconstrained = input().data();  // r~ of Bailey eq. 5
    if (!Factor(s)) {
      return Singular(0, absl::StrFormat(
          "MILC Jacobian of the strand starting at site %d has a vanishing pivot (collinear "
          "links between fixed sites, or a link turned 90 degrees from its reference)",
          s.sites[0]));
    }
    for (int iteration = 1; iteration <= options_.max_iterations; ++iteration) {
      // Bailey eq. 13-14: J lambda^k = sigma^k = sigma^{k-1} + delta^k (chord method).
      std::copy(s.rhs_total.begin(), s.rhs_total.end(), s.lambda.begin() + 1);
      Solve(s);
      // Bailey eq. 24 decided on squared lengths; only a violation within the slack of the
      // tolerance needs the exact |r - l| / l (a square root per link).
      const double estimate = UpdatePositions(s, unconstrained, positions.data());
      if (!std::isfinite(estimate)) {
        if (!StrandsFinite(positions)) return NonFinite("positions", iteration);
        break;  // |d|^2 overflowed: not a number the chord iteration can use
      }
      if (estimate > options_.tolerance + kEstimateSlack) continue;
      const double worst = estimate < options_.tolerance - kEstimateSlack
                               ? estimate
                               : MaxRelativeViolation(s, positions);
      if (worst <= options_.tolerance) return Converged(iteration, worst);
    }
    return NotConverged(options_.max_iterations, model_.MaxRelativeViolation(positions));
  }

  // Everything but writing, for every strand first, so that a failure leaves the input as it
  // was: the forward pass, and on a ring the substitution. Returns the strand that failed.
  const Strand* PrepareVelocities(const double* r, const double* v, double& finite) {
    for (Strand& s : strands_) {
      bool ok;
      if (s.ring) {
        ok = (s.contiguous ? VelocityForward<true, true>(s, r, v, finite)
                           : VelocityForward<true, false>(s, r, v, finite)) &&
             RingSubstitute(s);
      } else {
        ok = s.contiguous ? VelocityForward<false, true>(s, r, v, finite)
                          : VelocityForward<false, false>(s, r, v, finite);
      }
      if (!ok) return &s;
    }
    return nullptr;
  }

  void ApplyAllVelocities(double* v, double* backup, VelocityViolation& violation) {
    for (Strand& s : strands_) {
      if (s.ring) {
        s.contiguous ? ApplyVelocities<false, true>(s, v, backup, violation)
                     : ApplyVelocities<false, false>(s, v, backup, violation);
      } else {
        s.contiguous ? ApplyVelocities<true, true>(s, v, backup, violation)
                     : ApplyVelocities<true, false>(s, v, backup, violation);
      }
    }
  }

  ProjectionSummary SingularVelocities(const Strand& s) const {
    return Singular(0, absl::StrFormat(
                           "velocity constraint matrix of the strand starting at site %d is "
                           "singular (collinear links between fixed sites)",
                           s.sites[0]));
  }

  // Fixed sites' velocities are left as given; their links count in the reported violation.
  void AddFrozenVelocityViolations(const Eigen::Matrix3Xd& positions,
                                   const Eigen::Matrix3Xd& velocities,
                                   VelocityViolation& violation) const {
    for (int k : model_.frozen()) {
      const DistanceConstraint& c = model_.constraints()[k];
      violation.Add(positions.col(c.i) - positions.col(c.j),
                    velocities.col(c.i) - velocities.col(c.j), 1.0 / c.length);
    }
  }

  // Exact check behind a NaN `finite` flag, which |v_ij|^2 overflowing also raises.
  bool StrandsFinite(const Eigen::Matrix3Xd& m) const {
    for (const Strand& s : strands_) {
      for (int site : s.sites) {
        if (!m.col(site).allFinite()) return false;
      }
    }
    return true;
  }

  bool LooseSitesFinite(const Eigen::Matrix3Xd& a, const Eigen::Matrix3Xd& b) const {
    double finite = 0.0;
    for (int site : loose_sites_) finite += (a.col(site).sum() + b.col(site).sum()) * 0.0;
    return finite == 0.0;
  }

  std::vector<Strand> strands_;
  std::vector<int> loose_sites_;  // in no strand: checked, never moved
};

}  // namespace
}  // namespace milc

std::unique_ptr<ConstraintSolver> MakeMilcSolver(const ConstraintModel& model,
                                                 const ProjectionOptions& options) {
  return std::make_unique<milc::MilcSolver>(model, options);
}

}  // namespace ikd::constraints::internal
