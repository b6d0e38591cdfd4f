// Integration tests of ikctl against the real ikd binary (fixture: tests/testing/
// integration_fixture.h): every model operation, field violations, trajectories, tracking,
// simulations and the SVG drawing.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <tuple>

#include "testing/integration_fixture.h"

namespace ikd::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// (a) create from the demo file, list, get, delete; after delete, get is NOT_FOUND (exit 1).
TEST_F(IntegrationTest, IkctlArmRoundTrip) {
  StartServer();
  RunResult health = Ikctl({"health"});
  EXPECT_EQ(health.exit_code, 0) << Describe(health);
  EXPECT_EQ(health.out, "SERVING\n");

  RunResult create = Ikctl({"arms", "create", "demo", kDemoArm});
  ASSERT_EQ(create.exit_code, 0) << Describe(create);
  const auto created = ParseJson<ikd::v1::Arm>(create.out);
  EXPECT_EQ(created.name(), "arms/demo");
  EXPECT_EQ(created.version(), 1);
  EXPECT_EQ(created.spec().limbs_size(), 4);

  RunResult list = Ikctl({"arms", "list", "--format=csv"});
  ASSERT_EQ(list.exit_code, 0) << Describe(list);
  const auto lines = Lines(list.out);
  ASSERT_EQ(lines.size(), 2u) << list.out;
  EXPECT_THAT(lines[0], StartsWith("name,version,limbs,planar"));
  EXPECT_THAT(lines[1], StartsWith("arms/demo,1,4,yes,"));

  const auto got = GetArm("demo");
  EXPECT_EQ(got.etag(), created.etag());
  EXPECT_EQ(got.spec().SerializeAsString(), created.spec().SerializeAsString());

  RunResult again = Ikctl({"arms", "create", "demo", kDemoArm});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.err, HasSubstr("ALREADY_EXISTS"));

  RunResult remove = Ikctl({"arms", "delete", "arms/demo"});
  ASSERT_EQ(remove.exit_code, 0) << Describe(remove);
  EXPECT_EQ(remove.out, "deleted arms/demo\n");
  RunResult gone = Ikctl({"arms", "get", "demo"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_THAT(gone.err, HasSubstr("NOT_FOUND"));
}

// (a) a limb of negative length: INVALID_ARGUMENT, the BadRequest field path on stderr, exit 1;
// a file that is not an arm at all: exit 2 naming the unknown field, nothing sent.
TEST_F(IntegrationTest, IkctlReportsFieldViolations) {
  StartServer();
  const std::string bad = WriteFile(
      "bad.json", R"({"spec": {"planar": true, "limbs": [{"length": 0.4}, {"length": -1}]}})");
  RunResult create = Ikctl({"arms", "create", "bad", bad});
  EXPECT_EQ(create.exit_code, 1) << Describe(create);
  EXPECT_THAT(create.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(create.err, HasSubstr("field arm.spec.limbs[1].length"));

  const std::string typo = WriteFile("typo.json", R"({"limbz": []})");
  RunResult parse = Ikctl({"arms", "create", "typo", typo});
  EXPECT_EQ(parse.exit_code, 2) << Describe(parse);
  EXPECT_THAT(parse.err, HasSubstr("limbz"));
}

// Scenes from a textproto: create, get, list, update with the current etag (version 2), update
// with the stale etag (ABORTED, exit 1), delete, then get is NOT_FOUND.
TEST_F(IntegrationTest, IkctlSceneRoundTripFromTextproto) {
  StartServer();
  const std::string file = WriteFile("pillar.textproto", R"(# one pillar
      obstacles { id: "post" capsule { a { x: 0.5 } b { x: 0.5 z: 1 } radius: 0.05 } })");
  RunResult create = Ikctl({"scenes", "create", "posts", file});
  ASSERT_EQ(create.exit_code, 0) << Describe(create);
  const auto created = ParseJson<ikd::v1::Scene>(create.out);
  EXPECT_EQ(created.name(), "scenes/posts");
  ASSERT_EQ(created.spec().obstacles_size(), 1);
  EXPECT_DOUBLE_EQ(created.spec().obstacles(0).capsule().b().z(), 1.0);

  RunResult list = Ikctl({"scenes", "list", "--format=csv"});
  EXPECT_THAT(list.out, HasSubstr("scenes/posts,1,1,"));
  RunResult get = Ikctl({"scenes", "get", "posts"});
  ASSERT_EQ(get.exit_code, 0) << Describe(get);
  EXPECT_EQ(ParseJson<ikd::v1::Scene>(get.out).etag(), created.etag());

  const std::string two = WriteFile("two.json", R"({"obstacles": [
      {"id": "post", "sphere": {"center": {"x": 0.5}, "radius": 0.1}},
      {"id": "floor", "half_space": {"normal": {"z": 1}, "offset": -0.5}}]})");
  RunResult update = Ikctl({"scenes", "update", "posts", two, "--etag=" + created.etag()});
  ASSERT_EQ(update.exit_code, 0) << Describe(update);
  const auto updated = ParseJson<ikd::v1::Scene>(update.out);
  EXPECT_EQ(updated.version(), 2);
  EXPECT_EQ(updated.spec().obstacles_size(), 2);
  RunResult stale = Ikctl({"scenes", "update", "posts", two, "--etag=" + created.etag()});
  EXPECT_EQ(stale.exit_code, 1) << Describe(stale);
  EXPECT_THAT(stale.err, HasSubstr("ABORTED"));

  RunResult remove = Ikctl({"scenes", "delete", "posts", "--etag=" + updated.etag()});
  ASSERT_EQ(remove.exit_code, 0) << Describe(remove);
  RunResult gone = Ikctl({"scenes", "get", "posts"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_THAT(gone.err, HasSubstr("NOT_FOUND"));
}

// A textproto with a typo is refused before anything is sent: exit 2 naming the line.
TEST_F(IntegrationTest, IkctlRejectsMalformedTextproto) {
  StartServer();
  const std::string file = WriteFile("bad.textproto", "obstacles { idd: \"x\" }\n");
  RunResult create = Ikctl({"scenes", "create", "bad", file});
  EXPECT_EQ(create.exit_code, 2) << Describe(create);
  EXPECT_THAT(create.err, HasSubstr("line 1"));
  EXPECT_THAT(create.err, HasSubstr("idd"));
}

// Scenes: create, edit (move an obstacle) bumps the version to 2 and moves the ball.
TEST_F(IntegrationTest, IkctlSceneEdit) {
  StartServer();
  CreateDemoModels();
  const std::string ops = WriteFile("ops.json", R"({"operations": [{"operation": "OPERATION_MOVE",
      "obstacle_id": "ball", "translation": {"x": 0.25}}]})");
  RunResult edit = Ikctl({"scenes", "edit", "demo", ops});
  ASSERT_EQ(edit.exit_code, 0) << Describe(edit);
  const auto scene = ParseJson<ikd::v1::Scene>(edit.out);
  EXPECT_EQ(scene.version(), 2);
  ASSERT_GE(scene.spec().obstacles_size(), 1);
  EXPECT_EQ(scene.spec().obstacles(0).id(), "ball");
  EXPECT_DOUBLE_EQ(scene.spec().obstacles(0).sphere().center().x(), -0.5 + 0.25);
}

