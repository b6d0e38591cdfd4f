#include "ikd/robot/robot_body.h"

#include <algorithm>
#include <limits>

#include "ikd/robot/link_geometry.h"
#include "ikd/robot/self_collision.h"

namespace ikd::robot {

RobotBody::RobotBody(const Robot& robot)
    : robot_(&robot), first_(LinkCapsuleOffsets(robot.spec())) {
  const int n = robot.num_joints();
  const std::vector<Eigen::Isometry3d> origins = LinkPoses(robot.spec(), Eigen::VectorXd::Zero(n));
  const std::vector<std::vector<LinkShape>> shapes = LinkShapesOf(robot.spec());
  reach_ = Eigen::MatrixXd::Zero(n, first_.back());
  for (int j = 0; j < n; ++j) {
    double along = 0.0;  // joint j's origin to joint k's, the joint origins end to end
    for (int k = j; k < n; ++k) {
      if (k > j) along += (origins[k].translation() - origins[k - 1].translation()).norm();
      for (size_t i = 0; i < shapes[k].size(); ++i) {
        const LinkShape& shape = shapes[k][i];  // in link k's frame: joint k's origin is 0
        reach_(j, first_[k] + i) = along + std::max(shape.a.norm(), shape.b.norm()) + shape.radius;
      }
    }
  }
  if (ChecksSelfCollision(robot)) pairs_ = SelfCollisionMatrixOf(robot).checked();
  GroupPairs();
}

void RobotBody::GroupPairs() {
  const int pairs = static_cast<int>(pairs_.size());
  const int groups = std::clamp(pairs, 1, kMaxSelfGroups);
  for (int g = 0; g <= groups; ++g) group_first_.push_back(g * pairs / groups);
  pair_reach_ = Eigen::MatrixXd::Zero(num_joints(), pairs);
  for (int p = 0; p < pairs; ++p) {
    const auto [a, b] = pairs_[p];
    for (int j = a + 1; j <= b; ++j) {
      for (int c = first_[b]; c < first_[b + 1]; ++c) {
        pair_reach_(j, p) = std::max(pair_reach_(j, p), reach_(j, c));
      }
    }
  }
}

void RobotBody::Links(const Eigen::VectorXd& q, std::vector<planning::Capsule>* links) const {
  *links = LinkCapsulesAt(robot_->spec(), q).capsules;
}

void RobotBody::TravelBounds(const Eigen::VectorXd& travel, Eigen::VectorXd* bounds) const {
  *bounds = reach_.transpose() * travel.cwiseAbs();
}

void RobotBody::SweepBounds(const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                            Eigen::VectorXd* bounds) const {
  *bounds = reach_.transpose() * (b - a).cwiseAbs();
}

bool RobotBody::ChecksSelf() const { return ChecksSelfCollision(*robot_); }

double RobotBody::SelfClearance(const std::vector<planning::Capsule>& links) const {
  const SelfCollisionMatrix& matrix = SelfCollisionMatrixOf(*robot_);
  if (matrix.checked().empty()) return std::numeric_limits<double>::infinity();
  return LeastSelfClearance(matrix, LinkCapsules{links, first_}).clearance;
}

void RobotBody::SelfClearanceGroups(const std::vector<planning::Capsule>& links,
                                    SelfGroups* clearance) const {
  for (int g = 0; g < NumSelfGroups(); ++g) {
    double least = std::numeric_limits<double>::infinity();
    for (int p = group_first_[g]; p < group_first_[g + 1]; ++p) {
      least = std::min(least, LinkPairClearance(links, first_, pairs_[p].first, pairs_[p].second));
    }
    (*clearance)[g] = least;
  }
}

void RobotBody::GroupSweeps(const Eigen::VectorXd& q_a, const Eigen::VectorXd& q_b,
                            const Eigen::VectorXd& bounds, SelfGroups* sweeps) const {
  PairSweeps((q_b - q_a).cwiseAbs(), bounds, sweeps);
}

void RobotBody::TravelGroupSweeps(const Eigen::VectorXd& travel, const Eigen::VectorXd& bounds,
                                  SelfGroups* sweeps) const {
  PairSweeps(travel.cwiseAbs(), bounds, sweeps);
}

double RobotBody::LinkSweep(const Eigen::VectorXd& bounds, int k) const {
  double largest = 0.0;
  for (int c = first_[k]; c < first_[k + 1]; ++c) largest = std::max(largest, bounds[c]);
  return largest;
}

void RobotBody::PairSweeps(const Eigen::VectorXd& turns, const Eigen::VectorXd& bounds,
                           SelfGroups* sweeps) const {
  const Eigen::RowVectorXd relative = turns.transpose() * pair_reach_;
  for (int g = 0; g < NumSelfGroups(); ++g) {
    double largest = 0.0;
    for (int p = group_first_[g]; p < group_first_[g + 1]; ++p) {
      const auto [a, b] = pairs_[p];
      // Both links' own sweeps together bound it too (the default rule, on this pair alone).
      const double own = LinkSweep(bounds, a) + LinkSweep(bounds, b);
      largest = std::max(largest, std::min(relative[p], own));
    }
    (*sweeps)[g] = largest;
  }
}

}  // namespace ikd::robot
