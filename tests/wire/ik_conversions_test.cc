// KinematicsService conversions (ik_conversions.h): options, postures, start configurations,
// trajectories and targets in, joint states and summaries out. Expected values are built by
// hand (forward kinematics of a two-limb arm, points of simple paths); every refusal names the
// request path and the bound.
#include "ik_conversions.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ikd/robot/robot_ik.h"
#include "testing/eigen_matchers.h"
#include "testing/field_violation.h"
#include "testing/proto_vector.h"

namespace ikd::server {
namespace {

using ::ikd::testing::Vec;
using ::ikd::testing::CompareMatrices;
using ::ikd::testing::IsFieldViolation;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = std::numbers::pi;

// Planar (or spatial) arm at the origin, limbs of 1 m and 0.5 m.
ik::Arm TwoLimbArm(bool planar = true) {
  ik::ArmSpec spec;
  spec.planar = planar;
  spec.limbs = {{1.0, 0.0}, {0.5, 0.0}};
  absl::StatusOr<ik::Arm> arm = ik::Arm::Create(spec);
  EXPECT_TRUE(arm.ok()) << arm.status();
  return *std::move(arm);
}

PositionList Positions(std::initializer_list<double> values) {
  PositionList list;
  for (double v : values) list.Add(v);
  return list;
}

// ---------------------------------------------------------------------------------------------
// Options, postures, start configurations

TEST(AtRequestPathTest, NestsTheSolverFieldBelowThePrefix) {
  const absl::Status solver = absl::InvalidArgumentError("max_step_fraction must be in (0, 1]");
  EXPECT_TRUE(IsFieldViolation(AtRequestPath(solver, "config.options"),
                               "config.options.max_step_fraction", "must be in (0, 1]"));
  EXPECT_TRUE(IsFieldViolation(AtRequestPath(solver, ""), "max_step_fraction", "(0, 1]"));
  const absl::Status aborted = absl::AbortedError("max_step_fraction is busy");
  EXPECT_EQ(AtRequestPath(aborted, "options"), aborted);
}

// Zero fields and an absent `weights` are the solver's defaults.
TEST(IkOptionsFromProtoTest, ZeroFieldsAreTheDefaults) {
  const absl::StatusOr<ik::IkOptions> options = IkOptionsFromProto(v1::IkOptions(), "options");
  ASSERT_TRUE(options.ok()) << options.status();
  const ik::IkOptions defaults;
  EXPECT_EQ(options->seed, defaults.seed);
  EXPECT_EQ(options->trials_per_step, defaults.trials_per_step);
  EXPECT_EQ(options->patience, defaults.patience);
  EXPECT_EQ(options->safety_margin, defaults.safety_margin);
  EXPECT_EQ(options->max_step_fraction, defaults.max_step_fraction);
  EXPECT_EQ(options->tolerance, defaults.tolerance);
  EXPECT_EQ(options->time_budget_seconds, 0.0);
  EXPECT_FALSE(options->explore_unconstrained);
  EXPECT_TRUE(options->optimize_path);
  EXPECT_EQ(options->weights.clearance, defaults.weights.clearance);
  EXPECT_EQ(options->weights.bending, defaults.weights.bending);
}

// Every set field arrives; a present `weights` is taken whole (its zeros are zeros); patience
// -1 is the solver's 0 ("never stop early").
TEST(IkOptionsFromProtoTest, SetFieldsArrive) {
  v1::IkOptions wire;
  wire.set_seed(7);
  wire.set_trials_per_step(5);
  wire.set_patience(-1);
  wire.set_explore_unconstrained(true);
  wire.set_no_path_optimization(true);
  wire.set_safety_margin(0.02);
  wire.set_max_step_fraction(0.25);
  wire.set_tolerance(1e-9);
  wire.set_time_budget_seconds(0.5);
  wire.mutable_weights()->set_clearance(10);
  wire.mutable_weights()->set_velocity(3);
  wire.mutable_weights()->set_bending(0.5);
  const absl::StatusOr<ik::IkOptions> options = IkOptionsFromProto(wire, "options");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->seed, 7u);
  EXPECT_EQ(options->trials_per_step, 5);
  EXPECT_EQ(options->patience, 0);
  EXPECT_TRUE(options->explore_unconstrained);
  EXPECT_FALSE(options->optimize_path);
  EXPECT_EQ(options->safety_margin, 0.02);
  EXPECT_EQ(options->max_step_fraction, 0.25);
  EXPECT_EQ(options->tolerance, 1e-9);
  EXPECT_EQ(options->time_budget_seconds, 0.5);
  EXPECT_EQ(options->weights.clearance, 10.0);
  EXPECT_EQ(options->weights.self_clearance, 0.0);
  EXPECT_EQ(options->weights.velocity, 3.0);
  EXPECT_EQ(options->weights.acceleration, 0.0);
  EXPECT_EQ(options->weights.joint_limit, 0.0);
  EXPECT_EQ(options->weights.bending, 0.5);

