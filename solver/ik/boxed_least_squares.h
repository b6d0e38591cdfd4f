// Damped least squares within per-variable bounds (internal): the rate-limited trackers'
// closest state within the servo limits (ik/rate_limit.cc, robot/robot_rate_limit.cc).
#pragma once

#include <Eigen/Core>

namespace ikd::ik::internal {

// min |A d - b|^2 + mu d' W d over lo <= d <= hi, for a few rows (A: m x n, m small), a
// positive diagonal W (`weight`) and mu > 0 (a Levenberg-Marquardt step). Requires lo <= hi
// (0 need not lie between them).
Eigen::VectorXd BoxedLeastSquares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                                  const Eigen::VectorXd& weight, const Eigen::VectorXd& lo,
                                  const Eigen::VectorXd& hi, double mu);

}  // namespace ikd::ik::internal