// (d) ikctl trajectory on a line: 1 s sampled every 0.05 s = 21 samples, each REACHED with a
// hand error below 1e-9 m, four joint columns, and a summary with fraction_reached=1.
TEST_F(IntegrationTest, IkctlTrajectoryLineEverySampleReached) {
  StartServer();
  CreateDemoModels();
  RunResult run = Ikctl({"trajectory", "--arm=demo", "--scene=demo",
                         "--line=1.1,0.3,0:0.6,0.9,0", "--duration=1", "--period=0.05"});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  const auto lines = Lines(run.out);
  ASSERT_GE(lines.size(), 2u) << run.out;
  EXPECT_EQ(lines.front(), "time,status,hand_error,min_clearance,joint_0,joint_1,joint_2,joint_3");
  int samples = 0;
  for (size_t k = 1; k + 1 < lines.size(); ++k) {
    const auto cells = SplitCsv(lines[k]);
    ASSERT_EQ(cells.size(), 8u) << lines[k];
    EXPECT_EQ(cells[1], "REACHED") << lines[k];
    EXPECT_LT(std::stod(cells[2]), 1e-9) << lines[k];
    ++samples;
  }
  EXPECT_EQ(samples, 21);
  EXPECT_THAT(lines.back(), StartsWith("# summary samples=21 fraction_reached=1 "));
}

// Unknown arm in a kinematics call: NOT_FOUND naming it, exit 1.
TEST_F(IntegrationTest, IkctlSolveUnknownArmIsNotFound) {
  StartServer();
  RunResult run = Ikctl({"solve", "--arm=nope", "--target=1,0,0"});
  EXPECT_EQ(run.exit_code, 1) << Describe(run);
  EXPECT_THAT(run.err, HasSubstr("NOT_FOUND"));
  EXPECT_THAT(run.err, HasSubstr("arms/nope"));
}

