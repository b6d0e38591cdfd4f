// mock_arm's check of the commanded stream against the arm's declared servo limits, with
// differences of its own over the states' times: per joint v_k = dq_k / dt_k,
// a_k = (v_k - v_{k-1}) / dt_k and j_k = (a_k - a_{k-1}) / dt_k, from rest at the first state
// (as the server's Track starts a stream).
#pragma once

#include <limits>
#include <vector>

#include <Eigen/Core>

namespace ikd::clients::mock {

// One joint's declared limits (+inf: none declared).
struct DeclaredRate {
  double velocity = std::numeric_limits<double>::infinity();      // rad/s
  double acceleration = std::numeric_limits<double>::infinity();  // rad/s^2
  double jerk = std::numeric_limits<double>::infinity();          // rad/s^3
};

class RateCheck {
 public:
  explicit RateCheck(std::vector<DeclaredRate> joints) : joints_(std::move(joints)) {}

  // The next state: its time and each joint's change from the previous state (ignored on the
  // first). True when a rate passes its limit by more than a relative kSlack. A state at the
  // previous one's time (or before) only moves the check on.
  bool Observe(double time, const Eigen::VectorXd& step);

  // The largest |rate| / limit seen so far (0 where nothing is declared).
  double max_velocity_ratio() const { return max_velocity_ratio_; }
  double max_acceleration_ratio() const { return max_acceleration_ratio_; }
  double max_jerk_ratio() const { return max_jerk_ratio_; }

  static constexpr double kSlack = 1e-6;

 private:
  std::vector<DeclaredRate> joints_;
  bool started_ = false;
  double time_ = 0.0;
  Eigen::VectorXd v_, a_;
  double max_velocity_ratio_ = 0.0, max_acceleration_ratio_ = 0.0, max_jerk_ratio_ = 0.0;
};

}  // namespace ikd::clients::mock
