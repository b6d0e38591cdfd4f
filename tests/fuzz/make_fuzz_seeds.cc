// Writes the seed corpora of the fuzz targets: valid requests (the demo models of deploy/models,
// typical requests written as text protos below, serialized here) so that no opaque binary is
// committed. Usage: make_fuzz_seeds OUT_DIR -> OUT_DIR/<target>/seed-<hash>. The RPC targets'
// layout (a selector byte, or length-delimited stream messages) is the one their sources read.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz_server.h"
#include "google/protobuf/text_format.h"

namespace {

using ikd::fuzz::JoinDelimited;
using ikd::fuzz::WriteSeed;
namespace v1 = ikd::v1;

template <typename Message>
std::string FromText(const std::string& text) {
  Message message;
  if (!google::protobuf::TextFormat::ParseFromString(text, &message)) {
    std::fprintf(stderr, "make_fuzz_seeds: not a %s: %s\n",
                 message.GetDescriptor()->full_name().c_str(), text.c_str());
    std::exit(1);
  }
  return message.SerializeAsString();
}

std::string Selected(int selector, const std::string& bytes) {
  return std::string(1, static_cast<char>(selector)) + bytes;
}

void ModelSeeds(const std::string& dir, const ikd::fuzz::DemoModels& demo) {
  for (const auto& [id, spec] : demo.arms) {
    v1::CreateArmRequest create;
    create.set_arm_id("seed-" + id);
    *create.mutable_arm()->mutable_spec() = spec;
    WriteSeed(dir, Selected(0, create.SerializeAsString()));
    v1::UpdateArmRequest update;
    update.mutable_arm()->set_name("arms/fuzz-scratch");
    *update.mutable_arm()->mutable_spec() = spec;
    WriteSeed(dir, Selected(1, update.SerializeAsString()));
  }
  for (const auto& [id, spec] : demo.scenes) {
    v1::CreateSceneRequest create;
    create.set_scene_id("seed-" + id);
    *create.mutable_scene()->mutable_spec() = spec;
    WriteSeed(dir, Selected(2, create.SerializeAsString()));
    v1::UpdateSceneRequest update;
    update.mutable_scene()->set_name("scenes/fuzz-scratch");
    *update.mutable_scene()->mutable_spec() = spec;
    WriteSeed(dir, Selected(3, update.SerializeAsString()));
  }
  WriteSeed(dir, Selected(0, FromText<v1::CreateArmRequest>(R"pb(
    arm_id: "dh" arm { spec { robot {
      dh { convention: DH_CONVENTION_STANDARD
           rows { a: 0 alpha: 1.5708 d: 0.3 range { lower: -3 upper: 3 max_velocity: 2 } }
           rows { a: 0.4 alpha: 0 d: 0 } rows { a: 0.3 alpha: 0 d: 0 } }
      tool { position { z: 0.1 } } link_radii: [0.05, 0.04, 0.03] } } })pb")));
  WriteSeed(dir, Selected(0, FromText<v1::CreateArmRequest>(R"pb(
    arm_id: "iiwa" arm { spec { robot { preset: ROBOT_PRESET_IIWA14 } } })pb")));
  WriteSeed(dir, Selected(0, FromText<v1::CreateArmRequest>(R"pb(
    arm_id: "spatial" arm { spec {
      base_position { z: 0.1 } base_orientation { w: 1 }
      limbs { length: 0.3 radius: 0.02 } limbs { length: 0.3 radius: 0.02 }
      limbs { length: 0.2 radius: 0.01 }
      joint_limits { limited: true min: 0 max: 2 } joint_limits { limited: false }
      site_weights: [1, 1, 2, 1] home_angles: [0.5, 0, 0.4, 1, 0.3, 0] } })pb")));
  WriteSeed(dir, Selected(4, FromText<v1::EditSceneRequest>(R"pb(
    name: "scenes/fuzz-scratch"
    operations { operation: OPERATION_ADD
                 obstacle { id: "ball" sphere { center { x: 0.5 y: 0.2 z: 0.3 } radius: 0.05 } } }
    operations { operation: OPERATION_ADD
                 obstacle { id: "crate" box { center { x: 0.3 z: 0.2 } orientation { w: 1 z: 0.2 }
                                              half_extents { x: 0.1 y: 0.1 z: 0.1 } } } }
    operations { operation: OPERATION_MOVE obstacle_id: "ball" translation { y: 0.1 }
                 rotation { w: 1 } }
    operations { operation: OPERATION_REMOVE obstacle_id: "crate" })pb")));
  const std::string skeleton = R"pb(
    sites: ["hip", "knee", "ankle", "toe"]
    bones { i: 0 j: 1 length: 0.45 } bones { i: 1 j: 2 length: 0.42 }
    bones { i: 2 j: 3 length: 0.15 }
    labels { label: "foot" site: "toe" }
    limits { a: 0 center: 1 b: 2 min: 0 max: 2.5 })pb";
  WriteSeed(dir, Selected(5, FromText<v1::CreateSkeletonRequest>(
                                 absl::StrCat("skeleton_id: \"leg\" skeleton { spec {",
                                              skeleton, "} }"))));
  WriteSeed(dir, Selected(6, FromText<v1::UpdateSkeletonRequest>(
                                 absl::StrCat("skeleton { name: \"skeletons/fuzz-scratch\" spec {",
                                              skeleton, "} }"))));
}

void KinematicsSeeds(const std::string& dir) {
  WriteSeed(dir, Selected(0, FromText<v1::SolveRequest>(R"pb(
    arm { name: "arms/planar7" } scene { name: "scenes/pillars" }
    target { x: 0.8 y: 0.2 z: 0.3 } options { seed: 7 trials_per_step: 4 })pb")));
  WriteSeed(dir, Selected(0, FromText<v1::SolveRequest>(R"pb(
    arm { name: "arms/ur5" } target { x: 0.4 y: 0.3 z: 0.4 }
    target_orientation { y: 0.7071068 w: 0.7071068 })pb")));
  WriteSeed(dir, Selected(0, FromText<v1::SolveRequest>(R"pb(
    arm { name: "arms/panda" } scene { name: "scenes/demo" } target { x: 0.5 z: 0.4 }
    seed_positions: [0, -0.5, 0, -2, 0, 1.5, 0.7])pb")));
  WriteSeed(dir, Selected(0, FromText<v1::SolveRequest>(R"pb(
    arm { spec { planar: true limbs { length: 0.5 } limbs { length: 0.5 } limbs { length: 0.5 } } }
    scene { spec { obstacles { id: "s" sphere { center { x: 0.7 y: 0.7 } radius: 0.1 } } } }
    target { x: 1.0 y: 0.5 } seed_positions: [0.1, 0.2, 0.3]
    options { trials_per_step: 8 safety_margin: 0.02 max_step_fraction: 0.5 tolerance: 1e-10
              weights { clearance: 1e6 velocity: 1 acceleration: 1 joint_limit: 1e4 } })pb")));
  WriteSeed(dir, Selected(1, FromText<v1::SolveTrajectoryRequest>(R"pb(
    arm { name: "arms/planar7" } scene { name: "scenes/pillars" }
    trajectory { line { from { x: 1.0 y: 0.45 z: 0.3 } to { x: 1.0 y: -0.45 z: 0.3 }
                        duration: 1 } }
    sample_period: 0.25 options { trials_per_step: 4 })pb")));
  WriteSeed(dir, Selected(1, FromText<v1::SolveTrajectoryRequest>(R"pb(
    arm { name: "arms/spatial6" }
    trajectory { arc { center { x: 0.5 z: 0.4 } axis { z: 1 } start { x: 0.7 z: 0.4 }
                       angle: 1 duration: 1 } }
    sample_period: 0.25 options { no_trials: true })pb")));
  WriteSeed(dir, Selected(1, FromText<v1::SolveTrajectoryRequest>(R"pb(
    arm { name: "arms/ur5" }
    trajectory { waypoints { interpolation: INTERPOLATION_CUBIC
                             waypoints { time: 0 position { x: 0.4 y: 0.3 z: 0.4 } }
                             waypoints { time: 0.5 position { x: 0.4 y: 0.35 z: 0.38 } }
                             waypoints { time: 1 position { x: 0.4 y: 0.4 z: 0.35 } } } }
    sample_period: 0.25 tool_orientation { y: 0.7071068 w: 0.7071068 })pb")));
  WriteSeed(dir, Selected(1, FromText<v1::SolveTrajectoryRequest>(R"pb(
    arm { name: "arms/demo" } scene { name: "scenes/demo" }
    trajectory { polyline { points { x: 0.8 y: 0.3 } points { x: 0.6 y: 0.6 }
                            points { x: 0.9 } speed: 1 } }
    sample_period: 0.25 options { trials_per_step: 4 })pb")));
  const std::vector<std::string> track = {
      FromText<v1::TrackRequest>(R"pb(config { arm { name: "arms/planar7" }
                                               scene { name: "scenes/pillars" }
                                               options { trials_per_step: 4 } })pb"),
      FromText<v1::TrackRequest>(R"pb(target { time: 0 position { x: 0.8 y: 0.3 z: 0.3 } })pb"),
      FromText<v1::TrackRequest>(R"pb(scene_update { operations {
          operation: OPERATION_MOVE obstacle_id: "crate" translation { x: 0.05 } } })pb"),
      FromText<v1::TrackRequest>(R"pb(target { time: 0.1 position { x: 0.8 y: 0.2 z: 0.3 } })pb"),
      FromText<v1::TrackRequest>(R"pb(target { time: 0.2 position { x: 0.8 y: 0.1 z: 0.3 } })pb")};
  WriteSeed(dir, Selected(2, JoinDelimited(track)));
  const std::vector<std::string> robot_track = {
      FromText<v1::TrackRequest>(R"pb(config { arm { name: "arms/ur5" } })pb"),
      FromText<v1::TrackRequest>(R"pb(target { time: 0 position { x: 0.4 y: 0.3 z: 0.4 }
                                               orientation { y: 0.7071068 w: 0.7071068 } })pb"),
      FromText<v1::TrackRequest>(R"pb(target { time: 0.1 position { x: 0.4 y: 0.32 z: 0.4 }
                                               orientation { y: 0.7071068 w: 0.7071068 } })pb")};
  WriteSeed(dir, Selected(2, JoinDelimited(robot_track)));
}

void SimulationSeeds(const std::string& dir) {
  WriteSeed(dir, Selected(0, FromText<v1::StepChainRequest>(R"pb(
    generated { shape: SHAPE_HELIX num_sites: 10 link: 0.1 radius: 0.05 pitch: 0.02
                fixed_sites: [0] }
    potentials { gravity { z: -9.81 } bending { stiffness: 0.1 segment_length: 0.1 } }
    projection { method: CONSTRAINT_METHOD_MILC_SHAKE tolerance: 1e-10 }
    dt: 0.001 steps: 20 stride: 5)pb")));
  WriteSeed(dir, Selected(0, FromText<v1::StepChainRequest>(R"pb(
    generated { shape: SHAPE_RING num_sites: 8 link: 0.2 }
    projection { method: CONSTRAINT_METHOD_RATTLE } dt: 0.001 steps: 10 stride: 5)pb")));
  WriteSeed(dir, Selected(0, FromText<v1::StepChainRequest>(R"pb(
    generated { shape: SHAPE_COIL num_sites: 12 link: 0.1 seed: 3 planar: true }
    projection { method: CONSTRAINT_METHOD_AUTO } brownian { diffusion: 0.01 seed: 5 }
    dt: 0.001 steps: 10 stride: 5)pb")));
  WriteSeed(dir, Selected(0, FromText<v1::StepChainRequest>(R"pb(
    chain { sites { position { } inverse_mass: 0 }
            sites { position { x: 1 } velocity { y: 1 } mass: 1 }
            sites { position { x: 1 y: 1 } mass: 2 }
            sites { position { x: 2 } inverse_mass: 1 }
            constraints { i: 0 j: 1 length: 1 } constraints { i: 1 j: 2 length: 1 }
            constraints { i: 1 j: 3 length: 1 } }
    potentials { external_forces { site: 2 force { x: 1 } } }
    projection { method: CONSTRAINT_METHOD_MATRIX max_iterations: 50 }
    dt: 0.01 steps: 8 stride: 2)pb")));
  WriteSeed(dir, Selected(0, FromText<v1::StepChainRequest>(R"pb(
    generated { shape: SHAPE_STRAIGHT num_sites: 6 link: 0.5 }
    projection { method: CONSTRAINT_METHOD_SHAKE } dt: 0.01 steps: 4)pb")));
  WriteSeed(dir, Selected(1, FromText<v1::StepPendulumRequest>(R"pb(
    planar: true masses: [1, 1] lengths: [1, 1] angles: [0.5, 1] angular_velocities: [0, 0]
    projection { method: CONSTRAINT_METHOD_MILC_SHAKE } dt: 0.001 steps: 20 stride: 5)pb")));
  WriteSeed(dir, Selected(1, FromText<v1::StepPendulumRequest>(R"pb(
    masses: [1, 2, 1] lengths: [1, 0.5, 0.5] angles: [0.5, 0, 1, 1, 0.2, 2] gravity: 9.81
    projection { method: CONSTRAINT_METHOD_SHAKE } dt: 0.001 steps: 10 stride: 5)pb")));
  WriteSeed(dir, Selected(2, FromText<v1::FollowShapeRequest>(R"pb(
    curve { type: TYPE_ELLIPSE a: 2 b: 1 } position { x: 2 } velocity { y: 1 }
    mode: FOLLOW_MODE_FREE_FLIGHT dt: 0.01 steps: 50 stride: 10)pb")));
  WriteSeed(dir, Selected(2, FromText<v1::FollowShapeRequest>(R"pb(
    curve { type: TYPE_SUPERELLIPSE a: 1 b: 1 n: 4 } position { x: 1 } velocity { y: 0.5 }
    mode: FOLLOW_MODE_CONSTANT_SPEED dt: 0.01 steps: 30 stride: 10 tolerance: 1e-10)pb")));
  WriteSeed(dir, Selected(2, FromText<v1::FollowShapeRequest>(R"pb(
    surface { type: TYPE_SPHERE r: 1 } position { z: 1 } velocity { x: 1 }
    gravity { z: -9.81 } mode: FOLLOW_MODE_FREE_FLIGHT dt: 0.01 steps: 40 stride: 10)pb")));
  WriteSeed(dir, Selected(2, FromText<v1::FollowShapeRequest>(R"pb(
    surface { type: TYPE_PSEUDO_HYPERBOLOID a: 1 } position { x: 1 z: -1 } velocity { y: 1 }
    mode: FOLLOW_MODE_FREE_FLIGHT dt: 0.01 steps: 40 stride: 10 max_iterations: 50)pb")));
  WriteSeed(dir, Selected(3, FromText<v1::ResponseMatrixRequest>(R"pb(
    system { sites { position { } } sites { position { x: 1 } } sites { position { x: 1 y: 1 } }
             constraints { i: 0 j: 1 length: 1 } constraints { i: 1 j: 2 length: 1 } }
    kind: RESPONSE_KIND_PROJECTOR dimension: 2)pb")));
  WriteSeed(dir, Selected(3, FromText<v1::ResponseMatrixRequest>(R"pb(
    system { sites { position { } mass: 1 } sites { position { x: 1 } mass: 2 }
             sites { position { x: 1 y: 1 z: 1 } inverse_mass: 0 }
             constraints { i: 0 j: 1 length: 1 } constraints { i: 1 j: 2 length: 1.4142 } }
    kind: RESPONSE_KIND_MOBILITY dimension: 3 rank_tolerance: 1e-9)pb")));
}

void PoseSeeds(const std::string& dir) {
  const std::vector<std::string> human = {
      FromText<v1::EstimatePoseRequest>(R"pb(config { preset: SKELETON_PRESET_HUMAN17 })pb"),
      FromText<v1::EstimatePoseRequest>(R"pb(frame { timestamp: 0
          points { label: "pelvis" position { z: 1 } }
          points { label: "right_hip" position { x: -0.1 z: 1 } }
          points { label: "right_knee" position { x: -0.1 z: 0.55 } confidence: 0.9 }
          points { label: "left_hip" position { x: 0.1 z: 1 } }
          points { label: "thorax" position { z: 1.5 } }
          points { label: "head" position { z: 1.75 } confidence: 0.5 } })pb"),
      FromText<v1::EstimatePoseRequest>(R"pb(frame { timestamp: 0.03
          points { label: "pelvis" position { z: 1.01 } }
          points { label: "left_knee" position { x: 0.1 z: 0.55 } }
          points { label: "right_wrist" position { x: -0.5 z: 1.2 } } })pb")};
  WriteSeed(dir, JoinDelimited(human));
  const std::vector<std::string> inline_leg = {
      FromText<v1::EstimatePoseRequest>(R"pb(config {
          spec { sites: ["hip", "knee", "ankle"] bones { i: 0 j: 1 length: 0.45 }
                 bones { i: 1 j: 2 length: 0.42 } limits { a: 0 center: 1 b: 2 min: 0 max: 2.5 } }
          calibration_frames: 1 smoothing: 1 outlier_gate: 4 ignore_unknown_labels: true })pb"),
      FromText<v1::EstimatePoseRequest>(R"pb(frame { timestamp: 0
          points { label: "hip" position { z: 1 } } points { label: "knee" position { z: 0.55 } }
          points { label: "ankle" position { z: 0.13 } } })pb"),
      FromText<v1::EstimatePoseRequest>(R"pb(frame { timestamp: 0.1
          points { label: "hip" position { z: 1 } } points { label: "knee" position { x: 0.1 z: 0.55 } }
          points { label: "nose" position { z: 2 } } })pb")};
  WriteSeed(dir, JoinDelimited(inline_leg));
}

void ConstraintSeeds(const std::string& dir) {
  // The target reads its input with FuzzedDataProvider: varied random bytes start every shape
  // and method (a fixed seed, so the corpus is the same on every machine).
  std::mt19937_64 rng(20261124);
  for (int k = 0; k < 32; ++k) {
    std::string bytes(64 + 32 * k, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
    WriteSeed(dir, bytes);
  }
}

void UrdfSeeds(const std::string& dir) {
  const ikd::fuzz::DemoModels demo = ikd::fuzz::LoadDemoModels();
  for (const auto& [id, spec] : demo.arms) {
    if (spec.robot().has_urdf()) WriteSeed(dir, Selected(0, spec.robot().urdf().urdf()));
  }
  WriteSeed(dir, Selected(2, R"(<robot name="r">
  <link name="a"/><link name="m"/><link name="b"/>
  <joint name="j1" type="revolute"><parent link="a"/><child link="m"/>
    <origin xyz="0 0 0.3" rpy="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="j2" type="continuous"><parent link="m"/><child link="b"/>
    <origin xyz="0.4 0 0" rpy="1.5708 0 0"/><axis xyz="0 1 0"/></joint>
</robot>)"));
  WriteSeed(dir, Selected(3, R"(<robot name="r">
  <link name="base"/><link name="f"/><link name="tip"/>
  <joint name="fixed" type="fixed"><parent link="base"/><child link="f"/>
    <origin xyz="0 0 0.1"/></joint>
  <joint name="j" type="revolute"><parent link="f"/><child link="tip"/>
    <origin xyz="0.2 0 0" rpy="0 0.5 0"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="2"/></joint>
</robot>)"));
}

}  // namespace

// An ASCII tetrahedron and a binary one (its 84-byte header and 50-byte triangles, written
// here so that no binary file is committed).
void StlSeeds(const std::string& dir) {
  const double corners[4][3] = {{0, 0, 0}, {0.1, 0, 0}, {0, 0.1, 0}, {0, 0, 0.3}};
  const int faces[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
  std::string ascii = "solid tetra\n", binary(80, ' ');
  for (int i = 0; i < 4; ++i) binary.push_back(static_cast<char>(i == 0 ? 4 : 0));
  auto put_float = [&binary](float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    for (int i = 0; i < 4; ++i) binary.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
  };
  for (const auto& face : faces) {
    ascii += " facet normal 0 0 0\n  outer loop\n";
    for (int i = 0; i < 3; ++i) put_float(0.0f);
    for (int v : face) {
      ascii += "   vertex " + std::to_string(corners[v][0]) + " " + std::to_string(corners[v][1]) +
               " " + std::to_string(corners[v][2]) + "\n";
      for (double c : corners[v]) put_float(static_cast<float>(c));
    }
    ascii += "  endloop\n endfacet\n";
    binary += std::string(2, '\0');
  }
  ascii += "endsolid tetra\n";
  WriteSeed(dir, ascii);
  WriteSeed(dir, binary);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_seeds OUT_DIR\n");
    return 2;
  }
  const std::string out = argv[1];
  const ikd::fuzz::DemoModels demo = ikd::fuzz::LoadDemoModels();
  ModelSeeds(out + "/model_service_fuzzer", demo);
  KinematicsSeeds(out + "/kinematics_service_fuzzer");
  SimulationSeeds(out + "/simulation_service_fuzzer");
  PoseSeeds(out + "/pose_service_fuzzer");
  ConstraintSeeds(out + "/constraint_engine_fuzzer");
  UrdfSeeds(out + "/urdf_import_fuzzer");
  StlSeeds(out + "/stl_mesh_fuzzer");
  return 0;
}
