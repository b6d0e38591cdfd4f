// Industrial-arm scenario generator of the joint-path benchmark (robot_scenarios.h).
#include "robot_scenarios.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <numbers>
#include <random>

#include "ikd/robot/analytic_ik.h"
#include "ikd/robot/first_use.h"
#include "ikd/robot/presets.h"
#include "paths_util.h"
#include "scenarios.h"  // SceneOf

namespace ikd::bench::paths {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kSamples = 201;          // 2 s at 100 Hz
constexpr double kDt = 0.01;           // s
constexpr double kPeriod = 2.0;        // s: the witness's period
constexpr int kMaxDraws = 5000;        // witnesses per scenario before giving up
// -blocking: witnesses given spheres until the plain solve collides (seed 1, 50 a kind: with
// one, it collided in 15 Panda and 14 iiwa14 position scenarios; with 8, in 47 and 40).
constexpr int kBlockingWitnesses = 8;
constexpr double kRateShare = 0.5;     // of the declared velocity and acceleration limits
constexpr double kMinSigma = 0.05;     // m (per rad): least singular value along the witness
constexpr double kMinHeight = 0.02;    // m: joint origins past the shoulder and the TCP above z=0
constexpr double kSafetyMargin = 0.01;  // m: RobotIkOptions' default
constexpr double kWitnessGap = kSafetyMargin + 0.02;  // m: the witness's least clearance
// m: the witness's least clearance from itself: the safety margin alone, as the Panda's and the
// iiwa14's forearm and flange housings are 11-20 mm apart in their working poses
// (docs/preset_geometry.md).
constexpr double kWitnessSelfGap = kSafetyMargin;

uint64_t Mix(uint64_t x) {  // SplitMix64's finalizer, as scenarios.cc
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

RigidTransform FromIsometry(const Eigen::Isometry3d& X) { return {X.linear(), X.translation()}; }

RobotCheckModel CheckModelOf(const robot::ChainSpec& spec) {
  RobotCheckModel model;
  model.X_WB = FromIsometry(spec.X_WB);
  model.X_FT = FromIsometry(spec.X_FT);
  for (const robot::JointSpec& joint : spec.joints) {
    if (joint.type != robot::JointType::kRevolute || !joint.limits) {
      Die(spec.name + ": the checker handles limited revolute joints only");
    }
    model.joints.push_back({FromIsometry(joint.X_PJ), joint.axis, joint.limits->lower,
                            joint.limits->upper, joint.limits->max_velocity,
                            joint.limits->max_acceleration});
  }
  model.radii = spec.link_radii;
  for (const std::vector<robot::LinkShape>& link : spec.link_shapes) {
    model.shapes.emplace_back();
    for (const robot::LinkShape& c : link) model.shapes.back().push_back({c.a, c.b, c.radius});
  }
  // Joint-origin capsules are not the links' shapes: their contacts are not counted.
  if (!model.shapes.empty() && spec.ChecksSelfCollision())
    model.self_pairs = SelfPairs(model, 2000);
  model.safety_margin = kSafetyMargin;
  return model;
}

// The checker's kinematics against the library's, once per arm.
void CrossCheck(const RobotArm& arm) {
  std::mt19937_64 rng(7);
  double worst = 0.0;
  for (int n = 0; n < 200; ++n) {
    Eigen::VectorXd q(arm.model.num_joints());
    for (int j = 0; j < q.size(); ++j) q[j] = Range(rng, arm.model.joints[j].lower, arm.model.joints[j].upper);
    const RobotKinematics fk = ForwardKinematics(arm.model, q);
    const Eigen::Isometry3d X = robot::ToolPose(arm.robot->spec(), q);
    worst = std::max({worst, (fk.tool.p - X.translation()).norm(), (fk.tool.R - X.linear()).norm()});
    const std::vector<Eigen::Isometry3d> frames = robot::LinkPoses(arm.robot->spec(), q);
    if (frames.size() != fk.frames.size())
      Die(std::string(arm.name) + ": link frame count differs");
    for (size_t k = 0; k < frames.size(); ++k) {
      worst = std::max({worst, (frames[k].translation() - fk.frames[k].p).norm(),
                        (frames[k].linear() - fk.frames[k].R).norm()});
    }
    const auto segments = robot::LinkSegments(arm.robot->spec(), q);
    if (segments.size() + 1 != fk.origins.size()) Die(std::string(arm.name) + ": link count differs");
    for (size_t k = 0; k < segments.size(); ++k) {
      worst = std::max({worst, (segments[k].first - fk.origins[k]).norm(),
                        (segments[k].second - fk.origins[k + 1]).norm()});
    }
    worst = std::max(worst, (ToolJacobianOf(arm.model, q) - robot::ToolJacobian(arm.robot->spec(), q))
                                .cwiseAbs().maxCoeff());
  }
  if (!(worst <= 1e-9)) {
    Die(std::string(arm.name) + ": the checker's kinematics differ from the library's by " +
        std::to_string(worst));
  }
}

bool bodies = true, self_collision = false;  // SetBodies

std::unique_ptr<RobotArm> LoadArm(ArmId id) {
  auto arm = std::make_unique<RobotArm>();
  arm->id = id;
  switch (id) {
    case ArmId::kUr5:
      arm->name = "ur5", arm->spec = bodies ? robot::presets::Ur5WithBody() : robot::presets::Ur5();
      arm->ready = (Eigen::VectorXd(6) << 0.0, -1.2, 1.5, -1.8, -1.57, 0.0).finished();
      break;
    case ArmId::kPanda:
      arm->name = "panda", arm->line_down = true;
      arm->spec = bodies ? robot::presets::PandaWithBody() : robot::presets::Panda();
      arm->ready = (Eigen::VectorXd(7) << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785).finished();
      break;
    case ArmId::kIiwa14:
      arm->name = "iiwa14", arm->line_down = true;
      arm->spec = bodies ? robot::presets::Iiwa14WithBody() : robot::presets::Iiwa14();
      arm->ready = (Eigen::VectorXd(7) << 0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0).finished();
      break;
  }
  if (!bodies) {
    arm->spec.link_radii.assign(robot::NumMovingJoints(arm->spec), kLinkRadius);
    arm->spec.check_self_collision = self_collision;
  }
  arm->robot = std::make_unique<robot::Robot>(Unwrap(robot::Robot::Create(arm->spec), "Robot::Create"));
  // What an arm computes once on first use (its seed atlas, allowed-collision matrix and closed
  // form) is built here, as a server keeps it per arm, not in the first timed plan or Track row.
  robot::BuildFirstUseData(*arm->robot);
  arm->model = CheckModelOf(arm->robot->spec());
  CrossCheck(*arm);
  return arm;
}

// One joint of the witness: centre + sum_m amplitude_m sin(2 pi m t / T + phase_m), sampled;
// `ramp` (-blocking kinds) adds a move of 0.6-1.2 rad either way over the first kRampTime,
// smoothstep-shaped: the witness's arm changes its posture early, which a least-motion solve
// from the same start has no reason to copy, so the two part ways.
Eigen::VectorXd DrawJointMotion(std::mt19937_64& rng, const RobotCheckJoint& joint, bool ramp) {
  constexpr double kRampTime = 0.8;            // s
  const double scale = Range(rng, 0.15, 0.6);  // rad
  std::array<double, 3> amplitude{}, phase{};
  for (int m = 0; m < 3; ++m) {
    amplitude[m] = scale * Uniform(rng) / ((m + 1) * (m + 1));
    phase[m] = Range(rng, 0.0, 2 * kPi);
  }
  Eigen::VectorXd f(kSamples);
  for (int k = 0; k < kSamples; ++k) {
    f[k] = 0.0;
    for (int m = 0; m < 3; ++m) f[k] += amplitude[m] * std::sin(2 * kPi * (m + 1) * k * kDt / kPeriod + phase[m]);
  }
  if (ramp) {
    const double move = Range(rng, 0.6, 1.2) * (Uniform(rng) < 0.5 ? -1.0 : 1.0);
    for (int k = 0; k < kSamples; ++k) {
      const double x = std::min(1.0, k * kDt / kRampTime);
      f[k] += move * x * x * (3.0 - 2.0 * x);
    }
  }
  // At most kRateShare of the declared rates (finite differences, as the checker's).
  const Eigen::VectorXd v = (f.tail(kSamples - 1) - f.head(kSamples - 1)) / kDt;
  const Eigen::VectorXd a = (v.tail(kSamples - 2) - v.head(kSamples - 2)) / kDt;
  double shrink = std::min(1.0, kRateShare * joint.max_velocity / v.cwiseAbs().maxCoeff());
  shrink = std::min(shrink, kRateShare * joint.max_acceleration / a.cwiseAbs().maxCoeff());
  f *= shrink;
  // Inside the position limits by a margin, the centre drawn where the motion fits.
  const double margin = std::max(0.1, 0.05 * (joint.upper - joint.lower));
  const double lo = joint.lower + margin, hi = joint.upper - margin;
  const double swing = f.maxCoeff() - f.minCoeff();
  if (swing > 0.9 * (hi - lo)) f *= 0.9 * (hi - lo) / swing;
  const double centre = Range(rng, lo - f.minCoeff(), hi - f.maxCoeff());
  return f.array() + centre;
}

// A witness, or none when it comes near a singularity or below the base.
std::optional<Eigen::MatrixXd> DrawWitness(std::mt19937_64& rng, const RobotCheckModel& model,
                                           bool ramp, double& min_sigma) {
  Eigen::MatrixXd q(kSamples, model.num_joints());
  for (int j = 0; j < model.num_joints(); ++j)
    q.col(j) = DrawJointMotion(rng, model.joints[j], ramp);
  min_sigma = kInf;
  for (int k = 0; k < kSamples; ++k) {
    const Eigen::VectorXd qk = q.row(k).transpose();
    const RobotKinematics fk = ForwardKinematics(model, qk);
    for (size_t i = 2; i < fk.origins.size(); ++i) {
      if (fk.origins[i].z() < kMinHeight) return std::nullopt;
    }
    min_sigma = std::min(min_sigma, SmallestSingularValue(model, qk));
    if (min_sigma < kMinSigma) return std::nullopt;
    if (RobotSelfClearance(model, fk) < kWitnessSelfGap) return std::nullopt;
  }
  return q;
}

double WitnessGap(const RobotCheckModel& model, const std::vector<RobotKinematics>& witness,
                  const CheckCapsule& o) {
  double gap = kInf;
  for (const RobotKinematics& fk : witness) {
    for (int k = 0; k < model.num_joints(); ++k) gap = std::min(gap, RobotLinkClearance(model, fk, k, o));
  }
  return gap;
}

Eigen::Vector3d RandomDirection(std::mt19937_64& rng) {
  const double phi = Range(rng, 0.0, 2 * kPi), z = Range(rng, -1.0, 1.0), rho = std::sqrt(1.0 - z * z);
  return {rho * std::cos(phi), rho * std::sin(phi), z};
}

Eigen::Vector3d PointOnLinks(std::mt19937_64& rng, const std::vector<RobotKinematics>& path) {
  const RobotKinematics& fk = path[Count(rng, 0, static_cast<int>(path.size()) - 1)];
  const int k = Count(rng, 0, static_cast<int>(fk.origins.size()) - 2);
  return fk.origins[k] + Uniform(rng) * (fk.origins[k + 1] - fk.origins[k]);
}

// Distance of a point to the witness's swept link axes.
double SweptDistance(const std::vector<RobotKinematics>& witness, const Eigen::Vector3d& x) {
  double d = kInf;
  for (const RobotKinematics& fk : witness) {
    for (size_t k = 0; k + 1 < fk.origins.size(); ++k) {
      d = std::min(d, PointSegmentDistance(x, fk.origins[k], fk.origins[k + 1]));
    }
  }
  return d;
}

// Centred on the plain solve's links where they are farthest from the witness's (best of 32
// draws), then shifted along a random direction until the witness clears it by the gap.
std::optional<CheckCapsule> NearPlain(std::mt19937_64& rng, const RobotCheckModel& model,
                                      const std::vector<RobotKinematics>& witness,
                                      const std::vector<RobotKinematics>& plain) {
  Eigen::Vector3d centre = Eigen::Vector3d::Zero();
  double farthest = -kInf;
  for (int n = 0; n < 32; ++n) {
    const Eigen::Vector3d x = PointOnLinks(rng, plain);
    const double d = SweptDistance(witness, x);
    if (d > farthest) farthest = d, centre = x;
  }
  const double radius = Range(rng, 0.03, 0.08);
  const Eigen::Vector3d direction = RandomDirection(rng);
  for (int step = 0; step <= 50; ++step) {
    const Eigen::Vector3d c = centre + 0.005 * step * direction;
    const CheckCapsule o{c, c, radius};
    if (WitnessGap(model, witness, o) >= kWitnessGap) return o;
  }
  return std::nullopt;
}

// The fallback: beside a link of the witness, just outside the gap or up to 0.1 m further.
std::optional<CheckCapsule> NearWitness(std::mt19937_64& rng, const RobotCheckModel& model,
                                        const std::vector<RobotKinematics>& witness) {
  const Eigen::Vector3d point = PointOnLinks(rng, witness);
  const double radius = Range(rng, 0.03, 0.08);
  const Eigen::Vector3d c =
      point + (kLinkRadius + kWitnessGap + radius + Range(rng, 0.0, 0.1)) * RandomDirection(rng);
  const CheckCapsule o{c, c, radius};
  if (WitnessGap(model, witness, o) >= kWitnessGap) return o;
  return std::nullopt;
}

std::vector<RobotKinematics> PathKinematics(const RobotCheckModel& model, const Eigen::MatrixXd& q) {
  std::vector<RobotKinematics> path;
  for (int k = 0; k < q.rows(); ++k) path.push_back(ForwardKinematics(model, q.row(k).transpose()));
  return path;
}

void Hash(uint64_t& h, double x) {  // FNV-1a over the bytes
  unsigned char bytes[sizeof x];
  std::memcpy(bytes, &x, sizeof x);
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
}

}  // namespace

void SetBodies(bool with_bodies, bool check_self) {
  bodies = with_bodies;
  self_collision = check_self;
}

std::string LinksDescription() {
  if (bodies) {
    return "the presets' collision models (presets::*WithBody, docs/preset_geometry.md), checked "
           "against each other by the library and by the checker (every pair of links not joined "
           "by a joint that parts somewhere in 2000 random configurations: its own choice, its "
           "own distances)";
  }
  return std::string("5 cm capsules from joint origin to joint origin") +
         (self_collision ? ", checked against each other by the library only" : "");
}

const RobotArm& GetArm(ArmId id) {
  static std::mutex mutex;
  static std::map<ArmId, std::unique_ptr<RobotArm>> arms;
  std::lock_guard<std::mutex> lock(mutex);
  auto& arm = arms[id];
  if (!arm) arm = LoadArm(id);
  return *arm;
}

const std::vector<RobotKind>& RobotKinds() {
  static const std::vector<RobotKind> kinds = [] {
    std::vector<RobotKind> all;
    for (bool obstacles : {false, true}) {
      for (ArmId arm : kArms) {
        for (bool pose : {false, true}) all.push_back({arm, pose, obstacles});
      }
    }
    for (ArmId arm : kArms) {
      for (bool pose : {false, true}) {
        if (arm != ArmId::kUr5 || !pose) all.push_back({arm, pose, true, true});
      }
    }
    for (RobotKind::Self self : {RobotKind::Self::kNearBase, RobotKind::Self::kFolded}) {
      for (ArmId arm : kArms) {
        // The iiwa14's links three joints apart never came within kFoldedGap of each other in
        // 5000 witness draws clear of itself by the margin.
        if (self == RobotKind::Self::kFolded && arm == ArmId::kIiwa14) continue;
        all.push_back({arm, false, false, false, self});
      }
    }
    return all;
  }();
  return kinds;
}

std::string RobotKindName(const RobotKind& kind) {
  const char* arm = kind.arm == ArmId::kUr5 ? "ur5" : kind.arm == ArmId::kPanda ? "panda" : "iiwa14";
  return std::string(arm) + (kind.pose ? "-pose" : "-position") +
         (kind.self == RobotKind::Self::kNearBase ? "-near-base"
          : kind.self == RobotKind::Self::kFolded ? "-folded"
          : kind.blocking                         ? "-blocking"
          : kind.obstacles                        ? "-obstacles"
                                                  : "");
}

std::optional<RobotKind> ParseRobotKind(std::string_view name) {
  for (const RobotKind& kind : RobotKinds()) {
    if (name == RobotKindName(kind)) return kind;
  }
  return std::nullopt;
}

std::vector<robot::RobotIkResult> PlainSolve(const robot::Robot& robot,
                                             const planning::Scene* scene,
                                             const std::vector<robot::ToolTarget>& targets,
                                             const Eigen::VectorXd& q0) {
  robot::RobotIkOptions options;
  const robot::AnalyticIk* closed = robot::AnalyticIkOf(robot);
  if (closed != nullptr && closed->locked_joint() >= 0) options.solver = robot::IkSolver::kNumeric;
  robot::RobotTracker tracker =
      Unwrap(robot::RobotTracker::Create(robot, options, q0, scene), "RobotTracker::Create");
  std::vector<robot::RobotIkResult> results;
  results.reserve(targets.size());
  for (const robot::ToolTarget& target : targets) results.push_back(tracker.Solve(target));
  return results;
}

Eigen::MatrixXd JointRows(const std::vector<robot::RobotIkResult>& results) {
  Eigen::MatrixXd q(static_cast<Eigen::Index>(results.size()), results.empty() ? 0 : results[0].q.size());
  for (size_t k = 0; k < results.size(); ++k) q.row(static_cast<Eigen::Index>(k)) = results[k].q.transpose();
  return q;
}

RobotScenario EmptyRobotScenario(const RobotKind& kind, int index) {
  const RobotArm& arm = GetArm(kind.arm);
  RobotScenario s;
  s.kind = kind;
  s.index = index;
  s.arm = &arm;
  s.model = arm.model;
  s.model.pose = kind.pose;
  return s;
}

namespace {

// A sphere centred on the plain path's link axes where the witness's links are farthest (best
// of 64 points), as large as the witness's gap allows (at most 0.08 m): the plain path runs
// through it. None where no point leaves room for a 0.015 m sphere.
std::optional<CheckCapsule> OnPlain(std::mt19937_64& rng, const RobotCheckModel& model,
                                    const std::vector<RobotKinematics>& witness,
                                    const std::vector<RobotKinematics>& plain) {
  CheckCapsule best;
  double room = -kInf;
  for (int n = 0; n < 64; ++n) {
    const Eigen::Vector3d x = PointOnLinks(rng, plain);
    const double gap = WitnessGap(model, witness, {x, x, 0.0}) - kWitnessGap;
    if (gap > room) room = gap, best = {x, x, std::min(gap, 0.08)};
  }
  if (room < 0.015) return std::nullopt;
  return best;
}

// -blocking kinds: up to kMaxBlocking spheres, each on the plain per-sample solve's links
// (given the spheres so far: OnPlain, else NearPlain), until that solve collides;
// s.plain_collides says whether it does in the end.
void PlaceBlocking(std::mt19937_64& rng, const std::string& name, RobotScenario& s,
                   const std::vector<RobotKinematics>& witness) {
  constexpr int kMaxBlocking = 6;
  for (int i = 0; i <= kMaxBlocking; ++i) {
    s.scene = SceneOf(s.model.obstacles);
    const Eigen::MatrixXd plain_q = JointRows(PlainSolve(*s.arm->robot, &s.scene, s.targets, s.q0));
    s.plain_collides = CheckRobotPath(s.model, plain_q, s.request, kDt).collided;
    if (s.plain_collides || i == kMaxBlocking) return;
    const std::vector<RobotKinematics> plain = PathKinematics(s.model, plain_q);
    // Its motion between samples too (the servo's linear joint motion): where it jumps between
    // branches it sweeps far from the witness.
    std::vector<RobotKinematics> swept;
    for (Eigen::Index k = 1; k < plain_q.rows(); ++k) {
      for (int sub = 0; sub < 8; ++sub) {
        const Eigen::VectorXd q =
            (plain_q.row(k - 1) + (sub / 8.0) * (plain_q.row(k) - plain_q.row(k - 1))).transpose();
        swept.push_back(ForwardKinematics(s.model, q));
      }
    }
    std::optional<CheckCapsule> o = OnPlain(rng, s.model, witness, swept);
    for (int attempt = 0; attempt < 10 && !o; ++attempt)
      o = NearPlain(rng, s.model, witness, plain);
    for (int attempt = 0; attempt < 500 && !o; ++attempt) o = NearWitness(rng, s.model, witness);
    if (!o) Die(name + ": no room for an obstacle beside the witness");
    s.model.obstacles.push_back(*o);
    s.obstacles_near_plain += WitnessGap(s.model, swept, *o) < 0.0;
  }
}

// The scenario's witness and the request it makes (its TCP path); no obstacles yet. Returns
// the witness's kinematics.
std::vector<RobotKinematics> SetWitness(RobotScenario& s, Eigen::MatrixXd witness_q) {
  s.witness_q = std::move(witness_q);
  s.q0 = s.witness_q.row(0).transpose();
  s.model.obstacles.clear();
  s.obstacles_near_plain = 0;
  s.times.clear(), s.request.clear(), s.targets.clear();
  std::vector<RobotKinematics> wfk = PathKinematics(s.model, s.witness_q);
  for (int k = 0; k < kSamples; ++k) {
    s.times.push_back(k * kDt);
    s.request.push_back({wfk[k].tool.p, wfk[k].tool.R});
    s.targets.push_back(
        s.kind.pose ? Unwrap(robot::ToolTarget::Pose(
                                 wfk[k].tool.p, Eigen::Quaterniond(wfk[k].tool.R).normalized()),
                             "ToolTarget::Pose")
                    : Unwrap(robot::ToolTarget::Position(wfk[k].tool.p), "ToolTarget::Position"));
  }
  s.witness = WeightedRates(s.model, s.witness_q, kDt);
  return wfk;
}

}  // namespace

// Whether a witness does what its -near-base or -folded kind asks (always for other kinds).
bool ComesCloseToItself(const RobotCheckModel& model, RobotKind::Self self,
                        const Eigen::MatrixXd& q) {
  if (self == RobotKind::Self::kNone) return true;
  RobotCheckModel distant = model;  // -folded: the pairs at least three joints apart
  std::erase_if(distant.self_pairs, [](const auto& p) { return p.second - p.first < 3; });
  for (Eigen::Index k = 0; k < q.rows(); ++k) {
    const RobotKinematics fk = ForwardKinematics(model, q.row(k).transpose());
    if (self == RobotKind::Self::kNearBase) {
      const Eigen::Vector3d p = model.X_WB.R.transpose() * (fk.tool.p - model.X_WB.p);
      if (p.head<2>().norm() < kNearBase) return true;
    } else if (RobotSelfClearance(distant, fk) < kFoldedGap) {
      return true;
    }
  }
  return false;
}

RobotScenario MakeRobotScenario(const RobotKind& kind, int index, uint64_t seed) {
  const std::string name = RobotKindName(kind) + " #" + std::to_string(index);
  const uint64_t code = 0x100 + 0x40 * uint64_t(kind.self) + 0x10 * kind.blocking +
                        4 * uint64_t(kind.arm) + 2 * kind.pose + kind.obstacles;
  std::mt19937_64 rng(Mix(Mix(seed) ^ (code << 32) ^ uint64_t(index)));
  RobotScenario s = EmptyRobotScenario(kind, index);
  const RobotArm& arm = *s.arm;
  std::vector<RobotKinematics> wfk;
  // -blocking kinds: a witness whose plain solve the spheres cannot make collide is drawn
  // again, up to kBlockingWitnesses in all, so that the set tells a planner from that solve.
  for (int blocking_try = 1;; ++blocking_try) {
    std::optional<Eigen::MatrixXd> witness;
    while (!witness) {
      if (++s.draws > kMaxDraws)
        Die(name + ": no witness clear of singularities in " + std::to_string(kMaxDraws) +
            " draws");
      witness = DrawWitness(rng, s.model, kind.blocking, s.witness_min_sigma);
      if (witness && !ComesCloseToItself(s.model, kind.self, *witness)) witness.reset();
    }
    wfk = SetWitness(s, *std::move(witness));
    if (!kind.blocking) break;
    PlaceBlocking(rng, name, s, wfk);
    if (s.plain_collides || blocking_try == kBlockingWitnesses) break;
  }
  if (kind.obstacles && !kind.blocking) {
    const Eigen::MatrixXd plain_q = JointRows(PlainSolve(*arm.robot, nullptr, s.targets, s.q0));
    const std::vector<RobotKinematics> plain = PathKinematics(s.model, plain_q);
    const int count = Count(rng, 3, 6);
    for (int i = 0; i < count; ++i) {
      std::optional<CheckCapsule> o;
      for (int attempt = 0; attempt < 10 && !o; ++attempt) o = NearPlain(rng, s.model, wfk, plain);
      for (int attempt = 0; attempt < 500 && !o; ++attempt) o = NearWitness(rng, s.model, wfk);
      if (!o) Die(name + ": no room for an obstacle beside the witness");
      s.model.obstacles.push_back(*o);
      s.obstacles_near_plain += WitnessGap(s.model, plain, *o) < 0.0;  // the plain path hits it
    }
    s.scene = SceneOf(s.model.obstacles);
    s.plain_collides = CheckRobotPath(s.model, plain_q, s.request, kDt).collided;
  }
  // Generator and checker against each other.
  const RobotPathMeasures m = CheckRobotPath(s.model, s.witness_q, s.request, kDt);
  if (m.collided || m.margin_samples > 0 || m.any_limit_violation() || m.max_position_error > 1e-12 ||
      m.max_rotation_error > 1e-12 || m.reached != kSamples ||
      m.rates.speed > kRateShare * (1 + 1e-9)) {
    Die(name + ": the checker rejects the witness");
  }
  uint64_t h = 0xcbf29ce484222325ull;
  for (Eigen::Index i = 0; i < s.witness_q.size(); ++i) Hash(h, s.witness_q.data()[i]);
  for (const CheckCapsule& o : s.model.obstacles) {
    for (int i = 0; i < 3; ++i) Hash(h, o.a[i]);
    Hash(h, o.radius);
  }
  s.fingerprint = h;
  return s;
}

}  // namespace ikd::bench::paths
