#include "ikd/robot/seed_atlas.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>

#include <Eigen/Eigenvalues>

#include "absl/base/call_once.h"
#include "ikd/robot/chain.h"
#include "ikd/robot/robot.h"

namespace ikd::robot {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Entries per grid cell on average over the tools' bounding box; cells per axis at most (a
// flat or degenerate box still gets a small grid); shells searched before a full scan.
constexpr double kEntriesPerCell = 4.0;
constexpr int kMaxCellsPerAxis = 64;
constexpr int kMaxShells = 8;

// The `count` smallest (distance, index) pairs offered, in that order (ties to the lower index).
class BestNeighbors {
 public:
  explicit BestNeighbors(int count) : count_(count) { best_.reserve(count + 1); }
  bool full() const { return static_cast<int>(best_.size()) == count_; }
  double worst() const { return best_.back().squared_distance; }
  void Offer(double d2, int index) {
    const auto less = [](const SeedAtlas::Neighbor& a, const SeedAtlas::Neighbor& b) {
      return a.squared_distance < b.squared_distance ||
             (a.squared_distance == b.squared_distance && a.index < b.index);
    };
    const SeedAtlas::Neighbor entry{index, d2};
    if (full() && !less(entry, best_.back())) return;
    best_.insert(std::upper_bound(best_.begin(), best_.end(), entry, less), entry);
    if (static_cast<int>(best_.size()) > count_) best_.pop_back();
  }
  std::vector<SeedAtlas::Neighbor> Take() { return std::move(best_); }

 private:
  int count_;
  std::vector<SeedAtlas::Neighbor> best_;
};

// |p - p_T|^2 + 4 L^2 sin^2(theta / 2) with cos(theta / 2) = |q . q_T| (SeedAtlas::SquaredDistance),
// from the position difference (dx, dy, dz), c = q . q_T and rotation_weight = 4 L^2 (0 for a
// position target).
inline double PoseDistance(double dx, double dy, double dz, double c, double rotation_weight) {
  return dx * dx + dy * dy + dz * dz + rotation_weight * std::max(0.0, 1.0 - c * c);
}

double QuaternionDot(double w, double x, double y, double z, const Eigen::Quaterniond& b) {
  return w * b.w() + x * b.x() + y * b.y() + z * b.z();
}

// The smallest of the min(6, n) singular values of the tool Jacobian with its angular rows
// scaled by `rotation_length` (metres per radian, as SquaredDistance weighs a turn).
double PoseSingularValue(const Robot& robot, const Eigen::VectorXd& q, double rotation_length) {
  Eigen::MatrixXd J = ToolJacobian(robot.spec(), q);
  J.bottomRows<3>() *= rotation_length;
  double smallest = 0.0;
  if (J.cols() >= 6) {  // the usual case, in fixed sizes (a build checks every entry)
    const Eigen::Matrix<double, 6, 6> gram = J * J.transpose();
    smallest = Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 6, 6>>(gram, Eigen::EigenvaluesOnly)
                   .eigenvalues()[0];
  } else {
    const Eigen::MatrixXd gram = J.transpose() * J;
    smallest = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(gram, Eigen::EigenvaluesOnly)
                   .eigenvalues()[0];
  }
  return std::sqrt(std::max(0.0, smallest));
}

}  // namespace

SeedAtlas SeedAtlas::Build(const Robot& robot, int size, uint64_t seed) {
  size = std::max(size, 1);
  const int n = robot.num_joints();
  SeedAtlas atlas;
  atlas.configurations_.resize(n, size);
  for (Eigen::ArrayXd* a : {&atlas.px_, &atlas.py_, &atlas.pz_, &atlas.qw_, &atlas.qx_,
                            &atlas.qy_, &atlas.qz_}) {
    a->resize(size);
  }
  std::vector<std::uniform_real_distribution<double>> draw;
  for (int j = 0; j < n; ++j) {
    const auto [lo, hi] = SamplingRange(robot, j, kLimitInset);
    draw.emplace_back(lo, hi);
  }
  std::mt19937_64 rng(seed);
  const Eigen::Vector3d base = robot.spec().X_WB.translation();
  double reach = 0.0;
  for (int k = 0; k < size; ++k) {
    for (int j = 0; j < n; ++j) atlas.configurations_(j, k) = draw[j](rng);
    atlas.SetEntry(robot, k, atlas.configurations_.col(k));
    reach = std::max(reach, (Eigen::Vector3d(atlas.px_[k], atlas.py_[k], atlas.pz_[k]) - base).norm());
  }
  atlas.rotation_length_ = kRotationReachFraction * reach;
  // Near-singular entries are drawn again: from them the tool cannot follow some directions,
  // so the first steps of a continuation fail and the attempt is wasted.
  const double min_singular_value = kMinSingularValueFraction * reach;
  const int64_t budget = static_cast<int64_t>(kRedrawsPerEntry) * size;
  for (int k = 0; k < size && atlas.redraws_ < budget; ++k) {
    Eigen::VectorXd q = atlas.configurations_.col(k);
    double best = PoseSingularValue(robot, q, atlas.rotation_length_);
    for (int redraw = 0;
         redraw < kMaxRedraws && best < min_singular_value && atlas.redraws_ < budget; ++redraw) {
      Eigen::VectorXd candidate(n);
      for (int j = 0; j < n; ++j) candidate[j] = draw[j](rng);
      ++atlas.redraws_;
      const double sigma = PoseSingularValue(robot, candidate, atlas.rotation_length_);
      if (sigma > best) best = sigma, q = candidate;
    }
    if (q != atlas.configurations_.col(k)) atlas.SetEntry(robot, k, q);
  }
  atlas.SortIntoGrid();
  return atlas;
}

