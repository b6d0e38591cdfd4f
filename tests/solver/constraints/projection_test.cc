// The same physics checks over every constraint solver (SHAKE/RATTLE, MILC SHAKE, matrix).
#include "ikd/constraints/solver.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <Eigen/Dense>

#include "ikd/systems/chains.h"
#include "testing/eigen_matchers.h"

namespace ikd::constraints {
namespace {

using ::ikd::systems::ChainConstraints;
using ::ikd::systems::HelixChain;
using ::ikd::systems::PerturbGaussian;
using ::ikd::systems::RegularRing;
using ::ikd::systems::StraightChain;
using ::ikd::testing::CompareMatrices;
using ::testing::HasSubstr;

struct Fixture {
  ConstraintModel model;
  Eigen::Matrix3Xd reference;  // satisfies every constraint
};

Fixture Helix(int n, const Eigen::VectorXd& w) {
  Eigen::Matrix3Xd r = *HelixChain(n, 5.0, 2.0, 1.0);
  return {*ConstraintModel::Create(w, ChainConstraints(n, 1.0, false)), r};
}

// Dense reference for the velocity projection: v - W B^T (B W B^T)^-1 B v (Bailey eq. 20).
Eigen::Matrix3Xd DenseVelocityProjection(const ConstraintModel& model, const Eigen::Matrix3Xd& r,
                                         const Eigen::Matrix3Xd& v) {
  const int n = model.num_sites();
  const auto& cs = model.constraints();
  Eigen::MatrixXd b = Eigen::MatrixXd::Zero(cs.size(), 3 * n);
  for (size_t a = 0; a < cs.size(); ++a) {
    const Eigen::Vector3d d = r.col(cs[a].i) - r.col(cs[a].j);
    b.block<1, 3>(a, 3 * cs[a].i) = d.transpose();
    b.block<1, 3>(a, 3 * cs[a].j) = -d.transpose();
  }
  Eigen::VectorXd w3(3 * n);
  for (int k = 0; k < n; ++k) w3.segment<3>(3 * k).setConstant(model.inverse_masses()[k]);
  const Eigen::MatrixXd bw = b * w3.asDiagonal();
  const Eigen::VectorXd flat = Eigen::Map<const Eigen::VectorXd>(v.data(), 3 * n);
  const Eigen::VectorXd lambda = (bw * b.transpose()).ldlt().solve(b * flat);
  const Eigen::VectorXd out = flat - w3.asDiagonal() * (b.transpose() * lambda);
  return Eigen::Map<const Eigen::Matrix3Xd>(out.data(), 3, n);
}

// The test's own solution of the SHAKE equations (Ryckaert 1977; Bailey eq. 8-9), written
// without the library's solvers: each site moves along the reference bond vectors of its
// constraints, weighted by its inverse mass, r_i = u_i + w_i sum_a lambda_a s_ai (r0_i(a) -
// r0_j(a)) (s_ai = +1 at i(a), -1 at j(a)), until every |r_i - r_j|^2 = l^2. Solved for lambda
// by dense Newton from lambda = 0 (the solution next to the input, where every solver lands)
// to rounding; `residual` gets the final max |r_ij - l| / l.
Eigen::Matrix3Xd OwnShakeSolution(const Eigen::VectorXd& w,
                                  const std::vector<DistanceConstraint>& constraints,
                                  const Eigen::Matrix3Xd& reference,
                                  const Eigen::Matrix3Xd& unconstrained, double* residual) {
  const int m = static_cast<int>(constraints.size());
  std::vector<Eigen::Vector3d> bond(m);
  for (int a = 0; a < m; ++a) {
    bond[a] = reference.col(constraints[a].i) - reference.col(constraints[a].j);
  }
  auto positions = [&](const Eigen::VectorXd& lambda) {
    Eigen::Matrix3Xd r = unconstrained;
    for (int a = 0; a < m; ++a) {
      r.col(constraints[a].i) += w[constraints[a].i] * lambda[a] * bond[a];
      r.col(constraints[a].j) -= w[constraints[a].j] * lambda[a] * bond[a];
    }
    return r;
  };
  // d(r_i - r_j)/d lambda_b for constraint a's pair (i, j): (w_i s_bi - w_j s_bj) bond_b.
  auto sign = [&](int site, int b) {
    return (site == constraints[b].i ? 1.0 : 0.0) - (site == constraints[b].j ? 1.0 : 0.0);
  };
  Eigen::VectorXd lambda = Eigen::VectorXd::Zero(m);
  double worst = INFINITY;
  for (int iteration = 0; iteration < 60; ++iteration) {
    const Eigen::Matrix3Xd r = positions(lambda);
    Eigen::VectorXd g(m);
    Eigen::MatrixXd jacobian = Eigen::MatrixXd::Zero(m, m);
    worst = 0.0;
    for (int a = 0; a < m; ++a) {
      const int i = constraints[a].i, j = constraints[a].j;
      const Eigen::Vector3d d = r.col(i) - r.col(j);
      const double l = constraints[a].length;
      g[a] = d.squaredNorm() - l * l;
      worst = std::max(worst, std::abs(d.norm() - l) / l);
      for (int b = 0; b < m; ++b) {
        const double c = w[i] * sign(i, b) - w[j] * sign(j, b);
        if (c != 0.0) jacobian(a, b) = 2.0 * c * d.dot(bond[b]);
      }
    }
    if (worst < 1e-15) break;
    lambda -= jacobian.partialPivLu().solve(g);
  }
  *residual = worst;
  return positions(lambda);
}

class ProjectionTest : public ::testing::TestWithParam<Method> {
 protected:
  std::unique_ptr<ConstraintSolver> Solver(const ConstraintModel& model, double tolerance,
                                           int max_iterations = 100000) {
    ProjectionOptions options;
    options.tolerance = tolerance;
    options.max_iterations = max_iterations;
    auto solver = MakeConstraintSolver(GetParam(), model, options);
    EXPECT_TRUE(solver.ok()) << solver.status();
    return *std::move(solver);
  }
};

// Bailey sec. 3 random-violation test: a 0.1% Gaussian violation of the helix is removed to
// tau = 1e-10 (Bailey eq. 24), and every |r_ij - l| / l <= tau afterwards.
TEST_P(ProjectionTest, RestoresPerturbedHelixToTolerance) {
  Fixture f = Helix(100, Eigen::VectorXd::Ones(100));
  std::mt19937_64 rng(7);
  Eigen::Matrix3Xd r = f.reference;
  PerturbGaussian(1e-3, rng, r);
  ASSERT_GT(f.model.MaxRelativeViolation(r), 5e-4);
  auto solver = Solver(f.model, 1e-10);
  auto summary = solver->ProjectPositions(f.reference, r);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_TRUE(summary->converged()) << summary->message;
  EXPECT_LE(f.model.MaxRelativeViolation(r), 1e-10);
  EXPECT_LE(summary->max_relative_violation, 1e-10);
}

// Constraint forces are internal and central along r_ij(t) (Vesely eq. 7): the correction
// conserves total momentum sum m_i dr_i and angular momentum sum r_i(t) x m_i dr_i (to 1e-12).
TEST_P(ProjectionTest, CorrectionConservesMomentumAndAngularMomentum) {
  Eigen::VectorXd w(30);
  for (int k = 0; k < 30; ++k) w[k] = 1.0 / (1.0 + 0.1 * k);  // unequal masses
  Fixture f = Helix(30, w);
  std::mt19937_64 rng(11);
  Eigen::Matrix3Xd r = f.reference;
  PerturbGaussian(1e-3, rng, r);
  const Eigen::Matrix3Xd before = r;
  ASSERT_TRUE(Solver(f.model, 1e-12)->ProjectPositions(f.reference, r)->converged());
  Eigen::Vector3d momentum = Eigen::Vector3d::Zero(), angular = Eigen::Vector3d::Zero();
  double scale = 0.0;
  for (int k = 0; k < 30; ++k) {
    const Eigen::Vector3d p = (r.col(k) - before.col(k)) / w[k];
    momentum += p;
    angular += f.reference.col(k).cross(p);
    scale += p.norm();
  }
  EXPECT_LT(momentum.norm(), 1e-12 * 30);
  EXPECT_LT(angular.norm(), 1e-11 * 30 * scale / 30 + 1e-12);
}

// Every solver (SHAKE included) lands on the test's own solution of the SHAKE equations
// (OwnShakeSolution: dense Newton on the Lagrange multipliers, no library solver), within
// 1e-10, on a helix with unequal masses and a fixed end. Meeting the lengths is not enough: a
// solver that moved the sites some other way would differ (checked: the own solution with
// equal masses is 3e-5 away from every solver's).
TEST_P(ProjectionTest, AgreesWithAnIndependentSolutionOfTheShakeEquations) {
  const int n = 50;
  Eigen::VectorXd w(n);
  for (int k = 0; k < n; ++k) w[k] = 1.0 / (1.0 + 0.1 * k);
  w[0] = 0.0;
  const std::vector<DistanceConstraint> constraints = ChainConstraints(n, 1.0, false);
  const auto model = *ConstraintModel::Create(w, constraints);
  const Eigen::Matrix3Xd reference = *HelixChain(n, 5.0, 2.0, 1.0);
  std::mt19937_64 rng(3);
  Eigen::Matrix3Xd r = reference;
  PerturbGaussian(1e-3, rng, r);
  r.col(0) = reference.col(0);
  double residual = INFINITY;
  const Eigen::Matrix3Xd expected = OwnShakeSolution(w, constraints, reference, r, &residual);
  ASSERT_LT(residual, 1e-14);
  ASSERT_GT((expected - r).cwiseAbs().maxCoeff(), 1e-4);  // the projection moves the sites
  ASSERT_TRUE(Solver(model, 1e-13)->ProjectPositions(reference, r)->converged());
  EXPECT_TRUE(CompareMatrices(r, expected, 1e-10));
}

// One link (analytic): sites i, j move along the reference bond d = r0_i - r0_j by w_i lambda d
// and -w_j lambda d; |u + (w_i + w_j) lambda d| = l is a quadratic in lambda whose smaller root
// (the one next to lambda = 0) gives the exact positions. Unequal masses, one site fixed, a
// stretch and a squeeze, a reference bond turned away from the unconstrained one: to 1e-12.
TEST_P(ProjectionTest, SingleLinkLandsOnTheQuadraticRoot) {
  struct Case {
    double wi, wj;
    Eigen::Vector3d ri, rj;  // unconstrained
  };
  const Eigen::Vector3d r0i(0.1, -0.2, 0.3), r0j(1.3, 0.4, -0.5);  // reference
  const double l = (r0i - r0j).norm();
  const Case cases[] = {
      {1.0, 1.0 / 3.0, Eigen::Vector3d(0.0, -0.1, 0.35), Eigen::Vector3d(1.45, 0.5, -0.6)},
      {0.0, 2.0, Eigen::Vector3d(0.1, -0.2, 0.3), Eigen::Vector3d(1.2, 0.3, -0.35)},
      {0.5, 0.25, Eigen::Vector3d(0.2, -0.25, 0.2), Eigen::Vector3d(1.1, 0.55, -0.45)},
  };
  for (const Case& c : cases) {
    const Eigen::Vector3d d = r0i - r0j, u = c.ri - c.rj;
    const double W = c.wi + c.wj;
    // W^2 |d|^2 lambda^2 + 2 W (u . d) lambda + |u|^2 - l^2 = 0; the root of smaller magnitude,
    // in the form free of cancellation: lambda = (l^2 - |u|^2) / (W (u.d + sqrt(disc))).
    const double ud = u.dot(d);
    const double disc = ud * ud - d.squaredNorm() * (u.squaredNorm() - l * l);
    ASSERT_GT(disc, 0.0);
    const double lambda = (l * l - u.squaredNorm()) / (W * (ud + std::sqrt(disc)));
    Eigen::Matrix3Xd expected(3, 2), r(3, 2), reference(3, 2);
    expected << c.ri + c.wi * lambda * d, c.rj - c.wj * lambda * d;
    ASSERT_NEAR((expected.col(0) - expected.col(1)).norm(), l, 1e-15);
    r << c.ri, c.rj;
    reference << r0i, r0j;
    const auto model = *ConstraintModel::Create(Eigen::Vector2d(c.wi, c.wj), {{0, 1, l}});
    auto summary = Solver(model, 1e-14)->ProjectPositions(reference, r);
    ASSERT_TRUE(summary.ok() && summary->converged()) << c.wi << " " << c.wj;
    EXPECT_TRUE(CompareMatrices(r, expected, 1e-12)) << c.wi << " " << c.wj;
  }
}

// RATTLE and MILC velocity constraints: r_ij . v_ij = 0 to 1e-12 relative (Bailey eq. 15),
// and the result is the mass-weighted orthogonal projection computed densely.
TEST_P(ProjectionTest, VelocitiesBecomePerpendicularToLinks) {
  Eigen::VectorXd w(40);
  for (int k = 0; k < 40; ++k) w[k] = 1.0 / (1.0 + 0.05 * k);
  Fixture f = Helix(40, w);
  std::mt19937_64 rng(5);
  Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Zero(3, 40);
  PerturbGaussian(1.0, rng, v);
  const Eigen::Matrix3Xd expected = DenseVelocityProjection(f.model, f.reference, v);
  auto summary = Solver(f.model, 1e-14)->ProjectVelocities(f.reference, v);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_TRUE(summary->converged()) << summary->message;
  EXPECT_LT(f.model.MaxVelocityViolation(f.reference, v), 1e-12);
  EXPECT_TRUE(CompareMatrices(v, expected, 1e-11));
}

// An arm: fixed base (site 0) and driven hand (last site); the hand moved a little must leave
// both fixed sites exactly where they are and restore all limbs.
TEST_P(ProjectionTest, FixedBaseAndHandStayPut) {
  const int n = 6;
  Eigen::VectorXd w = Eigen::VectorXd::Ones(n);
  w[0] = w[n - 1] = 0.0;
  Eigen::Matrix3Xd ref = *HelixChain(n, 2.0, 1.0, 1.0);
  auto model = *ConstraintModel::Create(w, ChainConstraints(n, 1.0, false));
  Eigen::Matrix3Xd r = ref;
  r.col(n - 1) += Eigen::Vector3d(0.02, -0.01, 0.015);
  const Eigen::Matrix3Xd before = r;
  auto summary = Solver(model, 1e-12)->ProjectPositions(ref, r);
  ASSERT_TRUE(summary.ok() && summary->converged()) << summary->message;
  EXPECT_EQ(r.col(0), before.col(0));
  EXPECT_EQ(r.col(n - 1), before.col(n - 1));
  EXPECT_LE(model.MaxRelativeViolation(r), 1e-12);
}

// A fully stretched arm with base and hand fixed and the hand pulled beyond reach has no
// solution: a status (singular or not converged), never NaN, and the input is kept.
TEST_P(ProjectionTest, StretchedArmBeyondReachIsAnOutcomeNotNaN) {
  const int n = 5;
  Eigen::VectorXd w = Eigen::VectorXd::Ones(n);
  w[0] = w[n - 1] = 0.0;
  auto model = *ConstraintModel::Create(w, ChainConstraints(n, 1.0, false));
  const Eigen::Matrix3Xd ref = StraightChain(n, 1.0);
  Eigen::Matrix3Xd r = ref;
  r(0, n - 1) += 0.01;
  auto summary = Solver(model, 1e-10, 200)->ProjectPositions(ref, r);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_FALSE(summary->converged());
  EXPECT_TRUE(r.allFinite());
  EXPECT_FALSE(summary->ToStatus().ok());
  EXPECT_FALSE(summary->message.empty());
}

// Hitting the iteration cap is reported as NOT_CONVERGED with an ABORTED status that names
// the cap and the remaining violation.
TEST_P(ProjectionTest, IterationCapIsReported) {
  Fixture f = Helix(200, Eigen::VectorXd::Ones(200));
  std::mt19937_64 rng(9);
  Eigen::Matrix3Xd r = f.reference;
  PerturbGaussian(3e-2, rng, r);
  auto summary = Solver(f.model, 1e-14, 1)->ProjectPositions(f.reference, r);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->outcome, ProjectionOutcome::kNotConverged);
  EXPECT_EQ(summary->ToStatus().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(summary->message, HasSubstr("max_iterations=1"));
}

TEST_P(ProjectionTest, BadInputIsAnError) {
  Fixture f = Helix(4, Eigen::VectorXd::Ones(4));
  auto solver = Solver(f.model, 1e-10);
  Eigen::Matrix3Xd wrong(3, 3);
  wrong.setZero();
  EXPECT_EQ(solver->ProjectPositions(f.reference, wrong).status().code(),
            absl::StatusCode::kInvalidArgument);
  Eigen::Matrix3Xd nan = f.reference;
  nan(1, 2) = std::nan("");
  auto status = solver->ProjectPositions(f.reference, nan).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("positions[2] is not finite"));
}

// "Converged" must mean what the model measures on the output: the reported velocity
// violation equals MaxVelocityViolation of the projected velocities and is <= tau, on 100
// random velocity sets of a helix with random masses (it once used the input's scale).
TEST_P(ProjectionTest, ReportedVelocityViolationIsTheOutputsAndWithinTolerance) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> mass(0.5, 2.0);
  Eigen::VectorXd w(30);
  for (int k = 0; k < 30; ++k) w[k] = 1.0 / mass(rng);
  Fixture f = Helix(30, w);
  const double tau = 1e-8;
  auto solver = Solver(f.model, tau);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int trial = 0; trial < 100; ++trial) {
    Eigen::Matrix3Xd v(3, 30);
    for (int k = 0; k < v.size(); ++k) v.data()[k] = normal(rng);
    auto summary = solver->ProjectVelocities(f.reference, v);
    ASSERT_TRUE(summary.ok()) << summary.status();
    ASSERT_TRUE(summary->converged()) << summary->message;
    const double measured = f.model.MaxVelocityViolation(f.reference, v);
    EXPECT_LE(measured, tau) << "trial " << trial;
    EXPECT_LE(summary->max_relative_violation, tau) << "trial " << trial;
    EXPECT_NEAR(summary->max_relative_violation, measured, 1e-12) << "trial " << trial;
  }
}

