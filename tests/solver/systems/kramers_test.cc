// Kramers chain random walk (Vesely sec. VII C): the bond-angle statistics of the rigid trimer
// against Fixman's rigid-constraint density, bond lengths, determinism and option checks.
#include "ikd/systems/kramers.h"

#include <cmath>
#include <functional>
#include <iostream>
#include <numbers>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd::systems {
namespace {

using ::testing::HasSubstr;

// Regularized upper incomplete gamma Q(a, x): power series for P = 1 - Q below x = a + 1,
// Lentz's continued fraction above.
double UpperGammaQ(double a, double x) {
  if (x <= 0.0) return 1.0;
  const double prefactor = std::exp(a * std::log(x) - x - std::lgamma(a));
  if (x < a + 1.0) {
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 10000 && term > 1e-17 * sum; ++n) {
      term *= x / (a + n);
      sum += term;
    }
    return 1.0 - prefactor * sum;
  }
  constexpr double kTiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / kTiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 10000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::abs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    if (std::abs(d * c - 1.0) < 1e-16) break;
  }
  return prefactor * h;
}

// P(chi^2 >= chi2) for `dof` degrees of freedom.
double ChiSquareSurvival(double chi2, int dof) { return UpperGammaQ(0.5 * dof, 0.5 * chi2); }

// Closed forms: dof 2 -> exp(-x/2), dof 1 -> erfc(sqrt(x/2)); table value chi2(0.05, 11) =
// 19.675. Both branches of UpperGammaQ, to 1e-12 (table: 1e-4).
TEST(KramersTest, ChiSquareSurvivalMatchesClosedForms) {
  for (double x : {0.1, 1.0, 2.5, 7.0, 30.0, 90.0}) {
    EXPECT_NEAR(ChiSquareSurvival(x, 2), std::exp(-0.5 * x), 1e-12) << x;
    EXPECT_NEAR(ChiSquareSurvival(x, 1), std::erfc(std::sqrt(0.5 * x)), 1e-12) << x;
  }
  EXPECT_NEAR(ChiSquareSurvival(19.675, 11), 0.05, 1e-4);
}

// Densities of the bond angle phi in [0, pi] (unnormalized).
//
// Derivation of the rigid-constraint density. The walk (random kick, then projection along
// the old bond vectors) is, for small steps, Brownian motion on the constraint manifold: its
// mean drift is -1/2 sigma^2 B^T H^-1 tr(P grad^2 g), which is the mean-curvature term of the
// Laplace-Beltrami operator, so it samples the surface measure of the manifold (Fixman 1974;
// Ciccotti, Lelievre & Vanden-Eijnden 2008). Stiff springs instead sample the Lebesgue
// measure near the manifold, which by the coarea formula is the surface measure divided by
// sqrt(det H), H = B M^-1 B^T of the normalized constraints g = |r_ij| - l. So
// rigid = flexible * sqrt(det H). Trimer, unit bonds, equal masses: rows of B are
// (-u1, u1, 0) and (0, -u2, u2), so H = [[2, -cos phi], [-cos phi, 2]], det H = 4 - cos^2 phi.
// Direct check in 2-D: with coordinates (r2, theta, phi), r1 = r2 - e(theta),
// r3 = r2 + e(theta + phi), the induced metric is [[3,0,-s,-s],[0,3,c-1,c],[-s,c-1,2,1],
// [-s,c,1,1]] (theta = 0, s = sin phi, c = cos phi); its Schur complement on the translation
// block gives det = 9 * (4 - c^2)/9 = 4 - c^2. The flexible density of phi in [0, pi] is
// uniform in 2-D (independent bond directions; d^6 r = d^2 r2 b1 db1 dtheta b2 db2 dphi) and
// sin phi in 3-D, hence:
//   2-D: p(phi) ~ sqrt(4 - cos^2 phi),   3-D: p(phi) ~ sin phi sqrt(4 - cos^2 phi).
// Vesely's printed sqrt(1 - cos^2 phi)/4 = |sin phi|/4 vanishes at phi = 0 and pi; it is not it.
double Rigid2d(double phi) { return std::sqrt(4.0 - std::cos(phi) * std::cos(phi)); }
double Flexible2d(double) { return 1.0; }
double VeselyPrinted(double phi) { return std::sqrt(1.0 - std::cos(phi) * std::cos(phi)) / 4.0; }
double Rigid3d(double phi) { return std::sin(phi) * Rigid2d(phi); }
double Flexible3d(double phi) { return std::sin(phi); }

struct ChiSquare {
  double value = 0.0;
  int dof = 0;
  double p = 0.0;
};

