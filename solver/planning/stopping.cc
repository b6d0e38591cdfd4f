#include "ikd/planning/stopping.h"

#include <cmath>
#include <vector>

namespace ikd::planning {

bool CanStopClear(JointRateWindow window, const ArmBody& body, const Scene* scene,
                  const Eigen::VectorXd& q, const Eigen::VectorXd& v, double dt, double clearance,
                  int max_steps) {
  if (clearance < 0.0) return false;
  if (std::isinf(clearance)) return true;  // nothing to collide with: no stop to simulate
  window.Answer(q, v, dt);
  std::vector<Eigen::VectorXd> rows{q};
  Eigen::VectorXd travel = Eigen::VectorXd::Zero(q.size());  // each joint's turn (never back)
  for (int k = 0;; ++k) {
    const Eigen::VectorXd next = window.Braked(dt);
    const Eigen::VectorXd step = next - rows.back();
    if (step.isZero(0.0)) break;
    if (k == max_steps) return false;
    travel += step.cwiseAbs();
    window.Answer(next, step / dt, dt);
    rows.push_back(next);
  }
  // A point moves at most the bound, two points close in on each other at most twice as fast.
  if (rows.size() == 1 || clearance > 2.0 * body.TravelBound(travel)) return true;
  Eigen::MatrixXd path(static_cast<int>(rows.size()), q.size());
  for (int k = 0; k < path.rows(); ++k) path.row(k) = rows[k].transpose();
  return StaysClearAlong(body, scene, path);
}

}  // namespace ikd::planning
