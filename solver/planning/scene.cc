#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ikd/planning/scene.h"
#include "ikd/world.h"

namespace ikd::planning {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMinNorm = 1e-9;  // below this a normal or quaternion counts as zero
// Bounding balls are this much (relative) larger than needed, so that rounding never turns
// their gap into more than the exact distance it bounds.
constexpr double kBallSlack = 1.0 + 1e-9;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// ---------------------------------------------------------------------------------------------
// Validation

std::string Format(const Eigen::Vector3d& v) {
  return absl::StrCat("(", v.x(), ", ", v.y(), ", ", v.z(), ")");
}

absl::Status CheckRadius(double r, const std::string& field) {
  return CheckWorldLength(r, field, /*zero_allowed=*/true);
}

absl::Status CheckRotation(const Eigen::Quaterniond& q, const std::string& field) {
  const double norm = q.coeffs().norm();
  if (std::isfinite(norm) && norm >= kMinNorm) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must be a finite quaternion with norm >= ", kMinNorm, ", got (w ",
                   q.w(), ", x ", q.x(), ", y ", q.y(), ", z ", q.z(), ")"));
}

absl::Status ValidateSphere(const Sphere& s, const std::string& field) {
  if (absl::Status st = CheckInWorld(s.center, field + ".center"); !st.ok()) return st;
  return CheckRadius(s.radius, field + ".radius");
}

absl::Status ValidateCapsule(const Capsule& c, const std::string& field) {
  if (absl::Status st = CheckInWorld(c.a, field + ".a"); !st.ok()) return st;
  if (absl::Status st = CheckInWorld(c.b, field + ".b"); !st.ok()) return st;
  return CheckRadius(c.radius, field + ".radius");
}

absl::Status ValidateBox(const Box& b, const std::string& field) {
  if (absl::Status st = CheckInWorld(b.center, field + ".center"); !st.ok()) return st;
  if (absl::Status st = CheckRotation(b.orientation, field + ".orientation"); !st.ok()) return st;
  const Eigen::Vector3d& h = b.half_extents;
  if (!h.allFinite() || (h.array() < 0.0).any() || h.maxCoeff() > kWorldExtent) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".half_extents must be finite and in [0, ", kWorldExtent, "] m, got ", Format(h)));
  }
  return absl::OkStatus();
}

absl::Status ValidateHalfSpace(const HalfSpace& hs, const std::string& field) {
  const double norm = hs.normal.norm();
  if (!hs.normal.allFinite() || !(norm >= kMinNorm)) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".normal must be finite with norm >= ", kMinNorm, ", got ", Format(hs.normal)));
  }
  // The plane lies |offset| / |normal| from the origin (Create normalizes the normal).
  if (!std::isfinite(hs.offset) || std::abs(hs.offset) > kWorldExtent * norm) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".offset must be finite with |offset| / |normal| <= ", kWorldExtent,
                     " m, got ", hs.offset));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Points and segments

// Parameter in [0, 1] of the point of segment a-b closest to x (0 for a zero-length segment).
double ClosestParameter(const Eigen::Vector3d& x, const Eigen::Vector3d& a,
                        const Eigen::Vector3d& b) {
  const Eigen::Vector3d d = b - a;
  const double dd = d.squaredNorm();
  if (!(dd > 0.0)) return 0.0;
  return std::clamp((x - a).dot(d) / dd, 0.0, 1.0);
}

// Interpolation that reproduces the endpoints exactly at t = 0 and t = 1.
Eigen::Vector3d Lerp(const Eigen::Vector3d& a, const Eigen::Vector3d& b, double t) {
  return (1.0 - t) * a + t * b;
}

// A unit vector orthogonal to v (v != 0), or +z for v == 0.
Eigen::Vector3d AnyPerpendicular(const Eigen::Vector3d& v) {
  if (!(v.squaredNorm() > 0.0)) return Eigen::Vector3d::UnitZ();
  return v.unitOrthogonal();
}

