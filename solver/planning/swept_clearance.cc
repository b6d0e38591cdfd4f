#include "ikd/planning/swept_clearance.h"

#include <algorithm>
#include <cmath>
#include <queue>

namespace ikd::planning {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// One measured configuration of the motion: each link's clearance to the scene and the arm's
// self clearance.
struct Probe {
  double s = 0.0;
  Eigen::VectorXd link;
  double self = kInfinity;
  double least = kInfinity;
};

// An interval of the motion between two probes, with its lower bound.
struct Interval {
  int a = 0, b = 0;  // indices of its end probes
  double lower = 0.0;
  bool operator>(const Interval& other) const { return lower > other.lower; }
};

class Sweep {
 public:
  Sweep(const ArmBody& body, const Scene* scene, const Eigen::VectorXd& q_a,
        const Eigen::VectorXd& q_b)
      : body_(body), scene_(scene), q_a_(q_a), dq_(q_b - q_a) {}

  int Measure(double s) {
    Probe probe;
    probe.s = s;
    body_.Links(At(s), &links_);
    probe.link.resize(static_cast<int>(links_.size()));
    for (size_t k = 0; k < links_.size(); ++k) {
      const Capsule& c = links_[k];
      probe.link[k] = scene_ == nullptr ? kInfinity : scene_->MinSignedDistance(c.a, c.b, c.radius);
    }
    probe.self = body_.SelfClearance(links_);
    probe.least = std::min(probe.self, probe.link.size() > 0 ? probe.link.minCoeff() : kInfinity);
    probes_.push_back(std::move(probe));
    return static_cast<int>(probes_.size()) - 1;
  }

  // Sweep bound of each link, then the V through the ends (swept_clearance.h): link against
  // scene by its own bound, link against link by the two largest bounds together.
  Interval Bounded(int a, int b) {
    const Probe& pa = probes_[a];
    const Probe& pb = probes_[b];
    body_.SweepBounds(At(pa.s), At(pb.s), &bounds_);
    double lower = std::min(pa.least, pb.least);
    for (int k = 0; k < bounds_.size(); ++k) {
      lower = std::min(lower, 0.5 * (pa.link[k] + pb.link[k] - bounds_[k]));
    }
    if (std::isfinite(pa.self) || std::isfinite(pb.self)) {
      lower = std::min(lower, 0.5 * (pa.self + pb.self - TwoLargest(bounds_)));
    }
    return {a, b, lower};
  }

  const Probe& probe(int i) const { return probes_[i]; }
  int evaluations() const { return static_cast<int>(probes_.size()); }

 private:
  Eigen::VectorXd At(double s) const { return q_a_ + s * dq_; }

  static double TwoLargest(const Eigen::VectorXd& v) {
    double first = 0.0, second = 0.0;
    for (double x : v) {
      if (x > first) {
        second = first;
        first = x;
      } else {
        second = std::max(second, x);
      }
    }
    return first + second;
  }

  const ArmBody& body_;
  const Scene* scene_;
  Eigen::VectorXd q_a_, dq_;
  std::vector<Probe> probes_;
  std::vector<Capsule> links_;
  Eigen::VectorXd bounds_;
};

}  // namespace

double Clearance(const ArmBody& body, const Scene* scene, const Eigen::VectorXd& q) {
  std::vector<Capsule> links;
  body.Links(q, &links);
  double least = body.SelfClearance(links);
  if (scene == nullptr) return least;
  for (const Capsule& c : links) least = std::min(least, scene->MinSignedDistance(c.a, c.b, c.radius));
  return least;
}

SweptClearance SweptClearanceOf(const ArmBody& body, const Scene* scene, const Eigen::VectorXd& q_a,
                                const Eigen::VectorXd& q_b, const SweptClearanceOptions& options) {
  Sweep sweep(body, scene, q_a, q_b);
  const int a = sweep.Measure(0.0), b = sweep.Measure(1.0);
  SweptClearance result;
  auto note = [&](int i) {
    if (sweep.probe(i).least < result.min_clearance) {
      result.min_clearance = sweep.probe(i).least;
      result.at = sweep.probe(i).s;
    }
  };
  note(a);
  note(b);
  std::priority_queue<Interval, std::vector<Interval>, std::greater<Interval>> open;
  open.push(sweep.Bounded(a, b));
  // Stops at a measured touch (the motion collides; its depth is not refined) or when the
  // lowest bound is settled (then so is every other).
  while (result.min_clearance >= 0.0 && std::isfinite(result.min_clearance) &&
         sweep.evaluations() < options.max_evaluations) {
    const Interval lowest = open.top();
    const double tolerance = std::max(
        options.tolerance, options.relative_tolerance * std::max(result.min_clearance, 0.0));
    if (lowest.lower >= result.min_clearance - tolerance) break;
    open.pop();
    const int mid = sweep.Measure(0.5 * (sweep.probe(lowest.a).s + sweep.probe(lowest.b).s));
    note(mid);
    open.push(sweep.Bounded(lowest.a, mid));
    open.push(sweep.Bounded(mid, lowest.b));
  }
  if (result.min_clearance >= 0.0) {
    result.min_clearance = std::min(result.min_clearance, open.top().lower);
  }
  result.evaluations = sweep.evaluations();
  return result;
}

}  // namespace ikd::planning
