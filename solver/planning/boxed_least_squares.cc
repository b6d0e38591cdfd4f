#include "ikd/planning/boxed_least_squares.h"

#include <algorithm>
#include <vector>

#include <Eigen/Cholesky>

namespace ikd::planning {

Eigen::VectorXd BoxedLeastSquares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                                  const Eigen::VectorXd& weight, const Eigen::VectorXd& lo,
                                  const Eigen::VectorXd& hi, double mu) {
  // Primal active sets: from a point inside the box, towards the free variables' damped least
  // squares in its m x m form (push-through identity), d_F = W_F^-1 A_F' (A_F W_F^-1 A_F' +
  // mu I)^-1 r, as far as the box allows, the variable that meets its bound held there; at the
  // free optimum, the held variable whose gradient points most into the box released.
  const int n = static_cast<int>(a.cols());
  const int m = static_cast<int>(a.rows());
  const Eigen::MatrixXd scaled = a * weight.cwiseInverse().asDiagonal();
  std::vector<bool> held(n, false);
  Eigen::VectorXd d(n);
  for (int j = 0; j < n; ++j) {
    d[j] = std::clamp(0.0, lo[j], hi[j]);
    held[j] = d[j] != 0.0;  // 0 outside the box: start at the bound
  }
  Eigen::VectorXd goal(n);
  for (int round = 0; round < 4 * n + 8; ++round) {
    Eigen::VectorXd rest = b;
    Eigen::MatrixXd normal = mu * Eigen::MatrixXd::Identity(m, m);
    for (int j = 0; j < n; ++j) {
      if (held[j])
        rest -= a.col(j) * d[j];
      else
        normal += scaled.col(j) * a.col(j).transpose();
    }
    const Eigen::VectorXd multiplier = normal.ldlt().solve(rest);
    double step = 1.0;
    int blocking = -1;
    for (int j = 0; j < n; ++j) {
      goal[j] = held[j] ? d[j] : scaled.col(j).dot(multiplier);
      const double bound = goal[j] > hi[j] ? hi[j] : goal[j] < lo[j] ? lo[j] : goal[j];
      if (bound == goal[j]) continue;
      const double reach = (bound - d[j]) / (goal[j] - d[j]);
      if (reach < step) step = reach, blocking = j;
    }
    if (blocking >= 0) {
      d += std::max(0.0, step) * (goal - d);
      d[blocking] = goal[blocking] > hi[blocking] ? hi[blocking] : lo[blocking];
      held[blocking] = true;
      continue;
    }
    d = goal;
    const Eigen::VectorXd gradient = a.transpose() * (a * d - b) + mu * weight.cwiseProduct(d);
    int release = -1;
    double pull = 0.0;
    for (int j = 0; j < n; ++j) {
      if (!held[j]) continue;
      const double inward = d[j] >= hi[j] ? gradient[j] : d[j] <= lo[j] ? -gradient[j] : 0.0;
      if (inward > pull) pull = inward, release = j;
    }
    if (release < 0) break;
    held[release] = false;
  }
  for (int j = 0; j < n; ++j) d[j] = std::clamp(d[j], lo[j], hi[j]);
  return d;
}

double RelativeDamping(const Eigen::MatrixXd& a, const Eigen::VectorXd& weight, double relative) {
  const int m = static_cast<int>(a.rows());
  return relative * (a * weight.cwiseInverse().asDiagonal() * a.transpose()).trace() / m + 1e-300;
}

Eigen::VectorXd BoxedLeastSquaresWithFloors(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                                            const Eigen::MatrixXd& g, const Eigen::VectorXd& floor,
                                            double heavy, const Eigen::VectorXd& weight,
                                            const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
                                            double mu) {
  const int m = static_cast<int>(a.rows());
  const int p = static_cast<int>(g.rows());
  std::vector<int> active;
  Eigen::VectorXd d;
  for (int round = 0; round <= p; ++round) {
    Eigen::MatrixXd rows(m + active.size(), a.cols());
    Eigen::VectorXd wanted(rows.rows());
    rows.topRows(m) = a;
    wanted.head(m) = b;
    for (size_t i = 0; i < active.size(); ++i) {
      rows.row(m + i) = heavy * g.row(active[i]);
      wanted[m + i] = heavy * floor[active[i]];
    }
    d = BoxedLeastSquares(rows, wanted, weight, lo, hi, mu);
    const size_t before = active.size();
    for (int i = 0; i < p; ++i) {
      const bool known = std::find(active.begin(), active.end(), i) != active.end();
      if (!known && g.row(i).dot(d) < floor[i]) active.push_back(i);
    }
    if (active.size() == before) break;
  }
  return d;
}

}  // namespace ikd::planning