  wire.set_patience(3);
  EXPECT_EQ(IkOptionsFromProto(wire, "options")->patience, 3);
}

// The solver's bounds, named at the request path.
TEST(IkOptionsFromProtoTest, BadValuesNameTheFieldAndTheBound) {
  struct Case {
    std::string field;
    std::string bound;
    void (*set)(v1::IkOptions&);
  };
  const Case cases[] = {
      {"trials_per_step", "in [0, 100000]", [](v1::IkOptions& o) { o.set_trials_per_step(-5); }},
      {"patience", "-1 (never stop), 0 (the default) or in [1, 100000], got -2",
       [](v1::IkOptions& o) { o.set_patience(-2); }},
      {"patience", "in [1, 100000], got 100001", [](v1::IkOptions& o) { o.set_patience(100001); }},
      {"safety_margin", "[0, ", [](v1::IkOptions& o) { o.set_safety_margin(-0.1); }},
      {"max_step_fraction", "in (0, 1]", [](v1::IkOptions& o) { o.set_max_step_fraction(1.5); }},
      {"tolerance", "in [1e-15, 1e-3]", [](v1::IkOptions& o) { o.set_tolerance(0.1); }},
      {"time_budget_seconds", "in [0, 3600]",
       [](v1::IkOptions& o) { o.set_time_budget_seconds(kNaN); }},
      {"weights.joint_limit", "finite and >= 0",
       [](v1::IkOptions& o) { o.mutable_weights()->set_joint_limit(-1); }},
      // A chain arm has no closed form: ANALYTIC is refused, not ignored.
      {"solver", "industrial arms", [](v1::IkOptions& o) { o.set_solver(v1::IK_SOLVER_ANALYTIC); }},
      {"solver", "AUTO, ANALYTIC or NUMERIC, got 5",
       [](v1::IkOptions& o) { o.set_solver(static_cast<v1::IkSolver>(5)); }},
  };
  for (const Case& c : cases) {
    v1::IkOptions wire;
    c.set(wire);
    EXPECT_TRUE(IsFieldViolation(IkOptionsFromProto(wire, "config.options").status(),
                                 "config.options." + c.field, c.bound))
        << c.field;
  }
}

TEST(TrialsFromProtoTest, NoTrialsThenTrialsPerStepThenTheDefault) {
  v1::IkOptions wire;
  EXPECT_EQ(TrialsFromProto(wire, 24), 24);
  wire.set_trials_per_step(9);
  EXPECT_EQ(TrialsFromProto(wire, 24), 9);
  wire.set_no_trials(true);
  EXPECT_EQ(TrialsFromProto(wire, 24), 0);
}

TEST(PostureFromProtoTest, NoneWhenUnsetElseTheValuesAndWeight) {
  const absl::StatusOr<std::optional<ik::Posture>> none = PostureFromProto(Positions({}), 0.0, 2);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());

  const auto posture = PostureFromProto(Positions({0.5, -0.25}), 0.0, 2);
  ASSERT_TRUE(posture.ok()) << posture.status();
  ASSERT_TRUE(posture->has_value());
  EXPECT_EQ((*posture)->q, Eigen::Vector2d(0.5, -0.25));
  EXPECT_EQ((*posture)->weight, 1.0);  // 0: the default, 1
  EXPECT_EQ((**PostureFromProto(Positions({0.5, -0.25}), 1e6, 2)).weight, 1e6);
}

