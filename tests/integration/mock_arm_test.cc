// Integration tests of mock_arm, the simulated controller, against the real ikd binary
// (fixture: tests/testing/integration_fixture.h): it tracks paths through Track and its checks
// (order, limbs, joint positions, limits, declared rates, collisions, hand error, servo
// tracking) pass on good answers and fail on bad ones.
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_format.h"
#include "ikd/robot/chain.h"
#include "ikd/robot/presets.h"
#include "ikd/urdf/urdf.h"
#include "testing/integration_fixture.h"

namespace ikd::integration {
namespace {

// mock_arm tracks a 4 s circle at 100 Hz through Track in real time, with an obstacle moved
// half way, its servo at the demo arm's declared limits (4 rad/s, 200 rad/s^2): 401 states, in
// order, exact limbs, the servo on every command, nearly all REACHED (measured 98%: the rest
// VELOCITY_LIMITED while the arm gets going); exit 0.
TEST_F(IntegrationTest, MockArmTracksCircle) {
  StartServer();
  CreateDemoModels();
  RunResult run = RunProcess(
      {kMockArm, "--server=" + server_->address(), "--timeout=8s", "--arm=demo", "--scene=demo",
       "--path=circle", "--center=0.7,0.2,0", "--radius=0.25", "--rate_hz=100", "--duration=4",
       "--move_obstacle=ball", "--move_by=0.6,-0.5,0", "--min_reached_fraction=0.9"});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  auto summary = KeyValues(run.out);
  EXPECT_EQ(summary["targets_sent"], "401");
  EXPECT_EQ(summary["states_received"], "401");
  EXPECT_EQ(summary["scene_updates_sent"], "1");
  EXPECT_EQ(summary["out_of_order"], "0");
  EXPECT_EQ(summary["servo_overruns"], "0");
  EXPECT_EQ(summary["rpc_status"], "OK");
  EXPECT_EQ(summary["passed"], "true");
  EXPECT_LT(std::stod(summary["max_limb_error"]), 1e-9);
}

// The README quick start: the planar 7-link arm in the plane z = 0.3 follows a 4 s circle at
// 100 Hz that takes its limbs between two pillars (a crate below, a floor) with the servo at
// the arm's declared limits (4 rad/s, 200 rad/s^2): every state answered in order, no collision
// (clearance computed by the mock from the sites), no limit exceeded, the servo on every
// command. Where the tracker's answer would move a joint faster, Track answers the closest
// state within the limits (VELOCITY_ or ACCELERATION_LIMITED, the hand lagging); measured:
// 85% of the states REACHED, the rest limited.
TEST_F(IntegrationTest, MockArmFollowsCircleBetweenPillars) {
  StartServer();
  CreateModel("arms", "planar7", kPlanar7Arm);
  CreateModel("scenes", "pillars", kPillarsScene);
  RunResult run = RunProcess(
      {kMockArm, "--server=" + server_->address(), "--timeout=20s", "--arm=planar7",
       "--scene=pillars", "--path=circle", "--center=0.8,0,0.3", "--radius=0.3", "--rate_hz=100",
       "--duration=4", "--realtime=false", "--min_reached_fraction=0.75"},
      std::chrono::seconds(30));
  auto summary = KeyValues(run.out);
  EXPECT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_EQ(summary["states_received"], "401");
  EXPECT_EQ(summary["collisions"], "0");
  EXPECT_EQ(summary["motion_collisions"], "0");
  EXPECT_EQ(summary["limit_violations"], "0");
  EXPECT_EQ(summary["servo_overruns"], "0");
  EXPECT_EQ(summary["passed"], "true");
  ASSERT_NE(summary["min_clearance"], "none");
  EXPECT_GE(std::stod(summary["min_clearance"]), 0.0);
  // The pillars are in play: the arm passes within 5 cm of one of them.
  EXPECT_LT(std::stod(summary["min_clearance"]), 0.05);
  // ... and between the states too (the mock's own sampling of the servo's motion).
  ASSERT_NE(summary["min_motion_clearance"], "none");
  EXPECT_GE(std::stod(summary["min_motion_clearance"]), 0.0);
}

// Jerk-limited servos (issue 35 item 2): the quick-start arm with 20000 rad/s^3 declared (its
// acceleration may change by 200 rad/s^2 an answer at 100 Hz, at most from 0 to its limit or
// half way from one limit to the other), round the circle between the pillars. mock_arm differences
// the answers itself, from rest at the first: every answer keeps the declared velocity,
// acceleration and jerk (the jerk limit is what binds), none collides at or between states, and its
// jerk-limited servo follows. The Panda preset takes a jerk limit through RobotSpec.rate_limits and
// does the same on a tool line.
TEST_F(IntegrationTest, MockArmJerkLimitedAnswersKeepEveryDeclaredLimit) {
  StartServer();
  CreateModel("scenes", "pillars", kPillarsScene);
  std::ifstream file(kPlanar7Arm);
  std::string planar((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::string declared = R"("max_acceleration": 200.0})";
  planar.replace(planar.find(declared), declared.size(),
                 R"("max_acceleration": 200.0, "max_jerk": 20000.0})");
  const std::string arm = WriteFile("planar7-jerk.json", planar);
  RunResult run = RunProcess(
      {kMockArm, "--server=" + server_->address(), "--timeout=20s", "--arm_file=" + arm,
       "--scene=pillars", "--path=circle", "--center=0.8,0,0.3", "--radius=0.3", "--rate_hz=100",
       "--duration=4", "--realtime=false", "--min_reached_fraction=0.5"},
      std::chrono::seconds(30));
  auto summary = KeyValues(run.out);
  EXPECT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_EQ(summary["rate_overruns"], "0");
  EXPECT_LE(std::stod(summary["max_jerk_ratio"]), 1.0 + 1e-6);
  EXPECT_GT(std::stod(summary["max_jerk_ratio"]), 0.5);  // the jerk limit is in play
  EXPECT_EQ(summary["collisions"], "0");
  EXPECT_EQ(summary["motion_collisions"], "0");
  EXPECT_EQ(summary["servo_overruns"], "0");

  const std::string panda =
      WriteFile("panda-jerk.json", R"({"robot": {"preset": "ROBOT_PRESET_PANDA",
      "homePositions": [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
      "rateLimits": [{"maxJerk": 300}, {"maxJerk": 300}, {"maxJerk": 300}, {"maxJerk": 300},
                     {"maxJerk": 300}, {"maxJerk": 300}, {"maxJerk": 300}]}})");
  RunResult robot = RunProcess(
      {kMockArm, "--server=" + server_->address(), "--timeout=20s", "--arm_file=" + panda,
       "--path=line", "--line=0.307,0,0.59:0.307,0.15,0.59", "--rate_hz=100", "--duration=1",
       "--realtime=false", "--min_reached_fraction=0.3", "--max_hand_error=1e-5"},
      std::chrono::seconds(30));
  auto robot_summary = KeyValues(robot.out);
  EXPECT_EQ(robot.exit_code, 0) << Describe(robot);
  EXPECT_EQ(robot_summary["rate_overruns"], "0");
  EXPECT_LE(std::stod(robot_summary["max_jerk_ratio"]), 1.0 + 1e-6);
}

// The motion check has teeth: at 2.5 Hz the demo arm's hand steps 24 cm along a line across
// its reach, and a 15 mm ball sits 5 cm beyond the line half way between two targets, a fixture
// ikd is not told about (ikd holds back a motion into an obstacle it knows). Every state is
// clear (by 1.4 cm), the motion between two of them runs the arm 6 mm into the ball (measured
// with a 5 mm ball: states 2.4 cm clear, the motion 3.8 mm): mock_arm, sampling the servo's
// motion with its own geometry, fails the run, on that alone.
TEST_F(IntegrationTest, MockArmFailsOnACollisionBetweenTwoClearStates) {
  StartServer();
  CreateDemoModels();
  const std::string pebble = WriteFile("pebble.json", R"({"obstacles": [{"id": "pebble",
      "sphere": {"center": {"x": 0.95, "y": 0, "z": 0}, "radius": 0.015}}]})");
  RunResult run = RunProcess({kMockArm, "--server=" + server_->address(), "--timeout=8s",
                              "--arm=demo", "--unannounced_obstacles_file=" + pebble, "--path=line",
                              "--line=0.9,-0.3,0:0.9,0.3,0", "--rate_hz=2.5", "--duration=1.2",
                              "--realtime=false", "--max_joint_step=1.5"});
  EXPECT_EQ(run.exit_code, 1) << Describe(run);
  auto summary = KeyValues(run.out);
  EXPECT_EQ(summary["states_received"], "4");
  EXPECT_EQ(summary["collisions"], "0");
  EXPECT_EQ(summary["joint_jumps"], "0");  // (the arm turns up to 1.13 rad a step)
  EXPECT_NE(summary["motion_collisions"], "0") << run.out;
  ASSERT_NE(summary["min_motion_clearance"], "none");
  EXPECT_LT(std::stod(summary["min_motion_clearance"]), 0.0);
  EXPECT_EQ(summary["passed"], "false");
}

