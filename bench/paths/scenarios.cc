// Scenario generator of the joint-path benchmark (scenarios.h).
#include "scenarios.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <string>

#include "paths_util.h"
#include "ikd/ik/path.h"
#include "ikd/ik/tracker.h"

namespace ikd::bench::paths {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kSamples = 201;       // kPeriod / kSamplePeriod + 1
constexpr int kMaxDraws = 2000;     // witnesses per scenario before giving up
constexpr double kLimitMargin = 0.1;  // rad the witness keeps from a position limit
constexpr double kMinBend = 0.3;      // rad: spatial bends stay above, so azimuths are defined
constexpr double kRateFactor = 1.5;   // declared limits over the witness's maxima

// SplitMix64 finalizer: decorrelates the per-scenario seeds.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double SampleTime(int k) { return k * kSamplePeriod; }

bool Planar(Kind kind) { return kind == Kind::kPlanarFree || kind == Kind::kPlanarObstacles; }
bool HasObstacles(Kind kind) {
  return kind == Kind::kPlanarObstacles || kind == Kind::kSpatialObstacles;
}

// One joint angle of the witness: q0 + sum_m a_m sin(2 pi m t / T + phi_m).
struct AngleMotion {
  double q0 = 0.0;
  std::array<double, 3> amplitude{}, phase{};
  double At(double t) const {
    double q = q0;
    for (int m = 0; m < 3; ++m) q += amplitude[m] * std::sin(2 * kPi * (m + 1) * t / kPeriod + phase[m]);
    return q;
  }
};

// Where one angle of the witness must stay (lo = -inf: unbounded) and its amplitude scale.
struct AngleRange {
  double lo = -kInf, hi = kInf, amplitude = 1.0;
};

bool Within(const AngleMotion& motion, const AngleRange& range) {
  for (int k = 0; k < kSamples; ++k) {
    const double q = motion.At(SampleTime(k));
    if (q < range.lo || q > range.hi) return false;
  }
  return true;
}

// Harmonic m's amplitude falls as 1/m^2: the acceleration of each harmonic stays comparable.
AngleMotion DrawMotion(std::mt19937_64& rng, const AngleRange& range) {
  const bool bounded = std::isfinite(range.lo);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    AngleMotion motion;
    motion.q0 = bounded ? Range(rng, range.lo, range.hi) : Range(rng, -kPi, kPi);
    for (int m = 0; m < 3; ++m) {
      motion.amplitude[m] = range.amplitude * Uniform(rng) / ((m + 1) * (m + 1));
      motion.phase[m] = Range(rng, 0.0, 2 * kPi);
    }
    if (Within(motion, range)) return motion;
  }
  Die("could not draw a witness angle within its limits");
}

ik::ArmSpec DrawArmSpec(std::mt19937_64& rng, bool planar) {
  ik::ArmSpec spec;
  spec.planar = planar;
  const int limbs = planar ? Count(rng, 5, 8) : Count(rng, 4, 7);
  for (int k = 0; k < limbs; ++k) spec.limbs.push_back({Range(rng, 0.1, 0.25), 0.02});
  const ik::JointLimit limit = planar ? ik::JointLimit{-2.4, 2.4} : ik::JointLimit{0.0, 2.2};
  spec.joint_limits.assign(limbs - 1, limit);
  return spec;
}

// The witness's ranges in arm.h's angle order: inside the position limits by kLimitMargin;
// spatial bends (limb 0's too) above kMinBend; free angles (planar limb 0, azimuths) anywhere.
std::vector<AngleRange> Ranges(const ik::ArmSpec& spec) {
  std::vector<AngleRange> ranges;
  const int limbs = static_cast<int>(spec.limbs.size());
  for (int k = 0; k < limbs; ++k) {
    const double hi = k == 0 ? kPi - kMinBend : spec.joint_limits[k - 1]->max - kLimitMargin;
    if (spec.planar) {
      if (k == 0) {
        ranges.push_back({-kInf, kInf, 0.8});
      } else {
        ranges.push_back({spec.joint_limits[k - 1]->min + kLimitMargin, hi, 0.8});
      }
    } else {
      ranges.push_back({kMinBend, hi, 0.6});  // bend
      ranges.push_back({-kInf, kInf, 1.0});   // azimuth
    }
  }
  return ranges;
}

struct Witness {
  Eigen::MatrixXd q;  // rows: samples, columns: angles
  std::vector<Eigen::Matrix3Xd> sites;
};