// v / |v|, or `fallback` for v == 0.
Eigen::Vector3d UnitOr(const Eigen::Vector3d& v, const Eigen::Vector3d& fallback) {
  const double n = v.norm();
  return n > 0.0 ? Eigen::Vector3d(v / n) : fallback;
}

// ---------------------------------------------------------------------------------------------
// Shapes

CapsuleApproach SphereApproach(const Sphere& s, const Eigen::Vector3d& p, const Eigen::Vector3d& q,
                               double radius) {
  const double t = ClosestParameter(s.center, p, q);
  const Eigen::Vector3d v = Lerp(p, q, t) - s.center;
  return {v.norm() - s.radius - radius, t, UnitOr(v, AnyPerpendicular(q - p))};
}

CapsuleApproach CapsuleObstacleApproach(const Capsule& c, const Eigen::Vector3d& p,
                                        const Eigen::Vector3d& q, double radius) {
  const SegmentPair pair = ClosestSegmentPair(p, q, c.a, c.b);
  const Eigen::Vector3d v = Lerp(p, q, pair.s) - Lerp(c.a, c.b, pair.t);
  // Crossing axes: the common normal separates them fastest.
  const Eigen::Vector3d cross = (q - p).cross(c.b - c.a);
  const Eigen::Vector3d fallback = UnitOr(cross, AnyPerpendicular(q - p));
  return {pair.distance - c.radius - radius, pair.s, UnitOr(v, fallback)};
}

CapsuleApproach HalfSpaceApproach(const HalfSpace& hs, const Eigen::Vector3d& p,
                                  const Eigen::Vector3d& q, double radius) {
  // Linear along the segment, so the minimum is at an endpoint.
  const double norm = hs.normal.norm();
  const Eigen::Vector3d n = hs.normal / norm;
  const double offset = hs.offset / norm;
  const double dp = n.dot(p) - offset, dq = n.dot(q) - offset;
  if (dq < dp) return {dq - radius, 1.0, n};
  return {dp - radius, 0.0, n};
}

// Signed distance of a point y (box frame) to the box |y_i| <= h_i: the Euclidean distance to
// the box outside, minus the distance to the nearest face inside.
double BoxPointDistance(const Eigen::Vector3d& y, const Eigen::Vector3d& h) {
  const Eigen::Vector3d excess = y.cwiseAbs() - h;
  return excess.cwiseMax(0.0).norm() + std::min(excess.maxCoeff(), 0.0);
}

// Gradient of BoxPointDistance (box frame): towards y from its nearest box point outside, the
// outward normal of the nearest face inside.
Eigen::Vector3d BoxPointGradient(const Eigen::Vector3d& y, const Eigen::Vector3d& h) {
  const Eigen::Vector3d excess = y.cwiseAbs() - h;
  Eigen::Vector3d sign;
  for (int i = 0; i < 3; ++i) sign[i] = y[i] < 0.0 ? -1.0 : 1.0;
  const Eigen::Vector3d outside = excess.cwiseMax(0.0).cwiseProduct(sign);
  const double n = outside.norm();
  if (n > 0.0) return outside / n;
  Eigen::Index axis = 0;
  excess.maxCoeff(&axis);
  return sign[axis] * Eigen::Vector3d::Unit(axis);
}

