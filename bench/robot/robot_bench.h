// Shared pieces of the industrial-arm IK benchmark (issue 5): one solver answer, and Orocos
// KDL's position IK solvers on a chain built from ikd's ChainSpec (kdl_ik.cc, compiled only
// when KDL was found at configure time).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "ikd/robot/chain.h"
#include "ikd/robot/robot.h"

namespace ikd::bench {

// Statistics of per-call times (µs).
struct Times {
  double mean = 0, p50 = 0, p95 = 0, p99 = 0, max = 0;
};
Times Summarize(std::vector<double> us);

// Joint values drawn uniformly within the limits (+-pi for a continuous joint).
Eigen::VectorXd RandomInsideLimits(const robot::Robot& robot, std::mt19937_64& rng);

// The closed-form tables (closed_form_tables.cc): every branch of random poses by
// robot::AnalyticIk, per arm, beside the numeric branch search where that is affordable.
struct NamedRobot {
  const char* name;
  const robot::Robot* robot;
};
void PrintClosedFormTables(const std::vector<NamedRobot>& robots, int poses, uint64_t seed);

// What one IK call returned. `claimed`: the solver's own verdict (ikd kReached, KDL return code
// >= 0); the benchmark judges every answer by forward kinematics itself.
struct IkAnswer {
  Eigen::VectorXd q;
  bool claimed = false;
  double seconds = 0.0;  // wall time of the solver call alone
  int code = 0;          // the solver's own status: ikd planning::StepStatus, KDL return code
  int restarts = 0;      // ikd only
  int projections = 0;   // ikd only
};

#ifdef IKD_HAVE_KDL
// NR_JL; LMA with unit task-space weights; LMA with KDL's default weights (rotation 0.01).
enum class KdlMethod { kNrJl, kLma, kLmaDefaultWeights };
const char* KdlMethodName(KdlMethod method);  // "KDL NR_JL", "KDL LMA", "KDL LMA default L"

// One KDL position IK solver on the chain of `spec` (revolute joints only), its stopping eps set
// so that a stop leaves position and rotation errors within `tolerance` (m, rad). The KDL
// chain's forward kinematics is checked against ikd's ToolPose at random configurations (1e-9)
// and the program exits when they differ.
class KdlIk {
 public:
  virtual ~KdlIk() = default;
  // CartToJnt from `seed` to the tool pose `target`; only that call is timed.
  virtual IkAnswer Solve(const Eigen::VectorXd& seed, const Eigen::Isometry3d& target) = 0;
};
std::unique_ptr<KdlIk> MakeKdlIk(const robot::ChainSpec& spec, KdlMethod method, double tolerance);

const char* KdlVersion();
#endif

}  // namespace ikd::bench
