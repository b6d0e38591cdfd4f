#include "ikd/robot/robot.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace ikd::robot {

using constraints::ConstraintModel;
using constraints::DistanceConstraint;

namespace {

constexpr double kPi = 3.14159265358979323846;
// Sites of one cluster keep at least this multiple of the spacing between each other.
constexpr double kMinSeparation = 0.3;

double MinDistance(const std::vector<Eigen::Vector3d>& candidates,
                   const std::vector<Eigen::Vector3d>& others) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& c : candidates) {
    for (const auto& o : others) best = std::min(best, (c - o).norm());
  }
  return best;
}

// |det| of the tetrahedron (a, b, c, p), six times its volume.
double Volume(const Eigen::Vector3d& a, const Eigen::Vector3d& b, const Eigen::Vector3d& c,
              const Eigen::Vector3d& p) {
  return std::abs((b - a).cross(c - a).dot(p - a));
}

double WrapToPi(double angle) {
  angle = std::remainder(angle, 2.0 * kPi);
  return angle <= -kPi ? angle + 2.0 * kPi : angle;
}

// Builds the site layout of the class comment at q = 0, in world coordinates.
class LayoutBuilder {
 public:
  LayoutBuilder(const ChainSpec& spec, double spacing) : spec_(spec), s_(spacing) {
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(spec.joints.size());
    frames_.push_back(spec.X_WB);
    for (const auto& X_WL : LinkPoses(spec, zero)) frames_.push_back(X_WL);
    X_WT_ = ToolPose(spec, zero);
  }

  void Build() {
    const int n = static_cast<int>(spec_.joints.size());
    axis_pairs_.push_back(PlaceAxisPair(1, {}, n == 1 ? ToolPoints() : std::vector<Eigen::Vector3d>{}));
    const Eigen::Vector3d a1 = Axis(1);
    const int c0 = Add(position_[axis_pairs_[0][0]] + s_ * a1.unitOrthogonal(), 0);
    link_sites_.push_back({axis_pairs_[0][0], axis_pairs_[0][1], c0});
    for (int L = 1; L < n; ++L) BuildLink(L);
    BuildToolLink();
  }

  std::vector<Eigen::Vector3d> position_;
  std::vector<int> owner_;
  std::vector<std::vector<int>> link_sites_;
  std::vector<std::array<int, 2>> axis_pairs_;  // per joint: A_L, B_L
  std::vector<DistanceConstraint> constraints_;
  std::array<int, 4> tool_sites_{};

 private:
  Eigen::Vector3d Axis(int joint) const {
    return frames_[joint].linear() * spec_.joints[joint - 1].axis;
  }
  Eigen::Vector3d Origin(int joint) const { return frames_[joint].translation(); }

  std::vector<Eigen::Vector3d> ToolPoints() const {
    const Eigen::Vector3d p = X_WT_.translation();
    const Eigen::Matrix3d R = X_WT_.linear();
    return {p, p + s_ * R.col(0), p + s_ * R.col(1), p + s_ * R.col(2)};
  }

  int Add(const Eigen::Vector3d& p, int owner) {
    position_.push_back(p);
    owner_.push_back(owner);
    return static_cast<int>(position_.size()) - 1;
  }

  std::vector<Eigen::Vector3d> Points(const std::vector<int>& sites) const {
    std::vector<Eigen::Vector3d> points;
    for (int i : sites) points.push_back(position_[i]);
    return points;
  }

  // Slides joint L's axis pair along the axis until it keeps clear of `others` and `extra`.
  std::array<int, 2> PlaceAxisPair(int joint, const std::vector<int>& others,
                                   const std::vector<Eigen::Vector3d>& extra) {
    std::vector<Eigen::Vector3d> avoid = Points(others);
    avoid.insert(avoid.end(), extra.begin(), extra.end());
    const Eigen::Vector3d o = Origin(joint), a = Axis(joint);
    double best_t = 0.0, best_score = -1.0;
    for (double t : {0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -1.5}) {
      const Eigen::Vector3d A = o + t * s_ * a;
      const double score = avoid.empty() ? 1e300 : MinDistance({A, A + s_ * a}, avoid);
      if (score > best_score) best_score = score, best_t = t;
      if (score >= kMinSeparation * s_) break;
    }
    const Eigen::Vector3d A = o + best_t * s_ * a;
    const int owner = joint - 1;  // on the axis: fixed in both links; held by the parent
    return {Add(A, owner), Add(A + s_ * a, owner)};
  }

