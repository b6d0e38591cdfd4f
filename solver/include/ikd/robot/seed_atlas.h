// A fixed sample of an arm's configurations with their tool poses: the starts of single-pose IK
// (RobotTracker::Solve). A continuation from the sampled configuration whose tool is nearest the
// target travels a short way, so it takes a few projections and crosses few singularities and
// joint limits; one from a far seed (a mid-range q, for many arms the singular stretched arm)
// takes tens of projections and fails more often. The sample belongs to the robot (drawn with a
// fixed seed), so a solve stays deterministic.
//
//   const ikd::robot::SeedAtlas& atlas = ikd::robot::SeedAtlasOf(robot);  // built on first use
//   for (auto n : atlas.Nearest(p_WT, q_WT, 4)) TryFrom(atlas.configuration(n.index));
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace ikd::robot {

class Robot;

class SeedAtlas {
 public:
  static constexpr int kDefaultSize = 16384;
  static constexpr uint64_t kDefaultSeed = 20261126;
  // Configurations are drawn this fraction of each joint's range inside its bounds: a seed on
  // a bound is blocked by the first step that pushes against it.
  static constexpr double kLimitInset = 0.05;
  // A tool turn of theta counts as a move of kRotationReachFraction * reach * theta: turning
  // the tool needs the arm's joints as much as moving it does (reach: the farthest sampled
  // tool position from the base).
  static constexpr double kRotationReachFraction = 0.25;
  // An entry whose tool Jacobian (angular rows times the rotation length) has a singular value
  // below this fraction of the reach is replaced by the best-conditioned of at most kMaxRedraws
  // further draws (robot_bench: first attempts from such starts failed 2-3 times as often).
  static constexpr double kMinSingularValueFraction = 0.05;
  static constexpr int kMaxRedraws = 32;
  // All redraws together stop at this many per entry: an arm whose every draw is ill
  // conditioned by this measure (a UR5 holding its tool 5 m out) would otherwise draw
  // kMaxRedraws + 1 times the atlas (2.1 s instead of 0.24 s on its first solve; over 30 s
  // under the fuzz instrumentation). The presets use 0.6-1.1 per entry (seed_atlas_test), so
  // their atlases are the same with or without it.
  static constexpr int kRedrawsPerEntry = 4;

  // `size` configurations drawn uniformly from SamplingRange of every joint (inset kLimitInset).
  // size >= 1.
  static SeedAtlas Build(const Robot& robot, int size = kDefaultSize, uint64_t seed = kDefaultSeed);

  // Where joint `joint` is drawn: its limits ([-pi, pi] without), at most 8 pi wide around their
  // middle (a revolute joint repeats every 2 pi, and limits of 1e308 rad would overflow the
  // draw), `inset` of the width inside each bound.
  static std::pair<double, double> SamplingRange(const Robot& robot, int joint, double inset);

  int size() const { return static_cast<int>(configurations_.cols()); }
  Eigen::VectorXd configuration(int k) const { return configurations_.col(k); }
  double rotation_length() const { return rotation_length_; }
  // Configurations drawn beyond the first `size` (at most kRedrawsPerEntry * size).
  int redraws() const { return redraws_; }

  // How far a tool at (p, R) is from a target for the choice of a start:
  // |p - p_T|^2 + (rotation_length theta)^2 with theta the angle between R and the target's
  // orientation, in the monotone form 4 sin^2(theta / 2) (= theta^2 to O(theta^4)); position
  // targets (no orientation) count the position alone.
  double SquaredDistance(const Eigen::Isometry3d& X_WT, const Eigen::Vector3d& p_target,
                         const std::optional<Eigen::Quaterniond>& q_target) const;

  struct Neighbor {
    int index = 0;
    double squared_distance = 0.0;  // SquaredDistance of the entry's tool pose
  };
  // The `count` entries nearest the target by SquaredDistance, nearest first (fewer when the
  // atlas is smaller); ties go to the lower index. A grid over the tool positions limits the
  // search to the cells around the target.
  std::vector<Neighbor> Nearest(const Eigen::Vector3d& p_target,
                                const std::optional<Eigen::Quaterniond>& q_target,
                                int count) const;

 private:
  // Entry k becomes configuration q with its tool pose.
  void SetEntry(const Robot& robot, int k, const Eigen::VectorXd& q);
  // Orders the entries by grid cell (cell_start_) over the tools' bounding box.
  void SortIntoGrid();
  std::array<int, 3> CellOf(const Eigen::Vector3d& p) const;  // clamped into the grid
  int CellIndex(int x, int y, int z) const;
  // A lower bound on the distance from p to any entry outside the cells within Chebyshev
  // radius r of cell c (+infinity when the grid has no cell beyond them).
  double DistanceBeyondShells(const Eigen::Vector3d& p, const std::array<int, 3>& c, int r) const;
  // 4 L^2 with L the rotation length for a target with an orientation, else 0.
  double RotationWeight(bool has_orientation) const {
    return has_orientation ? 4.0 * rotation_length_ * rotation_length_ : 0.0;
  }
  // Offers entries [begin, end) with their SquaredDistance to `nearest` (a top-k list).
  template <typename Neighbors>
  void OfferRange(int begin, int end, const Eigen::Vector3d& p,
                  const std::optional<Eigen::Quaterniond>& q, Neighbors& nearest) const;
  // Nearest by a pass over every entry.
  std::vector<Neighbor> Scan(const Eigen::Vector3d& p_target,
                             const std::optional<Eigen::Quaterniond>& q_target, int count) const;

  Eigen::MatrixXd configurations_;       // joints x size, in grid order
  Eigen::ArrayXd px_, py_, pz_;          // tool positions, world
  Eigen::ArrayXd qw_, qx_, qy_, qz_;     // tool orientations, unit quaternions
  double rotation_length_ = 0.0;         // m per rad of tool turn
  int redraws_ = 0;
  Eigen::Vector3d grid_origin_ = Eigen::Vector3d::Zero();
  double cell_size_ = 1.0;
  std::array<int, 3> grid_cells_{1, 1, 1};
  std::vector<int> cell_start_;  // entries of cell c: [cell_start_[c], cell_start_[c + 1])
};

// The robot's atlas (SeedAtlas::Build with the defaults), built on first use (about 0.1 s; safe
// from several threads) and kept in the robot's IK cache, shared by its copies.
const SeedAtlas& SeedAtlasOf(const Robot& robot);

}  // namespace ikd::robot
