// bench/paths' industrial-arm scenarios written out for the robot path tests: a smooth joint
// motion (the witness: joint j = c_j + sum_m a_jm sin(2 pi m t / 2 s + phi_jm), m = 1..3, at
// 100 Hz over 2 s; link capsules of radius 0.05 m) whose tool positions are the request, and
// balls (x, y, z, radius) the witness clears. The checks use the tests' own forward kinematics
// and distances, not the library's.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <Eigen/Geometry>

#include "absl/status/statusor.h"
#include "ikd/planning/scene.h"
#include "ikd/robot/presets.h"
#include "ikd/robot/robot.h"
#include "ikd/robot/robot_ik.h"
#include "solver/robot/robot_cases.h"

namespace ikd::robot {

// The test's own clearance of a link capsule (joint k's origin to joint k+1's, the last to the
// tool) from a ball: point-to-segment distance less both radii.
inline double BallClearance(const ChainSpec& spec, const Eigen::VectorXd& q, int link,
                            const Eigen::Vector3d& centre, double ball_radius, double link_radius) {
  std::vector<Eigen::Vector3d> origins;
  Eigen::Isometry3d X = spec.X_WB;
  for (size_t k = 0; k < spec.joints.size(); ++k) {
    X = X * spec.joints[k].X_PJ;
    origins.push_back(X.translation());
    X = X * Eigen::AngleAxisd(q[k], spec.joints[k].axis.normalized());
  }
  origins.push_back((X * spec.X_FT).translation());
  const Eigen::Vector3d a = origins[link], b = origins[link + 1];
  const double t = std::clamp((centre - a).dot(b - a) / (b - a).squaredNorm(), 0.0, 1.0);
  return (a + t * (b - a) - centre).norm() - ball_radius - link_radius;
}

struct WitnessCase {
  std::vector<std::array<double, 7>> witness;  // per joint: c, a_1..a_3, phi_1..phi_3
  std::vector<Eigen::Vector4d> balls;
  ChainSpec spec = presets::Ur5();
};

// bench/paths seed 12 ur5-position #45: free space, the tool close to the base axis.
inline const WitnessCase kNearTheBaseAxis{
    {{1.4506926532682192, 0.191322507468668, 0.11425437142299173, 0.012888821968038807,
      4.6671412809542634, 3.5053087187722864, 3.1700432064909632},
     {-2.0853295901340645, 0.23670849675262465, 0.058605527035593102, 0.0093631002381628844,
      3.4198724871578841, 6.1081421606190114, 3.4939439826744643},
     {-4.7333221094279594, 0.1374201266927208, 0.038111478804006636, 0.023307047031987563,
      4.7566958403827968, 2.7574516092487986, 1.284320075145083},
     {-3.3404459672896185, 0.090126745205136888, 0.03827996117841586, 0.019467413327893507,
      0.075734275247887325, 4.0350501359315585, 1.5061950026467514},
     {-5.34696810732384, 0.044717605719535827, 0.043236262592243419, 0.028896030520344711,
      4.8516760905057943, 2.4806283425353706, 1.7159636018113724},
     {2.3365301702023347, 0.022797080067510252, 0.034682106335466895, 0.038349534920330615,
      6.1631206692679026, 0.083608445324655861, 5.4152040289217496}},
    {}};

// bench/paths seed 17 ur5-position-obstacles #3: four balls beside the witness.
inline const WitnessCase kAmongBalls{
    {{2.8347589137727809, 0.44957939170074906, 0.021329199338076886, 0.0096858202838470357,
      3.1295764363720586, 1.1236185727647938, 3.9640501669387387},
     {-1.4867793614658513, 0.27407119104990568, 0.081110762373916248, 0.0028568037680816397,
      1.131464859389437, 3.50695963433256, 0.47958637509166935},
     {-0.78581000519161126, 0.14428588738734627, 0.0030163761225404043, 0.039046923181742105,
      1.6553047370423826, 3.907375678483668, 1.7534020080321342},
     {-1.0964359725022979, 0.42575718131815443, 0.0069115487825828926, 0.032438507945497616,
      1.6515670630180335, 3.6628599531412527, 0.18743823545346397},
     {5.3054030206190745, 0.10344839434509676, 0.036177943356000997, 0.01016766858958635,
      1.8073362401227357, 4.6256453833486519, 2.2099030194345173},
     {-4.2298082794294851, 0.030716579436791916, 0.005613095182944507, 0.013639577130700194,
      1.1720519802649396, 3.3463952589492449, 3.7626847652711368}},
    {{0.076740917114823629, -0.13196750644776681, 0.93381482688053918, 0.077202124986575638},
     {0.25137512309959154, 0.045938850260588374, 0.82782866176521996, 0.060300395375530128},
     {0.19870279430180038, -0.010126910293431074, 1.0144427136199641, 0.075622287655347065},
     {-0.28997608809425801, 0.40201338578149703, 0.70888445131946065, 0.044794997603669402}}};

// bench/paths seed 3 ur5-position-obstacles #21 (the UR5's joint-origin capsules of radius
// 0.05 m): tracked forward from the witness's start, the links meet a ball.
inline const WitnessCase kForwardMeetsABall{
    {{-3.2470106888520762, 0.13050277990595649, 0.061479621991732236, 0.044083542016472813,
      4.6054289269331443, 1.6416652102621117, 3.9898585259611963},
     {-2.421019555033328, 0.31976561843957818, 0.072968086325117767, 0.034722612833828444,
      1.8431471015250107, 5.9415655335152939, 6.1115039561364615},
     {-5.2472782648804648, 0.29810101243772064, 0.075766784400945489, 0.040213706552852529,
      5.3153472210212165, 5.862630242218863, 4.1528145460050609},
     {1.8581372804161385, 0.031611599024953946, 0.023652127490683288, 0.012646428730925174,
      1.5644142895272921, 4.2305686287092623, 5.0763052931250883},
     {-1.2125249204086477, 0.44950222242774762, 0.03535920733729378, 0.041469973764521349,
      5.9176080698992335, 5.5900148181538105, 2.6620161194952279},
     {-4.5151997056349735, 0.17697148238567983, 0.038864902825819531, 0.00062797232514365177,
      1.588493011446011, 0.22358482385088826, 1.667463837024727}},
    {{-0.33935276330000114, -0.069277102078556169, 0.81871963388793068, 0.058453456903591897},
     {-0.10866316668077586, -0.10051820718818122, 0.8034290066113523, 0.03896100659330784},
     {-0.19147417284542548, -0.096176386560259786, 0.76619433876250009, 0.04891064151197367},
     {-0.37594829388364037, -0.015891295025286939, 0.80420661356528456, 0.050300378631964529},
     {-0.15410015350450471, 0.19754557710061132, 0.45096943300981157, 0.076930102195169769}}};

// A WitnessCase made ready: the arm with its link radii, the scene, the witness sampled, its
// tool positions as position targets.
struct WitnessScenario {
  ChainSpec spec;
  std::optional<Robot> robot;
  std::optional<planning::Scene> scene;
  std::vector<Eigen::Vector4d> balls;
  std::vector<Eigen::VectorXd> witness;
  std::vector<ToolTarget> targets;
  std::vector<double> times;

