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

using Vec3 = Eigen::Map<const Eigen::Vector3d>;

// Slack between the squared-length estimate of the max relative violation and its exact
// value |sqrt(r^2) - l| / l: both are within a few ulps of 1 of the true value.
constexpr double kEstimateSlack = 1e-14;

// One chain or ring in path order: link k joins sites[k] (head) and sites[(k+1) % n_sites]
// (tail), with link vector d_k = r(head) - r(tail).
//
// Link arrays indexed "padded" hold link k at k + 1, so that site j, the head of link j and
// the tail of link j - 1, reads entries j + 1 and j without a branch: entry 0 is link n - 1 on
// a ring and zero on a chain, entry n + 1 is link 0 on a ring and zero on a chain.
struct Strand {
  bool ring = false;
  int links = 0;
  std::vector<int> sites, head, tail;
  std::vector<double> w_site, w_head, w_tail;  // inverse masses
  std::vector<double> length, length_squared, inverse_length, inverse_length_squared;
  // Work arrays, sized once.
  Eigen::Matrix3Xd d_ref;    // padded: link vectors of the reference (positions: Bailey's r(t))
  Eigen::Matrix3Xd d_tilde;  // link vectors of the unconstrained positions r~
  std::vector<double> rhs_total;
  std::vector<double> lambda;  // padded
  TridiagonalLu chain_lu;
  CyclicTridiagonalLu ring_lu;

  int num_sites() const { return static_cast<int>(sites.size()); }
};

