// MILC SHAKE (Bailey, Lowe & Sutton 2008): the linearized constraint equations of a chain are
// tridiagonal (cyclic tridiagonal for a ring); factor the Jacobian once per projection and
// run chord iterations; velocity constraints are one direct solve.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_format.h"
#include "solver_base.h"
#include "solvers.h"

namespace ikd::internal {
namespace {

// One chain or ring in path order: link k joins sites[k] and sites[(k+1) % n_sites], with
// link vector d_k = r(sites[k]) - r(sites[k+1]).
struct Strand {
  bool ring = false;
  std::vector<int> sites;
  std::vector<int> constraints;
  Eigen::VectorXd length_squared;
  Eigen::VectorXd length;
  // Work arrays, sized once.
  Eigen::VectorXd lower, diag, upper, rhs, rhs_total, lambda;
  std::vector<Eigen::Vector3d> d_ref;
  std::vector<Eigen::Vector3d> d_tilde;

  std::vector<int> tails;  // sites[(k + 1) % n_sites], precomputed for the hot loops

  int num_links() const { return static_cast<int>(constraints.size()); }
  int head(int k) const { return sites[k]; }
  int tail(int k) const { return tails[k]; }
};

class MilcSolver final : public SolverBase {
 public:
  MilcSolver(const ConstraintModel& model, const ProjectionOptions& options)
      : SolverBase(model, options) {
    for (const ConstraintComponent& component : model.topology().components) {
      Strand s;
      s.ring = component.kind == TopologyKind::kRing;
      s.sites = component.sites;
      s.constraints = component.constraints;
      const int n = s.num_links();
      for (int k = 0; k < n; ++k) s.tails.push_back(s.sites[(k + 1) % s.sites.size()]);
      s.length.resize(n);
      for (int k = 0; k < n; ++k) s.length[k] = model.constraints()[s.constraints[k]].length;
      s.length_squared = s.length.array().square();
      for (Eigen::VectorXd* v : {&s.lower, &s.diag, &s.upper, &s.rhs, &s.rhs_total, &s.lambda}) {
        v->resize(n);
      }
      s.d_ref.resize(n);
      s.d_tilde.resize(n);
      strands_.push_back(std::move(s));
    }
  }
  Method method() const override { return Method::kMilcShake; }

 protected:
  ProjectionSummary DoProjectPositions(const Eigen::Matrix3Xd& reference,
                                       Eigen::Matrix3Xd& positions) override {
    int iterations = 0;
    double worst = 0.0;
    unconstrained_ = positions;  // r~ of Bailey eq. 5, needed by every chord iteration
    for (Strand& s : strands_) {
      ProjectionSummary one = ProjectStrandPositions(s, reference, positions);
      if (!one.converged()) return one;
      iterations = std::max(iterations, one.iterations);
      worst = MaxKeepingNan(worst, one.max_relative_violation);
    }
    return Converged(iterations, worst);
  }

  ProjectionSummary DoProjectVelocities(const Eigen::Matrix3Xd& positions,
                                        Eigen::Matrix3Xd& velocities) override {
    for (Strand& s : strands_) {
      ProjectionSummary one = ProjectStrandVelocities(s, positions, velocities);
      if (!one.converged()) return one;
    }
    return Converged(1, model_.MaxVelocityViolation(positions, velocities));
  }

 private:
  Eigen::Vector3d Link(const Strand& s, const Eigen::Matrix3Xd& r, int k) const {
    return r.col(s.head(k)) - r.col(s.tail(k));
  }

  // Bailey eq. 11-12 (both position and velocity forms): A(k, k+-1) couples links sharing a
  // site with weight -w(site); `scale` is 2 for positions, 1 for velocities.
  bool FactorStrand(Strand& s, const std::vector<Eigen::Vector3d>& row_vectors,
                    const std::vector<Eigen::Vector3d>& column_vectors, double scale) {
    const Eigen::VectorXd& w = model_.inverse_masses();
    const int n = s.num_links();
    for (int k = 0; k < n; ++k) {
      const double w_head = w[s.head(k)];
      const double w_tail = w[s.tail(k)];
      s.diag[k] = scale * (w_head + w_tail) * row_vectors[k].dot(column_vectors[k]);
      if (k > 0) s.lower[k] = -scale * w_head * row_vectors[k].dot(column_vectors[k - 1]);
      if (k + 1 < n) s.upper[k] = -scale * w_tail * row_vectors[k].dot(column_vectors[k + 1]);
    }
    if (!s.ring) return chain_lu_.Factor(s.lower, s.diag, s.upper);
    const double w0 = w[s.head(0)];
    const double top_right = -scale * w0 * row_vectors[0].dot(column_vectors[n - 1]);
    const double bottom_left = -scale * w0 * row_vectors[n - 1].dot(column_vectors[0]);
    return ring_lu_.Factor(s.lower, s.diag, s.upper, top_right, bottom_left);
  }

