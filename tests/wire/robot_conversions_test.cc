// RobotIkOptionsFromProto: which of the chain tracker's IkOptions an industrial arm honours,
// and the refusal, naming the field, of those it would otherwise silently ignore; and the
// servo limits a RobotSpec (rate_limits, a DH row's range) gives its joints.
#include "robot_conversions.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ikd::server {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

absl::StatusOr<robot::RobotIkOptions> Convert(const v1::IkOptions& options) {
  return RobotIkOptionsFromProto(options, "config.options");
}

// Zero fields are the library's defaults.
TEST(RobotIkOptionsFromProtoTest, ZeroFieldsAreTheDefaults) {
  const absl::StatusOr<robot::RobotIkOptions> options = Convert(v1::IkOptions());
  ASSERT_TRUE(options.ok()) << options.status();
  const robot::RobotIkOptions defaults;
  EXPECT_EQ(options->seed, defaults.seed);
  EXPECT_EQ(options->trials_per_step, defaults.trials_per_step);
  EXPECT_EQ(options->safety_margin, defaults.safety_margin);
  EXPECT_EQ(options->max_step_fraction, defaults.max_step_fraction);
  EXPECT_EQ(options->time_budget, 0.0);
  EXPECT_EQ(options->solver, robot::IkSolver::kAuto);
}

// The fields that mean the same for an industrial arm reach its options unchanged.
TEST(RobotIkOptionsFromProtoTest, HonouredFieldsArrive) {
  v1::IkOptions wire;
  wire.set_seed(9);
  wire.set_trials_per_step(5);
  wire.set_safety_margin(0.02);
  wire.set_max_step_fraction(0.25);
  wire.set_time_budget_seconds(0.003);
  const absl::StatusOr<robot::RobotIkOptions> options = Convert(wire);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->seed, 9u);
  EXPECT_EQ(options->trials_per_step, 5);
  EXPECT_EQ(options->safety_margin, 0.02);
  EXPECT_EQ(options->max_step_fraction, 0.25);
  EXPECT_EQ(options->time_budget, 0.003);

  wire.set_no_trials(true);
  EXPECT_EQ(Convert(wire)->trials_per_step, 0);

  const std::pair<v1::IkSolver, robot::IkSolver> solvers[] = {
      {v1::IK_SOLVER_AUTO, robot::IkSolver::kAuto},
      {v1::IK_SOLVER_ANALYTIC, robot::IkSolver::kAnalytic},
      {v1::IK_SOLVER_NUMERIC, robot::IkSolver::kNumeric}};
  for (const auto& [on_wire, in_solver] : solvers) {
    wire.set_solver(on_wire);
    EXPECT_EQ(Convert(wire)->solver, in_solver) << v1::IkSolver_Name(on_wire);
  }
}

// Every chain-only field, set, is refused with its own request path.
TEST(RobotIkOptionsFromProtoTest, ChainOnlyFieldsAreRefusedByName) {
  struct Case {
    std::string field;
    void (*set)(v1::IkOptions&);
  };
  const Case cases[] = {
      {"tolerance", [](v1::IkOptions& o) { o.set_tolerance(1e-9); }},
      {"weights.clearance", [](v1::IkOptions& o) { o.mutable_weights()->set_clearance(1.0); }},
      {"weights.bending", [](v1::IkOptions& o) { o.mutable_weights()->set_bending(2.0); }},
      {"patience", [](v1::IkOptions& o) { o.set_patience(-1); }},
      {"explore_unconstrained", [](v1::IkOptions& o) { o.set_explore_unconstrained(true); }},
  };
  for (const Case& c : cases) {
    v1::IkOptions wire;
    c.set(wire);
    const absl::Status status = Convert(wire).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_THAT(std::string(status.message()),
                StartsWith("config.options." + c.field + ": chain arms only"))
        << c.field;
  }
}

// Out-of-range values of the honoured fields name the wire's field and the bound.
TEST(RobotIkOptionsFromProtoTest, BadValuesNameTheFieldAndTheBound) {
  v1::IkOptions step;
  step.set_max_step_fraction(1.5);
  EXPECT_THAT(std::string(Convert(step).status().message()),
              StartsWith("config.options.max_step_fraction: must be in (0, 1], got 1.5"));

  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (const double budget : {-1.0, 3601.0, std::nan(""), kInf}) {
    v1::IkOptions wire;
    wire.set_time_budget_seconds(budget);
    const absl::Status status = Convert(wire).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << budget;
    EXPECT_THAT(std::string(status.message()),
                StartsWith("config.options.time_budget_seconds: must be in [0, 3600]"))
        << budget;
  }

  v1::IkOptions solver;
  solver.set_solver(static_cast<v1::IkSolver>(7));
  EXPECT_THAT(std::string(Convert(solver).status().message()),
              StartsWith("config.options.solver: must be AUTO, ANALYTIC or NUMERIC, got 7"));

  v1::IkOptions margin;
  margin.set_safety_margin(-0.01);
  const absl::Status status = Convert(margin).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("config.options.safety_margin"));
}

