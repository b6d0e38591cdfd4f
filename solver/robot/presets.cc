#include "ikd/robot/presets.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace ikd::robot::presets {
namespace {

constexpr double kPi = 3.14159265358979323846;
double Deg(double degrees) { return degrees * kPi / 180.0; }

ChainSpec Named(absl::StatusOr<ChainSpec> chain, const char* name) {
  // The tables below are constants that pass validation; a failure here is a programming error.
  ChainSpec spec = *std::move(chain);
  spec.name = name;
  return spec;
}

Eigen::Isometry3d AlongZ(double d) {
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  X.translation().z() = d;
  return X;
}

using Shapes = std::vector<std::vector<LinkShape>>;

ChainSpec WithBody(ChainSpec spec, Shapes shapes, std::vector<std::string> notes) {
  spec.link_shapes = std::move(shapes);
  spec.geometry_notes = std::move(notes);
  return spec;
}

// Capsules {a, b, radius} (m) per moving joint k in LinkPoses(spec, q)[k], fitted so that every
// vertex of the description's collision and visual meshes lies inside (docs/preset_geometry.md
// gives the fit, the margins and the sources).
Shapes Ur5Shapes() {
  return {{{{0.0003, -0.0049, 0.0905}, {0.0000, 0.0000, 0.0908}, 0.0900}},
          {{{-0.0063, 0.0003, 0.1358}, {0.0000, 0.0000, 0.1375}, 0.0900},
           {{-0.4186, 0.0003, 0.1361}, {-0.4250, 0.0000, 0.1375}, 0.0900},
           {{0.0000, 0.0000, 0.1359}, {-0.4250, 0.0000, 0.1359}, 0.0541}},
          {{{-0.0127, -0.0008, 0.0272}, {0.0000, 0.0000, 0.0428}, 0.0665},
           {{-0.3922, 0.0000, -0.0279}, {-0.3922, 0.0000, 0.0511}, 0.0469},
           {{0.0000, 0.0000, 0.0165}, {-0.3922, 0.0000, 0.0165}, 0.0401}},
          {{{0.0000, 0.0000, 0.0864}, {0.0000, 0.0000, 0.0864}, 0.0505},
           {{0.0000, -0.0346, 0.1092}, {0.0000, 0.0443, 0.1092}, 0.0469}},
          {{{0.0000, 0.0000, 0.0717}, {0.0000, 0.0000, 0.0717}, 0.0506},
           {{0.0000, -0.0443, 0.0947}, {0.0000, 0.0346, 0.0947}, 0.0469}},
          {{{-0.0001, 0.0004, 0.0616}, {0.0006, -0.0033, 0.0615}, 0.0401}}};
}

Shapes PandaShapes() {
  return {{{{-0.0003, -0.0481, -0.1387}, {0.0000, -0.0706, 0.0005}, 0.0596},
           {{-0.0001, -0.0032, -0.1672}, {-0.0006, -0.0265, -0.0025}, 0.0635}},
          {{{0.0005, -0.1682, 0.0019}, {-0.0004, -0.0013, 0.0274}, 0.0627},
           {{0.0000, -0.1425, 0.0443}, {0.0000, 0.0008, 0.0694}, 0.0605}},
          {{{0.0003, 0.0002, -0.0799}, {0.0843, 0.0433, 0.0018}, 0.0692}},
          {{{-0.0809, 0.0844, 0.0005}, {0.0019, -0.0019, 0.0434}, 0.0694}},
          {{{0.0000, 0.0275, -0.0425}, {-0.0021, 0.0319, -0.0030}, 0.0543},
           {{0.0000, 0.0633, -0.0432}, {-0.0005, 0.0651, -0.0013}, 0.0567},
           {{0.0001, 0.0869, -0.0435}, {0.0000, 0.0941, 0.0002}, 0.0524},
           {{0.0004, 0.0070, -0.2285}, {0.0000, 0.0517, -0.0700}, 0.0693}},
          {{{0.0876, -0.0222, 0.0001}, {-0.0007, -0.0013, 0.0096}, 0.0534},
           {{0.0876, 0.0368, 0.0001}, {0.0001, 0.0147, 0.0089}, 0.0536}},
          {{{0.0018, -0.0002, 0.0817}, {0.0090, 0.0095, 0.0839}, 0.0547},
           {{-0.0054, -0.0054, 0.0793}, {0.0132, 0.0132, 0.0795}, 0.0473},
           {{0.0214, 0.0594, 0.0873}, {0.0547, 0.0266, 0.0830}, 0.0309}}};
}

Shapes Iiwa14Shapes() {
  return {{{{0.0000, -0.0004, 0.1865}, {0.0000, -0.0308, 0.3634}, 0.0909}},
          {{{-0.0004, -0.1806, 0.0003}, {-0.0004, -0.0749, 0.0471}, 0.0725},
           {{-0.0004, 0.0007, 0.0355}, {-0.0003, -0.0078, 0.0457}, 0.0930}},
          {{{0.0000, 0.0281, 0.4212}, {0.0000, 0.0281, 0.4212}, 0.0740},
           {{0.0000, 0.0000, 0.2273}, {0.0000, 0.0454, 0.4101}, 0.0718}},
          {{{0.0000, -0.0005, 0.0249}, {0.0000, 0.0120, 0.0463}, 0.0730},
           {{0.0000, 0.1727, 0.0001}, {0.0000, 0.0631, 0.0436}, 0.0692}},
          {{{0.0000, 0.0000, 0.2100}, {-0.0003, -0.0066, 0.2172}, 0.0727},
           {{-0.0002, -0.0063, 0.2579}, {-0.0001, -0.0492, 0.2994}, 0.0649},
           {{-0.0234, -0.0746, 0.3634}, {-0.0164, -0.0911, 0.4321}, 0.0396},
           {{0.0248, -0.0737, 0.3602}, {0.0165, -0.0924, 0.4355}, 0.0393}},
          {{{0.0000, 0.0027, -0.0129}, {0.0000, -0.0328, 0.0000}, 0.0709},
           {{0.0000, 0.0280, 0.0145}, {-0.0002, 0.0219, 0.0193}, 0.0638}},
          {{{0.0000, 0.0000, 0.0875}, {0.0000, 0.0000, 0.0875}, 0.0523}}};
}

constexpr char kBaseNote[] =
    "the base (the link no joint moves) has no collision geometry: no link is checked against "
    "it";

}  // namespace