Strand MakeStrand(const ConstraintModel& model, const ConstraintComponent& component) {
  const Eigen::VectorXd& w = model.inverse_masses();
  Strand s;
  s.ring = component.kind == TopologyKind::kRing;
  s.sites = component.sites;
  const int n = static_cast<int>(component.constraints.size());
  s.links = n;
  for (int site : s.sites) s.w_site.push_back(w[site]);
  for (int k = 0; k < n; ++k) {
    s.head.push_back(s.sites[k]);
    s.tail.push_back(s.sites[(k + 1) % s.sites.size()]);
    s.w_head.push_back(w[s.head[k]]);
    s.w_tail.push_back(w[s.tail[k]]);
    const double l = model.constraints()[component.constraints[k]].length;
    s.length.push_back(l);
    s.length_squared.push_back(l * l);
    s.inverse_length.push_back(1.0 / l);
    s.inverse_length_squared.push_back(1.0 / (l * l));
  }
  s.d_ref = Eigen::Matrix3Xd::Zero(3, n + 2);
  s.d_tilde = Eigen::Matrix3Xd::Zero(3, n);
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

// Bailey eq. 11-12 (positions) and 21 (velocities): row k couples link k to the links sharing
// its sites with weight -w(site); `rows` holds n link vectors, `columns` points at link 0 of a
// padded array, so that on a ring row 0's lower entry is the corner A(0, n-1) and row n-1's
// upper entry the corner A(n-1, 0).
struct JacobianRow {
  const Strand& s;
  const double* rows;
  const double* columns;
  double scale;

  [[gnu::always_inline]] TridiagonalRow operator()(int k) const {
    const Vec3 row(rows + 3 * k);
    return {-scale * s.w_head[k] * row.dot(Vec3(columns + 3 * (k - 1))),
            scale * (s.w_head[k] + s.w_tail[k]) * row.dot(Vec3(columns + 3 * k)),
            -scale * s.w_tail[k] * row.dot(Vec3(columns + 3 * (k + 1)))};
  }
};

bool Factor(Strand& s, const JacobianRow& row) {
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

// Bailey eq. 5 and 18: out(i) = base(i) + w_i sum_k lambda_k d_k over the links k at site i
// (signed by d_k's orientation), one write per site; then on_link(k, out(head) - out(tail))
// for every link in the same pass, while both ends are still in registers.
template <typename OnLink>
void ApplyMultipliers(const Strand& s, const Eigen::Matrix3Xd& padded_links,
                      const Eigen::Matrix3Xd& base, Eigen::Matrix3Xd& out, OnLink&& on_link) {
  const double* d = padded_links.data();
  const double* lambda = s.lambda.data();
  Eigen::Vector3d first = Eigen::Vector3d::Zero(), previous = first;
  for (int j = 0; j < s.num_sites(); ++j) {
    const int site = s.sites[j];
    const Eigen::Vector3d r =
        base.col(site) +
        s.w_site[j] * (lambda[j + 1] * Vec3(d + 3 * (j + 1)) - lambda[j] * Vec3(d + 3 * j));
    out.col(site) = r;
    if (j > 0) {
      on_link(j - 1, previous, r);
    } else {
      first = r;
    }
    previous = r;
  }
  if (s.ring) on_link(s.links - 1, previous, first);
}

// Adds delta_k = l^2 - r_k^2 to the chord right-hand side (Bailey eq. 13-14) and estimates
// the max relative violation (eq. 24) from the extremes of r^2 / l^2 - 1, without a square
// root per link.
struct Residual {
  Strand& s;
  double e_max = 0.0, e_min = 0.0;

  void operator()(int k, const Eigen::Vector3d& head, const Eigen::Vector3d& tail) {
    const double d2 = (head - tail).squaredNorm();
    s.rhs_total[k] += s.length_squared[k] - d2;
    const double e = d2 * s.inverse_length_squared[k] - 1.0;
    e_max = MaxKeepingNan(e_max, e);
    e_min = -MaxKeepingNan(-e_min, -e);
  }
  double Estimate() const {
    return MaxKeepingNan(std::sqrt(1.0 + e_max) - 1.0, 1.0 - std::sqrt(1.0 + e_min));
  }
};

// Max |r_ij - l| / l over the strand (Bailey eq. 24), exactly as the model measures it.
double MaxRelativeViolation(const Strand& s, const Eigen::Matrix3Xd& positions) {
  double worst = 0.0;
  for (int k = 0; k < s.links; ++k) {
    const double r = (positions.col(s.head[k]) - positions.col(s.tail[k])).norm();
    worst = MaxKeepingNan(worst, std::abs(r - s.length[k]) * s.inverse_length[k]);
  }
  return worst;
}

// Running max of |r_ij . v_ij| / l and of |v_ij|^2, the parts of
// ConstraintModel::MaxVelocityViolation.
struct VelocityViolation {
  double along = 0.0;
  double speed_squared = 0.0;

  [[gnu::always_inline]] void Add(const Eigen::Vector3d& r, const Eigen::Vector3d& v,
                                  double inverse_length) {
    along = MaxKeepingNan(along, std::abs(r.dot(v)) * inverse_length);
    speed_squared = MaxKeepingNan(speed_squared, v.squaredNorm());
  }
  double Value() const { return speed_squared == 0.0 ? 0.0 : along / std::sqrt(speed_squared); }
};

// Adds each link of a strand to `violation`; `s.d_ref` holds the links at the positions.
struct VelocityCheck {
  const Strand& s;
  VelocityViolation& violation;

  [[gnu::always_inline]] void operator()(int k, const Eigen::Vector3d& head,
                                         const Eigen::Vector3d& tail) {
    violation.Add(s.d_ref.col(k + 1), head - tail, s.inverse_length[k]);
  }
};

class MilcSolver final : public SolverBase {
 public:
  MilcSolver(const ConstraintModel& model, const ProjectionOptions& options)
      : SolverBase(model, options) {
    for (const ConstraintComponent& component : model.topology().components) {
      strands_.push_back(MakeStrand(model, component));
    }
  }
  Method method() const override { return Method::kMilcShake; }

 protected:
  ProjectionSummary DoProjectPositions(const Eigen::Matrix3Xd& reference,
                                       Eigen::Matrix3Xd& positions) override {
    int iterations = 0;
    double worst = 0.0;
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
    VelocityViolation violation;
    for (Strand& s : strands_) {
      if (!ProjectStrandVelocities(s, positions, velocities, violation)) {
        return Singular(0, absl::StrFormat(
            "velocity constraint matrix of the strand starting at site %d is singular "
            "(collinear links between fixed sites)",
            s.sites[0]));
      }
    }
    for (int k : model_.frozen()) {  // fixed sites: their velocities are left as given
      const DistanceConstraint& c = model_.constraints()[k];
      violation.Add(positions.col(c.i) - positions.col(c.j),
                    velocities.col(c.i) - velocities.col(c.j), 1.0 / c.length);
    }
    return Converged(1, violation.Value());
  }

 private:
  ProjectionSummary ProjectStrandPositions(Strand& s, const Eigen::Matrix3Xd& reference,
                                           Eigen::Matrix3Xd& positions) {
    const Eigen::Matrix3Xd& unconstrained = input();  // r~ of Bailey eq. 5
    for (int k = 0; k < s.links; ++k) {
      s.d_ref.col(k + 1) = reference.col(s.head[k]) - reference.col(s.tail[k]);
      s.d_tilde.col(k) = unconstrained.col(s.head[k]) - unconstrained.col(s.tail[k]);
      s.rhs_total[k] = s.length_squared[k] - s.d_tilde.col(k).squaredNorm();
    }
    PadLinks(s, s.d_ref);
    if (!Factor(s, JacobianRow{s, s.d_tilde.data(), s.d_ref.data() + 3, 2.0})) {
      return Singular(0, absl::StrFormat(
          "MILC Jacobian of the strand starting at site %d has a vanishing pivot (collinear "
          "links between fixed sites, or a link turned 90 degrees from its reference)",
          s.sites[0]));
    }
    for (int iteration = 1; iteration <= options_.max_iterations; ++iteration) {
      // Bailey eq. 13-14: J lambda^k = sigma^k = sigma^{k-1} + delta^k (chord method).
      std::copy(s.rhs_total.begin(), s.rhs_total.end(), s.lambda.begin() + 1);
      Solve(s);
      Residual residual{s};
      ApplyMultipliers(s, s.d_ref, unconstrained, positions, residual);
      // Bailey eq. 24 decided on squared lengths; only a violation within the slack of the
      // tolerance needs the exact |r - l| / l (a square root per link).
      const double estimate = residual.Estimate();
      if (!std::isfinite(estimate)) break;
      if (estimate > options_.tolerance + kEstimateSlack) continue;
      const double worst = estimate < options_.tolerance - kEstimateSlack
                               ? estimate
                               : MaxRelativeViolation(s, positions);
      if (worst <= options_.tolerance) return Converged(iteration, worst);
    }
    return NotConverged(options_.max_iterations, model_.MaxRelativeViolation(positions));
  }

  // Bailey eq. 20-21: one tridiagonal solve makes every r_ij . v_ij vanish. `s.d_ref` holds
  // the links at `positions` here.
  bool ProjectStrandVelocities(Strand& s, const Eigen::Matrix3Xd& positions,
                               Eigen::Matrix3Xd& velocities, VelocityViolation& violation) {
    const Eigen::Matrix3Xd& given = input();
    for (int k = 0; k < s.links; ++k) {
      s.d_ref.col(k + 1) = positions.col(s.head[k]) - positions.col(s.tail[k]);
      s.lambda[k + 1] =
          -s.d_ref.col(k + 1).dot(given.col(s.head[k]) - given.col(s.tail[k]));
    }
    PadLinks(s, s.d_ref);
    if (!Factor(s, JacobianRow{s, s.d_ref.data() + 3, s.d_ref.data() + 3, 1.0})) return false;
    Solve(s);
    ApplyMultipliers(s, s.d_ref, given, velocities, VelocityCheck{s, violation});
    return true;
  }

  std::vector<Strand> strands_;
};

}  // namespace

std::unique_ptr<ConstraintSolver> MakeMilcSolver(const ConstraintModel& model,
                                                 const ProjectionOptions& options) {
  return std::make_unique<MilcSolver>(model, options);
}

}  // namespace ikd::internal