INSTANTIATE_TEST_SUITE_P(AllSolvers, ProjectionTest,
                         ::testing::Values(Method::kShake, Method::kMilcShake, Method::kMatrix,
                                           Method::kAuto),
                         [](const auto& info) { return std::string(MethodName(info.param)); });

// MILC's velocity passes pair the two elimination fronts in SIMD lanes and treat the rows the
// pairing leaves (odd/even link counts, tiny strands, a ring's closing link) separately: on a
// chain and a ring of every small size, numbered in order or shuffled, with unequal masses,
// unequal lengths and a fixed chain end, they must give the dense projection.
struct TwoStrands {
  ConstraintModel model;
  Eigen::Matrix3Xd positions;
};

TwoStrands ChainAndRing(int chain_links, int ring_links, bool shuffled, std::mt19937_64& rng) {
  const int n = chain_links + 1 + ring_links;
  std::vector<int> number(n);
  for (int k = 0; k < n; ++k) number[k] = k;
  if (shuffled) std::shuffle(number.begin(), number.end(), rng);
  std::uniform_real_distribution<double> uniform(0.5, 2.0);
  Eigen::VectorXd w(n);
  for (int k = 0; k < n; ++k) w[k] = uniform(rng);
  w[number[0]] = 0.0;  // a fixed chain end
  Eigen::Matrix3Xd r(3, n);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int k = 0; k < n; ++k) r.col(k) = Eigen::Vector3d(normal(rng), normal(rng), normal(rng));
  std::vector<DistanceConstraint> constraints;
  auto link = [&](int a, int b) {
    constraints.push_back({number[a], number[b], (r.col(number[a]) - r.col(number[b])).norm()});
  };
  for (int k = 0; k < chain_links; ++k) link(k, k + 1);
  const int first = chain_links + 1;
  for (int k = 0; k < ring_links; ++k) link(first + k, first + (k + 1) % ring_links);
  return {*ConstraintModel::Create(w, constraints), r};
}

