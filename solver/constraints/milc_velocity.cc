// MILC velocity projection (Bailey eq. 18-21): one direct solve per strand, two lanes at once.
#include <algorithm>
#include <cmath>

#include "milc_strand.h"

namespace ikd::constraints::internal::milc {
namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

template bool VelocityForward<false, false>(Strand&, const double*, const double*, double&);
template bool VelocityForward<false, true>(Strand&, const double*, const double*, double&);
template bool VelocityForward<true, false>(Strand&, const double*, const double*, double&);
template bool VelocityForward<true, true>(Strand&, const double*, const double*, double&);
template void ApplyVelocities<false, false>(Strand&, double*, double*, VelocityViolation&);
template void ApplyVelocities<false, true>(Strand&, double*, double*, VelocityViolation&);
template void ApplyVelocities<true, false>(Strand&, double*, double*, VelocityViolation&);
template void ApplyVelocities<true, true>(Strand&, double*, double*, VelocityViolation&);

}  // namespace ikd::constraints::internal::milc
