// MILC SHAKE (Bailey, Lowe & Sutton 2008): the linearized constraint equations of a chain are
// tridiagonal (cyclic tridiagonal for a ring); factor the Jacobian once per projection and
// run chord iterations; velocity constraints are one direct solve.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_format.h"
#include "solver_base.h"
#include "solvers.h"

namespace ikd::internal {
namespace {

// Slack between the squared-length estimate of the max relative violation and its exact
// value |sqrt(r^2) - l| / l: both are within a few ulps of 1 of the true value.
constexpr double kEstimateSlack = 1e-14;

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

// ---- Velocity projection (Bailey eq. 20-21) --------------------------------------------------
// Two passes per strand and no copies: VelocityForward builds the rows of B W B^T from the
// link vectors and eliminates them with the right-hand side as it goes; ApplyVelocities
// substitutes back from the middle and writes v + W B^T lambda site by site (a ring first
// completes its substitution in RingSubstitute).

// Two doubles in one 16-byte vector register (GCC/Clang vector extension; SSE2 on x86-64):
// lane 0 carries the front that eliminates from the top of the strand, lane 1 the one from
// the bottom, so that one instruction serves both.
using Pair = double __attribute__((vector_size(16)));
using PairBits = long long __attribute__((vector_size(16)));

[[gnu::always_inline]] inline Pair Lanes(double top, double bottom) { return Pair{top, bottom}; }
[[gnu::always_inline]] inline Pair Abs(Pair a) {
  return reinterpret_cast<Pair>(reinterpret_cast<PairBits>(a) & ~PairBits{1LL << 63, 1LL << 63});
}
[[gnu::always_inline]] inline Pair Max(Pair a, Pair b) { return a > b ? a : b; }
// Both lanes true; false on NaN.
[[gnu::always_inline]] inline bool BothGreater(Pair a, Pair b) {
  const PairBits greater = a > b;
  return (greater[0] & greater[1]) != 0;
}

// Site j of the strand (j < num_sites: no wrap-around).
template <bool kContiguous>
[[gnu::always_inline]] inline int SiteAt(const Strand& s, int j) {
  if constexpr (kContiguous) return s.first_site + j;
  return s.site_at[j];
}

// Sites a (lane 0) and b (lane 1): positions and velocities.
struct SitePair {
  Pair rx, ry, rz, vx, vy, vz;
};
[[gnu::always_inline]] inline SitePair LoadSites(const double* r, const double* v, int a, int b) {
  const int p = 3 * a, q = 3 * b;
  return {Lanes(r[p], r[q]),     Lanes(r[p + 1], r[q + 1]), Lanes(r[p + 2], r[q + 2]),
          Lanes(v[p], v[q]),     Lanes(v[p + 1], v[q + 1]), Lanes(v[p + 2], v[q + 2])};
}

// The link from site `to` to site `from` in each lane: vector d = r(from) - r(to), |d|^2 and
// the right-hand side -d . v_ij of Bailey eq. 20. The bottom lane walks its links backward
// (from = tail), so it holds -d_k; |d|^2, -d . v_ij and d_k . d_{k+1} do not change.
struct LinkPair {
  Pair x, y, z, squared, rhs;
};
[[gnu::always_inline]] inline LinkPair MakeLinkPair(const SitePair& from, const SitePair& to) {
  LinkPair l;
  l.x = from.rx - to.rx;
  l.y = from.ry - to.ry;
  l.z = from.rz - to.rz;
  l.squared = l.x * l.x + l.y * l.y + l.z * l.z;
  l.rhs = -(l.x * (from.vx - to.vx) + l.y * (from.vy - to.vy) + l.z * (from.vz - to.vz));
  return l;
}

// Stores lane `lane` of a link as link k of the padded array d (lane 1 holds -d_k).
[[gnu::always_inline]] inline void PutLink(double* d, int k, const LinkPair& l, int lane) {
  const double sign = lane == 0 ? 1.0 : -1.0;
  Put(d, k + 1, V3{sign * l.x[lane], sign * l.y[lane], sign * l.z[lane]});
}

// The elimination fronts' state: the last row's inner entry / pivot and its eliminated
// right-hand sides (y for -B v, z for a ring's correction vector).
struct Fronts {
  Pair inner{0.0, 0.0}, y{0.0, 0.0}, z{0.0, 0.0};
};

// One Thomas step on rows (k, b): `outer` is the entry toward each front's end, `inner` the
// one toward the middle. B W B^T is positive semi-definite (so is the ring's A'), so a pivot
// not clearly positive relative to its diagonal means dependent links: false. The division
// carries the recurrence (one step shorter than multiplying by 1 / pivot).
template <bool kRing>
[[gnu::always_inline]] inline bool Eliminate(Strand& s, int k, int b, Pair outer, Pair diag,
                                             Pair inner, Pair rhs, Pair z_rhs, Fronts& f) {
  const Pair pivot = diag - outer * f.inner;
  if (!BothGreater(pivot, 1e-12 * diag)) return false;
  f.inner = inner / pivot;
  const Pair q = 1.0 / pivot;
  f.y = (rhs - outer * f.y) * q;
  s.inner[k] = f.inner[0];
  s.inner[b] = f.inner[1];
  s.y[k] = f.y[0];
  s.y[b] = f.y[1];
  if constexpr (kRing) {
    f.z = (z_rhs - outer * f.z) * q;
    s.z[k] = f.z[0];
    s.z[b] = f.z[1];
  }
  return true;
}

// The rows the paired steps leave: one more top row t = m - 1 when n is even, then row m
// with both fronts. Lane 1 of `link` holds link m (for odd n lane 0 does too).
template <bool kRing>
bool VelocityMiddle(Strand& s, const LinkPair& link, Pair c_outer, Fronts& f) {
  const int n = s.links, m = n / 2;
  double inner_top = f.inner[0], y_top = f.y[0], z_top = f.z[0], c_top = c_outer[0];
  if (n % 2 == 0) {
    const int t = m - 1;
    const double c = -(link.x[0] * link.x[1] + link.y[0] * link.y[1] + link.z[0] * link.z[1]);
    const double outer = -s.w_at[t] * c_top, inner = -s.w_at[t + 1] * c;
    const double diag = s.w_sum[t] * link.squared[0];
    const double pivot = diag - outer * inner_top;
    if (!(pivot > 1e-12 * diag)) return false;
    inner_top = s.inner[t] = inner / pivot;
    y_top = s.y[t] = (link.rhs[0] - outer * y_top) / pivot;
    if constexpr (kRing) z_top = s.z[t] = -outer * z_top / pivot;
    PutLink(s.d.data(), t, link, 0);
    c_top = c;
  }
  const double lower = -s.w_at[m] * c_top, upper = -s.w_at[m + 1] * c_outer[1];
  const double diag = s.w_sum[m] * link.squared[1];
  const double pivot = diag - lower * inner_top - upper * f.inner[1];
  if (!(pivot > 1e-12 * diag)) return false;
  s.y[m] = (link.rhs[1] - lower * y_top - upper * f.y[1]) / pivot;
  if constexpr (kRing) s.z[m] = (-lower * z_top - upper * f.z[1]) / pivot;
  PutLink(s.d.data(), m, link, 1);
  if constexpr (kRing) {  // padding (see Strand): link n - 1 before link 0, link 0 after n - 1
    std::copy_n(s.d.data() + 3 * n, 3, s.d.data());
    std::copy_n(s.d.data() + 3, 3, s.d.data() + 3 * (n + 1));
  }
  return true;
}

// Bailey eq. 21: row k of B W B^T is (-w_head c_{k-1}, w_sum |d_k|^2, -w_tail c_k) with
// c_k = d_k . d_{k+1}. Two fronts eliminate rows k = 0, 1, .. and b = n-1, n-2, .. in step
// (one more top row when n is even) and meet at row m = n / 2 (see TridiagonalLu). On a ring
// the corners A(0, n-1) = A(n-1, 0) = -w_0 c_{n-1} go into a Sherman-Morrison correction, as
// in CyclicTridiagonalLu: A = A' + u u^T / gamma, u = (gamma, 0.., corner); z = A'^-1 u.
// Each lane keeps the site its link shares with the next and loads one site per step. Stores
// the links for ApplyVelocities. `finite` turns NaN when a link or right-hand side is not
// finite. False: a vanishing pivot.
template <bool kRing, bool kContiguous>
bool VelocityForward(Strand& s, const double* r, const double* v, double& finite) {
  const int n = s.links, steps = (n - 1) / 2;
  double* d = s.d.data();
  SitePair shared = LoadSites(r, v, s.site_at[1], s.site_at[n - 1]);
  LinkPair link = MakeLinkPair(LoadSites(r, v, s.site_at[0], s.site_at[n]), shared);
  Pair checks = (link.squared + link.rhs) * 0.0;
  Pair c_outer{0.0, 0.0};  // c of the row pair just eliminated, outer entries of the next
  Pair diag_ends = Lanes(s.w_sum[0], s.w_sum[n - 1]) * link.squared;
  Pair z_ends{0.0, 0.0};
  if constexpr (kRing) {
    s.ring_corner = s.w_at[0] * (link.x[0] * link.x[1] + link.y[0] * link.y[1] +
                                 link.z[0] * link.z[1]);  // lane 1 holds -d_{n-1}
    s.ring_gamma = diag_ends[0] != 0.0 ? -diag_ends[0] : -1.0;
    diag_ends -= Lanes(s.ring_gamma, s.ring_corner * s.ring_corner / s.ring_gamma);
    z_ends = Lanes(s.ring_gamma, s.ring_corner);
  }
  Fronts f;
  for (int k = 0; k < steps; ++k) {
    const int b = n - 1 - k;
    const SitePair site = LoadSites(r, v, SiteAt<kContiguous>(s, k + 2),
                                    SiteAt<kContiguous>(s, b - 1));
    const LinkPair next = MakeLinkPair(shared, site);
    shared = site;
    checks += (next.squared + next.rhs) * 0.0;
    const Pair c = link.x * next.x + link.y * next.y + link.z * next.z;
    PutLink(d, k, link, 0);  // here, not after the elimination: fewer values live across it
    PutLink(d, b, link, 1);
    const Pair diag = k == 0 ? diag_ends : Lanes(s.w_sum[k], s.w_sum[b]) * link.squared;
    const Pair outer = -Lanes(s.w_at[k], s.w_at[b + 1]) * c_outer;
    const Pair inner = -Lanes(s.w_at[k + 1], s.w_at[b]) * c;
    if (!Eliminate<kRing>(s, k, b, outer, diag, inner, link.rhs, k == 0 ? z_ends : Pair{},
                          f)) {
      finite += checks[0] + checks[1];
      return false;
    }
    link = next;
    c_outer = c;
  }
  finite += checks[0] + checks[1];
  return VelocityMiddle<kRing>(s, link, c_outer, f);
}
// A ring's back substitution of y and z from the middle outward, both fronts in the lanes,
// then the Sherman-Morrison factor: lambda = y - factor z with factor = v.y / (1 + v.z),
// v = (1, 0.., corner / gamma); ApplyVelocities forms lambda. False: 1 + v.z vanishes.
bool RingSubstitute(Strand& s) {
  const int n = s.links, m = n / 2, steps = (n - 1) / 2;
  double* y = s.y.data();
  double* z = s.z.data();
  const double* inner = s.inner.data();
  Pair y_prev = Lanes(y[m], y[m]), z_prev = Lanes(z[m], z[m]);
  for (int i = 0; i < steps; ++i) {
    const int k = m - 1 - i, b = m + 1 + i;
    const Pair scale = Lanes(inner[k], inner[b]);
    y_prev = Lanes(y[k], y[b]) - scale * y_prev;
    z_prev = Lanes(z[k], z[b]) - scale * z_prev;
    y[k] = y_prev[0];
    y[b] = y_prev[1];
    z[k] = z_prev[0];
    z[b] = z_prev[1];
  }
  for (int k = m - steps - 1; k >= 0; --k) {  // the top row left when n is even
    y[k] -= inner[k] * y[k + 1];
    z[k] -= inner[k] * z[k + 1];
  }
  const double ratio = s.ring_corner / s.ring_gamma;
  const double denominator = 1.0 + z[0] + ratio * z[n - 1];
  if (!(std::abs(denominator) > 1e-12 * (1.0 + std::abs(z[0]) + std::abs(ratio * z[n - 1])))) {
    return false;
  }
  s.ring_factor = (y[0] + ratio * y[n - 1]) / denominator;
  return true;
}

// lambda_k once substituted: on a ring with its Sherman-Morrison correction.
double LambdaAt(const Strand& s, int k) {
  return s.ring ? s.y[k] - s.ring_factor * s.z[k] : s.y[k];
}

// A 3-vector in each lane.
struct V3Pair {
  Pair x, y, z;
};
// Links k (lane 0) and j (lane 1) of the padded array d.
[[gnu::always_inline]] inline V3Pair GetLinks(const double* d, int k, int j) {
  const double* a = d + 3 * (k + 1);
  const double* b = d + 3 * (j + 1);
  return {Lanes(a[0], b[0]), Lanes(a[1], b[1]), Lanes(a[2], b[2])};
}
// Sites a (lane 0) and b (lane 1).
[[gnu::always_inline]] inline V3Pair GetSites(const double* m, int a, int b) {
  const double* p = m + 3 * a;
  const double* q = m + 3 * b;
  return {Lanes(p[0], q[0]), Lanes(p[1], q[1]), Lanes(p[2], q[2])};
}
[[gnu::always_inline]] inline void PutSites(double* m, int a, int b, const V3Pair& x) {
  Put(m, a, V3{x.x[0], x.y[0], x.z[0]});
  Put(m, b, V3{x.x[1], x.y[1], x.z[1]});
}
[[gnu::always_inline]] inline Pair Swap(Pair a) { return Pair{a[1], a[0]}; }

// Site j of the strand: v_j += w_j (lambda_j d_j - lambda_{j-1} d_{j-1}) (lambda_{-1} and
// lambda_n are 0 on a chain, the ring's neighbours on a ring); the old value to `backup`.
void ApplyVelocityAt(const Strand& s, int j, double* v, double* backup) {
  const int n = s.links;
  const double* d = s.d.data();
  const double after = j < n ? LambdaAt(s, j) : 0.0;
  const double before = j > 0 ? LambdaAt(s, j - 1) : s.ring ? LambdaAt(s, n - 1) : 0.0;
  const int site = s.site_at[j];
  const V3 old = At(v, site);
  const double w = s.w_at[j];
  Put(backup, site, old);
  Put(v, site, V3{old.x + w * (after * d[3 * j + 3] - before * d[3 * j]),
                  old.y + w * (after * d[3 * j + 4] - before * d[3 * j + 1]),
                  old.z + w * (after * d[3 * j + 5] - before * d[3 * j + 2])});
}

void CheckVelocityLink(const Strand& s, int k, const double* v, VelocityViolation& violation) {
  const V3 rel = At(v, s.site_at[k]) - At(v, s.site_at[k + 1]);
  const V3 link = At(s.d.data(), k + 1);
  violation.Add(std::abs(Dot(link, rel)) * s.inverse_length[k], Dot(rel, rel));
}

// Bailey eq. 18 from the middle of the strand outward, the sites above the middle in lane 0
// and those below in lane 1; each step also measures the link between the site just written
// and the one before it in its lane. With kSubstitute it computes lambda on the way (the back
// substitution of VelocityForward's elimination: a chain), else it forms it from
// RingSubstitute's y and z. Old values go to `backup`.
template <bool kSubstitute, bool kContiguous>
void ApplyVelocities(Strand& s, double* v, double* backup, VelocityViolation& total) {
  const int n = s.links, m = n / 2, steps = (n - 1) / 2;
  const double* d = s.d.data();
  double* y = s.y.data();
  const double* z = s.z.data();
  const double factor = s.ring_factor;
  Pair lambda_prev = Lanes(LambdaAt(s, m), LambdaAt(s, m));
  V3Pair link_prev = GetLinks(d, m, m);
  V3Pair written_prev{};
  Pair along{0.0, 0.0}, speed{0.0, 0.0}, finite{0.0, 0.0};
  for (int i = 0; i < steps; ++i) {
    const int k = m - 1 - i, b = m + 1 + i;
    Pair lambda = Lanes(y[k], y[b]);
    if constexpr (kSubstitute) {
      lambda -= Lanes(s.inner[k], s.inner[b]) * lambda_prev;
      y[k] = lambda[0];
      y[b] = lambda[1];
    } else {
      lambda -= factor * Lanes(z[k], z[b]);
    }
    const V3Pair link = GetLinks(d, k, b);
    const int top = SiteAt<kContiguous>(s, k + 1), bottom = SiteAt<kContiguous>(s, b);
    const V3Pair old = GetSites(v, top, bottom);
    // Site k + 1 is the tail of link k and head of k + 1; site b the head of b, tail of b - 1.
    const Pair w = Lanes(s.w_at[k + 1], -s.w_at[b]);
    const V3Pair out{old.x + w * (lambda_prev * link_prev.x - lambda * link.x),
                        old.y + w * (lambda_prev * link_prev.y - lambda * link.y),
                        old.z + w * (lambda_prev * link_prev.z - lambda * link.z)};
    PutSites(backup, top, bottom, old);
    PutSites(v, top, bottom, out);
    // Link k + 1 (top) and b - 1 (bottom); the first step's is link m in both lanes.
    const V3Pair other = i == 0 ? V3Pair{Swap(out.x), Swap(out.y), Swap(out.z)}
                                   : written_prev;
    const Pair rx = out.x - other.x, ry = out.y - other.y, rz = out.z - other.z;
    const Pair dot = link_prev.x * rx + link_prev.y * ry + link_prev.z * rz;
    const Pair speed_term = rx * rx + ry * ry + rz * rz;
    along = Max(along, Abs(dot) * Lanes(s.inverse_length[k + 1], s.inverse_length[b - 1]));
    speed = Max(speed, speed_term);
    finite += speed_term * 0.0;
    lambda_prev = lambda;
    link_prev = link;
    written_prev = out;
  }
  VelocityViolation violation = total;
  violation.Add(std::max(along[0], along[1]), std::max(speed[0], speed[1]));
  violation.finite += finite[0] + finite[1];
  // What the paired steps leave: rows above m - steps (one when n is even), sites 0 ..
  // m - steps and a chain's last site, the links not measured yet.
  const int top_rows = m - steps;
  if constexpr (kSubstitute) {
    for (int k = top_rows - 1; k >= 0; --k) y[k] -= s.inner[k] * y[k + 1];
  }
  for (int j = 0; j <= top_rows; ++j) ApplyVelocityAt(s, j, v, backup);
  if (!s.ring) ApplyVelocityAt(s, n, v, backup);
  const int last_top = steps == 0 ? n - 1 : m - steps, first_bottom = steps == 0 ? n : m + steps;
  for (int k = 0; k <= last_top; ++k) CheckVelocityLink(s, k, v, violation);
  for (int k = first_bottom; k < n; ++k) CheckVelocityLink(s, k, v, violation);
  total = violation;
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

std::unique_ptr<ConstraintSolver> MakeMilcSolver(const ConstraintModel& model,
                                                 const ProjectionOptions& options) {
  return std::make_unique<MilcSolver>(model, options);
}

}  // namespace ikd::internal