TEST(MilcStrandTest, VelocitiesMatchDenseProjectionForEverySmallSize) {
  std::mt19937_64 rng(17);
  for (bool shuffled : {false, true}) {
    for (int chain : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13}) {
      for (int ring : {3, 4, 5, 6, 7, 10, 11}) {
        TwoStrands f = ChainAndRing(chain, ring, shuffled, rng);
        auto solver = *MakeConstraintSolver(Method::kMilcShake, f.model, ProjectionOptions());
        Eigen::Matrix3Xd v(3, f.model.num_sites());
        PerturbGaussian(1.0, rng, v);
        const Eigen::Matrix3Xd expected = DenseVelocityProjection(f.model, f.positions, v);
        auto summary = solver->ProjectVelocities(f.positions, v);
        ASSERT_TRUE(summary.ok() && summary->converged()) << chain << " " << ring;
        EXPECT_TRUE(CompareMatrices(v, expected, 1e-11)) << chain << " " << ring << " " << shuffled;
        const double measured = f.model.MaxVelocityViolation(f.positions, v);
        EXPECT_LT(measured, 1e-13) << chain << " " << ring;
        EXPECT_NEAR(summary->max_relative_violation, measured, 1e-15) << chain << " " << ring;
      }
    }
  }
}

// The same strands for positions: MILC converges and lands where SHAKE does, and both where
// the test's own solution of the SHAKE equations lies.
TEST(MilcStrandTest, PositionsAgreeWithShakeForEverySmallSize) {
  std::mt19937_64 rng(19);
  ProjectionOptions tight;
  tight.tolerance = 1e-13;
  tight.max_iterations = 100000;
  for (bool shuffled : {false, true}) {
    for (int chain : {1, 2, 3, 4, 5, 8, 13}) {
      for (int ring : {3, 4, 5, 10, 11}) {
        TwoStrands f = ChainAndRing(chain, ring, shuffled, rng);
        Eigen::Matrix3Xd milc = f.positions;
        PerturbGaussian(1e-3, rng, milc);
        Eigen::Matrix3Xd shake = milc;
        double residual = INFINITY;
        const Eigen::Matrix3Xd expected = OwnShakeSolution(
            f.model.inverse_masses(), f.model.constraints(), f.positions, milc, &residual);
        ASSERT_LT(residual, 1e-14) << chain << " " << ring;
        auto summary = (*MakeConstraintSolver(Method::kMilcShake, f.model, tight))
                           ->ProjectPositions(f.positions, milc);
        ASSERT_TRUE(summary.ok() && summary->converged()) << chain << " " << ring;
        ASSERT_TRUE((*MakeConstraintSolver(Method::kShake, f.model, tight))
                        ->ProjectPositions(f.positions, shake)
                        ->converged());
        EXPECT_LE(f.model.MaxRelativeViolation(milc), 1e-13);
        EXPECT_TRUE(CompareMatrices(milc, shake, 1e-10)) << chain << " " << ring;
        EXPECT_TRUE(CompareMatrices(milc, expected, 1e-10)) << chain << " " << ring;
        EXPECT_TRUE(CompareMatrices(shake, expected, 1e-10)) << chain << " " << ring;
      }
    }
  }
}