void SeedAtlas::SetEntry(const Robot& robot, int k, const Eigen::VectorXd& q) {
  configurations_.col(k) = q;
  const Eigen::Isometry3d X_WT = ToolPose(robot.spec(), q);
  const Eigen::Vector3d p = X_WT.translation();
  const Eigen::Quaterniond r(X_WT.linear());
  px_[k] = p.x(), py_[k] = p.y(), pz_[k] = p.z();
  qw_[k] = r.w(), qx_[k] = r.x(), qy_[k] = r.y(), qz_[k] = r.z();
}

void SeedAtlas::SortIntoGrid() {
  const int size = this->size();
  const Eigen::Vector3d lo(px_.minCoeff(), py_.minCoeff(), pz_.minCoeff());
  const Eigen::Vector3d hi(px_.maxCoeff(), py_.maxCoeff(), pz_.maxCoeff());
  const Eigen::Vector3d extent = hi - lo;
  double h = std::cbrt(extent.prod() * kEntriesPerCell / size);
  h = std::max(h, extent.maxCoeff() / kMaxCellsPerAxis);
  if (!(h > 0.0) || !std::isfinite(h)) h = 1.0;  // every tool at one point: one cell
  grid_origin_ = lo;
  cell_size_ = h;
  for (int a = 0; a < 3; ++a) {
    grid_cells_[a] = std::clamp(static_cast<int>(std::ceil(extent[a] / h)), 1, kMaxCellsPerAxis);
  }
  // A counting sort by cell keeps each cell's entries together (and in drawing order).
  std::vector<int> cell(size);
  cell_start_.assign(grid_cells_[0] * grid_cells_[1] * grid_cells_[2] + 1, 0);
  for (int k = 0; k < size; ++k) {
    const auto c = CellOf(Eigen::Vector3d(px_[k], py_[k], pz_[k]));
    cell[k] = CellIndex(c[0], c[1], c[2]);
    ++cell_start_[cell[k] + 1];
  }
  for (size_t c = 1; c < cell_start_.size(); ++c) cell_start_[c] += cell_start_[c - 1];
  std::vector<int> next(cell_start_.begin(), cell_start_.end() - 1), order(size);
  for (int k = 0; k < size; ++k) order[next[cell[k]]++] = k;
  const Eigen::MatrixXd configurations = configurations_;
  for (int k = 0; k < size; ++k) configurations_.col(k) = configurations.col(order[k]);
  for (Eigen::ArrayXd* a : {&px_, &py_, &pz_, &qw_, &qx_, &qy_, &qz_}) {
    const Eigen::ArrayXd copy = *a;
    for (int k = 0; k < size; ++k) (*a)[k] = copy[order[k]];
  }
}

std::array<int, 3> SeedAtlas::CellOf(const Eigen::Vector3d& p) const {
  std::array<int, 3> c{};
  for (int a = 0; a < 3; ++a) {
    const double x = std::floor((p[a] - grid_origin_[a]) / cell_size_);
    c[a] = x < 0.0 ? 0 : x >= grid_cells_[a] - 1 ? grid_cells_[a] - 1 : static_cast<int>(x);
  }
  return c;
}

int SeedAtlas::CellIndex(int x, int y, int z) const {
  return (z * grid_cells_[1] + y) * grid_cells_[0] + x;
}

template <typename Neighbors>
void SeedAtlas::OfferRange(int begin, int end, const Eigen::Vector3d& p,
                           const std::optional<Eigen::Quaterniond>& q, Neighbors& nearest) const {
  // An entry farther than the current count-th best is not offered (most of a search's
  // entries: the loop stays branch-light).
  double cutoff = nearest.full() ? nearest.worst() : std::numeric_limits<double>::infinity();
  const Eigen::Quaterniond target = q.value_or(Eigen::Quaterniond::Identity());
  const double rotation_weight = RotationWeight(q.has_value());
  for (int k = begin; k < end; ++k) {
    const double d2 = PoseDistance(px_[k] - p.x(), py_[k] - p.y(), pz_[k] - p.z(),
                                   QuaternionDot(qw_[k], qx_[k], qy_[k], qz_[k], target),
                                   rotation_weight);
    if (d2 <= cutoff) {
      nearest.Offer(d2, k);
      if (nearest.full()) cutoff = nearest.worst();
    }
  }
}