TEST(PostureFromProtoTest, BadPosturesNameTheFieldAndTheBound) {
  EXPECT_TRUE(IsFieldViolation(PostureFromProto(Positions({}), 2.0, 2).status(), "posture_weight",
                               "is set without preferred_posture"));
  EXPECT_TRUE(IsFieldViolation(PostureFromProto(Positions({1, 2, 3}), 0.0, 2).status(),
                               "preferred_posture",
                               "must hold the arm's 2 joint positions, got 3"));
  EXPECT_TRUE(IsFieldViolation(PostureFromProto(Positions({1, kInf}), 0.0, 2).status(),
                               "preferred_posture[1]", "must be finite"));
  for (const double weight : {-1.0, 1.5e6, kNaN}) {
    EXPECT_TRUE(IsFieldViolation(PostureFromProto(Positions({1, 2}), weight, 2).status(),
                                 "posture_weight", "must be in (0, 1e6]"))
        << weight;
  }
}

// Forward kinematics by hand: limb 0 along x, limb 1 turned +90 degrees: (1, 0) then (1, 0.5).
TEST(SitesFromPositionsTest, ForwardKinematicsOfTheGivenPositions) {
  const ik::Arm arm = TwoLimbArm();
  const auto home = SitesFromPositions(arm, Positions({}), "start_positions");
  ASSERT_TRUE(home.ok()) << home.status();
  EXPECT_FALSE(home->has_value());

  const auto sites = SitesFromPositions(arm, Positions({0.0, kPi / 2}), "start_positions");
  ASSERT_TRUE(sites.ok()) << sites.status();
  ASSERT_TRUE(sites->has_value());
  Eigen::Matrix3Xd expected(3, 3);
  expected << 0, 1, 1,  //
      0, 0, 0.5,        //
      0, 0, 0;
  EXPECT_TRUE(CompareMatrices(**sites, expected, 1e-12));
}

TEST(SitesFromPositionsTest, WrongCountOrNonFiniteNamesThePath) {
  const ik::Arm arm = TwoLimbArm(/*planar=*/false);  // 4 angles
  EXPECT_TRUE(IsFieldViolation(
      SitesFromPositions(arm, Positions({0, 0}), "config.start_positions").status(),
      "config.start_positions", "must hold the arm's 4 joint positions, got 2"));
  EXPECT_TRUE(IsFieldViolation(
      SitesFromPositions(arm, Positions({0, 0, kNaN, 0}), "config.start_positions").status(),
      "config.start_positions[2]", "must be finite"));
}

// ---------------------------------------------------------------------------------------------
// Trajectories and targets

TEST(TrajectoryFromProtoTest, LineArcAndPolylinePassTheirPoints) {
  v1::Trajectory line;
  *line.mutable_line()->mutable_from() = Vec(0, 0, 0);
  *line.mutable_line()->mutable_to() = Vec(1, 0, 0);
  line.mutable_line()->set_duration(2);
  const auto l = TrajectoryFromProto(line, "trajectory");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->duration(), 2.0);
  EXPECT_TRUE(CompareMatrices(l->PositionAt(1.0), Eigen::Vector3d(0.5, 0, 0), 1e-15));

  v1::Trajectory arc;  // a quarter turn about z from (1, 0, 0)
  *arc.mutable_arc()->mutable_axis() = Vec(0, 0, 1);
  *arc.mutable_arc()->mutable_start() = Vec(1, 0, 0);
  arc.mutable_arc()->set_angle(kPi / 2);
  arc.mutable_arc()->set_duration(1);
  const auto a = TrajectoryFromProto(arc, "trajectory");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(CompareMatrices(a->PositionAt(1.0), Eigen::Vector3d(0, 1, 0), 1e-12));

  v1::Trajectory polyline;  // 2 m at 2 m/s
  *polyline.mutable_polyline()->add_points() = Vec(0, 0, 0);
  *polyline.mutable_polyline()->add_points() = Vec(1, 0, 0);
  *polyline.mutable_polyline()->add_points() = Vec(1, 1, 0);
  polyline.mutable_polyline()->set_speed(2);
  const auto p = TrajectoryFromProto(polyline, "trajectory");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->duration(), 1.0);
  EXPECT_TRUE(CompareMatrices(p->PositionAt(0.75), Eigen::Vector3d(1, 0.5, 0), 1e-12));
}