// --solver reaches IkOptions.solver: NUMERIC is reported back in the answer, ANALYTIC for a
// chain arm is the server's INVALID_ARGUMENT at options.solver (exit 1), and an unknown name is
// ikctl's own usage error (exit 2) before any call.
TEST_F(IntegrationTest, IkctlSolverFlagReachesTheOptions) {
  StartServer();
  CreateDemoModels();
  const std::string ur5 = WriteFile("ur5.json", R"({"robot": {"preset": "ROBOT_PRESET_UR5"}})");
  RunResult numeric =
      Ikctl({"solve", "--arm_file=" + ur5, "--target=0.4,0.2,0.4", "--solver=numeric"});
  ASSERT_EQ(numeric.exit_code, 0) << Describe(numeric);
  EXPECT_THAT(numeric.out, HasSubstr("\"solver\": \"IK_SOLVER_NUMERIC\""));
  RunResult chain = Ikctl({"solve", "--arm=demo", "--target=0.6,0.6,0", "--solver=Analytic"});
  EXPECT_EQ(chain.exit_code, 1) << Describe(chain);
  EXPECT_THAT(chain.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(chain.err, HasSubstr("options.solver"));
  RunResult unknown = Ikctl({"solve", "--arm=demo", "--target=0.6,0.6,0", "--solver=fast"});
  EXPECT_EQ(unknown.exit_code, 2) << Describe(unknown);
  EXPECT_THAT(unknown.err, HasSubstr("--solver must be auto, analytic or numeric, got \"fast\""));
}

// ikctl arms import-urdf --mesh_dir sends the directory's STL files for the URDF's <collision>
// meshes: the one sent is covered by capsules, the one missing is named in the stored arm's
// geometry notes, other files are not sent, the printed arm leaves the mesh contents out, and
// a directory that does not exist is ikctl's own error (exit 2) before any call.
TEST_F(IntegrationTest, IkctlImportsUrdfCollisionMeshesFromADirectory) {
  StartServer();
  const std::string meshes = dir_ + "/meshes";
  std::filesystem::create_directories(meshes);
  std::ofstream(meshes + "/upper.stl")
      << "solid upper\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 0.05 0 0.3\n"
         "vertex 0 0.05 0.3\nendloop\nendfacet\nendsolid upper\n";
  std::ofstream(meshes + "/readme.txt") << "not a mesh";
  auto collision = [](const std::string& file) {
    return "<collision><geometry><mesh filename=\"package://toy/meshes/" + file +
           "\"/></geometry></collision>";
  };
  auto joint = [](const std::string& name, const std::string& parent, const std::string& child) {
    return "<joint name=\"" + name + "\" type=\"revolute\"><parent link=\"" + parent +
           "\"/><child link=\"" + child +
           "\"/><origin xyz=\"0 0 0.3\"/><axis xyz=\"0 1 0\"/><limit lower=\"-2\" "
           "upper=\"2\" effort=\"1\" velocity=\"1\"/></joint>";
  };
  const std::string urdf =
      WriteFile("toy.urdf", "<robot name=\"toy\"><link name=\"base\"/><link name=\"l1\">" +
                                collision("upper.stl") + "</link><link name=\"l2\">" +
                                collision("missing.stl") + "</link><link name=\"l3\"/>" +
                                joint("j1", "base", "l1") + joint("j2", "l1", "l2") +
                                joint("j3", "l2", "l3") + "</robot>");
  RunResult imported = Ikctl({"arms", "import-urdf", "toy", urdf, "--base_link=base",
                              "--tip_link=l3", "--mesh_dir=" + meshes});
  ASSERT_EQ(imported.exit_code, 0) << Describe(imported);
  EXPECT_THAT(imported.out,
              HasSubstr("mesh 'package://toy/meshes/upper.stl' (1 triangles) covered by"));
  EXPECT_THAT(imported.out, HasSubstr("'package://toy/meshes/missing.stl' was not sent"));
  EXPECT_THAT(imported.out, HasSubstr("\"upper.stl\""));
  EXPECT_THAT(imported.out, ::testing::Not(HasSubstr("readme.txt")));
  EXPECT_THAT(imported.out, ::testing::Not(HasSubstr("c29saWQ")));  // base64 of "solid"
  // The server kept the mesh itself: read back, it is there in full.
  const ikd::v1::Arm stored = GetArm("arms/toy");
  ASSERT_EQ(stored.spec().robot().urdf().meshes().count("upper.stl"), 1u);
  EXPECT_THAT(stored.spec().robot().urdf().meshes().at("upper.stl"),
              ::testing::StartsWith("solid upper"));
  RunResult no_dir = Ikctl({"arms", "import-urdf", "toy2", urdf, "--base_link=base",
                            "--tip_link=l3", "--mesh_dir=" + dir_ + "/nowhere"});
  EXPECT_EQ(no_dir.exit_code, 2) << Describe(no_dir);
  EXPECT_THAT(no_dir.err, HasSubstr("--mesh_dir"));
}

// ikctl track answers every target line in order (a header and comments skipped): the state's
// time is the line's time, REACHED, the hand on the target (hand error < 1e-9 m).
TEST_F(IntegrationTest, IkctlTrackAnswersEveryTargetInOrder) {
  StartServer();
  CreateDemoModels();
  // 2 s for the quarter circle: within the demo arm's servo limits, so every answer is REACHED.
  std::string targets = "time,x,y,z\n# a quarter circle about (0.7, 0.2)\n";
  for (int k = 0; k <= 20; ++k) {
    const double phi = 0.5 * M_PI * k / 20;
    targets += std::to_string(0.1 * k) + "," + std::to_string(0.7 + 0.25 * std::cos(phi)) +
               "," + std::to_string(0.2 + 0.25 * std::sin(phi)) + ",0\n";
  }
  const std::string file = WriteFile("targets.csv", targets);
  RunResult run = Ikctl({"track", "--arm=demo", "--scene=demo", "--targets_file=" + file});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  const auto lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 22u) << run.out;
  EXPECT_EQ(lines[0], "time,status,hand_error,min_clearance,joint_0,joint_1,joint_2,joint_3");
  for (int k = 0; k <= 20; ++k) {
    const auto cells = SplitCsv(lines[k + 1]);
    ASSERT_EQ(cells.size(), 8u) << lines[k + 1];
    EXPECT_NEAR(std::stod(cells[0]), 0.1 * k, 1e-12);
    EXPECT_EQ(cells[1], "REACHED");
    EXPECT_LT(std::stod(cells[2]), 1e-9);
  }
}