// MILC checks finiteness inside its passes: a bad value at a strand site or at a site in no
// constraint is the same InvalidArgument as the generic check gives, and nothing is written.
TEST(MilcStrandTest, NonFiniteInputIsNamedAndLeftUnchanged) {
  const int n = 8;
  auto model = *ConstraintModel::Create(Eigen::VectorXd::Ones(n + 1),
                                        ChainConstraints(n, 1.0, false));  // site n: loose
  auto solver = *MakeConstraintSolver(Method::kMilcShake, model, ProjectionOptions());
  const Eigen::Matrix3Xd ref = StraightChain(n + 1, 1.0);
  for (int bad : {0, 3, n - 1, n}) {
    Eigen::Matrix3Xd r = ref, v = Eigen::Matrix3Xd::Ones(3, n + 1);
    v(2, bad) = std::numeric_limits<double>::infinity();
    const Eigen::Matrix3Xd v_before = v;
    auto vs = solver->ProjectVelocities(r, v);
    EXPECT_EQ(vs.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(vs.status().message()),
                HasSubstr("velocities[" + std::to_string(bad) + "] is not finite"));
    EXPECT_TRUE((v.array() == v_before.array()).all());  // inf == inf
    r(0, bad) = std::nan("");
    auto ps = solver->ProjectPositions(ref, r);
    EXPECT_THAT(std::string(ps.status().message()),
                HasSubstr("positions[" + std::to_string(bad) + "] is not finite"));
    Eigen::Matrix3Xd bad_ref = ref, p = ref;
    bad_ref(1, bad) = std::nan("");
    ps = solver->ProjectPositions(bad_ref, p);
    EXPECT_THAT(std::string(ps.status().message()),
                HasSubstr("reference positions[" + std::to_string(bad) + "] is not finite"));
    EXPECT_TRUE(CompareMatrices(p, ref, 0.0));
  }
}