  // Link L < n: the tetrahedron {A_L, B_L, C_L, D_L} and the next joint's axis pair tied to it.
  void BuildLink(int L) {
    const int n = static_cast<int>(spec_.joints.size());
    const auto [A, B] = axis_pairs_[L - 1];
    const Eigen::Vector3d a = Axis(L), u = a.unitOrthogonal();
    const int C = Add(position_[A] + s_ * u, L);
    const int D = Add(position_[A] + s_ * a.cross(u), L);
    Tie(C, {A, B});  // the hinge: C turns about A-B
    Tie(D, {A, B, C});
    axis_pairs_.push_back(PlaceAxisPair(L + 1, {A, B, C, D}, L + 1 == n ? ToolPoints() : std::vector<Eigen::Vector3d>{}));
    const auto [next_A, next_B] = axis_pairs_[L];
    TieToBestFace(next_A, {A, B, C, D});
    TieToBestFace(next_B, {A, B, C, D});
    link_sites_.push_back({A, B, C, D, next_A, next_B});
  }

  // The last link: the tool tetrahedron T0..T3 (rigid by its six edges, all frozen when the
  // tool pose is driven) and the last axis pair tied to it with five distances. No auxiliary
  // sites: with the tool fixed they would over-determine the link (dependent constraints).
  void BuildToolLink() {
    const int n = static_cast<int>(spec_.joints.size());
    const auto [A, B] = axis_pairs_[n - 1];
    const std::vector<Eigen::Vector3d> tool = ToolPoints();
    std::array<int, 4> T{};
    for (int k = 0; k < 4; ++k) T[k] = Add(tool[k], n);
    for (int k = 0; k < 4; ++k) {
      for (int m = k + 1; m < 4; ++m) Tie(T[m], {T[k]});
    }
    // A_n fixed in the tool's frame by three distances; B_n by two more, the third being the
    // axis length that link n-1 already holds: the tool keeps its turn about the axis.
    TieToBestFace(A, T);
    TieToBestPair(B, A, T);
    tool_sites_ = T;
    link_sites_.push_back({A, B, T[0], T[1], T[2], T[3]});
  }

  void Tie(int site, const std::vector<int>& to) {
    for (int other : to) {
      constraints_.push_back({site, other, (position_[site] - position_[other]).norm()});
    }
  }

  // Three distances to the face of the tetrahedron that spans the largest volume with the
  // site: the site is then rigid with the tetrahedron (up to a mirror image, never reached
  // by small steps).
  void TieToBestFace(int site, const std::array<int, 4>& tetra) {
    double best = -1.0;
    std::array<int, 3> face{};
    for (int skip = 0; skip < 4; ++skip) {
      std::array<int, 3> f{};
      for (int k = 0, m = 0; k < 4; ++k) {
        if (k != skip) f[m++] = tetra[k];
      }
      const double v = Volume(position_[f[0]], position_[f[1]], position_[f[2]], position_[site]);
      if (v > best) best = v, face = f;
    }
    Tie(site, {face[0], face[1], face[2]});
  }

  // Two distances from `site` to the pair of `tetra` that spans the largest volume with it and
  // `pivot` (the hinge's other axis site).
  void TieToBestPair(int site, int pivot, const std::array<int, 4>& tetra) {
    double best = -1.0;
    std::array<int, 2> pair{};
    for (int k = 0; k < 4; ++k) {
      for (int m = k + 1; m < 4; ++m) {
        const double v = Volume(position_[pivot], position_[site], position_[tetra[k]],
                                position_[tetra[m]]);
        if (v > best) best = v, pair = {tetra[k], tetra[m]};
      }
    }
    Tie(site, {pair[0], pair[1]});
  }

  const ChainSpec& spec_;
  const double s_;
  std::vector<Eigen::Isometry3d> frames_;  // link 0 (base) .. n at q = 0
  Eigen::Isometry3d X_WT_;
};