// A malformed target line after the first target: exit 2 naming the line; nothing hangs.
TEST_F(IntegrationTest, IkctlTrackRejectsMalformedLine) {
  StartServer();
  CreateDemoModels();
  const std::string file = WriteFile("bad.csv", "0,1,0.3,0\n0.1,0.9,zero,0\n");
  RunResult run = Ikctl({"track", "--arm=demo", "--targets_file=" + file});
  EXPECT_EQ(run.exit_code, 2) << Describe(run);
  EXPECT_THAT(run.err, HasSubstr("line 2"));
}

// --svg draws the scene's obstacles (sphere and pillar; the wall at x >= 1.4 lies outside the
// view), one faint arm per sample up to 40, the hand path through every sample, and the final
// arm; the hand path's first point is the first sample's hand, mapped to pixels.
TEST_F(IntegrationTest, IkctlSvgDrawsSweepPathAndObstacles) {
  StartServer();
  CreateDemoModels();
  const std::string svg = dir_ + "/sweep.svg";
  RunResult run = Ikctl({"trajectory", "--arm=demo", "--scene=demo",
                         "--line=1.1,0.3,0:0.6,0.9,0", "--duration=1", "--period=0.05",
                         "--svg=" + svg});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  const std::string text = FileText(svg);
  EXPECT_THAT(text, StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(text, ::testing::EndsWith("</svg>\n"));
  auto count = [&](const std::string& needle) { return CountOccurrences(text, needle); };
  EXPECT_EQ(count("class=\"obstacle\""), 2u);  // ball and pillar
  EXPECT_EQ(count("<title>wall</title>"), 1u);   // listed, outside the view
  EXPECT_EQ(count("class=\"sweep\""), 21u);
  EXPECT_EQ(count("class=\"hand-path\""), 1u);
  EXPECT_EQ(count("class=\"site\""), 5u);      // base, 3 joints, hand of the final arm
  EXPECT_EQ(count("class=\"not-reached\""), 0u);
  std::smatch points;
  const std::regex hand_path("class=\"hand-path\"[^>]*points=\"([^\"]*)\"");
  ASSERT_TRUE(std::regex_search(text, points, hand_path));
  EXPECT_EQ(SplitCsv(std::regex_replace(std::string(points[1]), std::regex(" "), ",")).size(),
            2u * 21u);
}

// Single pendulum, l = 1 m, g = 9.81, released at 0.5 rad: the period from the zero crossings
// of the streamed angle matches the exact 4 sqrt(l/g) K(sin(theta0/2)) within 1e-3 (RATTLE,
// dt = 1e-3), and the energy error stays a bounded oscillation below (omega dt)^2 E ~ 1.2e-5 J
// (E = m g l (1 - cos 0.5) = 1.2 J, omega = 3.13/s).
TEST_F(IntegrationTest, IkctlPendulumPeriodMatchesEllipticIntegral) {
  StartServer();
  RunResult run = Ikctl({"pendulum", "--lengths=1", "--angles=0.5", "--dt=0.001",
                         "--steps=4200", "--stride=1", "--method=rattle"});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  const auto lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 4201u);
  EXPECT_EQ(lines[0], "step,time,angle_0,kinetic_energy,potential_energy,total_energy,"
                      "max_relative_violation,iterations");
  std::vector<double> crossings;
  double previous_time = 0, previous_angle = 0.5, first_energy = 0, worst_drift = 0;
  for (size_t k = 1; k < lines.size(); ++k) {
    const auto cells = SplitCsv(lines[k]);
    const double time = std::stod(cells[1]), angle = std::stod(cells[2]);
    const double energy = std::stod(cells[5]);
    if (k == 1) first_energy = energy;
    worst_drift = std::max(worst_drift, std::abs(energy - first_energy));
    if ((previous_angle > 0) != (angle > 0)) {
      crossings.push_back(previous_time +
                          (time - previous_time) * previous_angle / (previous_angle - angle));
    }
    previous_time = time;
    previous_angle = angle;
  }
  ASSERT_GE(crossings.size(), 3u);
  const double measured = crossings[2] - crossings[0];
  // K(k) = pi / (2 AGM(1, sqrt(1 - k^2))).
  double a = 1, b = std::sqrt(1 - std::pow(std::sin(0.25), 2));
  for (int i = 0; i < 30; ++i) std::tie(a, b) = std::make_pair(0.5 * (a + b), std::sqrt(a * b));
  const double exact = 4 * std::sqrt(1 / 9.81) * M_PI / (2 * a);
  EXPECT_NEAR(measured / exact, 1.0, 1e-3) << "measured " << measured << " exact " << exact;
  EXPECT_LT(worst_drift, 1.2e-5);
}