std::pair<double, double> SeedAtlas::SamplingRange(const Robot& robot, int joint, double inset) {
  const auto& limits = robot.spec().joints[joint].limits;
  double lo = limits ? limits->lower : -kPi, hi = limits ? limits->upper : kPi;
  if (!(hi - lo <= 8.0 * kPi)) {  // (also when the width overflows)
    const double middle = 0.5 * lo + 0.5 * hi;
    lo = middle - 4.0 * kPi;
    hi = middle + 4.0 * kPi;
  }
  const double margin = inset * (hi - lo);
  return {lo + margin, hi - margin};
}

double SeedAtlas::SquaredDistance(const Eigen::Isometry3d& X_WT, const Eigen::Vector3d& p_target,
                                  const std::optional<Eigen::Quaterniond>& q_target) const {
  const Eigen::Vector3d d = X_WT.translation() - p_target;
  const Eigen::Quaterniond q(X_WT.linear());
  const double c = QuaternionDot(q.w(), q.x(), q.y(), q.z(),
                                 q_target.value_or(Eigen::Quaterniond::Identity()));
  return PoseDistance(d.x(), d.y(), d.z(), c, RotationWeight(q_target.has_value()));
}

std::vector<SeedAtlas::Neighbor> SeedAtlas::Nearest(
    const Eigen::Vector3d& p_target, const std::optional<Eigen::Quaterniond>& q_target,
    int count) const {
  count = std::clamp(count, 0, size());
  if (count == 0) return {};
  // Cells in shells of growing Chebyshev radius r around the target's cell: an entry not yet
  // searched lies outside the box of shells 0 .. r - 1, so at least the target's distance to
  // that box's nearest inner face away in position, and the search stops when that bound
  // passes the count-th best distance. A target off the grid, or one that needs many shells,
  // is served by a scan of every entry (the same answer).
  const Eigen::Vector3d cells = (p_target - grid_origin_) / cell_size_;
  for (int a = 0; a < 3; ++a) {
    if (!(cells[a] >= -1.0 && cells[a] <= grid_cells_[a] + 1.0)) return Scan(p_target, q_target, count);
  }
  const std::array<int, 3> c = CellOf(p_target);
  BestNeighbors nearest(count);
  for (int r = 0;; ++r) {
    if (r > kMaxShells) return Scan(p_target, q_target, count);
    if (r >= 1 && nearest.full()) {
      const double bound = DistanceBeyondShells(p_target, c, r - 1);
      if (bound > 0.0 && bound * bound > nearest.worst()) break;
    }
    bool any = false;
    for (int z = std::max(0, c[2] - r); z <= std::min(grid_cells_[2] - 1, c[2] + r); ++z) {
      for (int y = std::max(0, c[1] - r); y <= std::min(grid_cells_[1] - 1, c[1] + r); ++y) {
        const bool inner = std::abs(z - c[2]) < r && std::abs(y - c[1]) < r;
        for (int x = std::max(0, c[0] - r); x <= std::min(grid_cells_[0] - 1, c[0] + r); ++x) {
          if (inner && std::abs(x - c[0]) < r) continue;  // searched in an earlier shell
          any = true;
          const int cell = CellIndex(x, y, z);
          OfferRange(cell_start_[cell], cell_start_[cell + 1], p_target, q_target, nearest);
        }
      }
    }
    if (!any) break;  // the shell lies outside the grid: every cell has been searched
  }
  return nearest.Take();
}

double SeedAtlas::DistanceBeyondShells(const Eigen::Vector3d& p, const std::array<int, 3>& c,
                                       int r) const {
  double bound = std::numeric_limits<double>::infinity();  // (no cell beyond: all searched)
  for (int a = 0; a < 3; ++a) {
    const int lo = c[a] - r, hi = c[a] + r;
    if (lo > 0) bound = std::min(bound, p[a] - (grid_origin_[a] + lo * cell_size_));
    if (hi < grid_cells_[a] - 1) bound = std::min(bound, grid_origin_[a] + (hi + 1) * cell_size_ - p[a]);
  }
  return bound;
}

std::vector<SeedAtlas::Neighbor> SeedAtlas::Scan(const Eigen::Vector3d& p_target,
                                                 const std::optional<Eigen::Quaterniond>& q_target,
                                                 int count) const {
  BestNeighbors nearest(count);
  OfferRange(0, size(), p_target, q_target, nearest);
  return nearest.Take();
}

const SeedAtlas& SeedAtlasOf(const Robot& robot) {
  Robot::IkCache& cache = robot.ik_cache();
  absl::call_once(cache.once, [&] {
    cache.value = std::make_shared<const SeedAtlas>(SeedAtlas::Build(robot));
  });
  return *static_cast<const SeedAtlas*>(cache.value.get());
}

}  // namespace ikd::robot