// Linear waypoints pass straight between them; cubic ones start and end at rest.
TEST(TrajectoryFromProtoTest, WaypointsKeepTheirTimesAndInterpolation) {
  v1::Trajectory wire;
  v1::WaypointPath* path = wire.mutable_waypoints();
  for (const auto& [time, x] : {std::pair{1.0, 0.0}, std::pair{2.0, 1.0}, std::pair{4.0, 3.0}}) {
    v1::Waypoint* w = path->add_waypoints();
    w->set_time(time);
    *w->mutable_position() = Vec(x, 0, 0);
  }
  path->set_interpolation(v1::INTERPOLATION_LINEAR);
  const auto linear = TrajectoryFromProto(wire, "trajectory");
  ASSERT_TRUE(linear.ok()) << linear.status();
  EXPECT_EQ(linear->start_time(), 1.0);
  EXPECT_EQ(linear->end_time(), 4.0);
  EXPECT_TRUE(CompareMatrices(linear->PositionAt(3.0), Eigen::Vector3d(2, 0, 0), 1e-12));
  EXPECT_TRUE(CompareMatrices(linear->VelocityAt(1.5), Eigen::Vector3d(1, 0, 0), 1e-12));

  path->set_interpolation(v1::INTERPOLATION_CUBIC);
  const auto cubic = TrajectoryFromProto(wire, "trajectory");
  ASSERT_TRUE(cubic.ok()) << cubic.status();
  EXPECT_TRUE(CompareMatrices(cubic->PositionAt(2.0), Eigen::Vector3d(1, 0, 0), 1e-12));
  EXPECT_TRUE(CompareMatrices(cubic->VelocityAt(1.0), Eigen::Vector3d::Zero(), 1e-12));
  EXPECT_GT(cubic->VelocityAt(2.0).x(), 0.5);  // moving through the middle waypoint
}

// Each variant's errors are named inside its oneof field.
TEST(TrajectoryFromProtoTest, ErrorsNameTheVariantsField) {
  EXPECT_TRUE(IsFieldViolation(TrajectoryFromProto(v1::Trajectory(), "trajectory").status(),
                               "trajectory", "required: waypoints, line, arc or polyline"));

  v1::Trajectory line;
  *line.mutable_line()->mutable_to() = Vec(1, 0, 0);
  EXPECT_TRUE(IsFieldViolation(TrajectoryFromProto(line, "trajectory").status(),
                               "trajectory.line.duration", "finite and > 0, got 0"));

  v1::Trajectory arc;
  *arc.mutable_arc()->mutable_start() = Vec(1, 0, 0);
  arc.mutable_arc()->set_duration(1);
  EXPECT_TRUE(IsFieldViolation(TrajectoryFromProto(arc, "trajectory").status(),
                               "trajectory.arc.axis", "norm >= 1e-09"));

  v1::Trajectory polyline;
  *polyline.mutable_polyline()->add_points() = Vec(0, 0, 0);
  *polyline.mutable_polyline()->add_points() = Vec(0, 0, 0);
  polyline.mutable_polyline()->set_speed(1);
  EXPECT_TRUE(IsFieldViolation(TrajectoryFromProto(polyline, "trajectory").status(),
                               "trajectory.polyline.points[1]", "distinct from points[0]"));
  polyline.mutable_polyline()->set_speed(-1);
  EXPECT_TRUE(IsFieldViolation(TrajectoryFromProto(polyline, "trajectory").status(),
                               "trajectory.polyline.speed", "finite and > 0"));
}

TEST(TrajectoryFromProtoTest, WaypointErrorsNameTheWaypoint) {
  v1::Trajectory wire;
  v1::WaypointPath* path = wire.mutable_waypoints();
  path->add_waypoints()->set_time(1.0);
  EXPECT_TRUE(IsFieldViolation(TrajectoryFromProto(wire, "trajectory").status(),
                               "trajectory.waypoints.interpolation",
                               "must be INTERPOLATION_LINEAR or INTERPOLATION_CUBIC"));
  path->set_interpolation(v1::INTERPOLATION_LINEAR);
  EXPECT_TRUE(IsFieldViolation(TrajectoryFromProto(wire, "trajectory").status(),
                               "trajectory.waypoints.waypoints", "between 2 and"));
  path->add_waypoints()->set_time(1.0);  // not after the first
  EXPECT_TRUE(IsFieldViolation(TrajectoryFromProto(wire, "trajectory").status(),
                               "trajectory.waypoints.waypoints[1].time", "> waypoints[0].time"));
}