// Exact minimum of the box distance along the segment a-b (box frame). The planes y_i = -h_i,
// 0, h_i cut the segment into pieces on which every coordinate keeps its sign and its side of
// the slab. On a piece outside the box the squared distance is a quadratic in t (the clamped
// coordinates), minimized at its vertex; inside it is the max of three linear functions,
// minimized where two of them cross. Ends of pieces, vertices and crossings are the candidates.
std::pair<double, double> BoxSegmentMinimum(const Eigen::Vector3d& a, const Eigen::Vector3d& b,
                                            const Eigen::Vector3d& h) {
  const Eigen::Vector3d d = b - a;
  std::array<double, 11> cuts;
  int num_cuts = 0;
  cuts[num_cuts++] = 0.0;
  cuts[num_cuts++] = 1.0;
  for (int i = 0; i < 3; ++i) {
    if (d[i] == 0.0) continue;
    for (double plane : {-h[i], 0.0, h[i]}) {
      const double t = (plane - a[i]) / d[i];
      if (t > 0.0 && t < 1.0) cuts[num_cuts++] = t;
    }
  }
  std::sort(cuts.begin(), cuts.begin() + num_cuts);

  double best_t = 0.0, best = kInf;
  auto consider = [&](double t) {
    const double value = BoxPointDistance(Lerp(a, b, t), h);
    if (value < best) best = value, best_t = t;
  };
  for (int k = 0; k < num_cuts; ++k) consider(cuts[k]);
  for (int k = 0; k + 1 < num_cuts; ++k) {
    const double lo = cuts[k], hi = cuts[k + 1];
    if (!(hi > lo)) continue;
    const Eigen::Vector3d mid = Lerp(a, b, 0.5 * (lo + hi));
    Eigen::Vector3d sign;
    for (int i = 0; i < 3; ++i) sign[i] = mid[i] < 0.0 ? -1.0 : 1.0;
    const Eigen::Array<bool, 3, 1> outside = (mid.cwiseAbs() - h).array() > 0.0;
    if (outside.any()) {
      // sum over clamped i of (a_i - sign_i h_i + t d_i)^2 = A t^2 + 2 B t + const
      double A = 0.0, B = 0.0;
      for (int i = 0; i < 3; ++i) {
        if (!outside[i]) continue;
        A += d[i] * d[i];
        B += d[i] * (a[i] - sign[i] * h[i]);
      }
      if (A > 0.0) consider(std::clamp(-B / A, lo, hi));
    } else {
      // L_i(t) = sign_i (a_i + t d_i) - h_i = alpha_i + t beta_i
      const Eigen::Vector3d alpha = sign.cwiseProduct(a) - h, beta = sign.cwiseProduct(d);
      for (int i = 0; i < 3; ++i) {
        for (int j = i + 1; j < 3; ++j) {
          const double slope = beta[i] - beta[j];
          if (slope == 0.0) continue;
          const double t = (alpha[j] - alpha[i]) / slope;
          if (t > lo && t < hi) consider(t);
        }
      }
    }
  }
  return {best, best_t};
}

CapsuleApproach BoxApproach(const Box& box, const Eigen::Vector3d& p, const Eigen::Vector3d& q,
                            double radius) {
  const Eigen::Matrix3d R = box.orientation.normalized().toRotationMatrix();
  const Eigen::Vector3d a = R.transpose() * (p - box.center);
  const Eigen::Vector3d b = R.transpose() * (q - box.center);
  const auto [distance, t] = BoxSegmentMinimum(a, b, box.half_extents);
  const Eigen::Vector3d normal = R * BoxPointGradient(Lerp(a, b, t), box.half_extents);
  return {distance - radius, t, normal};
}

// The obstacle after the rigid motion x -> R x + translation.
Shape Transformed(const Shape& shape, const Eigen::Vector3d& translation,
                  const Eigen::Quaterniond& rotation) {
  const Eigen::Matrix3d R = rotation.toRotationMatrix();
  auto move = [&](const Eigen::Vector3d& x) -> Eigen::Vector3d { return R * x + translation; };
  return std::visit(
      Overloaded{
          [&](const Sphere& s) -> Shape {
            return Sphere{move(s.center), s.radius};
          },
          [&](const Capsule& c) -> Shape {
            return Capsule{move(c.a), move(c.b), c.radius};
          },
          [&](const Box& b) -> Shape {
            return Box{move(b.center), (rotation * b.orientation).normalized(), b.half_extents};
          },
          [&](const HalfSpace& hs) -> Shape {
            // n . x <= o with x = R^T (x' - translation)  <=>  (R n) . x' <= o + (R n) .
            // translation
            const Eigen::Vector3d n = R * hs.normal;
            return HalfSpace{n, hs.offset + n.dot(translation)};
          },
      },
      shape);
}