// The site among `sites` farthest from the line through the sites `line`.
int FarthestFromLine(const Eigen::Matrix3Xd& positions, const std::vector<int>& sites,
                     const std::array<int, 2>& line) {
  const Eigen::Vector3d A = positions.col(line[0]);
  const Eigen::Vector3d a = (positions.col(line[1]) - A).normalized();
  int best = -1;
  double best_distance = -1.0;
  for (int i : sites) {
    const Eigen::Vector3d r = positions.col(i) - A;
    const double distance = (r - r.dot(a) * a).norm();
    if (distance > best_distance) best_distance = distance, best = i;
  }
  return best;
}

double DefaultSpacing(const ChainSpec& spec) {
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(spec.joints.size());
  Eigen::Vector3d previous = spec.X_WB.translation();
  double total = 0.0;
  for (const auto& X_WL : LinkPoses(spec, zero)) {
    total += (X_WL.translation() - previous).norm();
    previous = X_WL.translation();
  }
  total += (ToolPose(spec, zero).translation() - previous).norm();
  return std::max(0.05, 0.25 * total / (spec.joints.size() + 1));
}

}  // namespace

absl::StatusOr<Robot> Robot::Create(const ChainSpec& input, double spacing) {
  if (absl::Status s = input.Validate(); !s.ok()) return s;
  for (size_t k = 0; k < input.joints.size(); ++k) {
    if (input.joints[k].type == JointType::kPrismatic) {
      return absl::InvalidArgumentError(absl::StrCat(
          "joints[", k, "] (", input.joints[k].name,
          "): prismatic joints are not supported: a sliding joint changes the distance between "
          "the sites it shares, so it has no form as distance constraints"));
    }
  }
  if (!std::isfinite(spacing) || spacing < 0.0 || spacing > 1e6) {
    return absl::InvalidArgumentError(
        absl::StrCat("spacing must be in [0, 1e6] m (0: automatic), got ", spacing));
  }
  Robot robot;
  robot.spec_ = MergeFixedJoints(input);
  robot.spacing_ = spacing > 0.0 ? spacing : DefaultSpacing(robot.spec_);
  LayoutBuilder layout(robot.spec_, robot.spacing_);
  layout.Build();
  const int n_sites = static_cast<int>(layout.position_.size());
  robot.owner_ = layout.owner_;
  robot.link_sites_ = layout.link_sites_;
  robot.tool_sites_ = layout.tool_sites_;
  robot.constraints_ = layout.constraints_;
  // Local coordinates in the owner's frame at q = 0.
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(robot.num_joints());
  std::vector<Eigen::Isometry3d> frames = {robot.spec_.X_WB};
  for (const auto& X_WL : LinkPoses(robot.spec_, zero)) frames.push_back(X_WL);
  robot.local_.resize(3, n_sites);
  for (int i = 0; i < n_sites; ++i) {
    robot.local_.col(i) = frames[robot.owner_[i]].inverse() * layout.position_[i];
  }
  // Per joint, the sites of links L-1 and L farthest from axis L carry its angle.
  Eigen::Matrix3Xd sites0(3, n_sites);
  for (int i = 0; i < n_sites; ++i) sites0.col(i) = layout.position_[i];
  for (int L = 1; L <= robot.num_joints(); ++L) {
    const auto& pair = layout.axis_pairs_[L - 1];
    robot.reference_site_.push_back(FarthestFromLine(sites0, robot.link_sites_[L - 1], pair));
    robot.moving_site_.push_back(FarthestFromLine(sites0, robot.link_sites_[L], pair));
    if (robot.reference_site_.back() < 0 || robot.moving_site_.back() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "joints[", L - 1, "]: the link sites around its axis are not finite (offsets or "
          "spacing too large or too small for double precision)"));
    }
    robot.zero_angle_.push_back(0.0);
  }
  for (int L = 1; L <= robot.num_joints(); ++L) {
    robot.zero_angle_[L - 1] = robot.HingeAngle(sites0, L);
  }
  // Base sites fixed; tool sites driven per mode.
  Eigen::VectorXd w = Eigen::VectorXd::Ones(n_sites);
  for (int i : robot.link_sites_[0]) w[i] = 0.0;
  w[robot.tool_sites_[0]] = 0.0;
  auto position_model = ConstraintModel::Create(w, robot.constraints_);
  if (!position_model.ok()) return position_model.status();
  for (int i : robot.tool_sites_) w[i] = 0.0;
  auto pose_model = ConstraintModel::Create(w, robot.constraints_);
  if (!pose_model.ok()) return pose_model.status();
  robot.position_model_ = std::make_shared<const ConstraintModel>(*std::move(position_model));
  robot.pose_model_ = std::make_shared<const ConstraintModel>(*std::move(pose_model));
  return robot;
}