TEST(TargetFromProtoTest, FiniteInWorldTargetsPassOthersNameThePath) {
  const absl::StatusOr<Eigen::Vector3d> target = TargetFromProto(Vec(1, -2, 1e6), "target");
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(*target, Eigen::Vector3d(1, -2, 1e6));
  for (const v1::Vector3& bad : {Vec(kNaN, 0, 0), Vec(0, -kInf, 0), Vec(0, 0, 1.5e6)}) {
    EXPECT_TRUE(IsFieldViolation(TargetFromProto(bad, "targets[3]").status(), "targets[3]",
                                 "every coordinate must be finite and within 1e+06 m"));
  }
}

// Sub-steps of max_step_fraction x the shortest limb (0.07 x 0.5 m = 3.5 cm), rounded up; the
// move is clamped to the arm's diameter (2 x 1.5 m = 3 m: at most 86 sub-steps).
TEST(SubStepsForMoveTest, CountsStepsOfTheShortestLimbsFraction) {
  const ik::Arm arm = TwoLimbArm();
  ik::IkOptions options;
  options.max_step_fraction = 0.07;
  const Eigen::Vector3d from(1, 1, 1);
  EXPECT_EQ(SubStepsForMove(arm, options, from, from), 0);
  EXPECT_EQ(SubStepsForMove(arm, options, from, Eigen::Vector3d(1, 1.99, 1)), 29);  // 28.3
  EXPECT_EQ(SubStepsForMove(arm, options, from, Eigen::Vector3d(1.26, 1, 1)), 8);   // 7.4
  EXPECT_EQ(SubStepsForMove(arm, options, from, Eigen::Vector3d(1, 1, 3.9)), 83);   // 82.9
  EXPECT_EQ(SubStepsForMove(arm, options, from, Eigen::Vector3d(1, 1, 4.1)), 86);   // clamped
  EXPECT_EQ(SubStepsForMove(arm, options, from, Eigen::Vector3d(1, 1, 1e6)), 86);
}

// ---------------------------------------------------------------------------------------------
// Answers

TEST(JointNamesTest, OnePerAngleInTheArmsConvention) {
  EXPECT_THAT(JointNames(TwoLimbArm()), ElementsAre("joint_0", "joint_1"));
  EXPECT_THAT(JointNames(TwoLimbArm(/*planar=*/false)),
              ElementsAre("joint_0_bend", "joint_0_azimuth", "joint_1_bend", "joint_1_azimuth"));
}

// The library's one status enum (both arm kinds) maps onto the wire's one to one, and its names
// (logs, benchmark dumps) are the wire's, prefix dropped.
TEST(StepStatusToProtoTest, LibraryNamesAreTheWireNames) {
  const std::pair<planning::StepStatus, v1::StepStatus> all[] = {
      {planning::StepStatus::kReached, v1::STEP_STATUS_REACHED},
      {planning::StepStatus::kClampedUnreachable, v1::STEP_STATUS_CLAMPED_UNREACHABLE},
      {planning::StepStatus::kInCollision, v1::STEP_STATUS_IN_COLLISION},
      {planning::StepStatus::kJointLimitBlocked, v1::STEP_STATUS_JOINT_LIMIT_BLOCKED},
      {planning::StepStatus::kVelocityLimited, v1::STEP_STATUS_VELOCITY_LIMITED},
      {planning::StepStatus::kAccelerationLimited, v1::STEP_STATUS_ACCELERATION_LIMITED},
      {planning::StepStatus::kNotConverged, v1::STEP_STATUS_NOT_CONVERGED},
      {planning::StepStatus::kLate, v1::STEP_STATUS_LATE}};
  for (const auto& [status, wire] : all) {
    EXPECT_EQ(ToProto(status), wire) << planning::StepStatusName(status);
    EXPECT_EQ(std::string("STEP_STATUS_") + planning::StepStatusName(status),
              v1::StepStatus_Name(wire));
  }
  // Every wire value but UNSPECIFIED is some library status.
  EXPECT_EQ(std::size(all), static_cast<size_t>(v1::StepStatus_ARRAYSIZE - 1));
}

