// --trace of the joint-path benchmark (trace.h).
#include "trace.h"

#include <algorithm>
#include <cstdio>

#include "checker.h"

namespace ikd::bench::paths {

void TraceSites(const Scenario& s, const char* name, const std::vector<Eigen::Matrix3Xd>& sites) {
  std::vector<std::vector<double>> angles;
  for (const auto& sample : sites) angles.push_back(JointAngles(s.model, sample));
  const Eigen::MatrixXd q = Unwrap(angles);
  for (int k = 1; k < q.rows(); ++k) {
    Eigen::Index jv = 0, ja = 0;
    const Eigen::VectorXd v = (q.row(k) - q.row(k - 1)).transpose() / kSamplePeriod;
    const double speed = v.cwiseAbs().maxCoeff(&jv);
    double acceleration = 0.0;
    if (k + 1 < q.rows()) {
      const Eigen::VectorXd next = (q.row(k + 1) - q.row(k)).transpose() / kSamplePeriod;
      acceleration = ((next - v) / kSamplePeriod).cwiseAbs().maxCoeff(&ja);
    }
    const double clearance =
        std::min(MinObstacleClearance(s.model, sites[k]), MinSelfClearance(s.model, sites[k]));
    const double site_move = (sites[k] - sites[k - 1]).colwise().norm().maxCoeff();
    // An azimuth spins near either end of its bend's range: straight (0) or folded back (pi).
    double least = 0.0, most = 0.0;
    for (Eigen::Index j = 0; !s.model.planar && j < q.cols(); j += 2) {
      least = j == 0 ? q(k, j) : std::min(least, q(k, j));
      most = j == 0 ? q(k, j) : std::max(most, q(k, j));
    }
    const double limb_turn = MaxLimbTurnSpeed({sites[k - 1], sites[k]}, kSamplePeriod);
    std::printf("%s,%d,%.4g,%d,%.4g,%d,%.4g,%.4g,%.4g,%.4g,%.4g\n", name, k, speed, int(jv),
                acceleration, int(ja), clearance, site_move, least, most, limb_turn);
  }
}

void TraceWitness(const Scenario& s) {
  std::printf("witness: max speed %.4g rad/s, max acceleration %.4g rad/s^2 (limits x 1.5)\n",
              s.witness.speed, s.witness.acceleration);
  std::printf(
      "path,k,speed,speed_angle,acceleration,acceleration_angle,clearance,site_move,"
      "least_bend,most_bend,limb_turn\n");
  TraceSites(s, "witness", s.witness_sites);
}

}  // namespace ikd::bench::paths