// The checks have teeth: a hand path that starts inside a ball (no collision-free answer
// exists) is reported as collisions and fails, and so does a servo too slow for the path. A
// path from outside into the ball is not: Track brakes the arm (servo limits declared) in time
// to stop short of it, and the hand falls behind its targets instead.
TEST_F(IntegrationTest, MockArmFailsOnCollisionAndOnServoOverrun) {
  StartServer();
  CreateDemoModels();
  const std::string ball = WriteFile("ball.json", R"({"obstacles": [{"id": "ball",
      "sphere": {"center": {"x": 0.8, "y": 0.2, "z": 0}, "radius": 0.15}}]})");
  auto through_ball = [&](const std::string& line) {
    return RunProcess({kMockArm, "--server=" + server_->address(), "--timeout=8s", "--arm=demo",
                       "--scene_file=" + ball, "--path=line", "--line=" + line, "--rate_hz=50",
                       "--duration=1", "--realtime=false", "--approach=false"});
  };
  RunResult inside = through_ball("0.85,0.2,0:0.5,0.2,0");
  EXPECT_EQ(inside.exit_code, 1) << Describe(inside);
  auto summary = KeyValues(inside.out);
  EXPECT_NE(summary["collisions"], "0");
  EXPECT_EQ(summary["passed"], "false");

  RunResult into = through_ball("1.1,0.2,0:0.5,0.2,0");
  summary = KeyValues(into.out);
  EXPECT_EQ(summary["collisions"], "0") << into.out;
  EXPECT_EQ(summary["motion_collisions"], "0") << into.out;
  EXPECT_GT(std::stod(summary["max_hand_error"]), 0.1) << into.out;

  RunResult slow = RunProcess({kMockArm, "--server=" + server_->address(), "--timeout=8s",
                               "--arm=demo", "--path=circle", "--center=0.7,0.2,0",
                               "--radius=0.25", "--rate_hz=100", "--duration=1",
                               "--realtime=false", "--max_joint_rate=0.05"});
  EXPECT_EQ(slow.exit_code, 1) << Describe(slow);
  summary = KeyValues(slow.out);
  EXPECT_NE(summary["servo_overruns"], "0");
  EXPECT_GT(std::stod(summary["max_tracking_error"]), 0.05);
}