// Unit box orientations and half-space normals (the same solids).
Shape Normalized(const Shape& shape) {
  if (const Box* b = std::get_if<Box>(&shape)) {
    return Box{b->center, b->orientation.normalized(), b->half_extents};
  }
  if (const HalfSpace* hs = std::get_if<HalfSpace>(&shape)) {
    const double norm = hs->normal.norm();
    return HalfSpace{hs->normal / norm, hs->offset / norm};
  }
  return shape;
}

absl::Status ValidateObstacle(const Obstacle& obstacle, const std::string& field) {
  if (obstacle.id.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".id must be non-empty"));
  }
  return ValidateShape(obstacle.shape, field);
}

}  // namespace

absl::Status ValidateShape(const Shape& shape, const std::string& field) {
  return std::visit(Overloaded{
                        [&](const Sphere& s) { return ValidateSphere(s, field); },
                        [&](const Capsule& c) { return ValidateCapsule(c, field); },
                        [&](const Box& b) { return ValidateBox(b, field); },
                        [&](const HalfSpace& hs) { return ValidateHalfSpace(hs, field); },
                    },
                    shape);
}

CapsuleApproach ClosestApproach(const Shape& shape, const Eigen::Vector3d& p,
                                const Eigen::Vector3d& q, double radius) {
  return std::visit(Overloaded{
                        [&](const Sphere& s) { return SphereApproach(s, p, q, radius); },
                        [&](const Capsule& c) { return CapsuleObstacleApproach(c, p, q, radius); },
                        [&](const Box& b) { return BoxApproach(b, p, q, radius); },
                        [&](const HalfSpace& hs) { return HalfSpaceApproach(hs, p, q, radius); },
                    },
                    shape);
}

// ClosestApproach's distance without its normal.
double SignedDistance(const Shape& shape, const Eigen::Vector3d& p, const Eigen::Vector3d& q,
                      double radius) {
  return std::visit(
      Overloaded{
          [&](const Sphere& s) { return PointSegmentDistance(s.center, p, q) - s.radius - radius; },
          [&](const Capsule& c) {
            return ClosestSegmentPair(p, q, c.a, c.b).distance - c.radius - radius;
          },
          [&](const Box& b) {
            const Eigen::Matrix3d R = b.orientation.normalized().toRotationMatrix();
            return BoxSegmentMinimum(R.transpose() * (p - b.center), R.transpose() * (q - b.center),
                                     b.half_extents)
                       .first -
                   radius;
          },
          [&](const HalfSpace& hs) { return HalfSpaceApproach(hs, p, q, radius).distance; },
      },
      shape);
}

double PointSignedDistance(const Shape& shape, const Eigen::Vector3d& x) {
  return SignedDistance(shape, x, x, 0.0);
}