Witness DrawWitness(std::mt19937_64& rng, const ik::Arm& arm, const std::vector<AngleRange>& ranges) {
  std::vector<AngleMotion> motions;
  for (const AngleRange& range : ranges) motions.push_back(DrawMotion(rng, range));
  Witness w;
  w.q.resize(kSamples, static_cast<Eigen::Index>(motions.size()));
  for (int k = 0; k < kSamples; ++k) {
    std::vector<double> angles;
    for (const AngleMotion& motion : motions) angles.push_back(motion.At(SampleTime(k)));
    for (size_t j = 0; j < angles.size(); ++j) w.q(k, static_cast<Eigen::Index>(j)) = angles[j];
    // Generation may use the library's forward kinematics; the checker never does.
    w.sites.push_back(Unwrap(arm.SitesFromAngles(angles), "SitesFromAngles"));
  }
  return w;
}

CheckModel ModelOf(const ik::ArmSpec& spec) {
  CheckModel model;
  model.planar = spec.planar;
  for (const ik::Limb& limb : spec.limbs) {
    model.lengths.push_back(limb.length);
    model.radii.push_back(limb.radius);
  }
  for (const auto& limit : spec.joint_limits) {
    model.limit_min.push_back(limit->min);
    model.limit_max.push_back(limit->max);
  }
  model.safety_margin = kSafetyMargin;
  return model;
}

double SelfGap(const CheckModel& model, const std::vector<Eigen::Matrix3Xd>& sites) {
  double gap = kInf;
  for (const auto& s : sites) gap = std::min(gap, MinSelfClearance(model, s));
  return gap;
}

double ObstacleGap(const CheckModel& model, const std::vector<Eigen::Matrix3Xd>& sites,
                   const CheckCapsule& obstacle) {
  double gap = kInf;
  for (const auto& s : sites) {
    for (int k = 0; k + 1 < s.cols(); ++k) {
      gap = std::min(gap, LimbObstacleClearance(model, s, k, obstacle));
    }
  }
  return gap;
}

// An obstacle's shape before it is placed: a sphere (zero half axis) or a capsule; planar
// arms get vertical posts through their plane.
struct ShapeDraw {
  double radius = 0.0;
  Eigen::Vector3d half_axis = Eigen::Vector3d::Zero();
};

Eigen::Vector3d RandomDirection(std::mt19937_64& rng, bool planar) {
  const double phi = Range(rng, 0.0, 2 * kPi);
  if (planar) return {std::cos(phi), std::sin(phi), 0.0};
  const double z = Range(rng, -1.0, 1.0), rho = std::sqrt(1.0 - z * z);
  return {rho * std::cos(phi), rho * std::sin(phi), z};
}

ShapeDraw DrawShape(std::mt19937_64& rng, bool planar) {
  ShapeDraw shape;
  shape.radius = Range(rng, 0.03, 0.06);
  if (Uniform(rng) < 0.5) return shape;  // sphere
  const double half_length = Range(rng, 0.03, 0.1);
  shape.half_axis = planar ? Eigen::Vector3d(0, 0, half_length)
                           : Eigen::Vector3d(half_length * RandomDirection(rng, false));
  return shape;
}

CheckCapsule ShapeAt(const ShapeDraw& shape, const Eigen::Vector3d& center) {
  return {center - shape.half_axis, center + shape.half_axis, shape.radius};
}

Eigen::Vector3d PointOnLimb(std::mt19937_64& rng, const std::vector<Eigen::Matrix3Xd>& path) {
  const Eigen::Matrix3Xd& sites = path[Count(rng, 0, kSamples - 1)];
  const int k = Count(rng, 0, static_cast<int>(sites.cols()) - 2);
  return sites.col(k) + Uniform(rng) * (sites.col(k + 1) - sites.col(k));
}

// Centered on a limb of the plain projection's path, then shifted along a random direction
// until the witness clears it by the gap.
std::optional<CheckCapsule> NearPlain(std::mt19937_64& rng, const CheckModel& model,
                                      const std::vector<Eigen::Matrix3Xd>& witness,
                                      const std::vector<Eigen::Matrix3Xd>& plain) {
  const Eigen::Vector3d center = PointOnLimb(rng, plain);
  const ShapeDraw shape = DrawShape(rng, model.planar);
  const Eigen::Vector3d direction = RandomDirection(rng, model.planar);
  for (int step = 0; step <= 50; ++step) {
    const CheckCapsule o = ShapeAt(shape, center + 0.005 * step * direction);
    if (ObstacleGap(model, witness, o) >= kWitnessGap) return o;
  }
  return std::nullopt;
}

