// Orocos KDL on the same scenarios: ChainIkSolverPos_LMA and ChainIkSolverPos_NR_JL, position-
// only targets, each step warm-started from the previous solution.
//
// Chains equivalent to ikd's arms (base at the origin, identity orientation):
//  - planar limb k: one RotZ joint, then the segment along its x axis (length l_k). KDL's q_k
//    is ikd's planar angle k (the first absolute, the others relative).
//  - spatial limb k (ikd ball joint): RotZ(a_k) then RotY(b_k), then the segment along z. The
//    limb direction relative to the previous frame is (cos a sin b, sin a sin b, cos b): every
//    direction, so the reachable hand positions match ikd's; |b_k| is ikd's bend angle.
// Position-only: LMA weighs the task-space error with L = (1, 1, 1, 0, 0, 0). NR_JL has no
// weights (it stops on the full 6-D twist), so its chain gets a virtual zero-length wrist
// (planar: RotZ; spatial: RotZ, RotY, RotX) that takes up the orientation error; the goal
// orientation is the current tool orientation and the wrist restarts at 0 on every step.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numbers>

#include <kdl/chain.hpp>
#include <kdl/chainfksolverpos_recursive.hpp>
#include <kdl/chainiksolverpos_lma.hpp>
#include <kdl/chainiksolverpos_nr_jl.hpp>
#include <kdl/chainiksolvervel_pinv.hpp>
#include <kdl/config.h>

#include "ik_bench.h"

namespace ikd::bench {
namespace {

constexpr double kPi = std::numbers::pi;

KDL::Chain MakeChain(const ik::Arm& arm, bool virtual_wrist) {
  KDL::Chain chain;
  for (const ik::Limb& limb : arm.spec().limbs) {
    if (arm.planar()) {
      chain.addSegment(KDL::Segment(KDL::Joint(KDL::Joint::RotZ),
                                    KDL::Frame(KDL::Vector(limb.length, 0, 0))));
    } else {
      chain.addSegment(KDL::Segment(KDL::Joint(KDL::Joint::RotZ)));
      chain.addSegment(KDL::Segment(KDL::Joint(KDL::Joint::RotY),
                                    KDL::Frame(KDL::Vector(0, 0, limb.length))));
    }
  }
  if (virtual_wrist) {
    chain.addSegment(KDL::Segment(KDL::Joint(KDL::Joint::RotZ)));
    if (!arm.planar()) {
      chain.addSegment(KDL::Segment(KDL::Joint(KDL::Joint::RotY)));
      chain.addSegment(KDL::Segment(KDL::Joint(KDL::Joint::RotX)));
    }
  }
  return chain;
}

// Sites of the KDL chain for joint values q (the first num_angles() entries).
Eigen::Matrix3Xd SitesFromJoints(const ik::Arm& arm, const std::vector<double>& q) {
  if (arm.planar()) return *arm.SitesFromAngles(q);
  Eigen::Matrix3Xd sites(3, arm.num_sites());
  sites.col(0).setZero();
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  for (int k = 0; k < arm.num_limbs(); ++k) {
    R = R * Eigen::AngleAxisd(q[2 * k], Eigen::Vector3d::UnitZ()) *
        Eigen::AngleAxisd(q[2 * k + 1], Eigen::Vector3d::UnitY());
    sites.col(k + 1) = sites.col(k) + arm.spec().limbs[k].length * R.col(2);
  }
  return sites;
}

// Joint values of the KDL chain that put its sites on `sites`.
std::vector<double> JointsFromSites(const ik::Arm& arm, const Eigen::Matrix3Xd& sites) {
  if (arm.planar()) return arm.AnglesFromSites(sites);
  std::vector<double> q;
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  for (int k = 0; k < arm.num_limbs(); ++k) {
    const Eigen::Vector3d d = R.transpose() * (sites.col(k + 1) - sites.col(k)).normalized();
    const double lateral = std::hypot(d.x(), d.y());
    const double a = lateral > 1e-300 ? std::atan2(d.y(), d.x()) : 0.0;
    const double b = std::atan2(lateral, d.z());
    q.push_back(a);
    q.push_back(b);
    R = R * Eigen::AngleAxisd(a, Eigen::Vector3d::UnitZ()) * Eigen::AngleAxisd(b, Eigen::Vector3d::UnitY());
  }
  return q;
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "ik_bench: %s\n", what.c_str());
  std::exit(2);
}

}  // namespace

