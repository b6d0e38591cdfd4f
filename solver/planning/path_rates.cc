#include "ikd/planning/path_rates.h"

#include <algorithm>
#include <cmath>

namespace ikd::planning {

double PathRates::FeasibleTimeScaling() const {
  return std::max(
      {max_velocity_ratio, std::sqrt(max_acceleration_ratio), std::cbrt(max_jerk_ratio)});
}

PathRates RatesOfPath(const Eigen::MatrixXd& q, const std::vector<double>& times,
                      const Eigen::VectorXd& max_velocity, const Eigen::VectorXd& max_acceleration,
                      const Eigen::VectorXd& max_jerk) {
  const int n = static_cast<int>(q.rows());
  PathRates rates;
  rates.velocity_ratio.assign(n, 0.0);
  rates.acceleration_ratio.assign(n, 0.0);
  rates.jerk_ratio.assign(n, 0.0);
  auto velocity = [&](int k, int j) {  // from sample k - 1 to k
    return (q(k, j) - q(k - 1, j)) / (times[k] - times[k - 1]);
  };
  auto acceleration = [&](int k, int j) {  // at sample k, 1 <= k <= n - 2
    return 2.0 * (velocity(k + 1, j) - velocity(k, j)) / (times[k + 1] - times[k - 1]);
  };
  for (int k = 1; k < n; ++k) {
    double velocity_ratio = 0.0, acceleration_ratio = 0.0, jerk_ratio = 0.0;
    for (int j = 0; j < q.cols(); ++j) {
      velocity_ratio = std::max(velocity_ratio, std::abs(velocity(k, j)) / max_velocity[j]);
      if (k + 1 < n) {
        acceleration_ratio =
            std::max(acceleration_ratio, std::abs(acceleration(k, j)) / max_acceleration[j]);
      }
      if (k >= 2 && k + 1 < n && std::isfinite(max_jerk[j])) {
        const double jerk =
            (acceleration(k, j) - acceleration(k - 1, j)) / (times[k] - times[k - 1]);
        jerk_ratio = std::max(jerk_ratio, std::abs(jerk) / max_jerk[j]);
      }
    }
    rates.velocity_ratio[k] = velocity_ratio;
    rates.acceleration_ratio[k] = acceleration_ratio;
    rates.jerk_ratio[k] = jerk_ratio;
    rates.max_velocity_ratio = std::max(rates.max_velocity_ratio, velocity_ratio);
    rates.max_acceleration_ratio = std::max(rates.max_acceleration_ratio, acceleration_ratio);
    rates.max_jerk_ratio = std::max(rates.max_jerk_ratio, jerk_ratio);
  }
  return rates;
}

bool RatesWorthAnotherStart(int over, int samples, double feasible_time_scaling) {
  constexpr double kRetriedScaling = 3.0;
  constexpr double kRetriedShare = 2.0 / 3.0;
  return over > 0 && (feasible_time_scaling <= kRetriedScaling || over <= kRetriedShare * samples);
}

}  // namespace ikd::planning
