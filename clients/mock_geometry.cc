#include "mock_geometry.h"

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ikd::clients::mock {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

Eigen::Vector3d ToEigen(const v1::Vector3& v) { return {v.x(), v.y(), v.z()}; }

// The unit quaternion of a wire quaternion (x, y, z, w), or an error for a zero one.
absl::StatusOr<Eigen::Quaterniond> UnitQuaternion(const v1::Quaternion& q,
                                                  const std::string& field) {
  const Eigen::Quaterniond out(q.w(), q.x(), q.y(), q.z());
  const double norm = out.norm();
  if (!(norm > 0.0) || !std::isfinite(norm)) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be a non-zero quaternion"));
  }
  return Eigen::Quaterniond(out.coeffs() / norm);
}

absl::StatusOr<Obstacle> ObstacleFromProto(const v1::Obstacle& in, const std::string& field) {
  Obstacle out;
  out.id = in.id();
  switch (in.shape_case()) {
    case v1::Obstacle::kSphere:
      out.kind = Obstacle::Kind::kSphere;
      out.a = ToEigen(in.sphere().center());
      out.radius = in.sphere().radius();
      return out;
    case v1::Obstacle::kCapsule:
      out.kind = Obstacle::Kind::kCapsule;
      out.a = ToEigen(in.capsule().a());
      out.b = ToEigen(in.capsule().b());
      out.radius = in.capsule().radius();
      return out;
    case v1::Obstacle::kBox: {
      out.kind = Obstacle::Kind::kBox;
      out.a = ToEigen(in.box().center());
      auto q = UnitQuaternion(in.box().orientation(), field + ".box.orientation");
      if (!q.ok()) return q.status();
      out.rotation = q->toRotationMatrix();
      out.half_extents = ToEigen(in.box().half_extents());
      return out;
    }
    case v1::Obstacle::kHalfSpace: {
      out.kind = Obstacle::Kind::kHalfSpace;
      const Eigen::Vector3d n = ToEigen(in.half_space().normal());
      const double norm = n.norm();
      if (!(norm > 0.0) || !std::isfinite(norm)) {
        return absl::InvalidArgumentError(absl::StrCat(field, ".half_space.normal is zero"));
      }
      out.normal = n / norm;
      out.offset = in.half_space().offset() / norm;
      return out;
    }
    case v1::Obstacle::SHAPE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(field, " has no shape"));
}

// Distance from the local point y to the box |y_i| <= h_i (0 inside).
double OutsideDistance(const Eigen::Vector3d& y, const Eigen::Vector3d& h) {
  return (y - y.cwiseMax(-h).cwiseMin(h)).norm();
}

// min_i (h_i - |y_i|): > 0 inside, the distance to the nearest face.
double Depth(const Eigen::Vector3d& y, const Eigen::Vector3d& h) {
  return (h - y.cwiseAbs()).minCoeff();
}

}  // namespace

double PointSegmentDistance(const Eigen::Vector3d& x, const Eigen::Vector3d& a,
                            const Eigen::Vector3d& b) {
  const Eigen::Vector3d ab = b - a;
  const double length2 = ab.squaredNorm();
  const double t = length2 > 0.0 ? std::clamp((x - a).dot(ab) / length2, 0.0, 1.0) : 0.0;
  return (x - (a + t * ab)).norm();
}

double SegmentSegmentDistance(const Eigen::Vector3d& p0, const Eigen::Vector3d& p1,
                              const Eigen::Vector3d& q0, const Eigen::Vector3d& q1) {
  // The edges of the parameter square: an endpoint of one segment against the other.
  double best = std::min({PointSegmentDistance(p0, q0, q1), PointSegmentDistance(p1, q0, q1),
                          PointSegmentDistance(q0, p0, p1), PointSegmentDistance(q1, p0, p1)});
  // The stationary point of |p0 + s u - q0 - t v|^2, when it lies inside the square.
  const Eigen::Vector3d u = p1 - p0, v = q1 - q0, w = p0 - q0;
  const double a = u.dot(u), b = u.dot(v), c = v.dot(v), d = u.dot(w), e = v.dot(w);
  const double denominator = a * c - b * b;
  if (denominator > 0.0) {
    const double s = (b * e - c * d) / denominator;
    const double t = (a * e - b * d) / denominator;
    if (s >= 0.0 && s <= 1.0 && t >= 0.0 && t <= 1.0) {
      best = std::min(best, ((p0 + s * u) - (q0 + t * v)).norm());
    }
  }
  return best;
}