// Pearson chi-square of the histogram against `density`, bin probabilities by Simpson's rule.
ChiSquare Pearson(const AngleHistogram& h, const std::function<double(double)>& density) {
  const int bins = static_cast<int>(h.counts.size());
  constexpr int kPanels = 64;  // even
  std::vector<double> mass(bins);
  double total_mass = 0.0;
  for (int b = 0; b < bins; ++b) {
    const double lo = b * h.bin_width, step = h.bin_width / kPanels;
    double sum = density(lo) + density(lo + h.bin_width);
    for (int k = 1; k < kPanels; ++k) sum += (k % 2 ? 4.0 : 2.0) * density(lo + k * step);
    mass[b] = sum * step / 3.0;
    total_mass += mass[b];
  }
  ChiSquare out;
  for (int b = 0; b < bins; ++b) {
    const double expected = static_cast<double>(h.total) * mass[b] / total_mass;
    const double diff = static_cast<double>(h.counts[b]) - expected;
    out.value += diff * diff / expected;
  }
  out.dof = bins - 1;
  out.p = ChiSquareSurvival(out.value, out.dof);
  return out;
}

// Trimer walks for the distribution tests. Decorrelation: the slowest histogram mode (cos phi)
// decays by about 2 sigma^2 per step in 2-D (phi diffuses with variance ~4 sigma^2 a step) and
// 4 sigma^2 in 3-D (Legendre l = 1 of two diffusing bond directions); samples are taken
// ~3 decay times apart (correlation ~e^-3). Bias: the walk's stationary law is off by
// O(sigma^2), measured as <cos phi> = -0.9 sigma^2 (exact: 0; 3-D, -0.044 +- 0.002 at
// sigma = 0.2, -0.008 +- 0.001 at 0.1) and in 2-D as a chi-square excess of 33 over 2e5
// samples at sigma = 0.1. That excess scales as n sigma^4: about 1 for the settings below,
// well under the chi-square's standard deviation sqrt(2 dof) = 4.7.
KramersWalkOptions TrimerOptions(bool planar) {
  KramersWalkOptions options;
  options.num_sites = 3;
  options.planar = planar;
  options.step_sigma = planar ? 0.07 : 0.06;
  options.warmup_steps = 3000;
  options.steps_per_sample = planar ? 300 : 200;
  options.num_samples = 30000;
  options.histogram_bins = 12;
  options.seed = 1974;
  return options;
}

// 2-D rigid trimer, p(phi) ~ sqrt(4 - cos^2 phi) (Fixman 1974, derivation above): accepted by
// Pearson's chi-square at p > 0.001 (11 dof, 3e4 samples); the stiff-spring uniform density
// and Vesely's printed |sin phi|/4 rejected at p < 1e-6.
TEST(KramersTest, PlanarTrimerFollowsFixmanDensity) {
  auto walk = RunKramersWalk(TrimerOptions(/*planar=*/true));
  ASSERT_TRUE(walk.ok()) << walk.status();
  const ChiSquare rigid = Pearson(walk->histogram, Rigid2d);
  const ChiSquare flexible = Pearson(walk->histogram, Flexible2d);
  const ChiSquare vesely = Pearson(walk->histogram, VeselyPrinted);
  std::cout << "2-D trimer: rigid chi2 " << rigid.value << " (dof " << rigid.dof << ", p "
            << rigid.p << "), uniform chi2 " << flexible.value << " (p " << flexible.p
            << "), Vesely printed chi2 " << vesely.value << " (p " << vesely.p << "), rejected "
            << walk->rejected_steps << " of " << walk->steps << " steps\n";
  EXPECT_EQ(walk->histogram.total, 30000);
  EXPECT_GT(rigid.p, 0.001);
  EXPECT_LT(flexible.p, 1e-6);
  EXPECT_LT(vesely.p, 1e-6);
  EXPECT_LT(walk->rejected_steps, 1e-3 * walk->steps);  // stay-put steps bias nothing visible
}

// 3-D rigid trimer, p(phi) ~ sin phi sqrt(4 - cos^2 phi) (Fixman 1974): the histogram is
// accepted by the chi-square at p > 0.001 (11 dof, 3e4 samples). The freely jointed sin phi
// differs from it mostly in one mode, so it is rejected by the z-test of <cos^2 phi>: with
// x = cos phi, of density ~ sqrt(4 - x^2) on [-1, 1], <x^2> = (2 pi/3 - sqrt 3/2) /
// (2 pi/3 + sqrt 3) = 0.32102 (rigid) against 1/3 (flexible); |z| < 3.3 (p > 0.001) for the
// rigid value and |z| > 4.9 (p < 1e-6) for the flexible one.
TEST(KramersTest, SpatialTrimerFollowsFixmanDensity) {
  const double rigid_moment = (2.0 * std::numbers::pi / 3.0 - std::sqrt(3.0) / 2.0) /
                              (2.0 * std::numbers::pi / 3.0 + std::sqrt(3.0));
  double sum = 0.0, sum_squares = 0.0;
  int64_t n = 0;
  auto walk = RunKramersWalk(TrimerOptions(/*planar=*/false), [&](const Eigen::Matrix3Xd& r) {
    const double c = std::cos(AngleBetween(r.col(1) - r.col(0), r.col(2) - r.col(1)));
    sum += c * c;
    sum_squares += c * c * c * c;
    ++n;
  });
  ASSERT_TRUE(walk.ok()) << walk.status();
  const ChiSquare rigid = Pearson(walk->histogram, Rigid3d);
  const ChiSquare flexible = Pearson(walk->histogram, Flexible3d);
  const double mean = sum / n;
  const double standard_error = std::sqrt((sum_squares / n - mean * mean) / (n - 1));
  const double z_rigid = (mean - rigid_moment) / standard_error;
  const double z_flexible = (mean - 1.0 / 3.0) / standard_error;
  std::cout << "3-D trimer: rigid chi2 " << rigid.value << " (dof " << rigid.dof << ", p "
            << rigid.p << "), sin(phi) chi2 " << flexible.value << " (p " << flexible.p
            << "); <cos^2 phi> " << mean << " +- " << standard_error << ", z rigid " << z_rigid
            << ", z flexible " << z_flexible << "; rejected " << walk->rejected_steps << " of "
            << walk->steps << " steps\n";
  EXPECT_GT(rigid.p, 0.001);
  EXPECT_LT(std::abs(z_rigid), 3.3);
  EXPECT_GT(std::abs(z_flexible), 4.9);
  EXPECT_LT(walk->rejected_steps, 1e-3 * walk->steps);
}

