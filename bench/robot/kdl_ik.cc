// Orocos KDL's ChainIkSolverPos_NR_JL and ChainIkSolverPos_LMA on a KDL::Chain built from an ikd
// ChainSpec, for the industrial-arm benchmark.
//
// Joint k of the spec (origin X_PJ in the previous link, axis a in J) becomes one segment:
// KDL::Joint(origin = p_PJ, axis = R_PJ a, RotAxis) and tip frame X_PJ at q = 0. KDL turns the
// tip about that axis through that origin, so the segment's pose is X_PJ * Rot(a, q), ikd's
// JointMotion. The base pose X_WB is folded into the first segment, the tool X_FT into the last.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <random>

#include <kdl/chain.hpp>
#include <kdl/chainfksolverpos_recursive.hpp>
#include <kdl/chainiksolverpos_lma.hpp>
#include <kdl/chainiksolverpos_nr_jl.hpp>
#include <kdl/chainiksolvervel_pinv.hpp>
#include <kdl/config.h>

#include "robot_bench.h"

namespace ikd::bench {
namespace {

using robot::ChainSpec;
using robot::JointType;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "robot_bench: %s\n", what.c_str());
  std::exit(2);
}

KDL::Vector ToKdl(const Eigen::Vector3d& v) { return KDL::Vector(v.x(), v.y(), v.z()); }

KDL::Frame ToKdl(const Eigen::Isometry3d& X) {
  const Eigen::Matrix3d R = X.linear();
  return KDL::Frame(KDL::Rotation(R(0, 0), R(0, 1), R(0, 2), R(1, 0), R(1, 1), R(1, 2), R(2, 0),
                                  R(2, 1), R(2, 2)),
                    ToKdl(X.translation()));
}

Eigen::Isometry3d FromKdl(const KDL::Frame& F) {
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) X.linear()(r, c) = F.M(r, c);
    X.translation()[r] = F.p[r];
  }
  return X;
}

KDL::Chain ChainFromSpec(const ChainSpec& input) {
  const ChainSpec spec = robot::MergeFixedJoints(input);
  KDL::Chain chain;
  for (size_t k = 0; k < spec.joints.size(); ++k) {
    const robot::JointSpec& joint = spec.joints[k];
    if (joint.type != JointType::kRevolute) Die(spec.name + ": the KDL chain takes revolute joints only");
    const Eigen::Isometry3d X_PJ = (k == 0 ? spec.X_WB : Eigen::Isometry3d::Identity()) * joint.X_PJ;
    const Eigen::Isometry3d tip = X_PJ * (k + 1 == spec.joints.size() ? spec.X_FT : Eigen::Isometry3d::Identity());
    const KDL::Joint kdl_joint(ToKdl(X_PJ.translation()), ToKdl(X_PJ.linear() * joint.axis), KDL::Joint::RotAxis);
    chain.addSegment(KDL::Segment(joint.name, kdl_joint, ToKdl(tip)));
  }
  return chain;
}

// Joint limits as KDL arrays; a continuous joint gets +-4 pi (inactive).
void Limits(const ChainSpec& spec, KDL::JntArray& lower, KDL::JntArray& upper) {
  const ChainSpec merged = robot::MergeFixedJoints(spec);
  lower.resize(merged.joints.size());
  upper.resize(merged.joints.size());
  for (size_t k = 0; k < merged.joints.size(); ++k) {
    const auto& limits = merged.joints[k].limits;
    lower(k) = limits ? limits->lower : -4 * std::numbers::pi;
    upper(k) = limits ? limits->upper : 4 * std::numbers::pi;
  }
}