// Issue 5 through the API: ikctl imports the UR5 of deploy/models/ur5.urdf as an arm, streams
// a full-pose tool line (SolveTrajectory, every sample REACHED), and mock_arm follows the same
// line through Track with zero violations: link clusters exact, joint values the angles of the
// sites and inside the limits, and the tool on every target in position and orientation by
// the URDF chain's own forward kinematics (mock_arm's, not the server's).
TEST_F(IntegrationTest, MockArmFollowsAFullPoseLineOfAUrdfArm) {
  StartServer();
  const std::string urdf = kModels + "/ur5.urdf";
  RunResult imported = Ikctl({"arms", "import-urdf", "ur5", urdf, "--base_link=base_link",
                              "--tip_link=ee_link"});
  ASSERT_EQ(imported.exit_code, 0) << Describe(imported);
  // A working pose away from singularities and its tool pose, from the URDF itself.
  auto chain = robot::ChainFromUrdf(FileText(urdf), "base_link", "ee_link");
  ASSERT_TRUE(chain.ok()) << chain.status();
  Eigen::VectorXd q(6);
  q << 0.3, -1.2, 1.5, -1.8, -1.57, 0.2;
  const Eigen::Isometry3d X = robot::ToolPose(*chain, q);
  const Eigen::Quaterniond o(X.linear());
  const Eigen::Vector3d a = X.translation(), b = a + Eigen::Vector3d(0.0, 0.1, -0.05);
  const std::string orientation = absl::StrFormat("%.17g,%.17g,%.17g,%.17g", o.x(), o.y(), o.z(), o.w());
  const std::string line = absl::StrFormat("%.17g,%.17g,%.17g:%.17g,%.17g,%.17g", a.x(), a.y(),
                                           a.z(), b.x(), b.y(), b.z());

  RunResult trajectory = Ikctl({"trajectory", "--arm=ur5", "--line=" + line, "--duration=1",
                                "--period=0.05", "--orientation=" + orientation});
  ASSERT_EQ(trajectory.exit_code, 0) << Describe(trajectory);
  EXPECT_EQ(CountOccurrences(trajectory.out, ",REACHED,"), 21u) << trajectory.out;
  EXPECT_THAT(trajectory.out, ::testing::HasSubstr("fraction_reached=1 "));

  RunResult run = RunProcess({kMockArm, "--server=" + server_->address(), "--timeout=20s",
                              "--arm=ur5", "--path=line", "--line=" + line,
                              "--orientation=" + orientation, "--rate_hz=100", "--duration=1",
                              "--realtime=false", "--min_reached_fraction=1"},
                             std::chrono::seconds(30));
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  auto summary = KeyValues(run.out);
  EXPECT_EQ(summary["states_received"], "101");
  EXPECT_EQ(summary["bad_limbs"], "0");
  EXPECT_EQ(summary["bad_positions"], "0");
  EXPECT_EQ(summary["limit_violations"], "0");
  EXPECT_EQ(summary["missed_targets"], "0");
  EXPECT_EQ(summary["joint_jumps"], "0");
  EXPECT_EQ(summary["passed"], "true");
  EXPECT_LT(std::stod(summary["max_rotation_error"]), 1e-5);
  EXPECT_LT(std::stod(summary["max_hand_error"]), 1e-5);
}