// Collinear links between fixed sites: B W B^T is singular; the velocities stay as given.
TEST(MilcStrandTest, SingularVelocityMatrixLeavesVelocitiesUnchanged) {
  Eigen::VectorXd w = Eigen::VectorXd::Ones(3);
  w[0] = w[2] = 0.0;
  auto model = *ConstraintModel::Create(w, ChainConstraints(3, 1.0, false));
  auto solver = *MakeConstraintSolver(Method::kMilcShake, model, ProjectionOptions());
  Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Ones(3, 3);
  const Eigen::Matrix3Xd before = v;
  auto summary = solver->ProjectVelocities(StraightChain(3, 1.0), v);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->outcome, ProjectionOutcome::kSingular);
  EXPECT_TRUE(CompareMatrices(v, before, 0.0));
}

// A relative velocity whose |r . v| overflows: NON_FINITE, the input restored.
TEST(MilcStrandTest, OverflowingVelocitiesAreNonFiniteAndRestored) {
  auto model = *ConstraintModel::Create(Eigen::VectorXd::Ones(4), ChainConstraints(4, 1.0, true));
  auto solver = *MakeConstraintSolver(Method::kMilcShake, model, ProjectionOptions());
  Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Zero(3, 4);
  v(0, 0) = 1.5e308;
  v(0, 1) = -1.5e308;
  const Eigen::Matrix3Xd before = v;
  auto summary = solver->ProjectVelocities(RegularRing(4, 1.0), v);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->outcome, ProjectionOutcome::kNonFinite);
  EXPECT_TRUE(CompareMatrices(v, before, 0.0));
}