// The squared distance |p(s) - q(t)|^2 is a convex quadratic on the unit square: its minimum is
// the stationary point of the two lines when that lies inside, else on an edge of the square,
// i.e. an endpoint of one segment against the other segment. Taking the least of these five
// candidates is exact for parallel, collinear and zero-length segments alike.
// Candidates compete on the expanded quadratic (scalars only: no point is formed); the
// winner's distance is measured between its two points, one square root.
SegmentPair ClosestSegmentPair(const Eigen::Vector3d& p0, const Eigen::Vector3d& p1,
                               const Eigen::Vector3d& q0, const Eigen::Vector3d& q1) {
  // |r + s d1 - t d2|^2 = rr + a s^2 + e t^2 + 2 c s - 2 f t - 2 b s t.
  const Eigen::Vector3d d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = d1.squaredNorm(), b = d1.dot(d2), e = d2.squaredNorm();
  const double c = d1.dot(r), f = d2.dot(r), rr = r.squaredNorm();
  SegmentPair best;
  double best_squared = kInf;
  auto consider = [&](double s, double t) {
    const double squared = rr + s * (a * s + 2.0 * c) + t * (e * t - 2.0 * f) - 2.0 * b * s * t;
    if (squared < best_squared) best_squared = squared, best.s = s, best.t = t;
  };
  // Parameter of an endpoint's foot on the other segment (ClosestParameter in scalars).
  auto foot = [](double along, double length_squared) {
    return length_squared > 0.0 ? std::clamp(along / length_squared, 0.0, 1.0) : 0.0;
  };
  consider(0.0, foot(f, e));      // p0 against q
  consider(1.0, foot(f + b, e));  // p1
  consider(foot(-c, a), 0.0);     // q0 against p
  consider(foot(b - c, a), 1.0);  // q1
  // Stationary point of |r + s d1 - t d2|^2: a s - b t = -c, b s - e t = -f.
  const double denom = a * e - b * b;  // >= 0; zero for parallel or degenerate segments
  if (denom > 0.0) {
    const double s = (b * f - c * e) / denom;
    const double t = (a * f - b * c) / denom;
    if (s > 0.0 && s < 1.0 && t > 0.0 && t < 1.0) consider(s, t);
  }
  best.distance = (Lerp(p0, p1, best.s) - Lerp(q0, q1, best.t)).norm();
  return best;
}

double PointSegmentDistance(const Eigen::Vector3d& x, const Eigen::Vector3d& a,
                            const Eigen::Vector3d& b) {
  return (Lerp(a, b, ClosestParameter(x, a, b)) - x).norm();
}

double SegmentSegmentDistance(const Eigen::Vector3d& p0, const Eigen::Vector3d& p1,
                              const Eigen::Vector3d& q0, const Eigen::Vector3d& q1) {
  return ClosestSegmentPair(p0, p1, q0, q1).distance;
}

double MinSelfClearance(const Eigen::Matrix3Xd& sites, const std::vector<double>& radii,
                        int* limb_i, int* limb_j) {
  LimbPairCulling culling;
  culling.Reset(sites, radii);
  return culling.MinClearance(sites, limb_i, limb_j);
}

void LimbPairCulling::Reset(const Eigen::Matrix3Xd& sites, const std::vector<double>& radii) {
  limbs_ = std::max(0, static_cast<int>(sites.cols()) - 1);
  blocks_ = (limbs_ + kBlock - 1) / kBlock;
  radii_.resize(limbs_);
  limb_center_.resize(3, limbs_);
  limb_reach_.resize(limbs_);
  for (int k = 0; k < limbs_; ++k) {
    radii_[k] = k < static_cast<int>(radii.size()) ? radii[k] : 0.0;
    limb_center_.col(k) = 0.5 * (sites.col(k) + sites.col(k + 1));
    limb_reach_[k] = kBallSlack * (0.5 * (sites.col(k + 1) - sites.col(k)).norm() + radii_[k]);
  }
  block_center_.resize(3, blocks_);
  block_reach_.resize(blocks_);
  block_gap_.resize(blocks_ * blocks_);
  if (blocks_ <= 1) return;  // a single block is never culled as a whole
  for (int b = 0; b < blocks_; ++b) {
    const int first = b * kBlock, last = std::min(limbs_, first + kBlock);
    block_center_.col(b) = limb_center_.middleCols(first, last - first).rowwise().mean();
    block_reach_[b] = 0.0;
    for (int k = first; k < last; ++k) {
      const double spread = (limb_center_.col(k) - block_center_.col(b)).norm();
      block_reach_[b] = std::max(block_reach_[b], kBallSlack * spread + limb_reach_[k]);
    }
  }
  for (int a = 0; a < blocks_; ++a) {
    for (int b = a; b < blocks_; ++b) {
      block_gap_[a * blocks_ + b] =
          (block_center_.col(a) - block_center_.col(b)).norm() - block_reach_[a] - block_reach_[b];
    }
  }
}

