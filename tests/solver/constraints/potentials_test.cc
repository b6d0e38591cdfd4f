#include "ikd/constraints/potentials.h"

#include <cmath>
#include <numbers>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ikd/systems/chains.h"
#include "testing/eigen_matchers.h"

namespace ikd::constraints {
namespace {

using ::ikd::systems::HelixChain;
using ::ikd::systems::StraightChain;

// Force must be -dU/dr: central differences of U with h = 1e-6 agree to 1e-7 (O(h^2) error).
void ExpectForceIsMinusGradient(const Potential& potential, Eigen::Matrix3Xd r) {
  Eigen::Matrix3Xd forces = Eigen::Matrix3Xd::Zero(3, r.cols());
  potential.AddForces(r, forces);
  const double h = 1e-6;
  for (Eigen::Index k = 0; k < r.cols(); ++k) {
    for (int d = 0; d < 3; ++d) {
      Eigen::Matrix3Xd scratch = Eigen::Matrix3Xd::Zero(3, r.cols());
      const double x = r(d, k);
      r(d, k) = x + h;
      const double up = potential.AddForces(r, scratch);
      r(d, k) = x - h;
      const double down = potential.AddForces(r, scratch);
      r(d, k) = x;
      EXPECT_NEAR(forces(d, k), -(up - down) / (2 * h), 1e-7) << "site " << k << " axis " << d;
    }
  }
}

// Bailey eq. 22-23 on a right angle: theta = pi/2, U = A l / 2 * (pi/2)^2.
TEST(BendingPotentialTest, RightAngleEnergy) {
  auto bending = *BendingPotential::ForChain(0, 3, 2.0, 1.5);
  Eigen::Matrix3Xd r(3, 3);
  r << 0, 1, 1, 0, 0, 1, 0, 0, 0;
  Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, 3);
  EXPECT_NEAR(bending.AddForces(r, f), 0.5 * 2.0 * 1.5 * std::pow(std::numbers::pi / 2, 2), 1e-14);
}

TEST(BendingPotentialTest, ForceIsMinusGradientOnHelix) {
  ExpectForceIsMinusGradient(*BendingPotential::ForChain(0, 8, 1.3, 1.0),
                             *HelixChain(8, 5.0, 2.0, 1.0));
}

// Near-straight chains hit theta/sin(theta) -> 1; the force stays finite and correct.
TEST(BendingPotentialTest, ForceIsFiniteAndCorrectWhenNearlyStraight) {
  Eigen::Matrix3Xd r = StraightChain(5, 1.0);
  r(1, 2) = 1e-9;
  Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, 5);
  auto bending = *BendingPotential::ForChain(0, 5, 1.0, 1.0);
  bending.AddForces(r, f);
  EXPECT_TRUE(f.allFinite());
  r(1, 2) = 1e-3;
  ExpectForceIsMinusGradient(bending, r);
}

TEST(BendingPotentialTest, RejectsBadParameters) {
  EXPECT_THAT(std::string(BendingPotential::ForChain(0, 5, -1.0, 1.0).status().message()),
              ::testing::HasSubstr("stiffness"));
  EXPECT_THAT(std::string(BendingPotential::ForChain(0, 5, 1.0, 0.0).status().message()),
              ::testing::HasSubstr("segment_length"));
  EXPECT_FALSE(BendingPotential::ForChain(0, 2, 1.0, 1.0).ok());
  EXPECT_FALSE(BendingPotential::Create({{0, 1, 1}}, 1.0, 1.0).ok());
}

// U = -m g.r: force m g on movable sites, nothing on fixed ones.
TEST(UniformGravityTest, PullsMovableSitesOnly) {
  Eigen::Vector3d g(0, 0, -9.81);
  UniformGravity gravity(g, Eigen::Vector3d(0.0, 0.5, 1.0));
  Eigen::Matrix3Xd r = Eigen::Matrix3Xd::Random(3, 3);
  ExpectForceIsMinusGradient(gravity, r);
  Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, 3);
  gravity.AddForces(r, f);
  EXPECT_TRUE(f.col(0).isZero());
  EXPECT_NEAR(f(2, 1), -9.81 * 2.0, 1e-12);
}

TEST(ExternalForcesTest, ForceIsMinusGradient) {
  ExpectForceIsMinusGradient(ExternalForces(Eigen::Matrix3Xd::Random(3, 4)),
                             Eigen::Matrix3Xd::Random(3, 4));
}

}  // namespace
}  // namespace ikd::constraints