ChainSpec Ur5() {
  const double pi2 = kPi / 2.0;
  const JointLimits full{-2.0 * kPi, 2.0 * kPi, kPi};
  return Named(ChainFromDh({{0.0, pi2, 0.089159, 0.0, full},
                            {-0.425, 0.0, 0.0, 0.0, full},
                            {-0.39225, 0.0, 0.0, 0.0, full},
                            {0.0, pi2, 0.10915, 0.0, full},
                            {0.0, -pi2, 0.09465, 0.0, full},
                            {0.0, 0.0, 0.0823, 0.0, full}},
                           DhConvention::kStandard),
               "ur5");
}

ChainSpec Ur5WithBody() {
  return WithBody(Ur5(), Ur5Shapes(),
                  {"collision model: capsules around the collision and visual meshes of "
                   "ROS-Industrial's ur_description (universal_robot a7a2c545), at least the "
                   "radii measured in its physical_parameters.yaml",
                   kBaseNote});
}

ChainSpec Panda() {
  const double pi2 = kPi / 2.0;
  // Franka Emika's datasheet: position, velocity (rad/s) and acceleration (rad/s^2) limits.
  return Named(ChainFromDh({{0.0, 0.0, 0.333, 0.0, JointLimits{-2.8973, 2.8973, 2.1750, 15.0}},
                            {0.0, -pi2, 0.0, 0.0, JointLimits{-1.7628, 1.7628, 2.1750, 7.5}},
                            {0.0, pi2, 0.316, 0.0, JointLimits{-2.8973, 2.8973, 2.1750, 10.0}},
                            {0.0825, pi2, 0.0, 0.0, JointLimits{-3.0718, -0.0698, 2.1750, 12.5}},
                            {-0.0825, -pi2, 0.384, 0.0, JointLimits{-2.8973, 2.8973, 2.6100, 15.0}},
                            {0.0, pi2, 0.0, 0.0, JointLimits{-0.0175, 3.7525, 2.6100, 20.0}},
                            {0.088, pi2, 0.0, 0.0, JointLimits{-2.8973, 2.8973, 2.6100, 20.0}}},
                           DhConvention::kModified, AlongZ(0.107)),
               "panda");
}

