#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ikd/robot/chain.h"
#include "ikd/world.h"

namespace ikd::robot {
namespace {

constexpr int kMaxJoints = 64;

absl::Status FieldError(const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(field, " ", what));
}

// A rigid transform: finite, with a rotation part orthonormal to 1e-9 and determinant +1.
absl::Status CheckPose(const Eigen::Isometry3d& X, const std::string& field) {
  if (!X.matrix().allFinite()) return FieldError(field, "must be finite");
  // Far beyond any arm: site coordinates built from such offsets overflow (fuzzer finding).
  if (X.translation().cwiseAbs().maxCoeff() > kWorldExtent) {
    return FieldError(field, absl::StrCat("translation must be within ", kWorldExtent,
                                          " m in every coordinate, got (", X.translation().x(), ", ",
                                          X.translation().y(), ", ", X.translation().z(), ")"));
  }
  const Eigen::Matrix3d R = X.linear();
  const double orthogonality = (R.transpose() * R - Eigen::Matrix3d::Identity()).norm();
  if (orthogonality > 1e-9 || R.determinant() < 0.0) {
    return FieldError(field, absl::StrCat("must be a rotation (|R^T R - I| <= 1e-9, det +1), got ",
                                          "|R^T R - I| = ", orthogonality));
  }
  return absl::OkStatus();
}

absl::Status CheckLimits(const JointLimits& limits, const std::string& field) {
  if (!std::isfinite(limits.lower) || !std::isfinite(limits.upper)) {
    return FieldError(field, "lower and upper must be finite");
  }
  if (limits.lower > limits.upper) {
    return FieldError(field, absl::StrCat("lower must be <= upper, got lower ", limits.lower,
                                          " > upper ", limits.upper));
  }
  if (!(limits.max_velocity > 0.0)) {
    return FieldError(field, absl::StrCat("max_velocity must be > 0, got ", limits.max_velocity));
  }
  if (!(limits.max_acceleration > 0.0)) {
    return FieldError(field, absl::StrCat("max_acceleration must be > 0, got ",
                                          limits.max_acceleration));
  }
  if (!(limits.max_jerk > 0.0)) {
    return FieldError(field, absl::StrCat("max_jerk must be > 0, got ", limits.max_jerk));
  }
  return absl::OkStatus();
}

Eigen::Isometry3d RotX(double angle) {
  return Eigen::Isometry3d(Eigen::AngleAxisd(angle, Eigen::Vector3d::UnitX()));
}
Eigen::Isometry3d RotZ(double angle) {
  return Eigen::Isometry3d(Eigen::AngleAxisd(angle, Eigen::Vector3d::UnitZ()));
}
Eigen::Isometry3d Shift(double x, double y, double z) {
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  X.translation() = Eigen::Vector3d(x, y, z);
  return X;
}

// Composes the chain's transforms for joint values q (missing values count as 0), calling
// on_link with the world pose of the link after every moving joint; returns the pose after
// the last joint.
template <typename OnLink>
Eigen::Isometry3d WalkChain(const ChainSpec& spec, const Eigen::VectorXd& q, OnLink&& on_link) {
  Eigen::Isometry3d X_WL = spec.X_WB;
  int next = 0;
  for (const JointSpec& joint : spec.joints) {
    X_WL = X_WL * joint.X_PJ;
    if (joint.type == JointType::kFixed) continue;
    X_WL = X_WL * JointMotion(joint, next < q.size() ? q[next] : 0.0);
    ++next;
    on_link(X_WL);
  }
  return X_WL;
}

absl::Status ValidateLinkShapes(const ChainSpec& spec, int links) {
  if (spec.link_shapes.empty()) return absl::OkStatus();
  if (static_cast<int>(spec.link_shapes.size()) != links) {
    return FieldError("link_shapes",
                      absl::StrCat("must be empty or hold one list per moving joint (", links,
                                   "), got ", spec.link_shapes.size()));
  }
  if (!spec.link_radii.empty()) {
    return FieldError("link_radii",
                      "must be empty where link_shapes (the links' real collision "
                      "geometry, e.g. a URDF's <collision> elements) is given");
  }
  for (size_t k = 0; k < spec.link_shapes.size(); ++k) {
    for (size_t i = 0; i < spec.link_shapes[k].size(); ++i) {
      const LinkShape& shape = spec.link_shapes[k][i];
      const std::string field = absl::StrCat("link_shapes[", k, "][", i, "]");
      if (!shape.a.allFinite() || !shape.b.allFinite() ||
          std::max(shape.a.cwiseAbs().maxCoeff(), shape.b.cwiseAbs().maxCoeff()) > kWorldExtent) {
        return FieldError(field, absl::StrCat("a and b must be finite and within ", kWorldExtent,
                                              " m in every coordinate"));
      }
      if (!std::isfinite(shape.radius) || shape.radius < 0.0 || shape.radius > kWorldExtent) {
        return FieldError(
            field + ".radius",
            absl::StrCat("must be finite, >= 0 and <= ", kWorldExtent, ", got ", shape.radius));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

const char* JointTypeName(JointType type) {
  switch (type) {
    case JointType::kRevolute: return "revolute";
    case JointType::kPrismatic: return "prismatic";
    case JointType::kFixed: return "fixed";
  }
  return "unknown";
}

absl::Status ChainSpec::Validate() const {
  if (absl::Status s = CheckPose(X_WB, "X_WB"); !s.ok()) return s;
  if (absl::Status s = CheckPose(X_FT, "X_FT"); !s.ok()) return s;
  if (joints.empty()) return FieldError("joints", "must not be empty");
  if (joints.size() > kMaxJoints) {
    return FieldError("joints", absl::StrCat("must have at most ", kMaxJoints, " entries, got ",
                                             joints.size()));
  }
  for (size_t k = 0; k < joints.size(); ++k) {
    const JointSpec& joint = joints[k];
    const std::string field = absl::StrCat("joints[", k, "]");
    if (absl::Status s = CheckPose(joint.X_PJ, field + ".X_PJ"); !s.ok()) return s;
    if (joint.type == JointType::kFixed) continue;
    if (!joint.axis.allFinite() || std::abs(joint.axis.norm() - 1.0) > 1e-9) {
      return FieldError(field + ".axis", absl::StrCat("must be a finite unit vector, got norm ",
                                                      joint.axis.norm()));
    }
    if (joint.limits) {
      if (absl::Status s = CheckLimits(*joint.limits, field + ".limits"); !s.ok()) return s;
    }
  }
  if (NumMovingJoints(*this) == 0) return FieldError("joints", "must hold a moving joint");
  if (!link_radii.empty() && static_cast<int>(link_radii.size()) != NumMovingJoints(*this)) {
    return FieldError("link_radii", absl::StrCat("must be empty or hold one radius per moving "
                                                 "joint (", NumMovingJoints(*this), "), got ",
                                                 link_radii.size()));
  }
  for (size_t k = 0; k < link_radii.size(); ++k) {
    if (!std::isfinite(link_radii[k]) || link_radii[k] < 0.0) {
      return FieldError(absl::StrCat("link_radii[", k, "]"),
                        absl::StrCat("must be finite and >= 0, got ", link_radii[k]));
    }
  }
  const int links = NumMovingJoints(*this);
  if (absl::Status s = ValidateLinkShapes(*this, links); !s.ok()) return s;
  for (size_t k = 0; k < allowed_collisions.size(); ++k) {
    const auto [a, b] = allowed_collisions[k];
    const std::string field = absl::StrCat("allowed_collisions[", k, "]");
    if (a < 0 || a >= links || b < 0 || b >= links) {
      return FieldError(field, absl::StrCat("names link ", a < 0 || a >= links ? a : b,
                                            "; links are 0 .. ", links - 1));
    }
    if (a == b) return FieldError(field, absl::StrCat("pairs link ", a, " with itself"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ChainSpec> ChainFromDh(const std::vector<DhRow>& rows, DhConvention convention,
                                      const Eigen::Isometry3d& X_FT) {
  ChainSpec spec;
  // Standard DH: joint i turns about z of frame i-1, so its origin is row i-1's fixed part
  // Tz(d) Tx(a) Rx(alpha); the last row's fixed part precedes the tool.
  Eigen::Isometry3d carried = Eigen::Isometry3d::Identity();
  for (size_t k = 0; k < rows.size(); ++k) {
    const DhRow& row = rows[k];
    const std::string field = absl::StrCat("rows[", k, "]");
    if (!std::isfinite(row.a) || !std::isfinite(row.alpha) || !std::isfinite(row.d) ||
        !std::isfinite(row.theta_offset)) {
      return FieldError(field, "a, alpha, d and theta_offset must be finite");
    }
    JointSpec joint;
    joint.name = absl::StrCat("joint", k + 1);
    joint.limits = row.limits;
    if (convention == DhConvention::kStandard) {
      joint.X_PJ = carried * RotZ(row.theta_offset);
      carried = Shift(0, 0, row.d) * Shift(row.a, 0, 0) * RotX(row.alpha);
    } else {
      // Modified DH: Rx(alpha) Tx(a) Rz(theta) Tz(d); Tz(d) commutes with Rz, so it joins the origin.
      joint.X_PJ = RotX(row.alpha) * Shift(row.a, 0, 0) * Shift(0, 0, row.d) * RotZ(row.theta_offset);
    }
    spec.joints.push_back(std::move(joint));
  }
  spec.X_FT = carried * X_FT;
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

ChainSpec MergeFixedJoints(const ChainSpec& spec) {
  ChainSpec merged = spec;
  merged.joints.clear();
  Eigen::Isometry3d pending = Eigen::Isometry3d::Identity();
  for (const JointSpec& joint : spec.joints) {
    if (joint.type == JointType::kFixed) {
      pending = pending * joint.X_PJ;
      continue;
    }
    JointSpec moving = joint;
    moving.X_PJ = pending * joint.X_PJ;
    pending = Eigen::Isometry3d::Identity();
    merged.joints.push_back(std::move(moving));
  }
  merged.X_FT = pending * spec.X_FT;
  return merged;
}

int NumMovingJoints(const ChainSpec& spec) {
  int n = 0;
  for (const JointSpec& joint : spec.joints) n += joint.type != JointType::kFixed;
  return n;
}

Eigen::Isometry3d JointMotion(const JointSpec& joint, double q) {
  switch (joint.type) {
    case JointType::kRevolute: return Eigen::Isometry3d(Eigen::AngleAxisd(q, joint.axis));
    case JointType::kPrismatic: {
      Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
      X.translation() = q * joint.axis;
      return X;
    }
    case JointType::kFixed: break;
  }
  return Eigen::Isometry3d::Identity();
}

std::vector<Eigen::Isometry3d> LinkPoses(const ChainSpec& spec, const Eigen::VectorXd& q) {
  std::vector<Eigen::Isometry3d> poses;
  WalkChain(spec, q, [&](const Eigen::Isometry3d& X_WL) { poses.push_back(X_WL); });
  return poses;
}

Eigen::Isometry3d ToolPose(const ChainSpec& spec, const Eigen::VectorXd& q) {
  return WalkChain(spec, q, [](const Eigen::Isometry3d&) {}) * spec.X_FT;
}

Eigen::MatrixXd ToolJacobian(const ChainSpec& spec, const Eigen::VectorXd& q) {
  std::vector<const JointSpec*> moving;
  for (const JointSpec& joint : spec.joints) {
    if (joint.type != JointType::kFixed) moving.push_back(&joint);
  }
  std::vector<Eigen::Isometry3d> links;
  const Eigen::Vector3d p_tool =
      (WalkChain(spec, q, [&](const Eigen::Isometry3d& X) { links.push_back(X); }) * spec.X_FT)
          .translation();
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(6, static_cast<Eigen::Index>(moving.size()));
  for (size_t k = 0; k < moving.size(); ++k) {
    // The joint's axis turns with the motion it makes (a rotation about, or a shift along,
    // itself), so the link after it holds the axis at the joint's origin.
    const Eigen::Vector3d axis = links[k].linear() * moving[k]->axis;
    if (moving[k]->type == JointType::kPrismatic) {
      J.col(k).head<3>() = axis;
    } else {
      J.col(k).head<3>() = axis.cross(p_tool - links[k].translation());
      J.col(k).tail<3>() = axis;
    }
  }
  return J;
}

std::vector<std::pair<Eigen::Vector3d, Eigen::Vector3d>> LinkSegments(const ChainSpec& spec,
                                                                      const Eigen::VectorXd& q) {
  std::vector<Eigen::Vector3d> origins;
  const Eigen::Isometry3d X_WL =
      WalkChain(spec, q, [&](const Eigen::Isometry3d& X) { origins.push_back(X.translation()); });
  origins.push_back((X_WL * spec.X_FT).translation());
  std::vector<std::pair<Eigen::Vector3d, Eigen::Vector3d>> segments;
  for (size_t k = 0; k + 1 < origins.size(); ++k) segments.emplace_back(origins[k], origins[k + 1]);
  return segments;
}

}  // namespace ikd::robot