std::string KdlLabel(KdlSolver solver, double eps) {
  char text[64];
  std::snprintf(text, sizeof text, "KDL %s eps=%.0e", solver == KdlSolver::kLma ? "LMA" : "NR_JL", eps);
  return text;
}

RunResult RunKdl(const Scenario& scenario, KdlSolver which, double eps) {
  using Clock = std::chrono::steady_clock;
  const ik::Arm& arm = scenario.arm;
  if (arm.base().norm() != 0.0 || !arm.spec().base_orientation.coeffs().isApprox(
                                      Eigen::Quaterniond::Identity().coeffs())) {
    Die("the KDL chains assume the arm base at the origin with identity orientation");
  }
  const bool lma = which == KdlSolver::kLma;
  const KDL::Chain chain = MakeChain(arm, /*virtual_wrist=*/!lma);
  const unsigned n = chain.getNrOfJoints();
  const unsigned real = static_cast<unsigned>(arm.num_angles());
  KDL::ChainFkSolverPos_recursive fk(chain);
  KDL::ChainIkSolverVel_pinv velocity(chain);
  // Joint limits far outside the range these paths use: ikd's arms here are unlimited.
  KDL::JntArray q_min(n), q_max(n);
  for (unsigned j = 0; j < n; ++j) q_min(j) = -4 * kPi, q_max(j) = 4 * kPi;
  // NR_JL stops when every twist component is below its eps: eps / sqrt(3) bounds the position
  // error's norm by eps, like LMA's test.
  KDL::ChainIkSolverPos_NR_JL nr_jl(chain, q_min, q_max, fk, velocity, 100, eps / std::sqrt(3.0));
  Eigen::Matrix<double, 6, 1> weights;
  weights << 1, 1, 1, 0, 0, 0;
  KDL::ChainIkSolverPos_LMA lma_solver(chain, weights, eps, 500);

  const std::vector<double> start = JointsFromSites(arm, scenario.start_sites);
  {  // The mapping must reproduce the start configuration, in KDL's own forward kinematics too.
    KDL::JntArray q(n);
    for (unsigned j = 0; j < real; ++j) q(j) = start[j];
    KDL::Frame tip;
    fk.JntToCart(q, tip);
    const Eigen::Vector3d hand(tip.p.x(), tip.p.y(), tip.p.z());
    const double mismatch = std::max((SitesFromJoints(arm, start) - scenario.start_sites).cwiseAbs().maxCoeff(),
                                     (hand - scenario.start_sites.col(arm.hand())).norm());
    if (mismatch > 1e-9) Die(scenario.name + ": KDL chain does not match the ikd arm");
  }
  Recorder recorder(scenario, scenario.start_sites, start);
  KDL::JntArray q(n), q_out(n);
  for (unsigned j = 0; j < real; ++j) q(j) = start[j];
  std::vector<double> seconds;
  seconds.reserve(scenario.targets.size());
  for (size_t k = 1; k < scenario.targets.size(); ++k) {
    const Eigen::Vector3d& target = scenario.targets[k];
    for (unsigned j = real; j < n; ++j) q(j) = 0.0;  // virtual wrist back to 0
    KDL::Frame goal(KDL::Vector(target.x(), target.y(), target.z()));
    if (!lma) {  // NR_JL: keep the present tool orientation (outside the timing)
      KDL::Frame current;
      fk.JntToCart(q, current);
      goal.M = current.M;
    }
    const auto t0 = Clock::now();
    const int rc = lma ? lma_solver.CartToJnt(q, goal, q_out) : nr_jl.CartToJnt(q, goal, q_out);
    seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    q = q_out;
    const std::vector<double> joints(q_out.data.data(), q_out.data.data() + real);
    bool at_limit = false;  // the limits are meant to stay inactive: a clamp counts as a failure
    for (unsigned j = 0; j < n; ++j) at_limit = at_limit || std::abs(q_out(j)) >= 4 * kPi - 1e-9;
    recorder.Add(target, SitesFromJoints(arm, joints), joints, rc < 0 || at_limit);
  }
  return recorder.Finish(KdlLabel(which, eps), std::move(seconds));
}

const char* KdlVersion() { return KDL_VERSION_STRING; }

}  // namespace ikd::bench