// Bailey sec. 4: on a ring SHAKE converges slowly; MILC's cyclic tridiagonal solve reaches
// tau = 1e-10 in a handful of chord iterations. Expect at least 10x fewer iterations.
TEST(RingTest, MilcConvergesWhereShakeCrawls) {
  const int n = 200;
  auto model = *ConstraintModel::Create(Eigen::VectorXd::Ones(n), ChainConstraints(n, 1.0, true));
  ASSERT_EQ(model.topology().kind, TopologyKind::kRing);
  const Eigen::Matrix3Xd ref = RegularRing(n, 1.0);
  std::mt19937_64 rng(21);
  Eigen::Matrix3Xd noisy = ref;
  PerturbGaussian(1e-3, rng, noisy);
  ProjectionOptions options;
  options.tolerance = 1e-10;
  options.max_iterations = 1000000;
  Eigen::Matrix3Xd by_milc = noisy, by_shake = noisy;
  auto milc =
      (*MakeConstraintSolver(Method::kMilcShake, model, options))->ProjectPositions(ref, by_milc);
  auto shake =
      (*MakeConstraintSolver(Method::kShake, model, options))->ProjectPositions(ref, by_shake);
  ASSERT_TRUE(milc->converged()) << milc->message;
  EXPECT_LE(model.MaxRelativeViolation(by_milc), 1e-10);
  EXPECT_LE(milc->iterations, 10);
  EXPECT_TRUE(!shake->converged() || shake->iterations >= 10 * milc->iterations)
      << "SHAKE " << shake->iterations << " vs MILC " << milc->iterations;
}

