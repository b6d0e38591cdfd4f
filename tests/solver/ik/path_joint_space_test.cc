// The joint-space start of the path driver (path_joint_space.h), on two witness-based spatial
// scenarios of bench/paths written out: a spatial arm (limb radius 0.02, bends limited to
// [0, 2.2] rad, one rate limit for every joint, 1.5x the witness's maxima) among capsules and
// spheres, and the witness: angle j in arm.h's order (bend, azimuth per limb) =
// q0 + sum_m a_m sin(pi m t + phi_m), m = 1..3, over 2 s. The Cartesian starts' optimized
// paths of both stayed far over the rates (an azimuth wound at 2.6x its limit for 40 samples;
// limb 0 folded straight down, its azimuth spinning at 56x): the plan now meets every limit.
// Everything is checked with the test's own forward kinematics, angles and distances.
#include "../solver/ik/path_joint_space.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ikd/ik/path.h"
#include "ikd/ik/trajectory.h"
#include "ikd/planning/scene.h"

namespace ikd::ik {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kLimbRadius = 0.02;
constexpr double kPeriod = 0.01;  // s between samples
constexpr int kSamples = 201;

struct SpatialWitnessCase {
  std::string name;
  std::vector<double> lengths;
  double max_velocity, max_acceleration;
  std::vector<std::array<double, 7>> obstacles;  // capsule ends a, b and radius
  std::vector<std::array<double, 7>> motions;    // q0, a_1..a_3, phi_1..phi_3 per angle
};

// The minimal rotation taking unit t to unit d, applied to v (Rodrigues about t x d).
Eigen::Vector3d MinimalRotation(const Eigen::Vector3d& t, const Eigen::Vector3d& d,
                                const Eigen::Vector3d& v) {
  const Eigen::Vector3d s = t + d;
  return v - (s.dot(v) / (1.0 + t.dot(d))) * s + 2.0 * t.dot(v) * d;
}

// The test's own spatial forward kinematics: each limb at (bend, azimuth) in the frame (t, n)
// carried from the base's (z, x) along the chain by minimal rotations.
Eigen::Matrix3Xd SitesOf(const std::vector<double>& lengths, const std::vector<double>& q) {
  Eigen::Matrix3Xd sites = Eigen::Matrix3Xd::Zero(3, lengths.size() + 1);
  Eigen::Vector3d t = Eigen::Vector3d::UnitZ(), n = Eigen::Vector3d::UnitX();
  for (size_t k = 0; k < lengths.size(); ++k) {
    const double bend = q[2 * k], azimuth = q[2 * k + 1];
    const Eigen::Vector3d b = t.cross(n);
    const Eigen::Vector3d d =
        std::cos(bend) * t + std::sin(bend) * (std::cos(azimuth) * n + std::sin(azimuth) * b);
    sites.col(k + 1) = sites.col(k) + lengths[k] * d;
    n = MinimalRotation(t, d, n);
    n = (n - n.dot(d) * d).normalized();
    t = d;
  }
  return sites;
}

// The inverse of SitesOf: (bend, azimuth) per limb.
std::vector<double> AnglesOf(const Eigen::Matrix3Xd& sites) {
  std::vector<double> q;
  Eigen::Vector3d t = Eigen::Vector3d::UnitZ(), n = Eigen::Vector3d::UnitX();
  for (int k = 0; k + 1 < sites.cols(); ++k) {
    const Eigen::Vector3d d = (sites.col(k + 1) - sites.col(k)).normalized();
    const Eigen::Vector3d across = d - t.dot(d) * t;
    q.push_back(std::atan2(across.norm(), t.dot(d)));
    q.push_back(std::atan2(across.dot(t.cross(n)), across.dot(n)));
    n = MinimalRotation(t, d, n);
    n = (n - n.dot(d) * d).normalized();
    t = d;
  }
  return q;
}

Eigen::Matrix3Xd WitnessSites(const SpatialWitnessCase& c, double time) {
  std::vector<double> q;
  for (const auto& m : c.motions) {
    double angle = m[0];
    for (int h = 0; h < 3; ++h) angle += m[1 + h] * std::sin(kPi * (h + 1) * time + m[4 + h]);
    q.push_back(angle);
  }
  return SitesOf(c.lengths, q);
}

// Distance from x to the segment [a, b].
double PointSegment(const Eigen::Vector3d& x, const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  const Eigen::Vector3d ab = b - a;
  const double squared = ab.squaredNorm();
  const double s = squared > 0.0 ? std::clamp((x - a).dot(ab) / squared, 0.0, 1.0) : 0.0;
  return (a + s * ab - x).norm();
}

// Distance between two segments: the distance from a point moving along [p, q] to the convex
// segment [a, b] is convex in its parameter, so a golden-section search finds its least.
double SegmentSegment(const Eigen::Vector3d& p, const Eigen::Vector3d& q, const Eigen::Vector3d& a,
                      const Eigen::Vector3d& b) {
  const double golden = (std::sqrt(5.0) - 1.0) / 2.0;
  double lo = 0.0, hi = 1.0;
  auto at = [&](double s) { return PointSegment(p + s * (q - p), a, b); };
  for (int i = 0; i < 80; ++i) {
    const double s1 = hi - golden * (hi - lo), s2 = lo + golden * (hi - lo);
    if (at(s1) < at(s2)) {
      hi = s2;
    } else {
      lo = s1;
    }
  }
  return std::min({at(lo), at(0.0), at(1.0)});
}

double Clearance(const SpatialWitnessCase& c, const Eigen::Matrix3Xd& sites) {
  double least = std::numeric_limits<double>::infinity();
  for (int k = 0; k + 1 < sites.cols(); ++k) {
    for (const auto& o : c.obstacles) {
      const Eigen::Vector3d a(o[0], o[1], o[2]), b(o[3], o[4], o[5]);
      least = std::min(least,
                       SegmentSegment(sites.col(k), sites.col(k + 1), a, b) - o[6] - kLimbRadius);
    }
  }
  return least;
}

struct PathRates {
  double speed = 0.0, acceleration = 0.0;  // largest over joints and samples (rad/s, rad/s^2)
};

// Finite differences of the test's own angles, each continued across +-pi.
PathRates RatesOf(const std::vector<Eigen::Matrix3Xd>& path) {
  std::vector<std::vector<double>> q;
  for (const Eigen::Matrix3Xd& sites : path) {
    std::vector<double> angles = AnglesOf(sites);
    if (!q.empty()) {
      for (size_t j = 0; j < angles.size(); ++j) {
        angles[j] = q.back()[j] + std::remainder(angles[j] - q.back()[j], 2 * kPi);
      }
    }
    q.push_back(angles);
  }
  PathRates rates;
  for (size_t k = 1; k < q.size(); ++k) {
    for (size_t j = 0; j < q[k].size(); ++j) {
      const double v = (q[k][j] - q[k - 1][j]) / kPeriod;
      rates.speed = std::max(rates.speed, std::abs(v));
      if (k + 1 < q.size()) {
        const double a = (q[k + 1][j] - 2.0 * q[k][j] + q[k - 1][j]) / (kPeriod * kPeriod);
        rates.acceleration = std::max(rates.acceleration, std::abs(a));
      }
    }
  }
  return rates;
}

// bench/paths --seed=2 spatial-obstacles #38.
SpatialWitnessCase Seed2Bench38() {
  return {
      "seed2_spatial_obstacles_38",
      {0.13272160123272775, 0.23091367704171975, 0.16885634340214017, 0.19095935554466636},
      5.5073793171501961,
      22.040147592989534,
      {{0.17514895539529265, 0.028906098413462145, 0.44095153142273252, 0.22762178711982736,
        0.19916115378615781, 0.48582975238860809, 0.0479999241210603},
       {-0.38440129230251902, -0.065185976880926352, 0.15119413603231233, -0.26444594471351973,
        -0.045300245689357241, 0.09665865047438757, 0.041874739841185671},
       {-0.09787326067125296, -0.011340673743873033, -0.04492236538724264, -0.09787326067125296,
        -0.011340673743873033, -0.04492236538724264, 0.055075528693910442},
       {0.17347639344575538, 0.080578995952238913, -0.0084512628509111065, 0.21714955752750792,
        0.097789069658346439, -0.051711230127594446, 0.059263480501739657},
       {-0.012637358822580755, -0.10469889465826007, 0.092858913534585669, -0.14199206354222049,
        -0.10218921008505286, 0.11795935977177527, 0.030480833166779596},
       {-0.090443295439700991, -0.16831041152695908, 0.067967744144430159, 0.0051074292482009426,
        -0.017450934529348761, 0.13875128251305338, 0.041844068841260018},
       {0.03370621024242676, 0.12988390383487311, -0.096952616290980051, 0.021929491995257469,
        0.065861826431630799, -0.08147676074344444, 0.053300524308338613},
       {-0.019092964453337219, -0.36538384579934863, 0.41761012968811329, -0.019092964453337219,
        -0.36538384579934863, 0.41761012968811329, 0.039095722040803936},
       {0.044139220020284073, -0.046717479861094556, 0.14207714992793874, 0.044139220020284073,
        -0.046717479861094556, 0.14207714992793874, 0.034303506591992029}},
      {{1.2403786128389811, 0.38837175843694755, 0.01425245280002878, 0.04563541545025443,
        6.1508591176963279, 2.1422534217018576, 1.7757062452621089},
       {-0.25521701277918352, 0.47584840108515725, 0.12240162016929448, 0.040830121941610079,
        3.0965410608511537, 0.21356892668523575, 1.7502530074104439},
       {1.0956487277623341, 0.5058556878045346, 0.14071990343229498, 0.025384300397449974,
        3.4374101729704827, 4.8519432036090988, 3.7845793718271037},
       {3.1083810554032318, 0.89663658769927201, 0.13344732919149671, 0.017609190650620079,
        0.045338411445228308, 5.4885939784646691, 5.5998662410672724},
       {1.5538933077849004, 0.38036088825025166, 0.057727037560526356, 0.015620055371813138,
        4.1216160272190585, 5.5698218520198139, 0.66068445722961266},
       {2.8604632523088895, 0.19011411328782057, 0.18861938029102226, 0.086129144768931964,
        5.2023261895065254, 0.99172587908731724, 0.23377627008023147},
       {0.89125299224949495, 0.13767761485054028, 0.069996398888085065, 0.047974340472038766,
        3.2442161143530965, 1.3492454566503418, 6.0726223599547575},
       {-0.68879949222424619, 0.59318117027904194, 0.21613920632425304, 0.041026863828498565,
        3.8838744383114205, 3.8587888415358127, 5.8643540753006871}}};
}

// bench/paths --seed=3 spatial-obstacles #19.
SpatialWitnessCase Seed3Bench19() {
  return {"seed3_spatial_obstacles_19",
          {0.23502548801096607, 0.12050674528010077, 0.1678980036067263, 0.18874943955656559,
           0.14420072654722388},
          5.3105161159863501,
          23.669011419223949,
          {{-0.1084211103686816, -0.38970496015538397, -0.48005293890215167, -0.1084211103686816,
            -0.38970496015538397, -0.48005293890215167, 0.047600821227562318},
           {-0.12153051063756537, -0.28028946272798233, -0.34851775855071748, -0.12153051063756537,
            -0.28028946272798233, -0.34851775855071748, 0.040832136223780804},
           {-0.068255644206299121, 0.21997867246252961, 0.32647304427992468, -0.068255644206299121,
            0.21997867246252961, 0.32647304427992468, 0.031432438780848448},
           {-0.15731954904144629, 0.039176076934917377, 0.45881986407545444, -0.081014394955555777,
            0.15001704213352546, 0.4036184790825405, 0.054612949693492396}},
          {{2.3809937150986427, 0.52246904347944434, 0.1134411409909647, 0.028602268395684392,
            1.0284483297696296, 4.0626765375272429, 3.1914783587191251},
           {-2.5828780662167721, 0.65780244344170569, 0.17455455602283965, 0.012759055193607736,
            4.9221435415906436, 3.7162230604123234, 3.5792457221684084},
           {1.1000036261145285, 0.51773851831934858, 0.065776348751227218, 0.030841530463403211,
            2.9777865932495864, 1.8894413682742799, 2.887746723570829},
           {1.6166394691395958, 0.32447860820131269, 0.027584620733976328, 0.09523347480109029,
            1.7186517379280504, 1.9477249625502004, 4.769062466550241},
           {1.029143238395495, 0.55219580340469865, 0.04971341010642779, 0.045016448516578524,
            4.2759562101391699, 1.0756782751514544, 4.8160436549503567},
           {2.4960183911416971, 0.64040273120915481, 0.073549775199512502, 0.10753998095011946,
            0.16078159313860757, 4.0380274462695951, 4.5631144824534742},
           {1.3633051128381157, 0.45582149895003971, 0.057716377055646133, 0.0034041681069690408,
            5.8321473286221144, 5.2388263463470537, 4.9026762992212243},
           {-0.094260278539675113, 0.86134892398643237, 0.029054706610490311, 0.072999559105631773,
            1.7933334834167125, 3.5244544221525533, 4.8242385016410605},
           {0.93364254005818248, 0.48951450737738317, 0.049821302862871113, 0.06243030175423462,
            5.8322454890202264, 1.3829502585983637, 2.7958313732036646},
           {-2.6171908125822712, 0.013057699916702137, 0.055978557923984401, 0.085048384335759467,
            1.4816696156268749, 2.2446872642103899, 2.6396910765950126}}};
}

void PrintTo(const SpatialWitnessCase& c, std::ostream* os) { *os << c.name; }

// The scenario as the library sees it.
struct Problem {
  Arm arm;
  planning::Scene scene;
  Trajectory path;
  std::vector<double> times;
  std::vector<Eigen::Matrix3Xd> witness;
};

Problem Build(const SpatialWitnessCase& c) {
  ArmSpec spec;
  spec.planar = false;
  for (double length : c.lengths) spec.limbs.push_back({length, kLimbRadius});
  spec.joint_limits.assign(c.lengths.size() - 1, JointLimit{0.0, 2.2});
  spec.default_rate_limit = {c.max_velocity, c.max_acceleration};
  std::vector<planning::Obstacle> obstacles;
  for (const auto& o : c.obstacles) {
    obstacles.push_back({"o" + std::to_string(obstacles.size()),
                         planning::Capsule{{o[0], o[1], o[2]}, {o[3], o[4], o[5]}, o[6]}});
  }
  std::vector<Waypoint> waypoints;
  std::vector<Eigen::Matrix3Xd> witness;
  for (int k = 0; k < kSamples; ++k) {
    witness.push_back(WitnessSites(c, kPeriod * k));
    waypoints.push_back({kPeriod * k, witness.back().col(witness.back().cols() - 1)});
  }
  Trajectory path = *Trajectory::FromWaypoints(waypoints, Interpolation::kLinear);
  std::vector<double> times = *path.SampleTimes(kPeriod);
  return {*Arm::Create(spec), *planning::Scene::Create(obstacles), std::move(path),
          std::move(times), std::move(witness)};
}

// Hand on the witness's hand and limbs at their lengths at every sample, and clear of every
// obstacle (the test's own distances); returns the sites.
std::vector<Eigen::Matrix3Xd> CheckedSites(const SpatialWitnessCase& c, const Problem& p,
                                           const std::vector<IkResult>& steps) {
  std::vector<Eigen::Matrix3Xd> path;
  EXPECT_EQ(steps.size(), p.witness.size());
  for (size_t k = 0; k < steps.size() && k < p.witness.size(); ++k) {
    const Eigen::Matrix3Xd& sites = steps[k].sites;
    const int hand = static_cast<int>(sites.cols()) - 1;
    EXPECT_LT((sites.col(hand) - p.witness[k].col(hand)).norm(), 1e-9) << "sample " << k;
    for (size_t l = 0; l < c.lengths.size(); ++l) {
      EXPECT_NEAR((sites.col(l + 1) - sites.col(l)).norm() / c.lengths[l], 1.0, 1e-10)
          << "sample " << k << ", limb " << l;
    }
    EXPECT_GE(Clearance(c, sites), 0.0) << "sample " << k;
    path.push_back(sites);
  }
  return path;
}

class SpatialWitnessTest : public ::testing::TestWithParam<SpatialWitnessCase> {};

// The witness clears every obstacle and meets the rate limits (1.5x its own): a path within
// them exists, and the plan (the joint-space start, optimized) meets every limit.
TEST_P(SpatialWitnessTest, PlanMeetsTheRatesWhereTheWitnessDoes) {
  const SpatialWitnessCase& c = GetParam();
  const Problem p = Build(c);
  const PathRates witness = RatesOf(p.witness);
  ASSERT_LE(witness.speed, c.max_velocity);
  ASSERT_LE(witness.acceleration, c.max_acceleration);
  for (const Eigen::Matrix3Xd& sites : p.witness) ASSERT_GE(Clearance(c, sites), 0.0);
  auto plan = PlanPath(p.arm, &p.scene, p.path, p.times, IkOptions{}, p.witness.front());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->summary.IsSolutionUsable()) << plan->summary.BriefReport();
  EXPECT_EQ(plan->summary.start, 8) << "the joint-space start";
  // The plan starts where the arm stands (measured 1.1e-9 m: the first step's projection).
  EXPECT_LT((plan->steps.front().sites - p.witness.front()).colwise().norm().maxCoeff(), 1e-8);
  const PathRates rates = RatesOf(CheckedSites(c, p, plan->steps));
  EXPECT_LE(rates.speed, c.max_velocity * (1.0 + 1e-6));
  EXPECT_LE(rates.acceleration, c.max_acceleration * (1.0 + 1e-6));
}

