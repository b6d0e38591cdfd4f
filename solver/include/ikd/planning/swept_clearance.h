// The clearance of a motion, not only of its ends: what a servo executes between two answers
// (every joint interpolated linearly) checked against the scene and the arm itself, by
// conservative advancement (as FCL's continuous collision does). While the joints move
// linearly from q_a to q_b, no point of link L moves farther than a bound B_L (the arm's
// SweepBounds: sum_j |dq_j| r_j, r_j the farthest the link reaches from joint j's axis), so
// link L's clearance over the motion stays above the V of slopes B_L through its two ends:
//     d_L(s) >= (d_L(a) + d_L(b) - B_L) / 2   for every s in [a, b],
// and a pair of links' clearance likewise with the bound of their relative motion (the arm's
// GroupSweeps: for a chain only the joints between the two links move one against the other),
// a lower bound that tightens as the interval is bisected (B_L halves, the ends are measured).
// Intervals are bisected, lowest bound first, until every bound is within the tolerance of the
// least clearance measured, or a budget of evaluations runs out; what is returned is then a
// certified lower bound of the motion's least clearance. A motion found to touch stops there:
// the clearance returned is the deepest measured (negative), not refined further.
//
//   auto swept = ikd::planning::SweptClearanceOf(body, &scene, q_before, q_after);
//   if (swept.min_clearance < 0.0) { /* the motion touches; swept.at is where */ }
#pragma once

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "ikd/planning/scene.h"
#include "ikd/planning/step_status.h"

namespace ikd::planning {

// An arm's body as a function of its joint values: the part of the arm interface the
// clearance of a configuration and of a motion needs. Implemented by each arm kind.
class ArmBody {
 public:
  virtual ~ArmBody() = default;

  virtual int num_joints() const = 0;
  virtual int num_links() const = 0;
  // The links' capsules in the world frame at joint values q (num_joints() of them), in a
  // fixed order (num_links() of them); `links` is resized.
  virtual void Links(const Eigen::VectorXd& q, std::vector<Capsule>* links) const = 0;
  // Per link, an upper bound (m) on how far any point of it moves while the joints move
  // linearly from q_a to q_b; `bounds` is resized to num_links().
  virtual void SweepBounds(const Eigen::VectorXd& q_a, const Eigen::VectorXd& q_b,
                           Eigen::VectorXd* bounds) const = 0;
  // Per link, an upper bound (m) on how far any point of it moves along any motion, straight
  // or not, in which each joint j turns by at most travel[j] in all; `bounds` is resized to
  // num_links(). +infinity where the arm cannot say (stopping.h then checks every motion).
  virtual void TravelBounds(const Eigen::VectorXd& travel, Eigen::VectorXd* bounds) const {
    (void)travel;
    bounds->setConstant(num_links(), std::numeric_limits<double>::infinity());
  }
  // The largest of TravelBounds: how far any point of the body moves along such a motion.
  double TravelBound(const Eigen::VectorXd& travel) const;
  // Least clearance between the pairs of links the arm checks against each other (+infinity
  // when it checks none).
  virtual double SelfClearance(const std::vector<Capsule>& links) const {
    (void)links;
    return std::numeric_limits<double>::infinity();
  }
  // Whether SelfClearance checks any pair (false: it is +infinity whatever the links).
  virtual bool ChecksSelf() const { return false; }