double SegmentBoxSignedDistance(const Eigen::Vector3d& p, const Eigen::Vector3d& q,
                                const Eigen::Vector3d& center, const Eigen::Matrix3d& R,
                                const Eigen::Vector3d& h) {
  const Eigen::Vector3d y0 = R.transpose() * (p - center);
  const Eigen::Vector3d y1 = R.transpose() * (q - center);
  const Eigen::Vector3d e = y1 - y0;
  auto at = [&](double t) -> Eigen::Vector3d {
    return t >= 1.0 ? y1 : Eigen::Vector3d(y0 + t * e);
  };

  // Inside: depth(t) = min of the six linear functions h_i -+ y_i(t); its largest value on
  // [0, 1] is at an end or where two of them cross.
  std::array<double, 6> alpha, beta;  // h_i - s y0_i, -s e_i
  for (int i = 0; i < 3; ++i) {
    alpha[2 * i] = h[i] - y0[i];
    beta[2 * i] = -e[i];
    alpha[2 * i + 1] = h[i] + y0[i];
    beta[2 * i + 1] = e[i];
  }
  double deepest = std::max(Depth(y0, h), Depth(y1, h));
  for (int k = 0; k < 6; ++k) {
    for (int l = k + 1; l < 6; ++l) {
      if (beta[k] == beta[l]) continue;
      const double t = (alpha[l] - alpha[k]) / (beta[k] - beta[l]);
      if (t > 0.0 && t < 1.0) deepest = std::max(deepest, Depth(at(t), h));
    }
  }
  if (deepest > 0.0) return -deepest;

  // Outside: between the parameters where a coordinate crosses a face plane (y_i = +-h_i) the
  // clamped axes are fixed and the squared distance is the convex quadratic
  // sum over them of (y0_i -+ h_i + t e_i)^2: its vertex, clamped to the piece, and the ends.
  std::vector<double> breaks = {0.0, 1.0};
  for (int i = 0; i < 3; ++i) {
    if (e[i] == 0.0) continue;
    for (double face : {-h[i], h[i]}) {
      const double t = (face - y0[i]) / e[i];
      if (t > 0.0 && t < 1.0) breaks.push_back(t);
    }
  }
  std::sort(breaks.begin(), breaks.end());
  double best = std::min(OutsideDistance(y0, h), OutsideDistance(y1, h));
  for (size_t k = 0; k + 1 < breaks.size(); ++k) {
    const double ta = breaks[k], tb = breaks[k + 1];
    if (!(tb > ta)) continue;
    best = std::min(best, OutsideDistance(at(ta), h));
    const Eigen::Vector3d middle = at(0.5 * (ta + tb));
    double A = 0.0, B = 0.0;
    for (int i = 0; i < 3; ++i) {
      if (middle[i] > h[i]) {
        A += e[i] * e[i];
        B += (y0[i] - h[i]) * e[i];
      } else if (middle[i] < -h[i]) {
        A += e[i] * e[i];
        B += (y0[i] + h[i]) * e[i];
      }
    }
    if (A > 0.0) best = std::min(best, OutsideDistance(at(std::clamp(-B / A, ta, tb)), h));
  }
  return best;
}

double CapsuleClearance(const Obstacle& o, const Eigen::Vector3d& p, const Eigen::Vector3d& q,
                        double r) {
  switch (o.kind) {
    case Obstacle::Kind::kSphere:
      return PointSegmentDistance(o.a, p, q) - o.radius - r;
    case Obstacle::Kind::kCapsule:
      return SegmentSegmentDistance(p, q, o.a, o.b) - o.radius - r;
    case Obstacle::Kind::kBox:
      return SegmentBoxSignedDistance(p, q, o.a, o.rotation, o.half_extents) - r;
    case Obstacle::Kind::kHalfSpace:
      return std::min(o.normal.dot(p), o.normal.dot(q)) - o.offset - r;
  }
  return kInfinity;
}

double ChainSelfClearance(const Eigen::Matrix3Xd& sites, const std::vector<double>& radii) {
  double best = kInfinity;
  const int limbs = static_cast<int>(sites.cols()) - 1;
  for (int i = 0; i < limbs; ++i) {
    for (int j = i + 2; j < limbs; ++j) {
      best = std::min(best, SegmentSegmentDistance(sites.col(i), sites.col(i + 1), sites.col(j),
                                                   sites.col(j + 1)) -
                                radii[i] - radii[j]);
    }
  }
  return best;
}

double LeastClearanceInside(const Eigen::VectorXd& q_a, const Eigen::VectorXd& dq, double step,
                            const std::function<double(const Eigen::VectorXd&)>& clearance) {
  constexpr double kMinSamples = 16.0, kMaxSamples = 1e5;
  const double turn = dq.size() == 0 ? 0.0 : dq.cwiseAbs().maxCoeff();
  const int n = static_cast<int>(std::clamp(std::ceil(turn / step), kMinSamples, kMaxSamples));
  double least = kInfinity;
  for (int i = 1; i < n; ++i) {
    least = std::min(least, clearance(q_a + (static_cast<double>(i) / n) * dq));
  }
  return least;
}