double LimbPairCulling::MinClearance(const Eigen::Matrix3Xd& sites, int* limb_i,
                                     int* limb_j) const {
  // Pairs come in the order (i, j) ascending, and a culled pair cannot beat the running best:
  // the same minimum and pair as the exhaustive double loop.
  double best = kInf;
  int best_i = -1, best_j = -1;
  for (int i = 0; i < limbs_; ++i) {
    ForEachNear(i, best, [&](int j) {
      const double clearance =
          SegmentSegmentDistance(sites.col(i), sites.col(i + 1), sites.col(j), sites.col(j + 1)) -
          radii_[i] - radii_[j];
      if (clearance < best) best = clearance, best_i = i, best_j = j;
    });
  }
  if (limb_i != nullptr) *limb_i = best_i;
  if (limb_j != nullptr) *limb_j = best_j;
  return best;
}

void LimbPairCulling::MinClearanceBySeparation(const Eigen::Matrix3Xd& sites,
                                               const std::vector<int>& last, double* out) const {
  const auto clearance = [&](int i, int j) {
    return SegmentSegmentDistance(sites.col(i), sites.col(i + 1), sites.col(j), sites.col(j + 1)) -
           radii_[i] - radii_[j];
  };
  for (size_t g = 0; g < last.size(); ++g) {
    double& best = out[g];
    best = kInf;
    const int first = g == 0 ? 2 : last[g - 1] + 1;
    for (int i = 0; i + first < limbs_; ++i) {
      ForEachNear(
          i, best, [&](int j) { best = std::min(best, clearance(i, j)); }, i + first,
          i + last[g] + 1);
    }
  }
}

Scene::Ball Scene::BoundingBall(const Shape& shape) {
  return std::visit(
      Overloaded{
          [](const Sphere& s) {
            return Ball{s.center, kBallSlack * s.radius};
          },
          [](const Capsule& c) {
            return Ball{0.5 * (c.a + c.b), kBallSlack * (0.5 * (c.b - c.a).norm() + c.radius)};
          },
          [](const Box& b) {
            return Ball{b.center, kBallSlack * b.half_extents.norm()};
          },
          [](const HalfSpace&) {
            return Ball{Eigen::Vector3d::Zero(), kInf};
          },
      },
      shape);
}

Scene::Scene(std::vector<Obstacle> obstacles) : obstacles_(std::move(obstacles)) {
  for (const Obstacle& o : obstacles_) bounds_.push_back(BoundingBall(o.shape));
}

absl::StatusOr<Scene> Scene::Create(std::vector<Obstacle> obstacles) {
  if (obstacles.size() > static_cast<size_t>(kMaxObstacles)) {
    return absl::InvalidArgumentError(
        absl::StrCat("obstacles: at most ", kMaxObstacles, " obstacles, got ", obstacles.size()));
  }
  std::unordered_map<std::string, size_t> index_of;
  for (size_t k = 0; k < obstacles.size(); ++k) {
    const std::string field = absl::StrCat("obstacles[", k, "]");
    if (absl::Status st = ValidateObstacle(obstacles[k], field); !st.ok()) return st;
    const auto [it, inserted] = index_of.emplace(obstacles[k].id, k);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".id \"", obstacles[k].id, "\" duplicates obstacles[", it->second, "].id"));
    }
    obstacles[k].shape = Normalized(obstacles[k].shape);
  }
  return Scene(std::move(obstacles));
}

int Scene::Find(const std::string& id) const {
  for (size_t k = 0; k < obstacles_.size(); ++k) {
    if (obstacles_[k].id == id) return static_cast<int>(k);
  }
  return -1;
}