ik::IkResult Step() {
  ik::IkResult step;
  step.time = 0.5;
  step.angles = {0.1, 0.2};
  step.sites = Eigen::Matrix3Xd(3, 3);
  step.sites << 0, 1, 1.5,  //
      0, 0, 0,              //
      0, 0, 0;
  step.hand_error = 0.001;
  step.clamp_distance = 0.25;
  step.min_clearance = kInf;  // nothing to collide with
  step.constraint_residual = 1e-13;
  step.iterations = 4;
  step.trials_accepted = 2;
  step.status = planning::StepStatus::kClampedUnreachable;
  return step;
}

// Every field copied; velocities are differences over the time since the previous state.
TEST(JointStateFromStepTest, CopiesTheStepAndDifferencesThePrevious) {
  v1::JointState previous;
  previous.set_time(0.25);
  previous.add_positions(0.0);
  previous.add_positions(0.3);
  const absl::StatusOr<v1::JointState> state =
      JointStateFromStep(Step(), Eigen::Vector3d(2, 0, 0), &previous);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->time(), 0.5);
  EXPECT_THAT(state->positions(), ElementsAre(0.1, 0.2));
  ASSERT_EQ(state->velocities_size(), 2);
  EXPECT_NEAR(state->velocities(0), 0.4, 1e-12);
  EXPECT_NEAR(state->velocities(1), -0.4, 1e-12);
  ASSERT_EQ(state->sites_size(), 3);
  EXPECT_EQ(state->sites(2).x(), 1.5);
  EXPECT_EQ(state->target().x(), 2.0);
  EXPECT_EQ(state->hand_error(), 0.001);
  EXPECT_EQ(state->clamp_distance(), 0.25);
  EXPECT_FALSE(state->has_min_clearance());  // +inf: absent
  EXPECT_EQ(state->constraint_residual(), 1e-13);
  EXPECT_EQ(state->iterations(), 4);
  EXPECT_EQ(state->trials_accepted(), 2);
  EXPECT_EQ(state->status(), v1::STEP_STATUS_CLAMPED_UNREACHABLE);
}

// No previous state, or no time since it: zero velocities; a finite clearance is sent.
TEST(JointStateFromStepTest, ZeroVelocitiesWithoutElapsedTime) {
  ik::IkResult step = Step();
  step.min_clearance = -0.02;
  const auto first = JointStateFromStep(step, Eigen::Vector3d(2, 0, 0), nullptr);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(first->velocities(), ElementsAre(0.0, 0.0));
  ASSERT_TRUE(first->has_min_clearance());
  EXPECT_EQ(first->min_clearance(), -0.02);

  v1::JointState same_time;
  same_time.set_time(0.5);
  same_time.add_positions(5.0);
  same_time.add_positions(5.0);
  const auto repeated = JointStateFromStep(step, Eigen::Vector3d(2, 0, 0), &same_time);
  ASSERT_TRUE(repeated.ok()) << repeated.status();
  EXPECT_THAT(repeated->velocities(), ElementsAre(0.0, 0.0));
}

// Two targets 1e-310 s apart make the velocity infinite: refused, naming it (the header's case).
TEST(JointStateFromStepTest, InfiniteVelocityIsOutOfRange) {
  ik::IkResult step = Step();
  step.time = 1e-310;
  v1::JointState previous;
  previous.add_positions(0.0);
  previous.add_positions(0.2);
  const absl::Status status =
      JointStateFromStep(step, Eigen::Vector3d(2, 0, 0), &previous).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(status.message(), HasSubstr("velocities[0] = inf"));
}