// RobotSpec.rate_limits: per joint, each non-zero field replaces the model's limit (the preset's
// datasheet figures stay where a field is 0); a wrong count, a bad value, a DH row's bad jerk and
// an entry for a continuous joint name their field.
v1::ArmSpec PandaPreset() {
  v1::ArmSpec spec;
  spec.mutable_robot()->set_preset(v1::ROBOT_PRESET_PANDA);
  return spec;
}

TEST(RobotRateLimitsFromProtoTest, NonZeroFieldsReplaceTheModelsLimits) {
  v1::ArmSpec spec = PandaPreset();
  for (int k = 0; k < 7; ++k) spec.mutable_robot()->add_rate_limits();
  spec.mutable_robot()->mutable_rate_limits(0)->set_max_jerk(7500.0);
  spec.mutable_robot()->mutable_rate_limits(1)->set_max_velocity(1.0);
  const absl::StatusOr<robot::Robot> robot = RobotFromArmSpec(spec, "arm.spec");
  ASSERT_TRUE(robot.ok()) << robot.status();
  const auto& joints = robot->spec().joints;
  EXPECT_EQ(joints[0].limits->max_jerk, 7500.0);
  EXPECT_EQ(joints[0].limits->max_velocity, 2.175);  // Franka's datasheet, kept
  EXPECT_EQ(joints[1].limits->max_velocity, 1.0);
  EXPECT_EQ(joints[1].limits->max_acceleration, 7.5);
  EXPECT_TRUE(std::isinf(joints[1].limits->max_jerk));
}

TEST(RobotRateLimitsFromProtoTest, BadEntriesNameTheirField) {
  v1::ArmSpec count = PandaPreset();
  count.mutable_robot()->add_rate_limits();
  EXPECT_THAT(std::string(RobotFromArmSpec(count, "arm.spec").status().message()),
              StartsWith("arm.spec.robot.rate_limits: must be empty or hold one entry per joint "
                         "(7), got 1"));

  v1::ArmSpec negative = PandaPreset();
  for (int k = 0; k < 7; ++k) negative.mutable_robot()->add_rate_limits();
  negative.mutable_robot()->mutable_rate_limits(2)->set_max_jerk(-1.0);
  EXPECT_THAT(std::string(RobotFromArmSpec(negative, "arm.spec").status().message()),
              StartsWith("arm.spec.robot.rate_limits[2].max_jerk: must be finite and >= 0"));

  v1::ArmSpec dh;
  dh.mutable_robot()->mutable_dh()->set_convention(v1::DH_CONVENTION_STANDARD);
  v1::DhRow* row = dh.mutable_robot()->mutable_dh()->add_rows();
  row->set_a(0.5);
  row->mutable_range()->set_lower(-1.0);
  row->mutable_range()->set_upper(1.0);
  row->mutable_range()->set_max_jerk(std::numeric_limits<double>::infinity());
  EXPECT_THAT(std::string(RobotFromArmSpec(dh, "arm.spec").status().message()),
              StartsWith("arm.spec.robot.dh.rows[0].range.max_jerk: must be finite and >= 0"));
  row->mutable_range()->set_max_jerk(50.0);
  const absl::StatusOr<robot::Robot> robot = RobotFromArmSpec(dh, "arm.spec");
  ASSERT_TRUE(robot.ok()) << robot.status();
  EXPECT_EQ(robot->spec().joints[0].limits->max_jerk, 50.0);

  v1::ArmSpec continuous;
  v1::UrdfChain* urdf = continuous.mutable_robot()->mutable_urdf();
  urdf->set_urdf(
      "<robot name=\"spin\"><link name=\"a\"/><link name=\"b\"/><joint name=\"c\" "
      "type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/><axis xyz=\"0 0 1\"/>"
      "<origin xyz=\"0 0 0.1\"/></joint></robot>");
  urdf->set_base_link("a");
  urdf->set_tip_link("b");
  continuous.mutable_robot()->add_rate_limits();  // all 0: accepted
  ASSERT_TRUE(RobotFromArmSpec(continuous, "arm.spec").ok())
      << RobotFromArmSpec(continuous, "arm.spec").status();
  continuous.mutable_robot()->mutable_rate_limits(0)->set_max_jerk(10.0);
  EXPECT_THAT(std::string(RobotFromArmSpec(continuous, "arm.spec").status().message()),
              StartsWith("arm.spec.robot.rate_limits[0]: joint \"c\" is continuous"));
}

}  // namespace
}  // namespace ikd::server