// The fallback: beside a limb of the witness, just outside the gap or up to 0.1 m further.
std::optional<CheckCapsule> NearWitness(std::mt19937_64& rng, const CheckModel& model,
                                        const std::vector<Eigen::Matrix3Xd>& witness) {
  const Eigen::Vector3d point = PointOnLimb(rng, witness);
  const ShapeDraw shape = DrawShape(rng, model.planar);
  const double distance = model.radii[0] + kWitnessGap + shape.radius + Range(rng, 0.0, 0.1);
  const CheckCapsule o = ShapeAt(shape, point + distance * RandomDirection(rng, model.planar));
  if (ObstacleGap(model, witness, o) >= kWitnessGap) return o;
  return std::nullopt;
}

struct Placement {
  std::vector<CheckCapsule> obstacles;
  int near_plain = 0;
};

std::optional<Placement> PlaceObstacles(std::mt19937_64& rng, const CheckModel& model,
                                        const std::vector<Eigen::Matrix3Xd>& witness,
                                        const std::vector<Eigen::Matrix3Xd>& plain) {
  Placement placement;
  const int count = Count(rng, 4, 10);
  for (int i = 0; i < count; ++i) {
    std::optional<CheckCapsule> o;
    for (int attempt = 0; attempt < 10 && !o; ++attempt) o = NearPlain(rng, model, witness, plain);
    if (o) ++placement.near_plain;
    for (int attempt = 0; attempt < 200 && !o; ++attempt) o = NearWitness(rng, model, witness);
    if (!o) return std::nullopt;
    placement.obstacles.push_back(*o);
  }
  return placement;
}

// The hand path: linear through the witness's hand at every sample time, so that the samples
// are the waypoints.
ik::Trajectory HandPath(const std::vector<Eigen::Vector3d>& hand) {
  std::vector<ik::Waypoint> waypoints;
  for (int k = 0; k < kSamples; ++k) waypoints.push_back({SampleTime(k), hand[k]});
  return Unwrap(ik::Trajectory::FromWaypoints(std::move(waypoints), ik::Interpolation::kLinear),
                "Trajectory::FromWaypoints");
}

std::vector<double> Times(const ik::Trajectory& path) {
  std::vector<double> times = Unwrap(path.SampleTimes(kSamplePeriod), "SampleTimes");
  if (static_cast<int>(times.size()) != kSamples) Die("SampleTimes: not 201 samples");
  for (int k = 0; k < kSamples; ++k) {
    if (std::abs(times[k] - SampleTime(k)) > 1e-12) Die("SampleTimes: a sample off the waypoints");
  }
  return times;
}

// What a plain projection (no trials, no path optimization) makes of the path in free space.
std::vector<Eigen::Matrix3Xd> PlainPath(const ik::Arm& arm, const ik::Trajectory& path,
                                        const std::vector<double>& times,
                                        const Eigen::Matrix3Xd& initial) {
  ik::IkOptions plain;
  plain.trials_per_step = 0;
  plain.optimize_path = false;
  const ik::PathResult result =
      Unwrap(ik::PlanPath(arm, nullptr, path, times, plain, initial), "PlanPath (plain)");
  std::vector<Eigen::Matrix3Xd> sites;
  for (const ik::IkResult& step : result.steps) sites.push_back(step.sites);
  return sites;
}

// Generator and checker against each other: the checker must read the witness's own angles
// back from its sites and find it clear, exact and within every limit.
void SelfTest(const CheckModel& model, const Witness& w, const std::vector<Eigen::Vector3d>& hand,
              const RateMaxima& rates, const std::string& name) {
  for (int k = 0; k < kSamples; ++k) {
    const std::vector<double> angles = JointAngles(model, w.sites[k]);
    for (size_t j = 0; j < angles.size(); ++j) {
      const double diff = std::remainder(angles[j] - w.q(k, static_cast<Eigen::Index>(j)), 2 * kPi);
      if (std::abs(diff) > 1e-9) Die(name + ": the checker misreads the witness's angles");
    }
  }
  const PathMeasures m = CheckPath(model, w.sites, hand, kSamplePeriod);
  if (m.collided || m.margin_samples > 0 || m.any_limit_violation() || m.max_hand_error > 1e-12 ||
      m.max_limb_error > 1e-12 || std::abs(m.max_speed - rates.speed) > 1e-9 * rates.speed ||
      std::abs(m.max_acceleration - rates.acceleration) > 1e-6 * rates.acceleration) {
    Die(name + ": the checker rejects the witness");
  }
}

// FNV-1a over doubles.
void Hash(uint64_t& h, double x) {
  unsigned char bytes[sizeof x];
  std::memcpy(bytes, &x, sizeof x);
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
}