TEST(CheckStateFiniteTest, NamesTheFirstNonFiniteFieldAndTheTime) {
  v1::JointState state;
  state.set_time(2.0);
  state.add_positions(0.5);
  *state.add_sites() = Vec(0, 0, 0);
  *state.add_sites() = Vec(1, 0, 0);
  EXPECT_TRUE(CheckStateFinite(state).ok());

  v1::JointState bad_site = state;
  bad_site.mutable_sites(1)->set_y(kNaN);
  const absl::Status site = CheckStateFinite(bad_site);
  EXPECT_EQ(site.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(site.message(), HasSubstr("t = 2 s"));
  EXPECT_THAT(site.message(), HasSubstr("sites[1] = (1, nan, 0)"));

  for (const auto& [set, name] :
       std::initializer_list<std::pair<void (*)(v1::JointState&), std::string>>{
           {[](v1::JointState& s) { s.set_min_clearance(-kInf); }, "min_clearance = -inf"},
           {[](v1::JointState& s) { s.set_rotation_error(kNaN); }, "rotation_error = nan"},
           {[](v1::JointState& s) { s.mutable_target()->set_z(kInf); }, "target = (0, 0, inf)"},
           {[](v1::JointState& s) { s.set_hand_error(kInf); }, "hand_error = inf"}}) {
    v1::JointState bad = state;
    set(bad);
    const absl::Status status = CheckStateFinite(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << name;
    EXPECT_THAT(status.message(), HasSubstr(name));
  }
}

// One sample per status: each counted where TrajectorySummary says, the maxima and the least
// clearance over the samples that have one.
TEST(SummaryBuilderTest, CountsStatusesAndKeepsTheExtremes) {
  SummaryBuilder builder;
  const v1::StepStatus statuses[] = {v1::STEP_STATUS_REACHED,
                                     v1::STEP_STATUS_REACHED,
                                     v1::STEP_STATUS_CLAMPED_UNREACHABLE,
                                     v1::STEP_STATUS_IN_COLLISION,
                                     v1::STEP_STATUS_JOINT_LIMIT_BLOCKED,
                                     v1::STEP_STATUS_NOT_CONVERGED,
                                     v1::STEP_STATUS_VELOCITY_LIMITED,
                                     v1::STEP_STATUS_ACCELERATION_LIMITED};
  int k = 0;
  for (const v1::StepStatus status : statuses) {
    v1::JointState state;
    state.set_status(status);
    state.set_hand_error(k == 3 ? 0.5 : 0.01);
    state.set_rotation_error(k == 5 ? 0.2 : 0.0);
    state.set_constraint_residual(k == 6 ? 1e-9 : 1e-12);
    if (k % 2 == 1) state.set_min_clearance(k == 5 ? -0.03 : 0.1 * k);
    builder.Add(state);
    ++k;
  }
  const v1::TrajectorySummary summary = builder.Summary(1.25);
  EXPECT_EQ(summary.samples(), 8);
  EXPECT_EQ(summary.fraction_reached(), 0.25);
  EXPECT_EQ(summary.clamped(), 1);
  EXPECT_EQ(summary.in_collision(), 1);
  EXPECT_EQ(summary.limit_blocked(), 1);
  EXPECT_EQ(summary.not_converged(), 1);
  EXPECT_EQ(summary.velocity_limited(), 1);
  EXPECT_EQ(summary.acceleration_limited(), 1);
  EXPECT_EQ(summary.max_hand_error(), 0.5);
  EXPECT_EQ(summary.max_rotation_error(), 0.2);
  EXPECT_EQ(summary.max_constraint_residual(), 1e-9);
  ASSERT_TRUE(summary.has_min_clearance());
  EXPECT_EQ(summary.min_clearance(), -0.03);
  EXPECT_EQ(summary.solve_seconds(), 1.25);
}

TEST(SummaryBuilderTest, EmptyOrClearanceFreeRunsHaveNoClearance) {
  EXPECT_EQ(SummaryBuilder().Summary(0.0).samples(), 0);
  EXPECT_EQ(SummaryBuilder().Summary(0.0).fraction_reached(), 0.0);
  SummaryBuilder builder;
  v1::JointState reached;
  reached.set_status(v1::STEP_STATUS_REACHED);
  builder.Add(reached);
  const v1::TrajectorySummary summary = builder.Summary(0.0);
  EXPECT_EQ(summary.fraction_reached(), 1.0);
  EXPECT_FALSE(summary.has_min_clearance());
}

}  // namespace
}  // namespace ikd::server