  // The self pairs in groups whose relative motion is bounded apart (a chain: by how far apart
  // along it two links are: neighbours move one against the other only by the few joints
  // between them, while the ends of a long chain swing as a whole), each group's least
  // clearance and relative sweep used on their own in the swept bound. By default one group:
  // every pair, SelfClearance, the two largest link sweeps together.
  static constexpr int kMaxSelfGroups = 12;
  using SelfGroups = std::array<double, kMaxSelfGroups>;  // entries past NumSelfGroups unused
  virtual int NumSelfGroups() const { return 1; }
  // Per group its least clearance (+infinity where it has no pair).
  virtual void SelfClearanceGroups(const std::vector<Capsule>& links, SelfGroups* clearance) const {
    (*clearance)[0] = SelfClearance(links);
  }
  // Per group an upper bound (m) on how much the clearance of one of its pairs can change while
  // the joints move linearly from q_a to q_b, whose links' sweeps are `bounds` (SweepBounds).
  virtual void GroupSweeps(const Eigen::VectorXd& q_a, const Eigen::VectorXd& q_b,
                           const Eigen::VectorXd& bounds, SelfGroups* sweeps) const;
  // The same along any motion, straight or not, in which each joint j turns by at most
  // travel[j] in all, whose links' bounds are `bounds` (TravelBounds). By default one group:
  // the two largest bounds together.
  virtual void TravelGroupSweeps(const Eigen::VectorXd& travel, const Eigen::VectorXd& bounds,
                                 SelfGroups* sweeps) const;
};

// Clearance of one configuration: the least over links of the scene's signed distance (none
// without a scene) and the arm's self clearance.
double Clearance(const ArmBody& body, const Scene* scene, const Eigen::VectorXd& q);

struct SweptClearanceOptions {
  // An interval is settled when its lower bound is within max(tolerance, relative_tolerance *
  // the least clearance measured) of that clearance: tight near contact, cheap far from it (a
  // motion 0.1 m from everything is settled from its two ends while its links move 5 cm).
  double tolerance = 1e-6;           // m
  double relative_tolerance = 0.25;  // of the least clearance measured
  // Configurations evaluated at most per motion (its two ends included); beyond, the bound so
  // far is returned (conservative: possibly below the true least clearance).
  int max_evaluations = 256;
};

struct SweptClearance {
  // A lower bound of the least clearance over the motion (+infinity: nothing to collide with).
  double min_clearance = std::numeric_limits<double>::infinity();
  // Motion fraction in [0, 1] of the least clearance measured (0 at q_a, 1 at q_b).
  double at = 0.0;
  int evaluations = 0;  // configurations measured for this motion, its two ends included
};

// The motion from q_a to q_b (each joint linearly; the caller passes the values the servo
// interpolates between, unwrapped as it would).
SweptClearance SweptClearanceOf(const ArmBody& body, const Scene* scene, const Eigen::VectorXd& q_a,
                                const Eigen::VectorXd& q_b,
                                const SweptClearanceOptions& options = {});

// The motions through the rows of q in turn (a path's samples): entry k - 1 is the motion from
// row k - 1 to row k. Each row is measured once, for both motions it ends and begins.
std::vector<SweptClearance> SweptClearancesAlong(const ArmBody& body, const Scene* scene,
                                                 const Eigen::MatrixXd& q,
                                                 const SweptClearanceOptions& options = {});

// Whether the motion through the rows of q in turn (each step straight, as the servo moves
// between them), rows included, touches nothing, with as few configurations measured as the
// bounds allow (a yes/no for a motion that is only checked, as a stop is): a run of steps is
// bounded as one motion by the joints' travel along it (ArmBody::TravelBounds,
// TravelGroupSweeps), first from its start alone, then by the V through its two ends; where
// that cannot tell, it is split at its middle row, and a single step is bisected as
// SweptClearanceOf bisects it until its bound is at or above 0. The same verdict as every
// step's SweptClearancesAlong; far from everything, one configuration. A budget of
// max_evaluations per step: beyond it, false.
bool StaysClearAlong(const ArmBody& body, const Scene* scene, const Eigen::MatrixXd& q,
                     const SweptClearanceOptions& options = {});

// The step that ends a motion takes its clearance: min_clearance the least of its own and the
// motion's, status WithMotionClearance (step_status.h). True when that made it IN_COLLISION.
// For either arm kind's step result (a min_clearance and a status).
template <typename Step>
bool TakeMotionClearance(const SweptClearance& motion, Step& step) {
  step.min_clearance = std::min(step.min_clearance, motion.min_clearance);
  const StepStatus status = WithMotionClearance(step.status, motion.min_clearance);
  const bool collided = status != step.status;
  step.status = status;
  return collided;
}

}  // namespace ikd::planning
