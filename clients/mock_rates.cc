#include "mock_rates.h"

#include <algorithm>
#include <cmath>

namespace ikd::clients::mock {

bool RateCheck::Observe(double time, const Eigen::VectorXd& step) {
  const int n = static_cast<int>(joints_.size());
  if (!started_ || step.size() != n) {
    started_ = true;
    time_ = time;
    v_ = a_ = Eigen::VectorXd::Zero(n);
    return false;
  }
  const double dt = time - time_;
  time_ = time;
  if (!(dt > 0.0)) return false;
  bool over = false;
  for (int j = 0; j < n; ++j) {
    const double v = step[j] / dt;
    const double a = (v - v_[j]) / dt;
    const double jerk = (a - a_[j]) / dt;
    const DeclaredRate& limit = joints_[j];
    const double ratios[] = {std::abs(v) / limit.velocity, std::abs(a) / limit.acceleration,
                             std::abs(jerk) / limit.jerk};
    max_velocity_ratio_ = std::max(max_velocity_ratio_, ratios[0]);
    max_acceleration_ratio_ = std::max(max_acceleration_ratio_, ratios[1]);
    max_jerk_ratio_ = std::max(max_jerk_ratio_, ratios[2]);
    for (const double ratio : ratios) over = over || ratio > 1.0 + kSlack;
    v_[j] = v;
    a_[j] = a;
  }
  return over;
}

}  // namespace ikd::clients::mock