  // The least clearance of q's link capsules from the balls (+inf without balls).
  double Clearance(const Eigen::VectorXd& q) const {
    double least = std::numeric_limits<double>::infinity();
    for (int link = 0; link < q.size(); ++link) {
      for (const Eigen::Vector4d& b : balls) {
        least = std::min(least, BallClearance(spec, q, link, b.head<3>(), b[3], 0.05));
      }
    }
    return least;
  }
};

// The balls (x, y, z, radius) as a scene, named o0, o1, ...
inline absl::StatusOr<planning::Scene> BallScene(const std::vector<Eigen::Vector4d>& balls) {
  std::vector<planning::Obstacle> obstacles;
  for (const Eigen::Vector4d& b : balls) {
    obstacles.push_back(
        {"o" + std::to_string(obstacles.size()), planning::Sphere{b.head<3>(), b[3]}});
  }
  return planning::Scene::Create(obstacles);
}

inline WitnessScenario MakeWitnessScenario(const WitnessCase& c) {
  WitnessScenario s;
  s.spec = c.spec;
  s.balls = c.balls;
  const int n = static_cast<int>(c.witness.size());
  EXPECT_EQ(n, NumMovingJoints(s.spec));
  s.spec.link_radii.assign(n, 0.05);
  auto robot = Robot::Create(s.spec);
  EXPECT_TRUE(robot.ok()) << robot.status();
  if (robot.ok()) s.robot.emplace(*std::move(robot));
  auto scene = BallScene(c.balls);
  EXPECT_TRUE(scene.ok()) << scene.status();
  if (scene.ok()) s.scene.emplace(*std::move(scene));
  for (int k = 0; k <= 200; ++k) {
    const double t = 0.01 * k;
    Eigen::VectorXd q(n);
    for (int j = 0; j < n; ++j) {
      q[j] = c.witness[j][0];
      for (int m = 0; m < 3; ++m) {
        q[j] +=
            c.witness[j][1 + m] * std::sin(std::numbers::pi * (m + 1) * t + c.witness[j][4 + m]);
      }
    }
    s.witness.push_back(q);
    s.targets.push_back(*ToolTarget::Position(ToolFrame(s.spec, q).translation()));
    s.times.push_back(t);
  }
  return s;
}

// The fastest joint of a path over its declared velocity limit (differences between samples).
inline double TopSpeedRatio(const ChainSpec& spec, const std::vector<Eigen::VectorXd>& q,
                            const std::vector<double>& times) {
  double top = 0.0;
  for (size_t k = 1; k < q.size(); ++k) {
    for (int j = 0; j < q[k].size(); ++j) {
      const double speed = std::abs(q[k][j] - q[k - 1][j]) / (times[k] - times[k - 1]);
      top = std::max(top, speed / spec.joints[j].limits->max_velocity);
    }
  }
  return top;
}

inline std::vector<Eigen::VectorXd> JointValues(const std::vector<RobotIkResult>& samples) {
  std::vector<Eigen::VectorXd> q;
  for (const RobotIkResult& sample : samples) q.push_back(sample.q);
  return q;
}

// Every sample of `samples` clear of the balls, its tool on the witness's within 1e-9 m and
// inside the joint limits; with `rates`, also within the velocity and acceleration limits.
inline void ExpectOnTheWitnessToolPath(const WitnessScenario& s,
                                       const std::vector<RobotIkResult>& samples, bool rates) {
  ASSERT_EQ(samples.size(), s.times.size());
  for (size_t k = 0; k < samples.size(); ++k) {
    const Eigen::VectorXd& q = samples[k].q;
    EXPECT_GE(s.Clearance(q), 0.0) << "sample " << k;
    EXPECT_LT(
        (ToolFrame(s.spec, q).translation() - ToolFrame(s.spec, s.witness[k]).translation()).norm(),
        1e-9)
        << "sample " << k;
    for (int j = 0; j < q.size(); ++j) {
      const JointLimits& limits = *s.spec.joints[j].limits;
      EXPECT_GE(q[j], limits.lower) << k << " " << j;
      EXPECT_LE(q[j], limits.upper) << k << " " << j;
      if (!rates || k == 0) continue;
      const double dt = s.times[k] - s.times[k - 1];
      const double speed = std::abs(q[j] - samples[k - 1].q[j]) / dt;
      EXPECT_LE(speed, limits.max_velocity * (1 + 1e-9)) << k << " " << j;
      if (k + 1 == s.times.size()) continue;
      const double acceleration =
          std::abs(samples[k + 1].q[j] - 2.0 * q[j] + samples[k - 1].q[j]) / (dt * dt);
      EXPECT_LE(acceleration, limits.max_acceleration * (1 + 1e-6)) << k << " " << j;
    }
  }
}

}  // namespace ikd::robot