// Branched systems (a star of three limbs) need the matrix method; MILC refuses them by name.
TEST(TreeTest, MatrixMethodSolvesBranchesAndMilcRefuses) {
  Eigen::Matrix3Xd ref(3, 4);
  ref << 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1;
  auto model =
      *ConstraintModel::Create(Eigen::VectorXd::Ones(4), {{0, 1, 1.0}, {0, 2, 1.0}, {0, 3, 1.0}});
  EXPECT_EQ(ResolveAutoMethod(model), Method::kMatrix);
  auto milc = MakeConstraintSolver(Method::kMilcShake, model, ProjectionOptions());
  EXPECT_EQ(milc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(milc.status().message()), HasSubstr("TREE"));
  Eigen::Matrix3Xd r = ref;
  std::mt19937_64 rng(1);
  PerturbGaussian(1e-2, rng, r);
  auto summary = (*MakeConstraintSolver(Method::kMatrix, model, ProjectionOptions()))
                     ->ProjectPositions(ref, r);
  ASSERT_TRUE(summary->converged()) << summary->message;
  EXPECT_LE(model.MaxRelativeViolation(r), 1e-10);
}

// A triangle squashed flat is rank-deficient: its three constraint gradients are dependent,
// B W B^T is singular; the matrix method says so instead of returning garbage.
TEST(RankDeficiencyTest, CollinearTriangleIsSingular) {
  Eigen::Matrix3Xd ref(3, 3);
  ref << 0, 1, 2, 0, 0, 0, 0, 0, 0;
  auto model =
      *ConstraintModel::Create(Eigen::VectorXd::Ones(3), {{0, 1, 1.0}, {1, 2, 1.0}, {0, 2, 2.0}});
  Eigen::Matrix3Xd r = ref;
  r(1, 1) = 1e-3;
  auto summary = (*MakeConstraintSolver(Method::kMatrix, model, ProjectionOptions()))
                     ->ProjectPositions(ref, r);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->outcome, ProjectionOutcome::kSingular);
  EXPECT_EQ(summary->ToStatus().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(summary->message, HasSubstr("rank-deficient"));
}

// A branched graph with closed triangles: 24 sites, site 0 fixed, each further site one unit
// from a random earlier one, every third also held at its distance from its parent's parent.
Fixture BranchedGraphWithLoops() {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  const int n = 24;
  Eigen::Matrix3Xd r = Eigen::Matrix3Xd::Zero(3, n);
  std::vector<int> parent(n, -1);
  std::vector<DistanceConstraint> constraints;
  for (int k = 1; k < n; ++k) {
    parent[k] = static_cast<int>(rng() % k);
    const Eigen::Vector3d direction(normal(rng), normal(rng), normal(rng));
    r.col(k) = r.col(parent[k]) + direction.normalized();
    constraints.push_back({parent[k], k, 1.0});
    const int grandparent = parent[parent[k]];
    if (k % 3 == 0 && grandparent >= 0) {
      constraints.push_back({grandparent, k, (r.col(k) - r.col(grandparent)).norm()});
    }
  }
  Eigen::VectorXd w = Eigen::VectorXd::Ones(n);
  w[0] = 0.0;
  return {*ConstraintModel::Create(w, constraints), r};
}

// Newton's method (ProjectionOptions::newton, refactoring while the convergence is slow): from a
// 10% Gaussian violation of the loops-and-branches graph, once the violation is below 2% every
// iteration shrinks it at least 50-fold (measured 0.092 -> 0.0103 -> 7e-5 -> 9e-7 -> 4e-13; the
// chord iteration shrinks it 2-9-fold), the 1e-12 tolerance takes fewer than half the chord's
// iterations (5 against 15), and the fixed site does not move.
TEST(NewtonTest, ConvergesFarFasterThanTheChordIteration) {
  const Fixture f = BranchedGraphWithLoops();
  Eigen::Matrix3Xd start = f.reference;
  std::mt19937_64 rng(3);
  PerturbGaussian(0.1, rng, start);
  start.col(0) = f.reference.col(0);
  auto project = [&](bool newton, int max_iterations) {
    ProjectionOptions options;
    options.tolerance = 1e-12;
    options.max_iterations = max_iterations;
    options.newton = newton;
    Eigen::Matrix3Xd r = start;
    auto summary = (*MakeConstraintSolver(Method::kMatrix, f.model, options))
                       ->ProjectPositions(f.reference, r);
    EXPECT_TRUE(summary.ok());
    return std::make_pair(*summary, r);
  };
  const auto [newton, r] = project(true, 50);
  const auto [chord, r_chord] = project(false, 1000);
  ASSERT_TRUE(newton.converged()) << newton.message;
  ASSERT_TRUE(chord.converged()) << chord.message;
  EXPECT_LE(f.model.MaxRelativeViolation(r), 1e-12);
  EXPECT_EQ(r.col(0), f.reference.col(0));
  EXPECT_LT(2 * newton.iterations, chord.iterations);
  std::vector<double> violations;  // after 1, 2, ... iterations (each run is deterministic)
  for (int k = 1; k < newton.iterations; ++k) {
    violations.push_back(project(true, k).first.max_relative_violation);
  }
  violations.push_back(newton.max_relative_violation);
  ASSERT_GE(violations.size(), 3u);
  for (size_t k = 1; k < violations.size(); ++k) {
    if (violations[k - 1] < 0.02) {
      EXPECT_LE(violations[k], violations[k - 1] / 50) << "iteration " << k + 1;
    }
  }
}