ChainSpec PandaWithBody() {
  return WithBody(Panda(), PandaShapes(),
                  {"collision model: capsules around the collision and visual meshes of Franka's "
                   "franka_description (franka_ros c11f000c); no hand or tool",
                   kBaseNote});
}

ChainSpec Iiwa14() {
  const double pi2 = kPi / 2.0;
  auto limit = [](double range_deg, double speed_deg) {
    return JointLimits{-Deg(range_deg), Deg(range_deg), Deg(speed_deg)};
  };
  return Named(ChainFromDh({{0.0, -pi2, 0.36, 0.0, limit(170, 85)},
                            {0.0, pi2, 0.0, 0.0, limit(120, 85)},
                            {0.0, pi2, 0.42, 0.0, limit(170, 100)},
                            {0.0, -pi2, 0.0, 0.0, limit(120, 75)},
                            {0.0, -pi2, 0.40, 0.0, limit(170, 130)},
                            {0.0, pi2, 0.0, 0.0, limit(120, 135)},
                            {0.0, 0.0, 0.126, 0.0, limit(175, 135)}},
                           DhConvention::kStandard),
               "iiwa14");
}

ChainSpec Iiwa14WithBody() {
  return WithBody(Iiwa14(), Iiwa14Shapes(),
                  {"collision model: capsules around the collision and visual meshes of the "
                   "community iiwa_description (IFL-CAMP iiwa_stack 44f9d13c; KUKA publishes no "
                   "meshes)",
                   kBaseNote});
}

ChainSpec Irb120() {
  // ABB IRB 120-3/0.58 product specification (3HAC035960): link dimensions 290 / 270 / 70 /
  // 302 / 72 mm, working ranges and axis speeds; joint frames and directions as ABB's controller
  // counts them (the ROS-Industrial description abb_irb120_support uses the same): axis 1 about
  // z, axes 2, 3, 5 about y, axes 4, 6 about x, all zero with the arm upright and the wrist
  // pointing along x. The flange's z points along x (tool0).
  ChainSpec spec;
  spec.name = "irb120";
  struct Axis {
    Eigen::Vector3d origin, axis;
    double lower_deg, upper_deg, speed_deg;
  };
  const Axis axes[] = {{{0, 0, 0}, Eigen::Vector3d::UnitZ(), -165, 165, 250},
                       {{0, 0, 0.290}, Eigen::Vector3d::UnitY(), -110, 110, 250},
                       {{0, 0, 0.270}, Eigen::Vector3d::UnitY(), -110, 70, 250},
                       {{0, 0, 0.070}, Eigen::Vector3d::UnitX(), -160, 160, 320},
                       {{0.302, 0, 0}, Eigen::Vector3d::UnitY(), -120, 120, 320},
                       {{0.072, 0, 0}, Eigen::Vector3d::UnitX(), -400, 400, 420}};
  for (int k = 0; k < 6; ++k) {
    JointSpec joint;
    joint.name = "joint_" + std::to_string(k + 1);
    joint.X_PJ.translation() = axes[k].origin;
    joint.axis = axes[k].axis;
    joint.limits =
        JointLimits{Deg(axes[k].lower_deg), Deg(axes[k].upper_deg), Deg(axes[k].speed_deg)};
    spec.joints.push_back(joint);
  }
  spec.X_FT.linear() = Eigen::AngleAxisd(kPi / 2.0, Eigen::Vector3d::UnitY()).toRotationMatrix();
  return spec;
}

}  // namespace ikd::robot::presets
