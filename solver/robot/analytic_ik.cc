#include "ikd/robot/analytic_ik.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <span>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "robot/analytic_families.h"
#include "robot/analytic_family_check.h"
#include "robot/subproblems.h"

namespace ikd::robot {
namespace {

using internal::Arm6;
using internal::CheckFamily;
using internal::Fit;
using internal::Line;
using internal::RawSolution;
constexpr double kTwoPi = 2.0 * std::numbers::pi;
constexpr double kInf = std::numeric_limits<double>::infinity();
// Below this error (m, rad) a branch is left as the decomposition gave it: round-off (a tenth
// of the default tolerance).
constexpr double kPolishBelow = 1e-11;
// Above it the branch misses its pose (a least-squares answer: out of reach), and no Newton
// step is spent on it; the geometry tolerance's own errors stay far below.
constexpr double kPolishAbove = 1e-4;
constexpr int kPolishSteps = 4;
// rad: a joint value this far past a bound is taken as on it (round-off of the decomposition).
constexpr double kTurnSlack = 1e-12;

constexpr AnalyticFamily kFamilies[] = {AnalyticFamily::kThreeParallel,
                                        AnalyticFamily::kSphericalWristElbow,
                                        AnalyticFamily::kSphericalWristShoulder};

Eigen::Isometry3d ScrewMotion(const Eigen::Vector3d& h, const Eigen::Vector3d& o, double q) {
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  X.linear() = internal::Rot(h, q);
  X.translation() = o - X.linear() * o;
  return X;
}

}  // namespace

const char* AnalyticFamilyName(AnalyticFamily family) {
  switch (family) {
    case AnalyticFamily::kThreeParallel:
      return "three parallel axes";
    case AnalyticFamily::kSphericalWristElbow:
      return "spherical wrist, parallel elbow";
    case AnalyticFamily::kSphericalWristShoulder:
      return "spherical wrist, intersecting shoulder";
  }
  return "unknown";
}

absl::Status AnalyticOptions::Validate() const {
  if (!(geometry_tolerance > 0.0) || !(geometry_tolerance <= 1e-2)) {
    return absl::InvalidArgumentError(
        absl::StrCat("geometry_tolerance must be in (0, 0.01], got ", geometry_tolerance));
  }
  if (!(tolerance > 0.0) || !std::isfinite(tolerance)) {
    return absl::InvalidArgumentError(
        absl::StrCat("tolerance must be finite and > 0, got ", tolerance));
  }
  if (locked_joint < -1) {
    return absl::InvalidArgumentError(
        absl::StrCat("locked_joint must be -1 (any) or a joint index, got ", locked_joint));
  }
  return absl::OkStatus();
}

absl::StatusOr<AnalyticIk> AnalyticIk::Create(const ChainSpec& spec,
                                              const AnalyticOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  const ChainSpec merged = MergeFixedJoints(spec);
  const int n = static_cast<int>(merged.joints.size());
  for (int k = 0; k < n; ++k) {
    if (merged.joints[k].type != JointType::kRevolute) {
      return absl::InvalidArgumentError(absl::StrCat("joints[", k, "] (", merged.joints[k].name,
                                                     ") is not revolute: the closed forms are "
                                                     "for revolute arms"));
    }
  }
  if (n != 6 && n != 7) {
    return absl::InvalidArgumentError(
        absl::StrCat("a closed form needs 6 revolute joints (7 with one locked), got ", n));
  }
  if (options.locked_joint >= 0 && (n == 6 || options.locked_joint >= n)) {
    return absl::InvalidArgumentError(
        absl::StrCat("locked_joint must be -1 for a 6-joint arm and < 7 for a 7-joint one, got ",
                     options.locked_joint, " with ", n, " joints"));
  }
  AnalyticIk ik;
  ik.options_ = options;
  Eigen::Isometry3d X = merged.X_WB;
  for (const JointSpec& joint : merged.joints) {
    X = X * joint.X_PJ;
    ik.h_.push_back((X.linear() * joint.axis).normalized());
    ik.origin_.push_back(X.translation());
    ik.limits_.push_back(joint.limits.value_or(JointLimits{-kInf, kInf}));
  }
  ik.home_ = X * merged.X_FT;
  for (int j = 0; j < n; ++j) {
    ik.link_.push_back((j + 1 < n ? ik.origin_[j + 1] : ik.home_.translation()) - ik.origin_[j]);
  }
  ik.home_rotation_ = Eigen::Quaterniond(ik.home_.linear()).normalized();
  std::vector<int> locks = {-1};
  if (n == 7) {
    locks = options.locked_joint >= 0 ? std::vector<int>{options.locked_joint}
                                      : std::vector<int>{2, 6, 0, 1, 3, 4, 5};
  }
  std::vector<std::string> failures;
  for (int lock : locks) {
    std::array<int, 6> free{};
    for (int j = 0, k = 0; j < n; ++j) {
      if (j != lock) free[k++] = j;
    }
    for (bool reversed : {false, true}) {
      std::array<Line, 6> axes;
      std::array<int, 6> numbers{};
      for (int k = 0; k < 6; ++k) {
        const int j = free[reversed ? 5 - k : k];
        axes[k] = {ik.origin_[j], ik.h_[j]};
        numbers[k] = j + 1;
      }
      for (AnalyticFamily family : kFamilies) {
        const Fit fit = CheckFamily(family, axes, numbers, lock + 1, options.geometry_tolerance);
        if (!fit.ok) {
          failures.push_back(
              absl::StrCat(lock >= 0 ? absl::StrCat("joint ", lock + 1, " locked, ") : "",
                           reversed ? "from the tool back, " : "", AnalyticFamilyName(family), ": ",
                           fit.failure));
          continue;
        }
        ik.family_ = family;
        ik.reversed_ = reversed;
        ik.locked_ = lock;
        ik.free_ = free;
        ik.sign_ = fit.sign;
        ik.geometry_error_ = fit.error;
        ik.point_ = ik.origin_;
        for (int k = 0; k < 6; ++k) ik.point_[free[reversed ? 5 - k : k]] = fit.c[k];
        return ik;
      }
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("the arm fits no closed-form family: ", absl::StrJoin(failures, "; ")));
}

// Joint j's turn by q[j] as a quaternion, its half angle's cosine and sine memoized.
Eigen::Quaterniond AnalyticIk::HalfTurn(int j, double value, HalfAngles& memo) const {
  if (!memo.known[j] || memo.q[j] != value) {
    const double half = 0.5 * value;
    const double c = std::cos(half), s = std::sin(half);  // locals: one sincos call
    memo.q[j] = value;
    memo.cos[j] = c;
    memo.sin[j] = s;
    memo.known[j] = true;
  }
  const Eigen::Vector3d v = memo.sin[j] * h_[j];
  return Eigen::Quaterniond(memo.cos[j], v.x(), v.y(), v.z());
}

AnalyticIk::ToolQuaternion AnalyticIk::ToolQuaternionAt(const Eigen::Ref<const Eigen::VectorXd>& q,
                                                        HalfAngles& memo) const {
  // X_j = X_{j-1} [R_j, o_j - R_j o_j] telescopes: the translation is o_0 plus each link vector
  // (origin to origin, the last to the tool) turned by the rotations up to its joint.
  Eigen::Quaterniond Q = Eigen::Quaterniond::Identity();
  Eigen::Vector3d p = origin_.front();
  for (int j = 0; j < num_joints(); ++j) {
    Q = Q * HalfTurn(j, q[j], memo);
    p += Q * link_[j];
  }
  return {Q * home_rotation_, p};
}

AnalyticIk::ToolJacobianMatrix AnalyticIk::JacobianAt(const Eigen::Ref<const Eigen::VectorXd>& q,
                                                      HalfAngles& memo, const Eigen::Vector3d& tool,
                                                      bool with_locked) const {
  ToolJacobianMatrix J(6, with_locked || locked_ < 0 ? num_joints() : num_joints() - 1);
  // As ToolQuaternionAt: axis j is h_j turned by the joints before it, through origin_j as the
  // link vectors before it carry it.
  Eigen::Quaterniond Q = Eigen::Quaterniond::Identity();
  Eigen::Vector3d p = origin_.front();
  for (int j = 0, col = 0; j < num_joints(); ++j) {
    if (with_locked || j != locked_) {
      const Eigen::Vector3d w = Q * h_[j];
      J.block<3, 1>(0, col) = w.cross(tool - p);
      J.block<3, 1>(3, col) = w;
      ++col;
    }
    Q = Q * HalfTurn(j, q[j], memo);
    p += Q * link_[j];
  }
  return J;
}

// Newton steps on the exact chain (the locked joint held) until the pose error is round-off;
// returns the errors (m, rad) of the final q.
std::pair<double, double> AnalyticIk::Polish(const Eigen::Isometry3d& X_WT,
                                             const Eigen::Quaterniond& target_rotation,
                                             HalfAngles& memo,
                                             Eigen::Ref<Eigen::VectorXd> q) const {
  for (int step = 0;; ++step) {
    const ToolQuaternion tool = ToolQuaternionAt(q, memo);
    const Eigen::Vector3d dp = X_WT.translation() - tool.translation;
    // The angle of the rotation between them, 2 atan2(|e.vec|, |e.w|): 2 |e.vec| to within
    // 1e-8 of itself below 1e-4.
    const Eigen::Quaterniond e = target_rotation * tool.rotation.conjugate();
    const double half_sine = e.vec().norm();
    const double rotation_error =
        half_sine < 1e-4 ? 2.0 * half_sine : 2.0 * std::atan2(half_sine, std::abs(e.w()));
    const double position_error = dp.norm();
    const double error = std::max(position_error, rotation_error);
    if (error <= kPolishBelow || error > kPolishAbove || step == kPolishSteps) {
      return {position_error, rotation_error};
    }
    // The rotation vector taking the tool's orientation to the target's (e's shorter way).
    const Eigen::Vector3d dr =
        half_sine > 0.0
            ? Eigen::Vector3d((e.w() < 0.0 ? -1.0 : 1.0) * rotation_error / half_sine * e.vec())
            : Eigen::Vector3d::Zero();
    const Eigen::Matrix<double, 6, 6> J = JacobianAt(q, memo, tool.translation, false);
    Eigen::Matrix<double, 6, 1> e6;
    e6 << dp, dr;
    // Damped, so a branch at a singular pose moves no further than round-off would.
    const Eigen::Matrix<double, 6, 6> JJt =
        J * J.transpose() + 1e-12 * Eigen::Matrix<double, 6, 6>::Identity();
    const Eigen::Matrix<double, 6, 1> dq = J.transpose() * JJt.ldlt().solve(e6);
    for (int j = 0, col = 0; j < num_joints(); ++j) {
      if (j != locked_) q[j] += dq[col++];
    }
  }
}

struct AnalyticIk::Frame {
  Arm6 arm;
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  double locked_value = 0.0;
};

bool AnalyticIk::FrameAt(const Eigen::Isometry3d& X_WT, double locked_value, Frame& frame) const {
  if (!X_WT.matrix().allFinite() || !std::isfinite(locked_value)) return false;
  Eigen::Isometry3d lock = Eigen::Isometry3d::Identity();
  if (locked_ >= 0) {
    const JointLimits& range = limits_[locked_];
    if (locked_value < range.lower || locked_value > range.upper) return false;
    lock = ScrewMotion(h_[locked_], origin_[locked_], locked_value);
  }
  frame.locked_value = locked_value;
  // The 6R arm in solve order, the joints past the lock carried by it.
  Arm6& arm = frame.arm;
  for (int k = 0; k < 6; ++k) {
    const int j = free_[reversed_ ? 5 - k : k];
    const bool carried = locked_ >= 0 && j > locked_;
    arm.h[k] = carried ? Eigen::Vector3d(lock.linear() * h_[j]) : h_[j];
    arm.c[k] = carried ? Eigen::Vector3d(lock * point_[j]) : point_[j];
  }
  arm.sign = sign_;
  const Eigen::Isometry3d home = locked_ >= 0 ? Eigen::Isometry3d(lock * home_) : home_;
  if (reversed_) {
    // X_WT = E1 .. E6 home, so home X_WT^-1 = E6^-1 .. E1^-1: the axes in reverse order,
    // angles negated, tool at the identity.
    arm.home = Eigen::Isometry3d::Identity();
    frame.X = home * X_WT.inverse();
  } else {
    arm.home = home;
    frame.X = X_WT;
  }
  return true;
}

AnalyticIk::JointValues AnalyticIk::JointsOf(const internal::RawSolution& raw,
                                             double locked_value) const {
  JointValues q(num_joints());
  for (int k = 0; k < 6; ++k) {
    const int j = free_[reversed_ ? 5 - k : k];
    q[j] = reversed_ ? -raw.q[k] : raw.q[k];
  }
  if (locked_ >= 0) q[locked_] = locked_value;
  return q;
}

std::vector<AnalyticIk::Branch> AnalyticIk::Branches(const Eigen::Isometry3d& X_WT,
                                                     double locked_value) const {
  std::vector<Branch> out;
  Frame frame;
  if (!FrameAt(X_WT, locked_value, frame)) return out;
  std::vector<RawSolution> raw;
  switch (family_) {
    case AnalyticFamily::kThreeParallel:
      raw = internal::SolveThreeParallel(frame.arm, frame.X);
      break;
    case AnalyticFamily::kSphericalWristElbow:
      raw = internal::SolveSphericalWristElbow(frame.arm, frame.X);
      break;
    case AnalyticFamily::kSphericalWristShoulder:
      raw = internal::SolveSphericalWristShoulder(frame.arm, frame.X);
      break;
  }
  out.reserve(raw.size());
  for (int b = 0; b < static_cast<int>(raw.size()); ++b) {
    out.push_back({JointsOf(raw[b], locked_value), raw[b].singular, raw[b].branch});
  }
  return out;
}

std::vector<AnalyticSolution> AnalyticIk::Solve(const Eigen::Isometry3d& X_WT, double locked_value,
                                                const Eigen::VectorXd* near) const {
  std::vector<AnalyticSolution> out;
  const std::vector<Branch> branches = Branches(X_WT, locked_value);
  if (branches.empty()) return out;
  const Eigen::Quaterniond target_rotation = Eigen::Quaterniond(X_WT.linear()).normalized();
  HalfAngles memo;
  out.reserve(options_.every_turn ? 0 : branches.size());
  for (const Branch& branch : branches) {
    Eigen::VectorXd q = branch.q;
    // Plain variables, not a structured binding: the lambda below captures them (clang 14
    // refuses to capture a binding).
    const std::pair<double, double> errors = Polish(X_WT, target_rotation, memo, q);
    const double position_error = errors.first, rotation_error = errors.second;
    if (!(position_error <= options_.tolerance && rotation_error <= options_.tolerance)) continue;
    const auto add = [&](Eigen::VectorXd copy) {
      const bool known = std::any_of(out.begin(), out.end(), [&](const AnalyticSolution& s) {
        return (s.q - copy).cwiseAbs().maxCoeff() < 1e-9;  // a double root, found twice
      });
      if (!known) {
        out.push_back(
            {std::move(copy), branch.singular, branch.index, position_error, rotation_error});
      }
    };
    if (!options_.every_turn) {
      if (ToNearestCopy(q, near)) add(std::move(q));
      continue;
    }
    for (Eigen::VectorXd& copy : TurnCopies(q, near)) add(std::move(copy));
  }
  return out;
}

std::optional<AnalyticSolution> AnalyticIk::FirstByDistance(
    const Eigen::Isometry3d& X_WT, const Eigen::VectorXd& seed, int samples,
    const std::function<bool(const AnalyticSolution&)>& take) const {
  std::vector<double> values = {locked_ >= 0 ? seed[locked_] : 0.0};
  for (double value : LockedSamples(samples)) values.push_back(value);
  return FirstByDistanceAt(X_WT, seed, values, take);
}

std::optional<AnalyticSolution> AnalyticIk::FirstByDistanceAt(
    const Eigen::Isometry3d& X_WT, const Eigen::VectorXd& seed,
    std::span<const double> locked_values,
    const std::function<bool(const AnalyticSolution&)>& take) const {
  // Every branch at every value, nearest the seed first (each at its copy nearest the seed),
  // before any is checked: the check (forward kinematics, polish) is most of a branch's cost,
  // and the first branch taken is usually among the first few. A spherical wrist's branches
  // wait as their arm part, keyed by the distance of its joints alone (a lower bound: the wrist
  // joints add to it), and are made when that part comes first: a 7R sweep decomposes about a
  // hundred arm parts and the wrists of a few.
  const bool lazy_wrists = family_ != AnalyticFamily::kThreeParallel;
  std::vector<Frame> frames;
  std::vector<RawSolution> parts;  // arm parts waiting for their wrists
  std::vector<int> part_frame;     // the frame of each
  std::vector<Branch> branches;    // branches made
  // (distance or its bound, sequence, what: -1 - part index, or branch index), a min-heap.
  using Entry = std::tuple<double, int, int>;
  std::vector<Entry> order;
  int sequence = 0;
  const auto farther = [](const Entry& a, const Entry& b) { return a > b; };
  const auto push = [&](double key, int what) {
    order.emplace_back(key, sequence++, what);
    std::push_heap(order.begin(), order.end(), farther);
  };
  const auto add_branch = [&](const RawSolution& raw, double locked_value) {
    Branch branch{JointsOf(raw, locked_value), raw.singular, raw.branch};
    JointValues copy = branch.q;
    if (!ToNearestCopy(copy, &seed)) return;
    push((copy - seed).squaredNorm(), static_cast<int>(branches.size()));
    branches.push_back(std::move(branch));
  };
  const auto gather = [&](double locked_value) {
    Frame frame;
    if (!FrameAt(X_WT, locked_value, frame)) return;
    if (!lazy_wrists) {
      const std::vector<RawSolution> raw = internal::SolveThreeParallel(frame.arm, frame.X);
      for (const RawSolution& branch : raw) add_branch(branch, locked_value);
      return;
    }
    const std::vector<RawSolution> arm_parts = family_ == AnalyticFamily::kSphericalWristElbow
                                                   ? internal::ElbowArmParts(frame.arm, frame.X)
                                                   : internal::ShoulderArmParts(frame.arm, frame.X);
    for (int p = 0; p < static_cast<int>(arm_parts.size()); ++p) {
      std::optional<double> bound = PartDistance(arm_parts[p], locked_value, seed);
      if (!bound) continue;  // a joint of it has no copy within its limits
      push(*bound, -1 - static_cast<int>(parts.size()));
      parts.push_back(arm_parts[p]);
      parts.back().branch = p;
      part_frame.push_back(static_cast<int>(frames.size()));
    }
    frames.push_back(std::move(frame));
  };
  if (locked_ < 0) {
    gather(0.0);
  } else {
    for (double value : locked_values) gather(value);
  }
  const Eigen::Quaterniond target_rotation = Eigen::Quaterniond(X_WT.linear()).normalized();
  HalfAngles memo;
  std::vector<RawSolution> wrists;
  while (!order.empty()) {
    std::pop_heap(order.begin(), order.end(), farther);
    const int what = std::get<2>(order.back());
    order.pop_back();
    if (what < 0) {  // an arm part: its wrists join the queue
      const int p = -1 - what;
      const Frame& frame = frames[part_frame[p]];
      wrists.clear();
      internal::AppendWrist(frame.arm, frame.X, parts[p], wrists);
      for (const RawSolution& wrist : wrists) add_branch(wrist, frame.locked_value);
      continue;
    }
    Branch& branch = branches[what];
    JointValues& q = branch.q;
    const auto [position_error, rotation_error] = Polish(X_WT, target_rotation, memo, q);
    if (!(position_error <= options_.tolerance && rotation_error <= options_.tolerance)) continue;
    if (!ToNearestCopy(q, &seed)) continue;
    AnalyticSolution solution{Eigen::VectorXd(q), branch.singular, branch.index, position_error,
                              rotation_error};
    if (take(solution)) return solution;
  }
  return std::nullopt;
}

std::optional<double> AnalyticIk::PartDistance(const RawSolution& part, double locked_value,
                                               const Eigen::VectorXd& seed) const {
  double sum = 0.0;
  for (int k = 0; k < 3; ++k) {
    const int j = free_[reversed_ ? 5 - k : k];
    const std::optional<double> copy = NearestCopy(j, reversed_ ? -part.q[k] : part.q[k], &seed);
    if (!copy) return std::nullopt;
    sum += (*copy - seed[j]) * (*copy - seed[j]);
  }
  if (locked_ >= 0) sum += (locked_value - seed[locked_]) * (locked_value - seed[locked_]);
  return sum;
}

std::vector<AnalyticSolution> AnalyticIk::SolveByDistance(const Eigen::Isometry3d& X_WT,
                                                          const Eigen::VectorXd& seed,
                                                          int samples) const {
  std::vector<AnalyticSolution> all = Solve(X_WT, locked_ >= 0 ? seed[locked_] : 0.0, &seed);
  for (double value : LockedSamples(samples)) {
    for (AnalyticSolution& s : Solve(X_WT, value, &seed)) all.push_back(std::move(s));
  }
  std::stable_sort(all.begin(), all.end(),
                   [&](const AnalyticSolution& a, const AnalyticSolution& b) {
                     return (a.q - seed).squaredNorm() < (b.q - seed).squaredNorm();
                   });
  return all;
}

std::optional<AnalyticSolution> AnalyticIk::SolveNearest(const Eigen::Isometry3d& X_WT,
                                                         const Eigen::VectorXd& seed,
                                                         int samples) const {
  return FirstByDistance(X_WT, seed, samples, [](const AnalyticSolution&) { return true; });
}

AnalyticReach AnalyticIk::Reach(const Eigen::Isometry3d& X_WT, const Eigen::VectorXd& seed,
                                int samples) const {
  AnalyticReach reach;
  double least = kInf;
  reach.position_miss = reach.rotation_miss = kInf;
  const Eigen::Quaterniond target_rotation = Eigen::Quaterniond(X_WT.linear()).normalized();
  HalfAngles memo;
  // True once a branch is on the pose within the limits (nothing more to learn).
  const auto visit = [&](double locked_value) {
    for (Branch& branch : Branches(X_WT, locked_value)) {
      JointValues& q = branch.q;
      const auto [position_error, rotation_error] = Polish(X_WT, target_rotation, memo, q);
      if (position_error <= options_.tolerance && rotation_error <= options_.tolerance) {
        if (ToNearestCopy(q, &seed)) return true;
        reach.past_limits = true;
      } else if (std::max(position_error, rotation_error) < least) {
        least = std::max(position_error, rotation_error);
        reach.position_miss = position_error;
        reach.rotation_miss = rotation_error;
      }
    }
    return false;
  };
  bool within = visit(locked_ >= 0 ? seed[locked_] : 0.0);
  for (double value : LockedSamples(samples)) within = within || visit(value);
  reach.within_limits = within;
  if (within || reach.past_limits) reach.position_miss = reach.rotation_miss = 0.0;
  return reach;
}

std::vector<double> AnalyticIk::LockedSamples(int count) const {
  if (locked_ < 0) return {};
  const JointLimits& range = limits_[locked_];
  const double lower = std::isfinite(range.lower) ? range.lower : -std::numbers::pi;
  const double upper = std::isfinite(range.upper) ? range.upper : std::numbers::pi;
  std::vector<double> values;
  for (int i = 0; i < count; ++i) values.push_back(lower + (upper - lower) * (i + 0.5) / count);
  return values;
}

// q's joints within their limits: every full-turn copy (every_turn), else the one nearest
// `near` (or nearest 0); none when a joint has no copy within its limits.
std::vector<Eigen::VectorXd> AnalyticIk::TurnCopies(const Eigen::VectorXd& q,
                                                    const Eigen::VectorXd* near) const {
  std::vector<std::vector<double>> values(q.size());
  for (int j = 0; j < q.size(); ++j) {
    const JointLimits& range = limits_[j];
    if (j == locked_) {
      values[j] = {q[j]};
      continue;
    }
    // The copies within the range, nearest `near` first: from the nearest copy outwards.
    const double around = std::clamp(near ? (*near)[j] : 0.0, range.lower, range.upper);
    const double nearest = around + internal::WrapAngle(q[j] - around);
    std::vector<double> inside;
    for (int step = 0; step < 2 * kMaxTurnCopies + 2; ++step) {
      // 0, +1, -1, +2, -2, ... turns from the nearest copy.
      const double v = nearest + kTwoPi * ((step + 1) / 2) * (step % 2 == 1 ? 1 : -1);
      if (v >= range.lower - kTurnSlack && v <= range.upper + kTurnSlack) {
        inside.push_back(std::clamp(v, range.lower, range.upper));
      }
    }
    if (inside.empty()) return {};
    if (static_cast<int>(inside.size()) > kMaxTurnCopies) inside.resize(kMaxTurnCopies);
    values[j] = std::move(inside);
  }
  std::vector<Eigen::VectorXd> copies = {q};
  for (int j = 0; j < q.size(); ++j) {
    std::vector<Eigen::VectorXd> grown;
    for (const Eigen::VectorXd& partial : copies) {
      for (double v : values[j]) {
        grown.push_back(partial);
        grown.back()[j] = v;
      }
    }
    copies = std::move(grown);
  }
  return copies;
}

std::optional<double> AnalyticIk::NearestCopy(int j, double value,
                                              const Eigen::VectorXd* near) const {
  const JointLimits& range = limits_[j];
  const double around = std::clamp(near ? (*near)[j] : 0.0, range.lower, range.upper);
  double v = around + internal::WrapAngle(value - around);
  // The nearest copy may lie past a bound with another copy inside: step back into range.
  if (v > range.upper + kTurnSlack) v -= kTwoPi;
  if (v < range.lower - kTurnSlack) v += kTwoPi;
  if (v > range.upper + kTurnSlack || v < range.lower - kTurnSlack) return std::nullopt;
  return std::clamp(v, range.lower, range.upper);
}

bool AnalyticIk::ToNearestCopy(Eigen::Ref<Eigen::VectorXd> q, const Eigen::VectorXd* near) const {
  for (int j = 0; j < q.size(); ++j) {
    if (j == locked_) continue;
    const std::optional<double> copy = NearestCopy(j, q[j], near);
    if (!copy) return false;
    q[j] = *copy;
  }
  return true;
}

const AnalyticIk* AnalyticIkOf(const Robot& robot) {
  Robot::IkCache& cache = robot.analytic_cache();
  absl::call_once(cache.once, [&] {
    absl::StatusOr<AnalyticIk> ik = AnalyticIk::Create(robot.spec());
    if (ik.ok()) cache.value = std::make_shared<const AnalyticIk>(*std::move(ik));
  });
  return static_cast<const AnalyticIk*>(cache.value.get());
}

}  // namespace ikd::robot
