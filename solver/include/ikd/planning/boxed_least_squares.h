// Damped least squares within per-variable bounds: the rate-limited trackers' closest state
// within the servo limits (ik/rate_limit.cc, robot/robot_rate_limit.cc), for any arm.
#pragma once

#include <Eigen/Core>

namespace ikd::planning {

// min |A d - b|^2 + mu d' W d over lo <= d <= hi, for a few rows (A: m x n, m small), a
// positive diagonal W (`weight`) and mu > 0 (a Levenberg-Marquardt step). Requires lo <= hi
// (0 need not lie between them).
Eigen::VectorXd BoxedLeastSquares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                                  const Eigen::VectorXd& weight, const Eigen::VectorXd& lo,
                                  const Eigen::VectorXd& hi, double mu);

// mu for BoxedLeastSquares relative to the rows' scale: `relative` times the mean diagonal
// of A W^-1 A' (Levenberg-Marquardt's damping, scale-free).
double RelativeDamping(const Eigen::MatrixXd& a, const Eigen::VectorXd& weight, double relative);

// BoxedLeastSquares(a, b, ...) with inequalities g_i d >= floor_i (g: one row each) kept as
// active equalities: a row whose step falls below its floor joins the rows, `heavy` times as
// heavy as a's, asking for its floor, and the step is solved again, until none joins.
Eigen::VectorXd BoxedLeastSquaresWithFloors(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                                            const Eigen::MatrixXd& g, const Eigen::VectorXd& floor,
                                            double heavy, const Eigen::VectorXd& weight,
                                            const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
                                            double mu);

}  // namespace ikd::planning