// Every configuration of a 6-site walk (observed after each step) keeps every bond at
// length 1 within the solver tolerance 1e-10 relative (plus 1e-14 rounding of the
// recentering); a planar walk keeps z exactly 0.
TEST(KramersTest, WalkKeepsBondLengths) {
  for (bool planar : {false, true}) {
    SCOPED_TRACE(planar);
    KramersWalkOptions options;
    options.num_sites = 6;
    options.planar = planar;
    options.step_sigma = 0.1;
    options.warmup_steps = 0;
    options.steps_per_sample = 1;
    options.num_samples = 5000;
    double worst = 0.0, worst_z = 0.0;
    auto walk = RunKramersWalk(options, [&](const Eigen::Matrix3Xd& r) {
      for (Eigen::Index k = 0; k + 1 < r.cols(); ++k) {
        worst = std::max(worst, std::abs((r.col(k + 1) - r.col(k)).norm() - 1.0));
      }
      if (planar) worst_z = std::max(worst_z, r.row(2).cwiseAbs().maxCoeff());
    });
    ASSERT_TRUE(walk.ok()) << walk.status();
    EXPECT_LE(worst, options.projection.tolerance + 1e-14);
    EXPECT_LE(walk->max_solver_violation, options.projection.tolerance);
    EXPECT_LE(walk->max_sampled_bond_error, options.projection.tolerance + 1e-14);
    EXPECT_EQ(worst_z, 0.0);
    EXPECT_EQ(walk->histogram.total, 4 * options.num_samples);  // 4 bond pairs per sample
  }
}

// A seed reproduces the walk bit for bit; another seed gives another walk.
TEST(KramersTest, SeedMakesTheWalkDeterministic) {
  KramersWalkOptions options;
  options.num_sites = 5;
  options.planar = false;
  options.num_samples = 200;
  options.steps_per_sample = 10;
  auto first = RunKramersWalk(options);
  auto second = RunKramersWalk(options);
  options.seed = 2;
  auto other = RunKramersWalk(options);
  ASSERT_TRUE(first.ok() && second.ok() && other.ok());
  EXPECT_EQ(first->histogram.counts, second->histogram.counts);
  EXPECT_TRUE(first->positions == second->positions);
  EXPECT_FALSE(first->positions == other->positions);
}

// Bad options are InvalidArgument naming the field.
TEST(KramersTest, InvalidOptionsNameTheField) {
  auto check = [](const std::function<void(KramersWalkOptions&)>& edit, const char* field) {
    KramersWalkOptions options;
    edit(options);
    const absl::Status s = RunKramersWalk(options).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << field;
    EXPECT_THAT(s.message(), HasSubstr(field));
  };
  check([](KramersWalkOptions& o) { o.num_sites = 2; }, "num_sites");
  check([](KramersWalkOptions& o) { o.bond_length = 0.0; }, "bond_length");
  check([](KramersWalkOptions& o) { o.step_sigma = -0.1; }, "step_sigma");
  check([](KramersWalkOptions& o) { o.step_sigma = 2.0; }, "step_sigma");
  check([](KramersWalkOptions& o) { o.step_sigma = NAN; }, "step_sigma");
  check([](KramersWalkOptions& o) { o.warmup_steps = -1; }, "warmup_steps");
  check([](KramersWalkOptions& o) { o.steps_per_sample = 0; }, "steps_per_sample");
  check([](KramersWalkOptions& o) { o.num_samples = 0; }, "num_samples");
  check([](KramersWalkOptions& o) { o.num_samples = int64_t{1} << 40; }, "2^40");
  check([](KramersWalkOptions& o) { o.histogram_bins = 0; }, "histogram_bins");
  check([](KramersWalkOptions& o) { o.projection.tolerance = -1.0; }, "tolerance");
}

}  // namespace
}  // namespace ikd::systems