// An industrial arm among obstacles through Track: the Panda preset with 50 mm link capsules,
// a ball 5 mm from its upper arm's capsule, and a 2 cm tool line (position targets, four
// redundant joints): the server's step (c) moves the links out beyond the margin, and mock_arm,
// computing the clearance from the joint values and its own copy of the scene, sees no
// collision; with the trials off the arm stays inside the margin.
TEST_F(IntegrationTest, MockArmIndustrialArmStaysClearOfABall) {
  StartServer();
  const double ready[] = {0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785};
  robot::ChainSpec chain = robot::presets::Panda();
  const Eigen::VectorXd q = Eigen::Map<const Eigen::VectorXd>(ready, 7);
  const auto segments = robot::LinkSegments(chain, q);
  const Eigen::Vector3d a = segments[2].first, b = segments[2].second;
  const Eigen::Vector3d side = (b - a).cross(Eigen::Vector3d::UnitZ()).normalized();
  const Eigen::Vector3d ball = 0.5 * (a + b) + 0.105 * side;
  const Eigen::Vector3d tool = robot::ToolPose(chain, q).translation();
  const std::string arm = WriteFile("panda.json", R"({"robot": {"preset": "ROBOT_PRESET_PANDA",
      "homePositions": [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
      "linkRadii": [0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05]}})");
  const std::string scene = WriteFile("ball.json", absl::StrFormat(
      R"({"obstacles": [{"id": "ball", "sphere": {"center": {"x": %.17g, "y": %.17g, "z": %.17g},
      "radius": 0.05}}]})", ball.x(), ball.y(), ball.z()));
  const std::string line = absl::StrFormat("%.17g,%.17g,%.17g:%.17g,%.17g,%.17g", tool.x(),
                                           tool.y(), tool.z(), tool.x(), tool.y() + 0.02, tool.z());
  RunResult run = RunProcess({kMockArm, "--server=" + server_->address(), "--timeout=20s",
                              "--arm_file=" + arm, "--scene_file=" + scene, "--path=line",
                              "--line=" + line, "--rate_hz=50", "--duration=1", "--realtime=false",
                              "--approach=false", "--min_reached_fraction=0.95"},
                             std::chrono::seconds(30));
  // The trial that moves the links off the ball turns some joint faster than the Panda's
  // acceleration limit allows in one period: Track answers that sample ACCELERATION_LIMITED
  // with the tool lagging (0.25 mm), within the limits, and catches up.
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  auto summary = KeyValues(run.out);
  EXPECT_EQ(summary["collisions"], "0");
  EXPECT_EQ(summary["limit_violations"], "0");
  EXPECT_EQ(summary["servo_overruns"], "0");
  EXPECT_EQ(summary["passed"], "true");
  ASSERT_NE(summary["min_clearance"], "none");
  EXPECT_GE(std::stod(summary["min_clearance"]), 0.0);
  // Kept beyond the 10 mm safety margin all along (the ball starts 5 mm from the capsule) ...
  EXPECT_GE(std::stod(summary["min_clearance"]), 0.01);
  // ... which plain continuation (no trials) does not do.
  const std::string plain = WriteFile("plain.json", R"({"noTrials": true})");
  RunResult without = RunProcess({kMockArm, "--server=" + server_->address(), "--timeout=20s",
                                  "--arm_file=" + arm, "--scene_file=" + scene, "--path=line",
                                  "--line=" + line, "--rate_hz=50", "--duration=1",
                                  "--realtime=false", "--approach=false", "--options_file=" + plain},
                                 std::chrono::seconds(30));
  auto plain_summary = KeyValues(without.out);
  ASSERT_NE(plain_summary["min_clearance"], "none") << Describe(without);
  EXPECT_LT(std::stod(plain_summary["min_clearance"]), 0.01);
}

}  // namespace
}  // namespace ikd::integration