absl::Status Scene::Add(Obstacle obstacle) {
  const std::string field = absl::StrCat("obstacles[", obstacles_.size(), "]");
  if (absl::Status st = ValidateObstacle(obstacle, field); !st.ok()) return st;
  if (Find(obstacle.id) >= 0) {
    return absl::AlreadyExistsError(absl::StrCat("obstacle \"", obstacle.id, "\" already exists"));
  }
  if (size() >= kMaxObstacles) {
    return absl::InvalidArgumentError(
        absl::StrCat("obstacles: at most ", kMaxObstacles, " obstacles, the scene is full"));
  }
  obstacle.shape = Normalized(obstacle.shape);
  bounds_.push_back(BoundingBall(obstacle.shape));
  obstacles_.push_back(std::move(obstacle));
  return absl::OkStatus();
}

absl::Status Scene::Remove(const std::string& id) {
  const int k = Find(id);
  if (k < 0) return absl::NotFoundError(absl::StrCat("no obstacle \"", id, "\""));
  obstacles_.erase(obstacles_.begin() + k);
  bounds_.erase(bounds_.begin() + k);
  return absl::OkStatus();
}

absl::Status Scene::Move(const std::string& id, const Eigen::Vector3d& translation,
                         const Eigen::Quaterniond& rotation) {
  if (absl::Status st = CheckInWorld(translation, "translation"); !st.ok()) return st;
  if (absl::Status st = CheckRotation(rotation, "rotation"); !st.ok()) return st;
  const int k = Find(id);
  if (k < 0) return absl::NotFoundError(absl::StrCat("no obstacle \"", id, "\""));
  Shape moved = Normalized(Transformed(obstacles_[k].shape, translation, rotation.normalized()));
  // Moves add up: the moved obstacle must still lie in the world.
  if (absl::Status st = ValidateShape(moved, absl::StrCat("obstacle \"", id, "\" moved"));
      !st.ok()) {
    return st;
  }
  obstacles_[k].shape = std::move(moved);
  bounds_[k] = BoundingBall(obstacles_[k].shape);
  return absl::OkStatus();
}

template <typename Limit, typename Visit>
void Scene::ForEachWithin(const Eigen::Vector3d& p, const Eigen::Vector3d& q, double radius,
                          Limit&& limit, Visit&& visit) const {
  // A ball around the capsule: the gap between two balls bounds the distance from below, and
  // an obstacle whose bound cannot beat the limit (ties keep the first) is skipped.
  const Eigen::Vector3d center = 0.5 * (p + q);
  const double reach = kBallSlack * (0.5 * (q - p).norm() + radius);
  for (size_t k = 0; k < obstacles_.size(); ++k) {
    const double below = limit();
    if ((bounds_[k].center - center).norm() - bounds_[k].radius - reach >= below) continue;
    // A capsule (a post across the arm) is far longer than thick: the distance from the
    // capsule's axis to the ball's center bounds tighter than its own ball.
    const Capsule* capsule = std::get_if<Capsule>(&obstacles_[k].shape);
    if (capsule != nullptr && PointSegmentDistance(center, capsule->a, capsule->b) -
                                      kBallSlack * capsule->radius - reach >=
                                  below) {
      continue;
    }
    visit(static_cast<int>(k));
  }
}

double Scene::MinSignedDistance(const Eigen::Vector3d& p, const Eigen::Vector3d& q, double radius,
                                int* closest, double cutoff) const {
  double best = kInf;
  int best_k = -1;
  ForEachWithin(
      p, q, radius, [&] { return std::min(best, cutoff); },
      [&](int k) {
        const double d = SignedDistance(obstacles_[k].shape, p, q, radius);
        if (d < best) best = d, best_k = k;
      });
  if (closest != nullptr) *closest = best_k;
  return best;
}

std::vector<std::pair<int, double>> Scene::SignedDistancesBelow(const Eigen::Vector3d& p,
                                                                const Eigen::Vector3d& q,
                                                                double radius,
                                                                double cutoff) const {
  std::vector<std::pair<int, double>> near;
  ForEachWithin(
      p, q, radius, [&] { return cutoff; },
      [&](int k) {
        const double d = SignedDistance(obstacles_[k].shape, p, q, radius);
        if (d < cutoff) near.emplace_back(k, d);
      });
  return near;
}

}  // namespace ikd::planning
