#include "ikd/planning/path_rates.h"

#include <algorithm>
#include <cmath>

namespace ikd::planning {

double PathRates::FeasibleTimeScaling() const {
  return std::max(max_velocity_ratio, std::sqrt(max_acceleration_ratio));
}

PathRates RatesOfPath(const Eigen::MatrixXd& q, const std::vector<double>& times,
                      const Eigen::VectorXd& max_velocity,
                      const Eigen::VectorXd& max_acceleration) {
  const int n = static_cast<int>(q.rows());
  PathRates rates;
  rates.velocity_ratio.assign(n, 0.0);
  rates.acceleration_ratio.assign(n, 0.0);
  auto velocity = [&](int k, int j) {  // from sample k - 1 to k
    return (q(k, j) - q(k - 1, j)) / (times[k] - times[k - 1]);
  };
  for (int k = 1; k < n; ++k) {
    double velocity_ratio = 0.0, acceleration_ratio = 0.0;
    for (int j = 0; j < q.cols(); ++j) {
      velocity_ratio = std::max(velocity_ratio, std::abs(velocity(k, j)) / max_velocity[j]);
      if (k + 1 < n) {
        // a_k = (v_{k+1} - v_k) / ((t_{k+1} - t_{k-1}) / 2)
        const double a =
            2.0 * (velocity(k + 1, j) - velocity(k, j)) / (times[k + 1] - times[k - 1]);
        acceleration_ratio = std::max(acceleration_ratio, std::abs(a) / max_acceleration[j]);
      }
    }
    rates.velocity_ratio[k] = velocity_ratio;
    rates.acceleration_ratio[k] = acceleration_ratio;
    rates.max_velocity_ratio = std::max(rates.max_velocity_ratio, velocity_ratio);
    rates.max_acceleration_ratio = std::max(rates.max_acceleration_ratio, acceleration_ratio);
  }
  return rates;
}

bool RatesWorthAnotherStart(int over, int samples, double feasible_time_scaling) {
  constexpr double kRetriedScaling = 3.0;
  constexpr double kRetriedShare = 2.0 / 3.0;
  return over > 0 && (feasible_time_scaling <= kRetriedScaling || over <= kRetriedShare * samples);
}

}  // namespace ikd::planning