// KDL's forward kinematics must reproduce ToolPose at random configurations to 1e-9.
void CheckChain(const ChainSpec& spec, const KDL::Chain& chain, const KDL::JntArray& lower,
                const KDL::JntArray& upper) {
  KDL::ChainFkSolverPos_recursive fk(chain);
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    KDL::JntArray q(chain.getNrOfJoints());
    Eigen::VectorXd q_ikd(q.rows());
    for (unsigned k = 0; k < q.rows(); ++k) {
      q(k) = q_ikd[k] = std::uniform_real_distribution<double>(lower(k), upper(k))(rng);
    }
    KDL::Frame tip;
    if (fk.JntToCart(q, tip) < 0) Die(spec.name + ": KDL forward kinematics failed");
    const Eigen::Isometry3d X_kdl = FromKdl(tip), X_ikd = robot::ToolPose(spec, q_ikd);
    const double mismatch = (X_kdl.matrix() - X_ikd.matrix()).cwiseAbs().maxCoeff();
    if (!(mismatch <= 1e-9)) {
      Die(spec.name + ": the KDL chain's forward kinematics differs from ikd's ToolPose by " +
          std::to_string(mismatch));
    }
  }
}

class KdlIkImpl : public KdlIk {
 public:
  KdlIkImpl(const ChainSpec& spec, KdlMethod method, double tolerance)
      : chain_(ChainFromSpec(spec)), fk_(chain_), velocity_(chain_), method_(method) {
    Limits(spec, lower_, upper_);
    CheckChain(spec, chain_, lower_, upper_);
    Eigen::Matrix<double, 6, 1> weights = Eigen::Matrix<double, 6, 1>::Ones();
    switch (method) {
      case KdlMethod::kNrJl:
        // NR_JL stops when every twist component is within its eps: tolerance / sqrt(3) keeps
        // the norms of the position and rotation errors within the tolerance.
        nr_jl_ = std::make_unique<KDL::ChainIkSolverPos_NR_JL>(chain_, lower_, upper_, fk_, velocity_, 100,
                                                               tolerance / std::sqrt(3.0));
        break;
      case KdlMethod::kLma:
        // LMA stops when |L (position, rotation) error| < eps: with L = 1, eps = tolerance.
        lma_ = std::make_unique<KDL::ChainIkSolverPos_LMA>(chain_, weights, tolerance, 500);
        break;
      case KdlMethod::kLmaDefaultWeights:
        // KDL's default L = (1, 1, 1, 0.01, 0.01, 0.01): eps = 0.01 tolerance bounds the rotation.
        weights.tail<3>().setConstant(0.01);
        lma_ = std::make_unique<KDL::ChainIkSolverPos_LMA>(chain_, weights, 0.01 * tolerance, 500);
        break;
    }
    seed_.resize(chain_.getNrOfJoints());
    out_.resize(chain_.getNrOfJoints());
  }

  IkAnswer Solve(const Eigen::VectorXd& seed, const Eigen::Isometry3d& target) override {
    using Clock = std::chrono::steady_clock;
    for (unsigned k = 0; k < seed_.rows(); ++k) seed_(k) = seed[k];
    const KDL::Frame goal = ToKdl(target);
    const auto t0 = Clock::now();
    const int rc = method_ == KdlMethod::kNrJl ? nr_jl_->CartToJnt(seed_, goal, out_)
                                               : lma_->CartToJnt(seed_, goal, out_);
    IkAnswer answer;
    answer.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    answer.claimed = rc >= 0;
    answer.code = rc;
    answer.q = Eigen::Map<const Eigen::VectorXd>(out_.data.data(), out_.rows());
    return answer;
  }

 private:
  KDL::Chain chain_;
  KDL::ChainFkSolverPos_recursive fk_;
  KDL::ChainIkSolverVel_pinv velocity_;
  KdlMethod method_;
  KDL::JntArray lower_, upper_, seed_, out_;
  std::unique_ptr<KDL::ChainIkSolverPos_NR_JL> nr_jl_;
  std::unique_ptr<KDL::ChainIkSolverPos_LMA> lma_;
};

}  // namespace

const char* KdlMethodName(KdlMethod method) {
  switch (method) {
    case KdlMethod::kNrJl: return "KDL NR_JL";
    case KdlMethod::kLma: return "KDL LMA";
    case KdlMethod::kLmaDefaultWeights: return "KDL LMA default L";
  }
  return "KDL ?";
}

std::unique_ptr<KdlIk> MakeKdlIk(const robot::ChainSpec& spec, KdlMethod method, double tolerance) {
  return std::make_unique<KdlIkImpl>(spec, method, tolerance);
}

const char* KdlVersion() { return KDL_VERSION_STRING; }

}  // namespace ikd::bench