  void Solve(const Strand& s, Eigen::VectorXd& x) const {
    if (s.ring) ring_lu_.Solve(x); else chain_lu_.Solve(x);
  }

  // Bailey eq. 5: r = r~ + W sum_k lambda_k d_k(ref) applied to the strand's sites.
  void ApplyMultipliers(const Strand& s, const Eigen::VectorXd& lambda,
                        const Eigen::Matrix3Xd& unconstrained, Eigen::Matrix3Xd& positions) const {
    const Eigen::VectorXd& w = model_.inverse_masses();
    for (int site : s.sites) positions.col(site) = unconstrained.col(site);
    for (int k = 0; k < s.num_links(); ++k) {
      positions.col(s.head(k)) += (w[s.head(k)] * lambda[k]) * s.d_ref[k];
      positions.col(s.tail(k)) -= (w[s.tail(k)] * lambda[k]) * s.d_ref[k];
    }
  }

  ProjectionSummary ProjectStrandPositions(Strand& s, const Eigen::Matrix3Xd& reference,
                                           Eigen::Matrix3Xd& positions) {
    const int n = s.num_links();
    std::vector<Eigen::Vector3d>& d_tilde = s.d_tilde;
    for (int k = 0; k < n; ++k) {
      s.d_ref[k] = Link(s, reference, k);
      d_tilde[k] = Link(s, positions, k);
      s.rhs_total[k] = s.length_squared[k] - d_tilde[k].squaredNorm();
    }
    if (!FactorStrand(s, d_tilde, s.d_ref, 2.0)) {
      return Singular(0, absl::StrFormat(
          "MILC Jacobian of the strand starting at site %d has a vanishing pivot (collinear "
          "links between fixed sites, or a link turned 90 degrees from its reference)",
          s.sites[0]));
    }
    for (int iteration = 1; iteration <= options_.max_iterations; ++iteration) {
      // Bailey eq. 13-14: J lambda^k = sigma^k = sigma^{k-1} + delta^k (chord method).
      s.lambda = s.rhs_total;
      Solve(s, s.lambda);
      ApplyMultipliers(s, s.lambda, unconstrained_, positions);
      double worst = 0.0;
      for (int k = 0; k < n; ++k) {
        const double d2 = Link(s, positions, k).squaredNorm();
        worst = MaxKeepingNan(worst, std::abs(std::sqrt(d2) - s.length[k]) / s.length[k]);
        s.rhs[k] = s.length_squared[k] - d2;
      }
      if (!std::isfinite(worst)) break;
      if (worst <= options_.tolerance) return Converged(iteration, worst);
      s.rhs_total += s.rhs;
    }
    return NotConverged(options_.max_iterations, model_.MaxRelativeViolation(positions));
  }

  // Bailey eq. 20-21: one tridiagonal solve makes every r_ij . v_ij vanish.
  ProjectionSummary ProjectStrandVelocities(Strand& s, const Eigen::Matrix3Xd& positions,
                                            Eigen::Matrix3Xd& velocities) {
    const Eigen::VectorXd& w = model_.inverse_masses();
    const int n = s.num_links();
    for (int k = 0; k < n; ++k) {
      s.d_ref[k] = Link(s, positions, k);
      s.lambda[k] = -s.d_ref[k].dot(velocities.col(s.head(k)) - velocities.col(s.tail(k)));
    }
    if (!FactorStrand(s, s.d_ref, s.d_ref, 1.0)) {
      return Singular(0, absl::StrFormat(
          "velocity constraint matrix of the strand starting at site %d is singular "
          "(collinear links between fixed sites)",
          s.sites[0]));
    }
    Solve(s, s.lambda);
    for (int k = 0; k < n; ++k) {
      velocities.col(s.head(k)) += (w[s.head(k)] * s.lambda[k]) * s.d_ref[k];
      velocities.col(s.tail(k)) -= (w[s.tail(k)] * s.lambda[k]) * s.d_ref[k];
    }
    return Converged(1, 0.0);
  }

  std::vector<Strand> strands_;
  TridiagonalLu chain_lu_;
  CyclicTridiagonalLu ring_lu_;
  Eigen::Matrix3Xd unconstrained_;
};

}  // namespace

std::unique_ptr<ConstraintSolver> MakeMilcSolver(const ConstraintModel& model,
                                                 const ProjectionOptions& options) {
  return std::make_unique<MilcSolver>(model, options);
}

}  // namespace ikd::internal
