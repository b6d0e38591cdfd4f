// Constrained response matrices L, E, N (thesis ch. 4, eq. 4.18, 4.28, 4.38) against the
// thesis' closed forms, projector identities, its 40-site chain ensemble and an independent
// KKT formulation.
#include "ikd/systems/response.h"

#include <cmath>
#include <iostream>
#include <random>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <Eigen/Dense>

#include "ikd/constraints/model.h"
#include "ikd/systems/chains.h"
#include "testing/eigen_matchers.h"

namespace ikd::systems {
namespace {

using constraints::ConstraintModel;
using constraints::DistanceConstraint;
using ::ikd::testing::CompareMatrices;
using ::testing::HasSubstr;

Eigen::Matrix3Xd Sites(std::initializer_list<Eigen::Vector3d> sites) {
  Eigen::Matrix3Xd r(3, static_cast<Eigen::Index>(sites.size()));
  Eigen::Index k = 0;
  for (const Eigen::Vector3d& s : sites) r.col(k++) = s;
  return r;
}

Eigen::Matrix3Xd Dimer(const Eigen::Vector3d& direction) {
  return Sites({Eigen::Vector3d::Zero(), direction});
}

const std::vector<DistanceConstraint> kDimerBond = {{0, 1, 1.0}};

// Thesis eq. 4.42: E of the unit dimer along x with D^-1 = 1.
Eigen::MatrixXd ThesisEq442() {
  Eigen::MatrixXd e(6, 6);
  e << 0.5, 0, 0, 0.5, 0, 0,  //
      0, 1, 0, 0, 0, 0,       //
      0, 0, 1, 0, 0, 0,       //
      0.5, 0, 0, 0.5, 0, 0,   //
      0, 0, 0, 0, 1, 0,       //
      0, 0, 0, 0, 0, 1;
  return e;
}

// Thesis eq. 4.48: the orientation-averaged dimer E, 5/6 on the diagonal, 1/6 between sites.
Eigen::MatrixXd ThesisEq448() {
  Eigen::MatrixXd e = Eigen::MatrixXd::Zero(6, 6);
  for (int a = 0; a < 3; ++a) {
    e(a, a) = e(3 + a, 3 + a) = 5.0 / 6.0;
    e(a, 3 + a) = e(3 + a, a) = 1.0 / 6.0;
  }
  return e;
}

// Thesis eq. 4.42: unit dimer along x, E = [[1/2,0,0,1/2,0,0], ...] exactly, to 1e-14.
TEST(ResponseTest, DimerAlongXIsThesisEq442) {
  auto e = ConstrainedProjector(Dimer(Eigen::Vector3d::UnitX()), kDimerBond);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(CompareMatrices(*e, ThesisEq442(), 1e-14));
}

// Thesis eq. 4.42 in 2-D (x, y rows only): E = [[1/2,0,1/2,0],[0,1,0,0],[1/2,0,1/2,0],[0,0,0,1]].
TEST(ResponseTest, PlanarDimerAlongX) {
  Eigen::MatrixXd expected(4, 4);
  expected << 0.5, 0, 0.5, 0, 0, 1, 0, 0, 0.5, 0, 0.5, 0, 0, 0, 0, 1;
  auto e = ConstrainedProjector(Dimer(Eigen::Vector3d::UnitX()), kDimerBond, {.dimension = 2});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(CompareMatrices(*e, expected, 1e-14));
}

// Thesis eq. 4.48: averaging E over the dimer along x, y and z (thesis sec. 4.6) gives 5/6 and
// 1/6 exactly, to 1e-14; the O(3) block-trace average of the x dimer alone gives the same.
TEST(ResponseTest, AxisOrientationAverageIsThesisEq448) {
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(6, 6);
  for (const Eigen::Vector3d axis :
       {Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitY(), Eigen::Vector3d::UnitZ()}) {
    auto e = ConstrainedProjector(Dimer(axis), kDimerBond);
    ASSERT_TRUE(e.ok()) << e.status();
    sum += *e;
  }
  EXPECT_TRUE(CompareMatrices(sum / 3.0, ThesisEq448(), 1e-14));
  auto averaged = OrientationAverage(ThesisEq442(), 3);
  ASSERT_TRUE(averaged.ok()) << averaged.status();
  EXPECT_TRUE(CompareMatrices(*averaged, ThesisEq448(), 1e-14));
}

// Thesis eq. 4.48 from 10^5 random orientations (as the thesis did): each entry has standard
// deviation <= 0.5 sqrt(4/45) = 0.149, so the mean is within 5.3 sigma = 0.0025.
TEST(ResponseTest, RandomOrientationAverageApproachesThesisEq448) {
  std::mt19937_64 rng(4242);
  std::normal_distribution<double> gauss;
  constexpr int kSamples = 100000;
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(6, 6);
  for (int s = 0; s < kSamples; ++s) {
    const Eigen::Vector3d u = Eigen::Vector3d(gauss(rng), gauss(rng), gauss(rng)).normalized();
    auto e = ConstrainedProjector(Dimer(u), kDimerBond);
    ASSERT_TRUE(e.ok()) << e.status();
    sum += *e;
  }
  EXPECT_TRUE(CompareMatrices(sum / kSamples, ThesisEq448(), 0.0025));
}

struct Conformation {
  const char* name;
  int dimension;
  Eigen::Matrix3Xd positions;
  std::vector<DistanceConstraint> constraints;
};

std::vector<Conformation> Conformations() {
  std::mt19937_64 rng(7);
  std::vector<Conformation> out;
  out.push_back({"coil3d", 3, RandomCoil(12, 1.0, false, rng), ChainConstraints(12, 1.0, false)});
  out.push_back({"coil2d", 2, RandomCoil(9, 1.0, true, rng), ChainConstraints(9, 1.0, false)});
  Eigen::Matrix3Xd ring = RegularRing(7, 1.0);
  PerturbGaussian(0.05, rng, ring);  // a generic (non-regular) closed loop
  out.push_back({"ring3d", 3, ring, ChainConstraints(7, 1.0, true)});
  // A branched tree: 0-1-2 with a branch 1-3-4.
  Eigen::Matrix3Xd tree =
      Sites({{0, 0, 0}, {1, 0, 0}, {1.5, 0.8, 0.1}, {1.2, -0.9, 0.4}, {2.0, -1.3, 0.9}});
  out.push_back({"tree3d", 3, tree, {{0, 1, 1}, {1, 2, 1}, {1, 3, 1}, {3, 4, 1}}});
  // A rigid tetrahedron: 6 constraints on 4 sites.
  Eigen::Matrix3Xd tetra = Sites({{0, 0, 0}, {1, 0, 0}, {0.4, 0.9, 0}, {0.3, 0.3, 0.8}});
  out.push_back({"tetrahedron",
                 3,
                 tetra,
                 {{0, 1, 1}, {0, 2, 1}, {0, 3, 1}, {1, 2, 1}, {1, 3, 1}, {2, 3, 1}}});
  return out;
}

// Thesis sec. 4.5 and Appendix C, X = identity, any conformation: E^2 = E, E = E^T,
// trace E = d n - l, E B^T = 0 and per-coordinate column sums delta_ab (internal constraint
// forces sum to zero); all to 1e-12.
TEST(ResponseTest, ProjectorIdentitiesHoldForEveryConformation) {
  for (const Conformation& c : Conformations()) {
    SCOPED_TRACE(c.name);
    const ResponseOptions options{.dimension = c.dimension};
    auto e = ConstrainedProjector(c.positions, c.constraints, options);
    ASSERT_TRUE(e.ok()) << e.status();
    auto b = ConstraintJacobian(c.positions, c.constraints, c.dimension);
    ASSERT_TRUE(b.ok()) << b.status();
    const int d = c.dimension;
    const Eigen::Index n = c.positions.cols();
    EXPECT_TRUE(CompareMatrices(*e * *e, *e, 1e-12));
    EXPECT_TRUE(CompareMatrices(*e, e->transpose(), 0.0));
    EXPECT_NEAR(e->trace(), d * n - static_cast<double>(c.constraints.size()), 1e-12);
    EXPECT_TRUE(
        CompareMatrices(*e * b->transpose(), Eigen::MatrixXd::Zero(d * n, b->rows()), 1e-12));
    for (Eigen::Index col = 0; col < d * n; ++col) {
      for (int a = 0; a < d; ++a) {
        double sum = 0.0;
        for (Eigen::Index site = 0; site < n; ++site) sum += (*e)(d * site + a, col);
        EXPECT_NEAR(sum, a == col % d ? 1.0 : 0.0, 1e-12) << "column " << col << " coord " << a;
      }
    }
  }
}

// Thesis sec. 4.6, Table 4.1 and eq. 4.49: 40-site unit random chains (3-D walks with uniform
// step directions), D^-1 = 1, averaged over xx, yy, zz and 20000 conformations (statistical
// errors below 1e-4, from 10 batches). References: middle self-mobility 0.666634 (sites 10..30)
// within 0.002; decay 0.2 per monomer within 0.005, as the first-neighbour ratio (Table 4.1:
// 0.13282 / 0.666634 = 0.1992) and as the log-fit over distances 0..2 (Table 4.1: 0.2011); end
// mobility 0.81461 within 0.005 and its neighbour 0.14794 within 0.002.
// Measured (seed below): middle 0.66666, ratio 0.1989, fit 0.2012, end 0.8146, neighbour 0.1480.
// Not asserted: beyond distance 2 this ensemble decays by 0.206-0.208 per monomer (also for 80
// sites, so not an end effect), above Table 4.1's 0.2035, 0.2009, ...; the table's entries for
// distances >= 3 are 2-17% below ours, far outside either statistical error.
TEST(ResponseTest, FortySiteChainMatchesThesisTable41) {
  constexpr int kSites = 40;
  constexpr int kConformations = 20000;
  constexpr int kMaxDistance = 8;
  std::mt19937_64 rng(20240611);
  const std::vector<DistanceConstraint> bonds = ChainConstraints(kSites, 1.0, false);
  Eigen::MatrixXd mean = Eigen::MatrixXd::Zero(kSites, kSites);
  for (int s = 0; s < kConformations; ++s) {
    auto e = ConstrainedProjector(RandomCoil(kSites, 1.0, false, rng), bonds);
    ASSERT_TRUE(e.ok()) << e.status();
    mean += *IsotropicResponse(*e, 3);
  }
  mean /= kConformations;

  // <E(i, i +- k)> over the thesis' middle sites 10..30 (1-based), both sides.
  Eigen::VectorXd profile = Eigen::VectorXd::Zero(kMaxDistance + 1);
  for (int k = 0; k <= kMaxDistance; ++k) {
    for (int i = 9; i <= 29; ++i) profile[k] += 0.5 * (mean(i, i + k) + mean(i, i - k));
    profile[k] /= 21.0;
  }
  const double middle = profile[0];
  const double ratio = profile[1] / profile[0];
  // Least-squares slope of log <E(k)> over k = 0, 1, 2.
  const double slope = (std::log(profile[2]) - std::log(profile[0])) / 2.0;
  const double fitted_decay = std::exp(slope);
  const double end = 0.5 * (mean(0, 0) + mean(kSites - 1, kSites - 1));
  const double next_to_end = 0.5 * (mean(0, 1) + mean(kSites - 1, kSites - 2));
  std::cout << "middle self-mobility " << middle << ", first-neighbour ratio " << ratio
            << ", fitted decay (k = 0..2) " << fitted_decay << ", end mobility " << end
            << ", next to end " << next_to_end << "\n<E(i, i+k)>, k = 0..8:";
  for (int k = 0; k <= kMaxDistance; ++k) std::cout << " " << profile[k];
  std::cout << "\n";

  EXPECT_NEAR(middle, 0.6666, 0.002);
  EXPECT_NEAR(ratio, 0.200, 0.005);
  EXPECT_NEAR(fitted_decay, 0.200, 0.005);
  EXPECT_NEAR(end, 0.8146, 0.005);
  EXPECT_NEAR(next_to_end, 0.14794, 0.002);
}

// Thesis eq. 4.28 with l = 0: nothing to project out, the response is X itself (exactly).
TEST(ResponseTest, WithoutConstraintsTheResponseIsX) {
  Eigen::MatrixXd x = Eigen::MatrixXd::Identity(6, 6);
  x(0, 3) = x(3, 0) = 0.25;
  auto response = ConstrainedResponse(Dimer(Eigen::Vector3d::UnitY()), {}, x);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_TRUE(CompareMatrices(*response, x, 0.0));
}

// A linearly dependent constraint set has no response (thesis sec. 4.5: rank B < l): collinear
// triangle and duplicated bond come back as FAILED_PRECONDITION naming the constraint, no NaN.
TEST(ResponseTest, RankDeficientConstraintsAreAnError) {
  const Eigen::Matrix3Xd line = Sites({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}});
  auto collinear = ConstrainedProjector(line, {{0, 1, 1}, {1, 2, 1}, {0, 2, 2}});
  ASSERT_FALSE(collinear.ok());
  EXPECT_EQ(collinear.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(collinear.status().message(), HasSubstr("constraints[2] (sites 0-2)"));
  EXPECT_THAT(collinear.status().message(), HasSubstr("rank-deficient"));

  auto duplicate = ConstrainedProjector(line, {{0, 1, 1}, {1, 0, 1}});
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(duplicate.status().message(), HasSubstr("constraints[1]"));

  // A rigid planar triangle is not rank-deficient.
  const Eigen::Matrix3Xd triangle = Sites({{0, 0, 0}, {1, 0, 0}, {0.5, 0.8, 0}});
  EXPECT_TRUE(
      ConstrainedProjector(triangle, {{0, 1, 1}, {1, 2, 1}, {0, 2, 1}}, {.dimension = 2}).ok());

  auto coincident = ConstrainedProjector(Sites({{1, 2, 3}, {1, 2, 3}}), kDimerBond);
  EXPECT_EQ(coincident.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(coincident.status().message(), HasSubstr("coincide"));

  // Both sites of a constraint immovable (zero unconstrained response): B X B^T singular.
  auto immovable = ConstrainedResponseDiagonal(Dimer(Eigen::Vector3d::UnitX()), kDimerBond,
                                               Eigen::VectorXd::Zero(6));
  EXPECT_EQ(immovable.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(immovable.status().message(), HasSubstr("immovable"));
}

// Bad input is InvalidArgument naming the field.
TEST(ResponseTest, InvalidInputNamesTheField) {
  const Eigen::Matrix3Xd r = Dimer(Eigen::Vector3d::UnitX());
  auto expect_invalid = [](const absl::Status& s, const char* what) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr(what));
  };
  expect_invalid(ConstrainedProjector(r, kDimerBond, {.dimension = 4}).status(), "dimension");
  expect_invalid(ConstrainedProjector(r, kDimerBond, {.rank_tolerance = 0}).status(),
                 "rank_tolerance");
  expect_invalid(ConstrainedProjector(r, {{0, 2, 1}}).status(), "constraints[0]");
  expect_invalid(ConstrainedProjector(r, {{1, 1, 1}}).status(), "constraints[0]");
  Eigen::Matrix3Xd bad = r;
  bad(1, 1) = std::nan("");
  expect_invalid(ConstrainedProjector(bad, kDimerBond).status(), "positions");
  expect_invalid(ConstrainedProjector(Eigen::Matrix3Xd(3, 0), {}).status(), "positions");
  expect_invalid(ConstrainedResponse(r, kDimerBond, Eigen::MatrixXd::Identity(5, 5)).status(),
                 "unconstrained");
  Eigen::MatrixXd asymmetric = Eigen::MatrixXd::Identity(6, 6);
  asymmetric(0, 1) = 0.1;
  expect_invalid(ConstrainedResponse(r, kDimerBond, asymmetric).status(), "symmetric");
  Eigen::MatrixXd indefinite = Eigen::MatrixXd::Identity(6, 6);
  indefinite(2, 2) = -1.0;
  expect_invalid(ConstrainedResponse(r, kDimerBond, indefinite).status(), "positive definite");
  Eigen::MatrixXd infinite = Eigen::MatrixXd::Identity(6, 6);
  infinite(3, 3) = INFINITY;
  expect_invalid(ConstrainedResponse(r, kDimerBond, infinite).status(), "finite");
  Eigen::VectorXd negative = Eigen::VectorXd::Ones(6);
  negative[4] = -1.0;
  expect_invalid(ConstrainedResponseDiagonal(r, kDimerBond, negative).status(),
                 "unconstrained_diagonal[4]");
  expect_invalid(ConstrainedResponseDiagonal(r, kDimerBond, Eigen::VectorXd::Ones(4)).status(),
                 "unconstrained_diagonal");
  expect_invalid(IsotropicResponse(Eigen::MatrixXd::Identity(5, 5), 3).status(), "response");
}

// Independent reference for a constrained response: minimize 1/2 dR^T A dR - F^T dR subject to
// B dR = 0 (and any extra rows), i.e. the KKT system [A B^T; B 0] [dR; mu] = [F; 0], by dense LU.
Eigen::VectorXd SolveKkt(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b,
                         const Eigen::VectorXd& f) {
  const Eigen::Index m = a.rows(), l = b.rows();
  Eigen::MatrixXd kkt = Eigen::MatrixXd::Zero(m + l, m + l);
  kkt.topLeftCorner(m, m) = a;
  kkt.topRightCorner(m, l) = b.transpose();
  kkt.bottomLeftCorner(l, m) = b;
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(m + l);
  rhs.head(m) = f;
  return kkt.partialPivLu().solve(rhs).head(m);
}

// Squared-form Jacobian of g = |r_i - r_j|^2 - l^2 (Vesely's sigma_ij), built here independently.
Eigen::MatrixXd SquaredJacobian(const Eigen::Matrix3Xd& r,
                                const std::vector<DistanceConstraint>& cs, int d) {
  Eigen::MatrixXd b = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(cs.size()), d * r.cols());
  for (size_t c = 0; c < cs.size(); ++c) {
    const Eigen::VectorXd rij = 2.0 * (r.col(cs[c].i) - r.col(cs[c].j)).head(d);
    b.row(c).segment(d * cs[c].i, d) = rij.transpose();
    b.row(c).segment(d * cs[c].j, d) = -rij.transpose();
  }
  return b;
}

// Thesis eq. 4.18 with a random SPD stiffness K: B L = 0 to 1e-12 and L F equals the KKT
// minimizer of 1/2 dR^T K dR - F^T dR s.t. B dR = 0 (squared-form B) to 1e-12 relative; 3-D and
// 2-D.
TEST(ResponseTest, StiffnessResponseMatchesKkt) {
  std::mt19937_64 rng(99);
  std::normal_distribution<double> gauss;
  const std::vector<DistanceConstraint> cs = {{0, 1, 1}, {1, 2, 1}, {1, 3, 1}, {3, 4, 1}};
  for (int d : {3, 2}) {
    SCOPED_TRACE(d);
    const Eigen::Matrix3Xd r = RandomCoil(5, 1.0, d == 2, rng);
    const int m = 5 * d;
    Eigen::MatrixXd a(m, m);
    for (Eigen::Index k = 0; k < a.size(); ++k) a.data()[k] = gauss(rng);
    const Eigen::MatrixXd stiffness = a * a.transpose() + m * Eigen::MatrixXd::Identity(m, m);
    const Eigen::MatrixXd compliance = stiffness.inverse();
    const Eigen::MatrixXd symmetric = 0.5 * (compliance + compliance.transpose());
    auto l = ConstrainedResponse(r, cs, symmetric, {.dimension = d});
    ASSERT_TRUE(l.ok()) << l.status();
    auto b = ConstraintJacobian(r, cs, d);
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_TRUE(CompareMatrices(*b * *l, Eigen::MatrixXd::Zero(cs.size(), m), 1e-12));
    Eigen::VectorXd f(m);
    for (Eigen::Index k = 0; k < m; ++k) f[k] = gauss(rng);
    const Eigen::VectorXd reference = SolveKkt(stiffness, SquaredJacobian(r, cs, d), f);
    EXPECT_TRUE(CompareMatrices(*l * f, reference, 1e-12 * reference.norm()));
  }
}

// Thesis eq. 4.38 for a model with unequal masses and fixed ends (an arm with base 0 and hand 4
// held): B N = 0 and N F equals the KKT solution with M = diag(m), the squared-form B and rows
// fixing sites 0 and 4, to 1e-12 relative; fixed sites do not accelerate.
TEST(ResponseTest, MassResponseMatchesKkt) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> gauss;
  const Eigen::Matrix3Xd r = RandomCoil(5, 1.0, false, rng);
  const Eigen::VectorXd masses = (Eigen::VectorXd(5) << 1.0, 2.5, 0.7, 4.0, 1.0).finished();
  for (bool fixed_ends : {false, true}) {
    SCOPED_TRACE(fixed_ends);
    Eigen::VectorXd w = masses.cwiseInverse();
    std::vector<DistanceConstraint> cs = ChainConstraints(5, 1.0, false);
    if (fixed_ends) {
      w[0] = w[4] = 0.0;
      cs.push_back({0, 4, (r.col(0) - r.col(4)).norm()});  // frozen: both ends fixed
    }
    auto model = ConstraintModel::Create(w, cs);
    ASSERT_TRUE(model.ok()) << model.status();
    auto n_matrix = ConstrainedMobility(*model, r);
    ASSERT_TRUE(n_matrix.ok()) << n_matrix.status();

    const std::vector<DistanceConstraint> bonds = ChainConstraints(5, 1.0, false);
    auto b = ConstraintJacobian(r, bonds, 3);
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_TRUE(CompareMatrices(*b * *n_matrix, Eigen::MatrixXd::Zero(4, 15), 1e-12));

    Eigen::MatrixXd rows = SquaredJacobian(r, bonds, 3);
    if (fixed_ends) {
      Eigen::MatrixXd pins = Eigen::MatrixXd::Zero(6, 15);
      pins.leftCols(3).setIdentity();
      pins.block<3, 3>(3, 12).setIdentity();
      rows = (Eigen::MatrixXd(rows.rows() + 6, 15) << rows, pins).finished();
    }
    Eigen::VectorXd mass_diagonal(15);
    for (int k = 0; k < 5; ++k) mass_diagonal.segment<3>(3 * k).setConstant(masses[k]);
    Eigen::VectorXd f(15);
    for (Eigen::Index k = 0; k < 15; ++k) f[k] = gauss(rng);
    const Eigen::VectorXd reference =
        SolveKkt(Eigen::MatrixXd(mass_diagonal.asDiagonal()), rows, f);
    const Eigen::VectorXd acceleration = *n_matrix * f;
    EXPECT_TRUE(CompareMatrices(acceleration, reference, 1e-12 * reference.norm()));
    if (fixed_ends) {
      EXPECT_TRUE(CompareMatrices(acceleration.head(3), Eigen::Vector3d::Zero(), 0.0));
      EXPECT_TRUE(CompareMatrices(acceleration.tail(3), Eigen::Vector3d::Zero(), 0.0));
    }
  }
}

}  // namespace
}  // namespace ikd::systems
