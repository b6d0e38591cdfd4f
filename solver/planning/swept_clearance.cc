#include "ikd/planning/swept_clearance.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <queue>
#include <utility>

namespace ikd::planning {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double TwoLargest(const Eigen::VectorXd& v) {
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

// One measured configuration: each link's clearance to the scene and the arm's self clearance
// per group of pairs (ArmBody::SelfGroups), at motion fraction s.
struct Probe {
  double s = 0.0;
  Eigen::VectorXd link;
  ArmBody::SelfGroups self;
  double least = kInfinity;
};

Probe Measure(const ArmBody& body, const Scene* scene, const Eigen::VectorXd& q,
              std::vector<Capsule>& links) {
  Probe probe;
  body.Links(q, &links);
  probe.link.resize(static_cast<int>(links.size()));
  for (size_t k = 0; k < links.size(); ++k) {
    const Capsule& c = links[k];
    probe.link[k] = scene == nullptr ? kInfinity : scene->MinSignedDistance(c.a, c.b, c.radius);
  }
  probe.self.fill(kInfinity);
  if (body.ChecksSelf()) body.SelfClearanceGroups(links, &probe.self);
  probe.least = probe.link.size() > 0 ? probe.link.minCoeff() : kInfinity;
  for (int g = 0; g < body.NumSelfGroups(); ++g) probe.least = std::min(probe.least, probe.self[g]);
  return probe;
}

// An interval of the motion between two probes, with its lower bound.
struct Interval {
  int a = 0, b = 0;  // indices of its end probes
  double lower = 0.0;
  bool operator>(const Interval& other) const { return lower > other.lower; }
};

// One motion q_a -> q_b, its two ends measured by the caller.
class Sweep {
 public:
  Sweep(const ArmBody& body, const Scene* scene, const Eigen::VectorXd& q_a,
        const Eigen::VectorXd& q_b, Probe start, Probe end)
      : body_(body), scene_(scene), q_a_(q_a), dq_(q_b - q_a) {
    start.s = 0.0;
    end.s = 1.0;
    probes_.push_back(std::move(start));
    probes_.push_back(std::move(end));
  }

  int Measure(double s) {
    probes_.push_back(planning::Measure(body_, scene_, At(s), links_));
    probes_.back().s = s;
    return static_cast<int>(probes_.size()) - 1;
  }

  // Sweep bound of each link, then the V through the ends (swept_clearance.h): link against
  // scene by its own bound, link against link by the bound of the pair's relative motion.
  Interval Bounded(int a, int b) {
    const Probe& pa = probes_[a];
    const Probe& pb = probes_[b];
    const Eigen::VectorXd q_a = At(pa.s), q_b = At(pb.s);
    body_.SweepBounds(q_a, q_b, &bounds_);
    double lower = std::min(pa.least, pb.least);
    for (int k = 0; k < bounds_.size(); ++k) {
      lower = std::min(lower, 0.5 * (pa.link[k] + pb.link[k] - bounds_[k]));
    }
    if (body_.ChecksSelf()) {
      body_.GroupSweeps(q_a, q_b, bounds_, &sweeps_);
      for (int g = 0; g < body_.NumSelfGroups(); ++g) {
        if (!std::isfinite(pa.self[g]) && !std::isfinite(pb.self[g])) continue;
        lower = std::min(lower, 0.5 * (pa.self[g] + pb.self[g] - sweeps_[g]));
      }
    }
    return {a, b, lower};
  }

  const Probe& probe(int i) const { return probes_[i]; }
  int evaluations() const { return static_cast<int>(probes_.size()); }

 private:
  Eigen::VectorXd At(double s) const { return q_a_ + s * dq_; }

