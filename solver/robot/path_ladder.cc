#include "path_ladder.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>

#include "motion.h"

namespace ikd::robot::internal {
namespace {

constexpr int kRungStride = 5;  // samples between rungs
constexpr int kBeamWidth = 16;  // postures kept per rung
constexpr int kMoves = 5;       // null-space moves per posture, beside its plain continuation
// Largest null-space move (rad, max norm over the joints); the moves alternate between it and
// a third of it.
constexpr double kMoveSize = 0.3;
constexpr double kDistinct = 0.1;     // rad (max norm): kept postures lie this far apart
constexpr double kComfortable = 0.5;  // speed over limit below which only the sum counts
// Rungs a posture is carried ahead, unchanged but for its tool put back on each target, before
// it is ranked: a beam ranked by speed alone keeps the postures nearest the tracker's and dies
// in front of an obstacle that blocks them all (bench/paths seed 3, ur5-position-blocking #35:
// every climb died at sample 150 where the witness straightens its elbow 20 samples earlier).
constexpr int kLookAhead = 8;

struct Posture {
  RobotIkResult sample;  // placed on its rung's target
  int parent = -1;       // in the previous rung
  double worst = 0.0;    // the fastest joint's speed over its limit, rung to rung, up to here
  double sum = 0.0;      // sum of squares of that per rung
  // Look-ahead: the rungs it was carried ahead clear (kLookAhead, or as many as remain, when
  // never blocked), and the least clearance on the way.
  int clear_ahead = 0;
  double clearance_ahead = 0.0;
};

// Ranking: the worst speed (or kComfortable, when lower), then the sum.
bool Ahead(const Posture& a, const Posture& b) {
  const double wa = std::max(a.worst, kComfortable), wb = std::max(b.worst, kComfortable);
  if (wa != wb) return wa < wb;
  return a.sum < b.sum;
}

// Ranking of postures blocked ahead: the later blocked first, then the clearer on the way.
bool FartherAhead(const Posture& a, const Posture& b) {
  if (a.clear_ahead != b.clear_ahead) return a.clear_ahead > b.clear_ahead;
  return a.clearance_ahead > b.clearance_ahead;
}

std::vector<int> RungSamples(int samples) {
  std::vector<int> rungs;
  for (int k = 0; k < samples; k += kRungStride) rungs.push_back(k);
  if (rungs.back() != samples - 1) rungs.push_back(samples - 1);
  return rungs;
}

// Per joint the speed its motion is measured against: its velocity limit, or where it declares
// none the smallest declared one (1 rad/s when no joint declares one), as MotionWeights weighs
// the tracker's steps.
Eigen::VectorXd SpeedScales(const Robot& robot) {
  const int n = robot.num_joints();
  Eigen::VectorXd scale(n);
  double least = std::numeric_limits<double>::infinity();
  for (int j = 0; j < n; ++j) least = std::min(least, VelocityLimit(robot, j));
  for (int j = 0; j < n; ++j) {
    const double limit = VelocityLimit(robot, j);
    scale[j] = std::isfinite(limit) ? limit : (std::isfinite(least) ? least : 1.0);
  }
  return scale;
}

// The fastest joint from a to b in dt (rung to rung, straight) over its speed scale.
double SpeedRatio(const Eigen::VectorXd& scale, const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                  double dt) {
  return ((b - a).cwiseAbs().array() / (scale.array() * dt)).maxCoeff();
}

// Where `from` may go on the next rung: put on `target` as it is and after kMoves random moves
// in its free directions; only postures on target, within the limits and clear by the margin.
std::vector<Eigen::VectorXd> Starts(const Robot& robot, const Eigen::VectorXd& from,
                                    TargetMode mode, std::mt19937_64& rng) {
  std::vector<Eigen::VectorXd> starts{from};
  const Eigen::MatrixXd basis = ToolNullSpace(robot, from, mode);
  std::uniform_real_distribution<double> coordinate(-1.0, 1.0);
  for (int m = 0; m < kMoves && basis.cols() > 0; ++m) {
    Eigen::VectorXd z(basis.cols());
    for (int c = 0; c < z.size(); ++c) z[c] = coordinate(rng);
    const Eigen::VectorXd move = basis * z;
    const double size = m % 2 == 0 ? kMoveSize : kMoveSize / 3.0;
    starts.push_back(from + (size / move.cwiseAbs().maxCoeff()) * move);
  }
  return starts;
}

bool Clear(const RobotIkResult& sample, double margin) {
  return sample.status == planning::StepStatus::kReached && sample.min_clearance >= margin;
}

// `posture` carried over the rung targets `ahead` (its tool put back on each from the last):
// how many it holds clear by the margin before the first it does not, and the least clearance
// on the way.
void LookAhead(const Robot& robot, const planning::Scene* scene,
               const std::vector<const ToolTarget*>& ahead, const RobotIkOptions& options,
               Posture& posture) {
  Eigen::VectorXd q = posture.sample.q;
  posture.clear_ahead = 0;
  posture.clearance_ahead = posture.sample.min_clearance;
  for (const ToolTarget* target : ahead) {
    const RobotIkResult sample = PlacedSample(robot, scene, *target, options, q);
    if (!Clear(sample, options.safety_margin)) return;
    ++posture.clear_ahead;
    posture.clearance_ahead = std::min(posture.clearance_ahead, sample.min_clearance);
    q = sample.q;
  }
}

bool Distinct(const std::vector<Posture>& kept, const Posture& child) {
  return std::all_of(kept.begin(), kept.end(), [&](const Posture& k) {
    return (k.sample.q - child.sample.q).cwiseAbs().maxCoeff() >= kDistinct;
  });
}

// The next rung's postures: every child of `beam` ranked, the first kBeamWidth distinct ones
// that stay clear over the rungs `ahead`; where too few do, those blocked latest fill the beam.
std::vector<Posture> NextRung(const Robot& robot, const planning::Scene* scene,
                              const ToolTarget& target, const std::vector<const ToolTarget*>& ahead,
                              double dt, const RobotIkOptions& options,
                              const Eigen::VectorXd& scales, const std::vector<Posture>& beam,
                              std::mt19937_64& rng) {
  std::vector<Posture> children;
  for (int p = 0; p < static_cast<int>(beam.size()); ++p) {
    const Eigen::VectorXd& from = beam[p].sample.q;
    for (const Eigen::VectorXd& start : Starts(robot, from, target.mode(), rng)) {
      RobotIkResult sample = PlacedSample(robot, scene, target, options, start);
      if (!Clear(sample, options.safety_margin)) continue;
      const double ratio = SpeedRatio(scales, from, sample.q, dt);
      children.push_back(Posture{std::move(sample), p, std::max(beam[p].worst, ratio),
                                 beam[p].sum + ratio * ratio});
    }
  }
  std::stable_sort(children.begin(), children.end(), Ahead);
  std::vector<Posture> kept, blocked;
  for (Posture& child : children) {
    if (static_cast<int>(kept.size()) == kBeamWidth) break;
    if (!Distinct(kept, child)) continue;
    LookAhead(robot, scene, ahead, options, child);
    if (child.clear_ahead == static_cast<int>(ahead.size())) {
      kept.push_back(std::move(child));
    } else {
      blocked.push_back(std::move(child));
    }
  }
  std::stable_sort(blocked.begin(), blocked.end(), FartherAhead);
  for (Posture& child : blocked) {
    if (static_cast<int>(kept.size()) == kBeamWidth) break;
    if (Distinct(kept, child)) kept.push_back(std::move(child));
  }
  return kept;
}

// The targets of the kLookAhead rungs after rung r (fewer near the end).
std::vector<const ToolTarget*> RungsAhead(const std::vector<ToolTarget>& targets,
                                          const std::vector<int>& rungs, size_t r) {
  std::vector<const ToolTarget*> ahead;
  for (size_t a = r + 1; a < rungs.size() && a <= r + kLookAhead; ++a) {
    ahead.push_back(&targets[rungs[a]]);
  }
  return ahead;
}

// Joint values at time t between rungs a and b (times ta < tb), cubic Hermite with slopes va, vb.
Eigen::VectorXd Hermite(const Eigen::VectorXd& qa, const Eigen::VectorXd& va, double ta,
                        const Eigen::VectorXd& qb, const Eigen::VectorXd& vb, double tb,
                        double t) {
  const double h = tb - ta, s = (t - ta) / h;
  const double s2 = s * s, s3 = s2 * s;
  return (2 * s3 - 3 * s2 + 1) * qa + (s3 - 2 * s2 + s) * h * va + (-2 * s3 + 3 * s2) * qb +
         (s3 - s2) * h * vb;
}

// The path through the chosen rung postures: rung samples as placed, the others interpolated
// and put on their targets.
std::vector<RobotIkResult> Densified(const Robot& robot, const planning::Scene* scene,
                                     const std::vector<ToolTarget>& targets,
                                     const std::vector<double>& times,
                                     const RobotIkOptions& options, const std::vector<int>& rungs,
                                     std::vector<RobotIkResult> chosen) {
  const int count = static_cast<int>(rungs.size());
  std::vector<Eigen::VectorXd> slope(count);
  for (int r = 0; r < count; ++r) {
    const int a = std::max(r - 1, 0), b = std::min(r + 1, count - 1);
    slope[r] = (chosen[b].q - chosen[a].q) / (times[rungs[b]] - times[rungs[a]]);
  }
  std::vector<RobotIkResult> samples(targets.size());
  for (int r = 0; r + 1 < count; ++r) {
    for (int k = rungs[r] + 1; k < rungs[r + 1]; ++k) {
      // Within the joint limits: a cubic may overshoot them between two postures near a bound.
      const Eigen::VectorXd q = ClampIntoLimits(
          robot, Hermite(chosen[r].q, slope[r], times[rungs[r]], chosen[r + 1].q, slope[r + 1],
                         times[rungs[r + 1]], times[k]));
      samples[k] = PlacedSample(robot, scene, targets[k], options, q);
    }
  }
  for (int r = 0; r < count; ++r) samples[rungs[r]] = std::move(chosen[r]);
  return samples;
}

}  // namespace

absl::StatusOr<std::optional<std::vector<RobotIkResult>>> LadderRobotPath(
    const Robot& robot, const planning::Scene* scene, const std::vector<ToolTarget>& targets,
    const std::vector<double>& times, const RobotIkOptions& options, const RobotIkResult& first,
    const std::function<bool()>& stop) {
  const std::optional<std::vector<RobotIkResult>> none;
  const auto redundant = [&](const ToolTarget& target) {
    return robot.num_joints() > ToolRows(target.mode());
  };
  if (targets.size() < 3 || std::none_of(targets.begin() + 1, targets.end(), redundant) ||
      first.status == planning::StepStatus::kNotConverged ||
      first.status == planning::StepStatus::kJointLimitBlocked) {
    return none;
  }
  const std::vector<int> rungs = RungSamples(static_cast<int>(targets.size()));
  const Eigen::VectorXd scales = SpeedScales(robot);
  std::mt19937_64 rng(options.seed);
  std::vector<std::vector<Posture>> ladder;
  ladder.push_back({Posture{first, -1, 0.0, 0.0}});
  for (size_t r = 1; r < rungs.size(); ++r) {
    if (stop && stop()) return absl::CancelledError("stopped while planning the path");
    const double dt = times[rungs[r]] - times[rungs[r - 1]];
    std::vector<Posture> rung =
        NextRung(robot, scene, targets[rungs[r]], RungsAhead(targets, rungs, r), dt, options,
                 scales, ladder.back(), rng);
    if (rung.empty()) return none;
    ladder.push_back(std::move(rung));
  }
  // The best last posture (ranked first) traced back to the first sample.
  std::vector<RobotIkResult> chosen(rungs.size());
  for (int r = static_cast<int>(rungs.size()) - 1, p = 0; r >= 0; p = ladder[r][p].parent, --r) {
    chosen[r] = ladder[r][p].sample;
  }
  return Densified(robot, scene, targets, times, options, rungs, std::move(chosen));
}

}  // namespace ikd::robot::internal
