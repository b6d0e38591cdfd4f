#include "ikd/constraints/model.h"

#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd::constraints {
namespace {

using ::testing::HasSubstr;

Eigen::VectorXd Ones(int n) { return Eigen::VectorXd::Ones(n); }

// Every malformed model is refused with InvalidArgument naming the field and its bound.
TEST(ConstraintModelTest, RejectsBadInput) {
  struct Case {
    Eigen::VectorXd w;
    std::vector<DistanceConstraint> c;
    const char* expected;
  };
  Eigen::VectorXd nan_mass = Ones(2);
  nan_mass[1] = std::numeric_limits<double>::quiet_NaN();
  Eigen::VectorXd negative_mass = Ones(2);
  negative_mass[0] = -1.0;
  const Case cases[] = {
      {Eigen::VectorXd(), {}, "at least one site"},
      {nan_mass, {{0, 1, 1.0}}, "inverse_masses[1]"},
      {negative_mass, {{0, 1, 1.0}}, "inverse_masses[0]"},
      {Ones(2), {{0, 2, 1.0}}, "must be in [0, 2)"},
      {Ones(2), {{-1, 1, 1.0}}, "constraints[0]"},
      {Ones(2), {{1, 1, 1.0}}, "to itself"},
      {Ones(2), {{0, 1, 0.0}}, "constraints[0].length must be finite and > 0"},
      {Ones(2), {{0, 1, std::numeric_limits<double>::infinity()}}, "length"},
      {Ones(3), {{0, 1, 1.0}, {1, 2, 1.0}, {1, 0, 1.0}}, "constraints[2]: duplicate"},
  };
  for (const Case& c : cases) {
    auto model = ConstraintModel::Create(c.w, c.c);
    ASSERT_FALSE(model.ok()) << c.expected;
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(model.status().message()), HasSubstr(c.expected));
  }
}

TEST(ConstraintModelTest, SeparatesFrozenFromActiveConstraints) {
  Eigen::VectorXd w(4);
  w << 0.0, 0.0, 1.0, 1.0;
  auto model = ConstraintModel::Create(w, {{0, 1, 1.0}, {1, 2, 1.0}, {2, 3, 1.0}});
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(model->frozen(), ::testing::ElementsAre(0));
  EXPECT_THAT(model->active(), ::testing::ElementsAre(1, 2));
  EXPECT_EQ(model->topology().kind, TopologyKind::kOpenChain);
}

// |r - l| / l of Bailey eq. 24 on a hand-computed case: 3-4-5 triangle against unit links.
TEST(ConstraintModelTest, MeasuresRelativeViolation) {
  auto model = ConstraintModel::Create(Ones(2), {{0, 1, 4.0}});
  ASSERT_TRUE(model.ok());
  Eigen::Matrix3Xd r(3, 2);
  r << 0, 3, 0, 4, 0, 0;  // distance 5
  EXPECT_DOUBLE_EQ(model->MaxRelativeViolation(r), 0.25);
  Eigen::Matrix3Xd v(3, 2);
  v << 0, 1, 0, 0, 0, 0;  // relative velocity (-1, 0, 0) against r_01 = (-3, -4, 0)
  EXPECT_DOUBLE_EQ(model->MaxVelocityViolation(r, v), 3.0 / 4.0);
}

// A NaN coordinate anywhere (here in the second of two constraints, after a finite one) must
// give a NaN violation, never 0 ("converged"): std::max would silently drop it.
TEST(ConstraintModelTest, NonFiniteCoordinatesGiveNanViolations) {
  auto model = ConstraintModel::Create(Ones(3), {{0, 1, 1.0}, {1, 2, 1.0}});
  ASSERT_TRUE(model.ok());
  Eigen::Matrix3Xd r(3, 3);
  r << 0, 1, 2, 0, 0, 0, 0, 0, 0;
  Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Zero(3, 3);
  v(1, 1) = 1.0;
  EXPECT_EQ(model->MaxRelativeViolation(r), 0.0);
  r(0, 2) = std::nan("");
  EXPECT_TRUE(std::isnan(model->MaxRelativeViolation(r)));
  EXPECT_TRUE(std::isnan(model->MaxVelocityViolation(r, v)));
  r(0, 2) = 2.0;
  v(0, 2) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(model->MaxVelocityViolation(r, v)));
  EXPECT_TRUE(std::isnan(MaxKeepingNan(0.5, std::nan(""))));
  EXPECT_TRUE(std::isnan(MaxKeepingNan(std::nan(""), 0.5)));
  EXPECT_EQ(MaxKeepingNan(0.25, 0.5), 0.5);
}

TEST(ConstraintModelTest, CheckFrozenNamesTheViolatedConstraint) {
  auto model = ConstraintModel::Create(Eigen::VectorXd::Zero(2), {{0, 1, 1.0}});
  ASSERT_TRUE(model.ok());
  Eigen::Matrix3Xd r = Eigen::Matrix3Xd::Zero(3, 2);
  r(0, 1) = 1.5;
  const absl::Status s = model->CheckFrozen(r, 1e-10);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("constraints[0] joins fixed sites 0 and 1"));
  r(0, 1) = 1.0;
  EXPECT_TRUE(model->CheckFrozen(r, 1e-10).ok());
}

TEST(ConstraintModelTest, CheckCoordinatesRejectsShapeAndNaN) {
  auto model = ConstraintModel::Create(Ones(2), {{0, 1, 1.0}});
  ASSERT_TRUE(model.ok());
  EXPECT_THAT(std::string(model->CheckCoordinates(Eigen::Matrix3Xd::Zero(3, 3), "p").message()),
              HasSubstr("expected 3 x 2"));
  Eigen::Matrix3Xd r = Eigen::Matrix3Xd::Zero(3, 2);
  r(2, 1) = std::nan("");
  EXPECT_THAT(std::string(model->CheckCoordinates(r, "p").message()), HasSubstr("p[1]"));
}

TEST(ProjectionOptionsTest, ValidateNamesFieldAndBound) {
  ProjectionOptions o;
  EXPECT_TRUE(o.Validate().ok());
  o.tolerance = 0.0;
  EXPECT_THAT(std::string(o.Validate().message()), HasSubstr("tolerance must be in [1e-15, 0.1]"));
  o = ProjectionOptions();
  o.max_iterations = 0;
  EXPECT_THAT(std::string(o.Validate().message()), HasSubstr("max_iterations"));
}

}  // namespace
}  // namespace ikd::constraints