namespace {
double PairClearance(const LinkBodies& links, int a, int b) {
  double least = kInfinity;
  for (const LinkCapsule& x : links[a]) {
    for (const LinkCapsule& y : links[b]) {
      least = std::min(least, SegmentSegmentDistance(x.a, x.b, y.a, y.b) - x.radius - y.radius);
    }
  }
  return least;
}
}  // namespace

std::vector<std::pair<int, int>> LinkPairsToCheck(int links, int samples,
                                                  const std::function<LinkBodies()>& random_links) {
  std::vector<int> touching(links * links, 0);
  for (int s = 0; s < samples; ++s) {
    const LinkBodies bodies = random_links();
    for (int a = 0; a < links; ++a) {
      for (int b = a + 2; b < links; ++b)
        touching[a * links + b] += PairClearance(bodies, a, b) < 0.0;
    }
  }
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < links; ++a) {
    for (int b = a + 2; b < links; ++b) {
      if (samples == 0 || touching[a * links + b] < samples) pairs.emplace_back(a, b);
    }
  }
  return pairs;
}

double LinkPairsClearance(const LinkBodies& links, const std::vector<std::pair<int, int>>& pairs) {
  double least = kInfinity;
  for (const auto& [a, b] : pairs) least = std::min(least, PairClearance(links, a, b));
  return least;
}

absl::StatusOr<Scene> Scene::FromProto(const v1::SceneSpec& spec) {
  Scene scene;
  for (int k = 0; k < spec.obstacles_size(); ++k) {
    auto obstacle = ObstacleFromProto(spec.obstacles(k), absl::StrCat("obstacles[", k, "]"));
    if (!obstacle.ok()) return obstacle.status();
    scene.obstacles_.push_back(*std::move(obstacle));
  }
  return scene;
}

absl::Status Scene::Apply(const v1::SceneUpdate& update) {
  std::vector<Obstacle> edited = obstacles_;  // all operations or none
  auto find = [&edited](const std::string& id) {
    return std::find_if(edited.begin(), edited.end(),
                        [&id](const Obstacle& o) { return o.id == id; });
  };
  for (int k = 0; k < update.operations_size(); ++k) {
    const v1::ObstacleOperation& op = update.operations(k);
    const std::string field = absl::StrCat("operations[", k, "]");
    switch (op.operation()) {
      case v1::ObstacleOperation::OPERATION_ADD: {
        if (find(op.obstacle().id()) != edited.end()) {
          return absl::AlreadyExistsError(
              absl::StrCat(field, ": obstacle \"", op.obstacle().id(), "\" exists"));
        }
        auto obstacle = ObstacleFromProto(op.obstacle(), field + ".obstacle");
        if (!obstacle.ok()) return obstacle.status();
        edited.push_back(*std::move(obstacle));
        break;
      }
      case v1::ObstacleOperation::OPERATION_MOVE: {
        auto it = find(op.obstacle_id());
        if (it == edited.end()) {
          return absl::NotFoundError(
              absl::StrCat(field, ": no obstacle \"", op.obstacle_id(), "\""));
        }
        Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
        if (op.has_rotation()) {
          auto q = UnitQuaternion(op.rotation(), field + ".rotation");
          if (!q.ok()) return q.status();
          R = q->toRotationMatrix();
        }
        const Eigen::Vector3d t = ToEigen(op.translation());
        Obstacle& o = *it;
        switch (o.kind) {
          case Obstacle::Kind::kCapsule:
            o.b = R * o.b + t;
            [[fallthrough]];
          case Obstacle::Kind::kSphere:
            o.a = R * o.a + t;
            break;
          case Obstacle::Kind::kBox:
            o.a = R * o.a + t;
            o.rotation = R * o.rotation;
            break;
          case Obstacle::Kind::kHalfSpace:
            // normal . x <= offset for x = R^T (x' - t): (R normal) . x' <= offset + (R normal) .
            // t.
            o.normal = R * o.normal;
            o.offset += o.normal.dot(t);
            break;
        }
        break;
      }
      case v1::ObstacleOperation::OPERATION_REMOVE: {
        auto it = find(op.obstacle_id());
        if (it == edited.end()) {
          return absl::NotFoundError(
              absl::StrCat(field, ": no obstacle \"", op.obstacle_id(), "\""));
        }
        edited.erase(it);
        break;
      }
      default:
        return absl::InvalidArgumentError(absl::StrCat(field, ": unknown operation"));
    }
  }
  obstacles_ = std::move(edited);
  return absl::OkStatus();
}

double Scene::MinClearance(const Eigen::Vector3d& p, const Eigen::Vector3d& q, double r) const {
  double best = kInfinity;
  for (const Obstacle& o : obstacles_) best = std::min(best, CapsuleClearance(o, p, q, r));
  return best;
}

}  // namespace ikd::clients::mock
