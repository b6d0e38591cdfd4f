#include "ikd/robot/presets.h"

#include <cmath>
#include <string>

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