uint64_t Fingerprint(const CheckModel& model, const Witness& w) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (double l : model.lengths) Hash(h, l);
  for (Eigen::Index i = 0; i < w.q.size(); ++i) Hash(h, w.q.data()[i]);
  for (const CheckCapsule& o : model.obstacles) {
    for (int i = 0; i < 3; ++i) Hash(h, o.a[i]), Hash(h, o.b[i]);
    Hash(h, o.radius);
  }
  return h;
}

}  // namespace

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kPlanarFree: return "planar-free";
    case Kind::kPlanarObstacles: return "planar-obstacles";
    case Kind::kSpatialFree: return "spatial-free";
    case Kind::kSpatialObstacles: return "spatial-obstacles";
  }
  return "?";
}

std::optional<Kind> ParseKind(std::string_view name) {
  for (Kind kind : kKinds) {
    if (name == KindName(kind)) return kind;
  }
  return std::nullopt;
}

Scenario MakeScenario(Kind kind, int index, uint64_t seed) {
  const std::string name = std::string(KindName(kind)) + " #" + std::to_string(index);
  std::mt19937_64 rng(Mix(Mix(seed) ^ (uint64_t(kind) << 32) ^ uint64_t(index)));
  for (int draws = 1; draws <= kMaxDraws; ++draws) {
    ik::ArmSpec spec = DrawArmSpec(rng, Planar(kind));
    CheckModel model = ModelOf(spec);
    const Witness w = DrawWitness(rng, Unwrap(ik::Arm::Create(spec), "Arm::Create"), Ranges(spec));
    if (SelfGap(model, w.sites) < kWitnessGap) continue;
    const RateMaxima rates = MaxRates(w.q, kSamplePeriod);
    spec.default_rate_limit = {kRateFactor * rates.speed, kRateFactor * rates.acceleration};
    model.max_velocity = spec.default_rate_limit.max_velocity;
    model.max_acceleration = spec.default_rate_limit.max_acceleration;
    ik::Arm arm = Unwrap(ik::Arm::Create(spec), "Arm::Create");
    std::vector<Eigen::Vector3d> hand;
    for (const auto& sites : w.sites) hand.push_back(sites.col(sites.cols() - 1));
    ik::Trajectory path = HandPath(hand);
    std::vector<double> times = Times(path);
    Placement placement;
    bool plain_collides = false;
    if (HasObstacles(kind)) {
      const auto plain = PlainPath(arm, path, times, w.sites[0]);
      auto placed = PlaceObstacles(rng, model, w.sites, plain);
      if (!placed) continue;
      placement = *std::move(placed);
      model.obstacles = placement.obstacles;
      plain_collides = CheckPath(model, plain, hand, kSamplePeriod).collided;
    }
    SelfTest(model, w, hand, rates, name);
    return Scenario{.kind = kind,
                    .index = index,
                    .fingerprint = Fingerprint(model, w),
                    .arm = std::move(arm),
                    .scene = SceneOf(placement.obstacles),
                    .hand_path = std::move(path),
                    .times = std::move(times),
                    .initial_sites = w.sites[0],
                    .model = std::move(model),
                    .hand = std::move(hand),
                    .witness = rates,
                    .witness_sites = w.sites,
                    .witness_limb_turn_speed = MaxLimbTurnSpeed(w.sites, kSamplePeriod),
                    .draws = draws,
                    .obstacles_near_plain = placement.near_plain,
                    .plain_collides = plain_collides};
  }
  Die(name + ": no witness clear of itself in " + std::to_string(kMaxDraws) + " draws");
}

Scenario WithRateLimits(Scenario s, ik::JointRateLimit limit) {
  ik::ArmSpec spec = s.arm.spec();
  spec.default_rate_limit = limit;
  spec.rate_limits.clear();
  s.arm = Unwrap(ik::Arm::Create(spec), "Arm::Create");
  constexpr double kNone = std::numeric_limits<double>::infinity();
  s.model.max_velocity = limit.max_velocity > 0.0 ? limit.max_velocity : kNone;
  s.model.max_acceleration = limit.max_acceleration > 0.0 ? limit.max_acceleration : kNone;
  s.model.max_jerk = limit.max_jerk > 0.0 ? limit.max_jerk : kNone;
  return s;
}

Scenario WithoutRateLimits(Scenario s) { return WithRateLimits(std::move(s), {}); }

planning::Scene SceneOf(const std::vector<CheckCapsule>& obstacles) {
  std::vector<planning::Obstacle> scene;
  for (const CheckCapsule& o : obstacles) {
    std::string id = "o";  // (not "o" + to_string: GCC 12 warns falsely, -Wrestrict)
    id += std::to_string(scene.size());
    if (o.a == o.b) {
      scene.push_back({std::move(id), planning::Sphere{o.a, o.radius}});
    } else {
      scene.push_back({std::move(id), planning::Capsule{o.a, o.b, o.radius}});
    }
  }
  return Unwrap(planning::Scene::Create(std::move(scene)), "Scene::Create");
}

}  // namespace ikd::bench::paths