// Bailey's 100-site helix with bending A = 1 under MILC SHAKE: every frame keeps the links to
// the 1e-10 tolerance and the total energy within 1e-4 relative of its first frame (Bailey).
TEST_F(IntegrationTest, IkctlChainHelixHoldsLinksAndEnergy) {
  StartServer();
  RunResult run = Ikctl({"chain", "--shape=helix", "--sites=100", "--bending=1", "--dt=0.05",
                         "--steps=400", "--stride=20", "--method=milc"});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  const auto lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 21u) << run.out;
  double first = 0;
  for (size_t k = 1; k < lines.size(); ++k) {
    const auto cells = SplitCsv(lines[k]);
    const double total = std::stod(cells[4]);
    if (k == 1) first = total;
    EXPECT_LE(std::stod(cells[5]), 1e-10) << lines[k];
    EXPECT_NEAR(total, first, 1e-4 * std::abs(first)) << lines[k];
  }
}

// A bad flag value never reaches the server: exit 2 naming the flag.
TEST_F(IntegrationTest, IkctlSimulationFlagsAreChecked) {
  StartServer();
  RunResult method = Ikctl({"chain", "--method=verlet"});
  EXPECT_EQ(method.exit_code, 2);
  EXPECT_THAT(method.err, HasSubstr("--method"));
  RunResult lengths = Ikctl({"pendulum", "--lengths=1,x"});
  EXPECT_EQ(lengths.exit_code, 2);
  EXPECT_THAT(lengths.err, HasSubstr("--lengths"));
  RunResult bad_rod = Ikctl({"pendulum", "--lengths=-1"});
  EXPECT_EQ(bad_rod.exit_code, 1) << Describe(bad_rod);
  EXPECT_THAT(bad_rod.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(bad_rod.err, HasSubstr("lengths[0]"));
}

// ikctl pose replays a CSV of a turning two-bone skeleton (noise 3 mm, point c 0.5 m off in
// frame 15): one line per frame, every frame FITTED, bones exact to 1e-9 relative from the
// printed coordinates, and exactly one outlier, in frame 15.
TEST_F(IntegrationTest, IkctlPoseReplaysFramesWithExactBonesAndFlagsTheOutlier) {
  StartServer();
  const std::string skeleton = WriteFile("skeleton.textproto", R"(sites: "a" sites: "b"
      sites: "c" bones { i: 0 j: 1 length: 0.5 } bones { i: 1 j: 2 length: 0.4 })");
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(0.0, 0.003);
  std::string points = "timestamp,label,x,y,z\n";
  for (int n = 0; n < 30; ++n) {
    const double t = 0.01 * n, angle = 0.3 * t;
    const double b[3] = {0.5 * std::cos(angle), 0.5 * std::sin(angle), 0};
    const double sites[3][3] = {{0, 0, 0}, {b[0], b[1], 0}, {b[0] + 0.4, b[1], 0}};
    for (int k = 0; k < 3; ++k) {
      const double shift = n == 15 && k == 2 ? 0.5 : 0.0;
      points += std::to_string(t) + "," + std::string(1, char('a' + k));
      for (int d = 0; d < 3; ++d) {
        points += "," + std::to_string(sites[k][d] + noise(rng) + (d == 0 ? shift : 0.0));
      }
      points += "\n";
    }
  }
  RunResult run = Ikctl({"pose", "--skeleton_file=" + skeleton,
                         "--frames_file=" + WriteFile("points.csv", points)});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  const auto lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 31u) << run.out;
  EXPECT_EQ(lines[0], "timestamp,outcome,bone_length_residual,outliers,processing_us,a_x,a_y,"
                      "a_z,b_x,b_y,b_z,c_x,c_y,c_z");
  int outliers = 0;
  for (size_t k = 1; k < lines.size(); ++k) {
    const auto cells = SplitCsv(lines[k]);
    ASSERT_EQ(cells.size(), 14u) << lines[k];
    EXPECT_EQ(cells[1], "FITTED") << lines[k];
    outliers += std::stoi(cells[3]);
    if (k == 16) {
      EXPECT_EQ(cells[3], "1") << lines[k];
    }
    auto site = [&](int s, int d) { return std::stod(cells[5 + 3 * s + d]); };
    auto distance = [&](int s, int t) {
      return std::hypot(site(s, 0) - site(t, 0), site(s, 1) - site(t, 1), site(s, 2) - site(t, 2));
    };
    EXPECT_NEAR(distance(0, 1) / 0.5, 1.0, 1e-9) << lines[k];
    EXPECT_NEAR(distance(1, 2) / 0.4, 1.0, 1e-9) << lines[k];
  }
  EXPECT_EQ(outliers, 1);

  // The same skeleton stored (ikctl skeletons create) and used by name fits the same frames
  // the same way: every column but the processing time equal.
  RunResult create = Ikctl({"skeletons", "create", "chain", skeleton});
  ASSERT_EQ(create.exit_code, 0) << Describe(create);
  RunResult list = Ikctl({"skeletons", "list", "--format=csv"});
  EXPECT_THAT(list.out, HasSubstr("skeletons/chain,1,3,2,"));
  const std::string svg = dir_ + "/pose.svg";
  RunResult named = Ikctl({"pose", "--skeleton=chain", "--frames_file=" + dir_ + "/points.csv",
                           "--svg=" + svg});
  ASSERT_EQ(named.exit_code, 0) << Describe(named);
  const auto named_lines = Lines(named.out);
  ASSERT_EQ(named_lines.size(), lines.size());
  for (size_t k = 1; k < lines.size(); ++k) {
    auto a = SplitCsv(lines[k]), b = SplitCsv(named_lines[k]);
    a.erase(a.begin() + 4);  // processing_us
    b.erase(b.begin() + 4);
    EXPECT_EQ(a, b) << lines[k] << "\n" << named_lines[k];
  }
  // --svg draws the last frame: its 2 bones, 3 sites and 3 observations, none an outlier.
  const std::string text = FileText(svg);
  auto count = [&](const std::string& needle) { return CountOccurrences(text, needle); };
  EXPECT_EQ(count("class=\"bone\""), 2u) << text;
  EXPECT_EQ(count("class=\"site\""), 3u);
  EXPECT_EQ(count("class=\"observation\""), 3u);
  EXPECT_EQ(count("class=\"outlier\""), 0u);
}

}  // namespace
}  // namespace ikd::integration
