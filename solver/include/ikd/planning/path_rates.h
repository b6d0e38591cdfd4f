// A sampled joint path's rates against the servo limits, for any arm: the velocity into each
// sample and the acceleration at it as fractions of the limits, the feasible time scaling, and
// when a path over its limits is worth another start of the planner. The chain arms' PlanPath
// (ik/path.h) and the industrial arms' PlanRobotPath (robot/robot_path.h) both check with it.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Core>

namespace ikd::planning {

// A rate counts as over its limit beyond this relative slack (rounding of the differences).
inline constexpr double kRateSlack = 1e-9;

// Per sample k the largest |v| / v_max over the joints of the velocity into it (0 at k = 0),
// of the acceleration at it, |a| / a_max (0 at the ends), and of the jerk into it, |j| / j_max
// (0 where the accelerations on both sides are not both defined), and their maxima.
struct PathRates {
  std::vector<double> velocity_ratio;
  std::vector<double> acceleration_ratio;
  std::vector<double> jerk_ratio;
  double max_velocity_ratio = 0.0;
  double max_acceleration_ratio = 0.0;
  double max_jerk_ratio = 0.0;

  bool VelocityOver(int k) const { return velocity_ratio[k] > 1.0 + kRateSlack; }
  bool AccelerationOver(int k) const { return acceleration_ratio[k] > 1.0 + kRateSlack; }
  bool JerkOver(int k) const { return jerk_ratio[k] > 1.0 + kRateSlack; }
  // The slowdown that brings every rate within its limit: max(v ratio, sqrt(a ratio),
  // cbrt(j ratio)) (v scales as 1/s, a as 1/s^2, j as 1/s^3).
  double FeasibleTimeScaling() const;
};

// `q`: one row per sample (joint values, continued across +-pi), `times` strictly increasing;
// v_k = (q_k - q_{k-1}) / (t_k - t_{k-1}), a_k = (v_{k+1} - v_k) / ((t_{k+1} - t_{k-1}) / 2),
// j_k = (a_k - a_{k-1}) / (t_k - t_{k-1}); limits per joint (+infinity: none).
PathRates RatesOfPath(const Eigen::MatrixXd& q, const std::vector<double>& times,
                      const Eigen::VectorXd& max_velocity, const Eigen::VectorXd& max_acceleration,
                      const Eigen::VectorXd& max_jerk);

// Folds a path's rates into a path summary (ik::PathSummary, robot::RobotPathSummary): the
// largest ratios so far, and the feasible time scaling where the arm declares rate limits.
template <typename Summary>
void AddRatesTo(const PathRates& rates, bool has_rate_limits, Summary& summary) {
  summary.max_velocity_ratio = std::max(summary.max_velocity_ratio, rates.max_velocity_ratio);
  summary.max_acceleration_ratio =
      std::max(summary.max_acceleration_ratio, rates.max_acceleration_ratio);
  summary.max_jerk_ratio = std::max(summary.max_jerk_ratio, rates.max_jerk_ratio);
  if (has_rate_limits) {
    summary.feasible_time_scaling =
        std::max({summary.max_velocity_ratio, std::sqrt(summary.max_acceleration_ratio),
                  std::cbrt(summary.max_jerk_ratio)});
  }
}

// Whether a path whose samples are all reached but for `over` of `samples` over a rate limit
// is worth another start: where it needs a time scaling up to 3 (bench/paths' improved cases
// started from scalings up to 2.5), or at most 2/3 of its samples are over (a jump between
// branches on a stretch: seeds 3 and 4 of bench/paths had clear paths at 5.4, 8.6 and 55 times
// the rates that other starts brought within them). A path over its rates nearly everywhere is
// too fast for any start, and trying them would only multiply its cost.
bool RatesWorthAnotherStart(int over, int samples, double feasible_time_scaling);

}  // namespace ikd::planning
