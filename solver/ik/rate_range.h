// The velocity range of one joint over the next interval of a live stream (internal; shared by
// the chain arms' and the industrial arms' rate-limited Track).
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

namespace ikd::internal {

struct JointRate {
  double max_velocity = 0.0;      // may be +infinity
  double max_acceleration = 0.0;  // may be +infinity
  std::optional<std::pair<double, double>> range;  // position limits (lower, upper), if any
};

// The velocities a joint at position q moving at v may take over the next dt: |v'| <= v_max,
// |v' - v| <= a_max dt, and no faster towards a position limit than a stop at a_max allows
// (v'^2 <= 2 a_max distance). An empty range (a velocity above a limit, e.g. a newly lowered
// one) brakes at a_max.
inline std::pair<double, double> VelocityRange(const JointRate& rate, double q, double v,
                                               double dt) {
  const double reach = rate.max_acceleration * dt;
  double lo = std::max(-rate.max_velocity, v - reach);
  double hi = std::min(rate.max_velocity, v + reach);
  if (rate.range) {
    hi = std::min(hi, std::sqrt(2.0 * rate.max_acceleration * std::max(0.0, rate.range->second - q)));
    lo = std::max(lo, -std::sqrt(2.0 * rate.max_acceleration * std::max(0.0, q - rate.range->first)));
  }
  if (lo > hi) lo = hi = lo > 0.0 ? v - reach : v + reach;
  return {lo, hi};
}

// The largest fraction of the wanted velocity that stays within [lo, hi] (1 when it does).
inline double FeasibleFraction(double wanted, std::pair<double, double> range) {
  if (wanted > range.second) return std::max(0.0, range.second) / wanted;
  if (wanted < range.first) return std::min(0.0, range.first) / wanted;
  return 1.0;
}

// `range` narrowed so that a joint `distance` short of where the target is (moving at
// v_target) closes in no faster than a stop at a_max relative to the target allows: it arrives
// with the target's velocity instead of swinging past. In steps of dt the fastest closing speed
// u with u dt + (u - a dt) dt + ... <= |d| is a dt (sqrt(1/4 + 2 |d| / (a dt^2)) - 1/2):
// sqrt(2 a |d|) far out, |d| / dt close in (no chatter at arrival). Never narrower than a
// brake at a_max from the current velocity v.
inline std::pair<double, double> BrakedForTarget(std::pair<double, double> range, double distance,
                                                 double v_target, double v, double a, double dt) {
  if (!std::isfinite(a) || distance == 0.0) return range;
  const double reach = a * dt;
  const double closing = reach * (std::sqrt(0.25 + 2.0 * std::abs(distance) / (reach * dt)) - 0.5);
  auto [lo, hi] = range;
  if (distance > 0.0) hi = std::max(std::min(hi, v_target + closing), std::min(lo, v - reach));
  if (distance < 0.0) lo = std::min(std::max(lo, v_target - closing), std::max(hi, v + reach));
  return {std::min(lo, hi), std::max(lo, hi)};
}

// The step a joint at q may take over dt: its braked velocity range kept inside its plain one
// (the brake alone may leave it), times dt, then clipped to its position range, which comes
// first (a joint too fast to stop at a limit stops on it).
inline std::pair<double, double> StepRange(std::pair<double, double> plain,
                                           std::pair<double, double> braked, double dt,
                                           std::optional<std::pair<double, double>> position,
                                           double q) {
  double lo = std::clamp(braked.first, plain.first, plain.second) * dt;
  double hi = std::clamp(braked.second, plain.first, plain.second) * dt;
  if (position) {
    const double to_min = std::min(0.0, position->first - q);
    const double to_max = std::max(0.0, position->second - q);
    lo = std::clamp(lo, to_min, to_max);
    hi = std::clamp(hi, to_min, to_max);
  }
  return {lo, hi};
}

// Whether a limited answer takes the closest state within the limits over the cut way (the
// tracker's own answer cut to the limits): clearance first, so inside the safety margin the
// clearer state wins; else the closer one to the target, if it keeps the clearance the cut
// way has or the last answer had (up to the margin).
inline bool PreferClosest(double closest_clearance, double closest_distance, double cut_clearance,
                          double cut_distance, double last_clearance, double margin) {
  const double kept = std::min(margin, std::max(cut_clearance, last_clearance));
  const bool safer = cut_clearance < margin && closest_clearance > cut_clearance;
  const bool closer = closest_distance < cut_distance && closest_clearance >= kept;
  return safer || closer;
}

}  // namespace ikd::internal