Eigen::Matrix3Xd Robot::SitesFromAngles(const Eigen::VectorXd& q) const {
  std::vector<Eigen::Isometry3d> frames = {spec_.X_WB};
  for (const auto& X_WL : LinkPoses(spec_, q)) frames.push_back(X_WL);
  Eigen::Matrix3Xd sites(3, num_sites());
  for (int i = 0; i < num_sites(); ++i) sites.col(i) = frames[owner_[i]] * local_.col(i).eval();
  return sites;
}

double Robot::HingeAngle(const Eigen::Matrix3Xd& sites, int joint) const {
  const std::vector<int>& link = link_sites_[joint];
  const Eigen::Vector3d A = sites.col(link[0]);
  const Eigen::Vector3d a = (sites.col(link[1]) - A).normalized();
  Eigen::Vector3d from = sites.col(reference_site_[joint - 1]) - A;
  Eigen::Vector3d to = sites.col(moving_site_[joint - 1]) - A;
  from -= from.dot(a) * a;
  to -= to.dot(a) * a;
  return std::atan2(a.dot(from.cross(to)), from.dot(to));
}

Eigen::VectorXd Robot::AnglesFromSites(const Eigen::Matrix3Xd& sites,
                                       const Eigen::VectorXd* near) const {
  Eigen::VectorXd q(num_joints());
  for (int L = 1; L <= num_joints(); ++L) {
    double angle = WrapToPi(HingeAngle(sites, L) - zero_angle_[L - 1]);
    if (near != nullptr && near->size() == q.size()) {
      angle = (*near)[L - 1] + WrapToPi(angle - (*near)[L - 1]);
    }
    q[L - 1] = angle;
  }
  return q;
}

Eigen::Isometry3d Robot::ToolPoseFromSites(const Eigen::Matrix3Xd& sites) const {
  const Eigen::Vector3d p = sites.col(tool_sites_[0]);
  const Eigen::Vector3d x = (sites.col(tool_sites_[1]) - p).normalized();
  Eigen::Vector3d y = sites.col(tool_sites_[2]) - p;
  y = (y - y.dot(x) * x).normalized();
  Eigen::Isometry3d X_WT = Eigen::Isometry3d::Identity();
  X_WT.linear() << x, y, x.cross(y);
  X_WT.translation() = p;
  return X_WT;
}

std::array<Eigen::Vector3d, 4> Robot::ToolSitesFor(const Eigen::Isometry3d& X_WT) const {
  const Eigen::Vector3d p = X_WT.translation();
  const Eigen::Matrix3d R = X_WT.linear();
  return {p, p + spacing_ * R.col(0), p + spacing_ * R.col(1), p + spacing_ * R.col(2)};
}

double Robot::LimitViolation(const Eigen::VectorXd& q) const {
  double worst = 0.0;
  for (int k = 0; k < num_joints(); ++k) {
    const auto& limits = spec_.joints[k].limits;
    if (!limits) continue;
    worst = std::max({worst, limits->lower - q[k], q[k] - limits->upper});
  }
  return worst;
}

DistanceConstraint Robot::JointLock(const Eigen::Matrix3Xd& sites, const Eigen::VectorXd& q,
                                   int joint, double value) const {
  const std::vector<int>& link = link_sites_[joint + 1];
  const Eigen::Vector3d A = sites.col(link[0]);
  const Eigen::Vector3d a = (sites.col(link[1]) - A).normalized();
  const int from = reference_site_[joint], to = moving_site_[joint];
  const Eigen::Vector3d turned = A + Eigen::AngleAxisd(value - q[joint], a) * (sites.col(to) - A);
  return {from, to, (turned - sites.col(from)).norm()};
}

Eigen::VectorXd Robot::MidRange() const {
  Eigen::VectorXd q = Eigen::VectorXd::Zero(num_joints());
  for (int k = 0; k < num_joints(); ++k) {
    const auto& limits = spec_.joints[k].limits;
    if (limits) q[k] = 0.5 * (limits->lower + limits->upper);
  }
  return q;
}

}  // namespace ikd::robot
