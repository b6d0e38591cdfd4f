// The ladder start of PlanRobotPath (solver/robot/path_ladder.h), before the optimizer: on
// bench/paths scenarios where the tracker winds a UR5 into a posture whose base must spin, the
// raw ladder path follows the tool path within the speed limits, clear of the balls; checked
// with the tests' own forward kinematics and distances (robot_witness.h).
#include "../solver/robot/path_ladder.h"

#include <cstring>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "ikd/robot/robot_ik.h"
#include "solver/robot_witness.h"

namespace ikd::robot {
namespace {

// ur5-position #45 (seed 12): free space, the tool close to the base axis.
const WitnessCase kNearTheBaseAxis{
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

// ur5-position-obstacles #3 (seed 17): four balls beside the witness.
const WitnessCase kAmongBalls{
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
     {-0.28997608809425801, 0.40201338578149703, 0.70888445131946065,
      0.044794997603669402}}};

std::optional<std::vector<RobotIkResult>> Ladder(const WitnessScenario& s,
                                                 const std::vector<ToolTarget>& targets,
                                                 const RobotIkOptions& options = {}) {
  RobotIkResult first;
  first.q = s.witness.front();
  first.status = RobotIkStatus::kReached;
  auto ladder =
      internal::LadderRobotPath(*s.robot, &*s.scene, targets, s.times, options, first, {});
  EXPECT_TRUE(ladder.ok()) << ladder.status();
  return ladder.ok() ? *ladder : std::nullopt;
}

// The tracker's path from the witness's start: each sample a step of the least joint motion.
std::vector<Eigen::VectorXd> TrackedPath(const WitnessScenario& s) {
  auto tracker = RobotTracker::Create(*s.robot, RobotIkOptions{}, s.witness.front(), &*s.scene);
  EXPECT_TRUE(tracker.ok()) << tracker.status();
  std::vector<Eigen::VectorXd> q{s.witness.front()};
  for (size_t k = 1; k < s.targets.size(); ++k) {
    q.push_back(tracker->StepTo(s.targets[k], s.times[k] - s.times[k - 1]).q);
  }
  return q;
}

TEST(RobotPathLadder, FollowsTheToolPathWhereTheTrackerWindsTheBaseRound) {
  const WitnessScenario s = MakeWitnessScenario(kNearTheBaseAxis);
  ASSERT_TRUE(s.robot && s.scene);
  const auto ladder = Ladder(s, s.targets);
  ASSERT_TRUE(ladder.has_value());
  ExpectOnTheWitnessToolPath(s, *ladder, /*rates=*/false);
  EXPECT_EQ((*ladder)[0].q, s.witness.front());  // the first sample where the arm stands
  // The witness needs at most half the limits; the tracker more than twice them.
  EXPECT_LE(TopSpeedRatio(s.spec, s.witness, s.times), 0.5 + 1e-9);
  EXPECT_GT(TopSpeedRatio(s.spec, TrackedPath(s), s.times), 2.0);
  EXPECT_LT(TopSpeedRatio(s.spec, JointValues(*ladder), s.times), 1.0);
}

TEST(RobotPathLadder, EveryRungIsClearByTheMargin) {
  const WitnessScenario s = MakeWitnessScenario(kAmongBalls);
  ASSERT_TRUE(s.robot && s.scene);
  const RobotIkOptions options;
  const auto ladder = Ladder(s, s.targets, options);
  ASSERT_TRUE(ladder.has_value());
  ExpectOnTheWitnessToolPath(s, *ladder, /*rates=*/false);
  for (size_t k = 0; k < ladder->size(); k += 5) {
    EXPECT_GE(s.Clearance((*ladder)[k].q), options.safety_margin - 1e-12) << "rung at " << k;
  }
  EXPECT_GE(s.Clearance(ladder->back().q), options.safety_margin - 1e-12);
}

TEST(RobotPathLadder, SameSeedSameBytes) {
  const WitnessScenario s = MakeWitnessScenario(kAmongBalls);
  ASSERT_TRUE(s.robot && s.scene);
  const auto a = Ladder(s, s.targets), b = Ladder(s, s.targets);
  ASSERT_TRUE(a.has_value() && b.has_value());
  for (size_t k = 0; k < a->size(); ++k) {
    ASSERT_EQ(0, std::memcmp((*a)[k].q.data(), (*b)[k].q.data(), sizeof(double) * (*a)[k].q.size()))
        << k;
  }
}

// A UR5 holding full poses has no redundancy to search: the ladder leaves the path alone.
TEST(RobotPathLadder, NoRedundancyNoLadder) {
  const WitnessScenario s = MakeWitnessScenario(kNearTheBaseAxis);
  ASSERT_TRUE(s.robot && s.scene);
  std::vector<ToolTarget> poses;
  for (const Eigen::VectorXd& q : s.witness) {
    const Eigen::Isometry3d X = ToolFrame(s.spec, q);
    poses.push_back(*ToolTarget::Pose(X.translation(), Eigen::Quaterniond(X.linear())));
  }
  EXPECT_FALSE(Ladder(s, poses).has_value());
}

TEST(RobotPathLadder, StopCancels) {
  const WitnessScenario s = MakeWitnessScenario(kNearTheBaseAxis);
  ASSERT_TRUE(s.robot && s.scene);
  RobotIkResult first;
  first.q = s.witness.front();
  int asked = 0;
  auto ladder = internal::LadderRobotPath(*s.robot, &*s.scene, s.targets, s.times, RobotIkOptions{},
                                          first, [&] { return ++asked > 3; });
  EXPECT_EQ(ladder.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(asked, 4);
}

}  // namespace
}  // namespace ikd::robot