// The start itself, before any optimization: it begins at the given first sample, follows the
// hand path clear of the obstacles with exact limbs, and its top joint speed is a small share
// of the Cartesian driver's, which spins an azimuth (measured: 14.9 against 275 rad/s on #38,
// 25.2 against 242 rad/s on #19; the witness's 3.7 and 3.5).
TEST_P(SpatialWitnessTest, StartMovesTheJointsAboutAsLittleAsTheWitness) {
  const SpatialWitnessCase& c = GetParam();
  const Problem p = Build(c);
  IkOptions options;
  auto projector = ArmTracker::Create(p.arm, &p.scene, options, p.witness.front());
  ASSERT_TRUE(projector.ok());
  IkResult first;
  first.time = p.times.front();
  first.sites = p.witness.front();
  first.angles = p.arm.AnglesFromSites(first.sites);
  auto start = internal::TrackInJointSpace(p.arm, p.path, p.times, options, *projector, first, {});
  ASSERT_TRUE(start.ok()) << start.status();
  ASSERT_TRUE(start->has_value());
  EXPECT_EQ((**start).front().sites, p.witness.front());
  const PathRates rates = RatesOf(CheckedSites(c, p, **start));
  const double witness = RatesOf(p.witness).speed;
  ASSERT_LT(witness, 4.0);
  auto driver = PathDriver::Create(p.arm, &p.scene, p.path, options, p.witness.front());
  ASSERT_TRUE(driver.ok());
  std::vector<Eigen::Matrix3Xd> cartesian;
  for (double t : p.times) cartesian.push_back(driver->StepTo(t)->sites);
  EXPECT_LT(rates.speed, 0.15 * RatesOf(cartesian).speed);
  EXPECT_LT(rates.speed, 10.0 * witness);
}

// Same seed, same bytes, through the joint-space start too.
TEST_P(SpatialWitnessTest, SamePlanTwice) {
  const Problem p = Build(GetParam());
  auto first = PlanPath(p.arm, &p.scene, p.path, p.times, IkOptions{}, p.witness.front());
  auto second = PlanPath(p.arm, &p.scene, p.path, p.times, IkOptions{}, p.witness.front());
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_EQ(first->steps.size(), second->steps.size());
  for (size_t k = 0; k < first->steps.size(); ++k) {
    const Eigen::Matrix3Xd& a = first->steps[k].sites;
    const Eigen::Matrix3Xd& b = second->steps[k].sites;
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(double) * a.size()), 0) << "sample " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(BenchPaths, SpatialWitnessTest,
                         ::testing::Values(Seed2Bench38(), Seed3Bench19()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ikd::ik
