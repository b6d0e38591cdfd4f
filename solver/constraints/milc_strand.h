// Internal: a MILC strand (chain or ring) and what the position and velocity passes share.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "solver_base.h"

namespace ikd::constraints::internal::milc {

// One chain or ring in path order: link k joins site_at[k] (head) and site_at[k + 1] (tail),
// with link vector d_k = r(head) - r(tail); on a ring site_at ends with its first site again.
//
// Link arrays indexed "padded" hold link k at k + 1, so that site j, the head of link j and
// the tail of link j - 1, reads entries j + 1 and j without a branch: entry 0 is link n - 1 on
// a ring and zero on a chain, entry n + 1 is link 0 on a ring and zero on a chain.
struct Strand {
  bool ring = false;
  int links = 0;
  std::vector<int> sites, site_at;
  std::vector<double> w_at, w_sum;  // inverse masses of site_at; w_at[k] + w_at[k + 1]
  // Sites numbered first_site, first_site + 1, ..: the velocity passes then skip site_at.
  bool contiguous = false;
  int first_site = 0;
  std::vector<double> length, length_squared, inverse_length, inverse_length_squared;
  // Work arrays, sized once.
  Eigen::Matrix3Xd d_ref;  // padded: link vectors of the reference (Bailey's r(t))
  std::vector<double> lower, diag, upper;  // the position Jacobian's rows (Bailey eq. 11-12)
  std::vector<double> rhs_total;
  std::vector<double> lambda;  // padded
  // Velocity work: links (padded), eliminated right-hand side, the factor's entries that the
  // substitution needs, and on a ring the Sherman-Morrison vector (see VelocityForward).
  std::vector<double> d, y, inner, z;
  double ring_corner = 0.0, ring_gamma = 0.0, ring_factor = 0.0;
  TridiagonalLu chain_lu;
  CyclicTridiagonalLu ring_lu;

  int num_sites() const { return static_cast<int>(sites.size()); }
};

// A 3-vector in registers: plain scalars keep the per-link code to loads and arithmetic.
struct V3 {
  double x, y, z;
};
[[gnu::always_inline]] inline V3 At(const double* m, int site) {
  const double* p = m + 3 * site;
  return {p[0], p[1], p[2]};
}
[[gnu::always_inline]] inline V3 operator-(V3 a, V3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
[[gnu::always_inline]] inline double Dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
[[gnu::always_inline]] inline void Put(double* m, int k, V3 a) {
  m[3 * k] = a.x;
  m[3 * k + 1] = a.y;
  m[3 * k + 2] = a.z;
}

// Running max of |r_ij . v_ij| / l and of |v_ij|^2, the parts of
// ConstraintModel::MaxVelocityViolation. Plain max() (one instruction) drops NaN, so `finite`
// turns NaN instead once a link's |v_ij|^2 is NaN or infinite.
struct VelocityViolation {
  double along = 0.0;
  double speed_squared = 0.0;
  double finite = 0.0;

  [[gnu::always_inline]] void Add(double along_term, double speed_term) {
    along = std::max(along, along_term);
    speed_squared = std::max(speed_squared, speed_term);
    finite += speed_term * 0.0;
  }
  [[gnu::always_inline]] void Add(const Eigen::Vector3d& r, const Eigen::Vector3d& v,
                                  double inverse_length) {
    Add(std::abs(r.dot(v)) * inverse_length, v.squaredNorm());
  }
  double Value() const { return speed_squared == 0.0 ? 0.0 : along / std::sqrt(speed_squared); }
};

// The velocity projection (milc_velocity.cc, which instantiates each flag combination).
template <bool kRing, bool kContiguous>
bool VelocityForward(Strand& s, const double* r, const double* v, double& finite);
bool RingSubstitute(Strand& s);
template <bool kSubstitute, bool kContiguous>
void ApplyVelocities(Strand& s, double* v, double* backup, VelocityViolation& total);

}  // namespace ikd::constraints::internal::milc