// A continuation (each projection's reference the last one's result) with one Newton solver,
// which starts each projection from its last factorization, against a new solver per step:
// both on the surface to the tolerance, the fixed site unmoved, the reused solver's move from
// the input no longer than the new solver's beyond rounding of the 0.5% steps. A reference that
// is not the last result gets a factorization of its own: the same bytes as a new solver.
TEST(NewtonTest, ContinuationReusesTheLastFactorization) {
  const Fixture f = BranchedGraphWithLoops();
  ProjectionOptions options;
  options.tolerance = 1e-10;
  options.max_iterations = 20;
  options.newton = true;
  auto kept = *MakeConstraintSolver(Method::kMatrix, f.model, options);
  std::mt19937_64 rng(11);
  Eigen::Matrix3Xd reference = f.reference;
  for (int step = 0; step < 6; ++step) {
    Eigen::Matrix3Xd input = reference;
    PerturbGaussian(0.005, rng, input);
    input.col(0) = f.reference.col(0);
    Eigen::Matrix3Xd reused = input, fresh = input;
    auto a = kept->ProjectPositions(reference, reused);
    auto b = (*MakeConstraintSolver(Method::kMatrix, f.model, options))
                 ->ProjectPositions(reference, fresh);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_TRUE(a->converged()) << step << ": " << a->message;
    ASSERT_TRUE(b->converged()) << step << ": " << b->message;
    EXPECT_LE(f.model.MaxRelativeViolation(reused), 1e-10);
    EXPECT_EQ(reused.col(0), f.reference.col(0));
    EXPECT_LE((reused - input).norm(), 1.01 * (fresh - input).norm()) << step;
    reference = reused;
  }
  Eigen::Matrix3Xd other_reference = f.reference, input = f.reference;
  PerturbGaussian(0.01, rng, other_reference);
  other_reference.col(0) = f.reference.col(0);
  PerturbGaussian(0.01, rng, input);
  input.col(0) = f.reference.col(0);
  Eigen::Matrix3Xd from_kept = input, from_new = input;
  ASSERT_TRUE(kept->ProjectPositions(other_reference, from_kept).ok());
  ASSERT_TRUE((*MakeConstraintSolver(Method::kMatrix, f.model, options))
                  ->ProjectPositions(other_reference, from_new)
                  .ok());
  EXPECT_EQ(from_kept, from_new);
}

// Only the matrix method relinearizes: the others refuse the option by name.
TEST(NewtonTest, OnlyTheMatrixMethod) {
  const Fixture f = Helix(10, Eigen::VectorXd::Ones(10));
  ProjectionOptions options;
  options.newton = true;
  for (Method method : {Method::kShake, Method::kRattle, Method::kMilcShake, Method::kAuto}) {
    auto solver = MakeConstraintSolver(method, f.model, options);
    EXPECT_EQ(solver.status().code(), absl::StatusCode::kInvalidArgument) << MethodName(method);
    EXPECT_THAT(std::string(solver.status().message()),
                HasSubstr("newton: only the MATRIX method"));
  }
  EXPECT_TRUE(MakeConstraintSolver(Method::kMatrix, f.model, options).ok());
}

TEST(FrozenTest, ViolatedConstraintBetweenFixedSitesIsInvalidArgument) {
  auto model = *ConstraintModel::Create(Eigen::Vector3d(0.0, 0.0, 1.0), {{0, 1, 1.0}, {1, 2, 1.0}});
  Eigen::Matrix3Xd r = StraightChain(3, 1.0);
  r(0, 1) = 1.2;
  for (Method m : {Method::kShake, Method::kMilcShake, Method::kMatrix}) {
    auto s = (*MakeConstraintSolver(m, model, ProjectionOptions()))->ProjectPositions(r, r);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << MethodName(m);
    EXPECT_THAT(std::string(s.status().message()), HasSubstr("constraints[0] joins fixed sites"));
  }
}

}  // namespace
}  // namespace ikd::constraints