  const ArmBody& body_;
  const Scene* scene_;
  Eigen::VectorXd q_a_, dq_;
  std::vector<Probe> probes_;
  std::vector<Capsule> links_;
  Eigen::VectorXd bounds_;
  ArmBody::SelfGroups sweeps_;
};

// The motion between two measured configurations, bisected as swept_clearance.h says.
SweptClearance Settle(const ArmBody& body, const Scene* scene, const Eigen::VectorXd& q_a,
                      const Eigen::VectorXd& q_b, Probe start, Probe end,
                      const SweptClearanceOptions& options) {
  Sweep sweep(body, scene, q_a, q_b, std::move(start), std::move(end));
  SweptClearance result;
  auto note = [&](int i) {
    if (sweep.probe(i).least < result.min_clearance) {
      result.min_clearance = sweep.probe(i).least;
      result.at = sweep.probe(i).s;
    }
  };
  note(0);
  note(1);
  std::priority_queue<Interval, std::vector<Interval>, std::greater<Interval>> open;
  open.push(sweep.Bounded(0, 1));
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

// Nothing to collide with: no obstacle and no pair of links checked.
bool NothingToCheck(const ArmBody& body, const Scene* scene) {
  return (scene == nullptr || scene->size() == 0) && !body.ChecksSelf();
}

// How far a run of steps can move each link and each self group's pairs one against the other,
// whatever its shape, from the joints' travel along it.
struct RunBounds {
  Eigen::VectorXd link;
  ArmBody::SelfGroups self;
};

RunBounds BoundsOfRun(const ArmBody& body, const Eigen::VectorXd& travel) {
  RunBounds run;
  body.TravelBounds(travel, &run.link);
  run.self.fill(0.0);
  if (body.ChecksSelf()) body.TravelGroupSweeps(travel, run.link, &run.self);
  return run;
}

// The least clearance a run can reach from its measured start alone: each link's and group's
// clearance less its bound.
double FromStart(const ArmBody& body, const Probe& a, const RunBounds& run) {
  double lower = kInfinity;
  for (int k = 0; k < run.link.size(); ++k) lower = std::min(lower, a.link[k] - run.link[k]);
  for (int g = 0; g < body.NumSelfGroups(); ++g) {
    if (std::isfinite(a.self[g])) lower = std::min(lower, a.self[g] - run.self[g]);
  }
  return lower;
}

// The V through a run's two measured ends (the rule of swept_clearance.h with the run's bounds).
double Through(const ArmBody& body, const Probe& a, const Probe& b, const RunBounds& run) {
  double lower = std::min(a.least, b.least);
  for (int k = 0; k < run.link.size(); ++k) {
    lower = std::min(lower, 0.5 * (a.link[k] + b.link[k] - run.link[k]));
  }
  for (int g = 0; g < body.NumSelfGroups(); ++g) {
    if (!std::isfinite(a.self[g]) && !std::isfinite(b.self[g])) continue;
    lower = std::min(lower, 0.5 * (a.self[g] + b.self[g] - run.self[g]));
  }
  return lower;
}

}  // namespace

void ArmBody::GroupSweeps(const Eigen::VectorXd& q_a, const Eigen::VectorXd& q_b,
                          const Eigen::VectorXd& bounds, SelfGroups* sweeps) const {
  (void)q_a;
  (void)q_b;
  (*sweeps)[0] = TwoLargest(bounds);
}

void ArmBody::TravelGroupSweeps(const Eigen::VectorXd& travel, const Eigen::VectorXd& bounds,
                                SelfGroups* sweeps) const {
  (void)travel;
  (*sweeps)[0] = TwoLargest(bounds);
}

double ArmBody::TravelBound(const Eigen::VectorXd& travel) const {
  Eigen::VectorXd bounds;
  TravelBounds(travel, &bounds);
  return bounds.size() == 0 ? 0.0 : bounds.maxCoeff();
}

double Clearance(const ArmBody& body, const Scene* scene, const Eigen::VectorXd& q) {
  std::vector<Capsule> links;
  return Measure(body, scene, q, links).least;
}

SweptClearance SweptClearanceOf(const ArmBody& body, const Scene* scene, const Eigen::VectorXd& q_a,
                                const Eigen::VectorXd& q_b, const SweptClearanceOptions& options) {
  if (NothingToCheck(body, scene)) return {};
  std::vector<Capsule> links;
  Probe start = Measure(body, scene, q_a, links);
  Probe end = Measure(body, scene, q_b, links);
  return Settle(body, scene, q_a, q_b, std::move(start), std::move(end), options);
}

std::vector<SweptClearance> SweptClearancesAlong(const ArmBody& body, const Scene* scene,
                                                 const Eigen::MatrixXd& q,
                                                 const SweptClearanceOptions& options) {
  std::vector<SweptClearance> motions;
  if (q.rows() < 2) return motions;
  if (NothingToCheck(body, scene)) return std::vector<SweptClearance>(q.rows() - 1);
  motions.reserve(q.rows() - 1);
  std::vector<Capsule> links;
  Eigen::VectorXd q_a = q.row(0).transpose();
  Probe start = Measure(body, scene, q_a, links);
  for (int k = 1; k < q.rows(); ++k) {
    const Eigen::VectorXd q_b = q.row(k).transpose();
    Probe end = Measure(body, scene, q_b, links);
    motions.push_back(Settle(body, scene, q_a, q_b, start, end, options));
    start = std::move(end);
    q_a = q_b;
  }
  return motions;
}

bool StaysClearAlong(const ArmBody& body, const Scene* scene, const Eigen::MatrixXd& q,
                     const SweptClearanceOptions& options) {
  const int rows = static_cast<int>(q.rows());
  if (rows == 0 || NothingToCheck(body, scene)) return true;
  // travelled.row(r): each joint's travel from row 0 to row r.
  Eigen::MatrixXd travelled = Eigen::MatrixXd::Zero(rows, q.cols());
  for (int r = 1; r < rows; ++r) {
    travelled.row(r) = travelled.row(r - 1) + (q.row(r) - q.row(r - 1)).cwiseAbs();
  }
  auto run = [&](int r0, int r1) {
    return BoundsOfRun(body, (travelled.row(r1) - travelled.row(r0)).transpose());
  };
  std::vector<std::optional<Probe>> probes(rows);
  std::vector<Capsule> links;
  int evaluations = 0;
  auto measured = [&](int r) {  // false where row r touches
    probes[r] = Measure(body, scene, q.row(r).transpose(), links);
    ++evaluations;
    return probes[r]->least >= 0.0;
  };
  if (!measured(0)) return false;
  if (rows == 1 || FromStart(body, *probes[0], run(0, rows - 1)) > 0.0) return true;
  if (!measured(rows - 1)) return false;
  // A clear verdict needs only a bound at or above 0: intervals settle there.
  SweptClearanceOptions verdict = options;
  verdict.relative_tolerance = 1.0;
  std::vector<std::pair<int, int>> open{{0, rows - 1}};
  while (!open.empty()) {
    const auto [r0, r1] = open.back();
    open.pop_back();
    if (Through(body, *probes[r0], *probes[r1], run(r0, r1)) > 0.0) continue;
    if (r1 - r0 == 1) {
      const SweptClearance step = Settle(body, scene, q.row(r0).transpose(), q.row(r1).transpose(),
                                         *probes[r0], *probes[r1], verdict);
      if (step.min_clearance < 0.0) return false;
      continue;
    }
    if (evaluations >= options.max_evaluations * (rows - 1)) return false;
    const int mid = (r0 + r1) / 2;
    if (!measured(mid)) return false;
    open.emplace_back(mid, r1);
    open.emplace_back(r0, mid);
  }
  return true;
}

}  // namespace ikd::planning
