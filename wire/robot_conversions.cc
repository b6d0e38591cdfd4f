#include "robot_conversions.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "conversions.h"
#include "errors.h"
#include "ik_conversions.h"
#include "ikd/robot/presets.h"
#include "ikd/urdf/urdf.h"
#include "ikd/world.h"

namespace ikd::server {
namespace {

constexpr int kMaxDhRows = 64;
constexpr size_t kMaxUrdfBytes = 4 << 20;
constexpr size_t kMaxMeshBytes = 16 << 20;

// A wire pose, the quaternion normalized (absent or all zero: the identity, as types.proto).
absl::StatusOr<Eigen::Isometry3d> PoseFromProto(const v1::Pose& pose, const std::string& path) {
  const Eigen::Vector3d p = FromProto(pose.position());
  if (!p.allFinite()) return FieldViolation(path + ".position", "must be finite");
  const Eigen::Quaterniond q = FromProto(pose.orientation());
  if (!q.coeffs().allFinite() || q.norm() < 1e-9) {
    return FieldViolation(path + ".orientation", "must be finite with norm >= 1e-9 (or all zero)");
  }
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  X.linear() = q.normalized().toRotationMatrix();
  X.translation() = p;
  return X;
}

absl::StatusOr<std::vector<robot::DhRow>> DhRowsFromProto(const v1::DhTable& table,
                                                          const std::string& path) {
  if (table.rows_size() < 1 || table.rows_size() > kMaxDhRows) {
    return FieldViolation(path + ".rows", absl::StrCat("must hold 1 .. ", kMaxDhRows,
                                                       " rows, got ", table.rows_size()));
  }
  std::vector<robot::DhRow> rows;
  for (int k = 0; k < table.rows_size(); ++k) {
    const v1::DhRow& row = table.rows(k);
    robot::DhRow out{row.a(), row.alpha(), row.d(), row.theta_offset(), std::nullopt};
    if (row.has_range()) {
      const double v = row.range().max_velocity();
      if (!(v >= 0.0)) {
        return FieldViolation(absl::StrCat(path, ".rows[", k, "].range.max_velocity"),
                              absl::StrCat("must be >= 0 (0: no limit), got ", v));
      }
      const double a = row.range().max_acceleration();
      if (!(a >= 0.0) || std::isinf(a)) {
        return FieldViolation(absl::StrCat(path, ".rows[", k, "].range.max_acceleration"),
                              absl::StrCat("must be finite and >= 0 (0: no limit), got ", a));
      }
      const double j = row.range().max_jerk();
      if (!(j >= 0.0) || std::isinf(j)) {
        return FieldViolation(absl::StrCat(path, ".rows[", k, "].range.max_jerk"),
                              absl::StrCat("must be finite and >= 0 (0: no limit), got ", j));
      }
      constexpr double kNone = std::numeric_limits<double>::infinity();
      out.limits = robot::JointLimits{row.range().lower(), row.range().upper(), v > 0.0 ? v : kNone,
                                      a > 0.0 ? a : kNone, j > 0.0 ? j : kNone};
    }
    rows.push_back(out);
  }
  return rows;
}

// The solver names a DH chain's joints "joints[k]" and its limits "limits"; the wire names the
// rows "rows[k]" and the range "range".
std::string DhFieldPath(const std::string& robot_path, const std::string& field) {
  if (field == "X_FT") return robot_path + ".tool";
  if (field == "meshes") return robot_path + ".urdf.meshes";
  if (field == "X_WB") return robot_path + ".base";
  std::string wire = field;
  if (absl::StartsWith(wire, "joints[")) wire = "rows" + wire.substr(6);
  wire = absl::StrReplaceAll(wire, {{".limits", ".range"}, {".X_PJ", ""}});
  return absl::StrCat(robot_path, ".dh", wire.empty() ? "" : ".", wire);
}

// URDF errors name base_link or tip_link, or else the document.
std::string UrdfFieldPath(const std::string& robot_path, const std::string& field) {
  if (field == "base_link" || field == "tip_link") return absl::StrCat(robot_path, ".urdf.", field);
  if (field == "X_FT") return robot_path + ".tool";
  if (field == "meshes") return robot_path + ".urdf.meshes";
  return robot_path + ".urdf.urdf";
}

// RobotSpec.rate_limits over the model's: per moving joint, each non-zero field replaces the
// model's limit; a continuous joint (no range) takes none.
absl::Status ApplyRateLimits(const v1::RobotSpec& spec, const std::string& path,
                             robot::ChainSpec& chain) {
  if (spec.rate_limits().empty()) return absl::OkStatus();
  std::vector<robot::JointSpec*> moving;
  for (robot::JointSpec& joint : chain.joints) {
    if (joint.type != robot::JointType::kFixed) moving.push_back(&joint);
  }
  if (spec.rate_limits_size() != static_cast<int>(moving.size())) {
    return FieldViolation(path + ".rate_limits",
                          absl::StrCat("must be empty or hold one entry per joint (", moving.size(),
                                       "), got ", spec.rate_limits_size()));
  }
  for (int k = 0; k < spec.rate_limits_size(); ++k) {
    const v1::JointRateLimit& limit = spec.rate_limits(k);
    const std::string field = absl::StrCat(path, ".rate_limits[", k, "]");
    if (absl::Status s = CheckRateLimit(limit, field); !s.ok()) return s;
    const bool given =
        limit.max_velocity() > 0.0 || limit.max_acceleration() > 0.0 || limit.max_jerk() > 0.0;
    if (!given) continue;
    std::optional<robot::JointLimits>& limits = moving[k]->limits;
    if (!limits) {
      return FieldViolation(field, absl::StrCat("joint \"", moving[k]->name,
                                                "\" is continuous (no range): it takes no rate "
                                                "limits; leave every field 0"));
    }
    if (limit.max_velocity() > 0.0) limits->max_velocity = limit.max_velocity();
    if (limit.max_acceleration() > 0.0) limits->max_acceleration = limit.max_acceleration();
    if (limit.max_jerk() > 0.0) limits->max_jerk = limit.max_jerk();
  }
  return absl::OkStatus();
}

absl::StatusOr<robot::ChainSpec> ChainFromProto(const v1::RobotSpec& spec,
                                                const std::string& path) {
  absl::StatusOr<Eigen::Isometry3d> tool = PoseFromProto(spec.tool(), path + ".tool");
  if (!tool.ok()) return tool.status();
  absl::StatusOr<robot::ChainSpec> chain = absl::UnknownError("unset");
  switch (spec.kinematics_case()) {
    case v1::RobotSpec::kDh: {
      const v1::DhConvention convention = spec.dh().convention();
      if (convention != v1::DH_CONVENTION_STANDARD && convention != v1::DH_CONVENTION_MODIFIED) {
        return FieldViolation(path + ".dh.convention",
                              "must be DH_CONVENTION_STANDARD or DH_CONVENTION_MODIFIED");
      }
      absl::StatusOr<std::vector<robot::DhRow>> rows = DhRowsFromProto(spec.dh(), path + ".dh");
      if (!rows.ok()) return rows.status();
      chain = robot::ChainFromDh(*rows,
                                 convention == v1::DH_CONVENTION_STANDARD ? robot::DhConvention::kStandard
                                                                          : robot::DhConvention::kModified,
                                 *tool);
      if (!chain.ok()) {
        return SolverFieldViolation(chain.status(), [&](const std::string& f) { return DhFieldPath(path, f); });
      }
      break;
    }
    case v1::RobotSpec::kUrdf: {
      const v1::UrdfChain& urdf = spec.urdf();
      if (urdf.urdf().size() > kMaxUrdfBytes) {
        return FieldViolation(path + ".urdf.urdf", absl::StrCat("at most ", kMaxUrdfBytes,
                                                                " bytes, got ", urdf.urdf().size()));
      }
      size_t mesh_bytes = 0;
      robot::MeshFiles meshes;
      for (const auto& [name, bytes] : urdf.meshes()) {
        mesh_bytes += name.size() + bytes.size();
        meshes.emplace(name, bytes);
      }
      if (mesh_bytes > kMaxMeshBytes) {
        return FieldViolation(
            path + ".urdf.meshes",
            absl::StrCat("at most ", kMaxMeshBytes, " bytes in all, got ", mesh_bytes));
      }
      chain = robot::ChainFromUrdf(urdf.urdf(), urdf.base_link(), urdf.tip_link(), *tool, meshes);
      if (!chain.ok()) {
        return SolverFieldViolation(chain.status(), [&](const std::string& f) { return UrdfFieldPath(path, f); });
      }
      break;
    }
    case v1::RobotSpec::kPreset:
      switch (spec.preset()) {
        case v1::ROBOT_PRESET_UR5:
          chain = robot::presets::Ur5WithBody();
          break;
        case v1::ROBOT_PRESET_PANDA:
          chain = robot::presets::PandaWithBody();
          break;
        case v1::ROBOT_PRESET_IIWA14:
          chain = robot::presets::Iiwa14WithBody();
          break;
        case v1::ROBOT_PRESET_IRB120:
          chain = robot::presets::Irb120();
          break;
        default:
          return FieldViolation(
              path + ".preset",
              "must be ROBOT_PRESET_UR5, ROBOT_PRESET_PANDA, ROBOT_PRESET_IIWA14 or "
              "ROBOT_PRESET_IRB120");
      }
      chain->X_FT = chain->X_FT * *tool;
      break;
    default:
      return FieldViolation(path, "required: the kinematics as dh, urdf or preset");
  }
  absl::StatusOr<Eigen::Isometry3d> base = PoseFromProto(spec.base(), path + ".base");
  if (!base.ok()) return base.status();
  chain->X_WB = *base;
  chain->link_radii.assign(spec.link_radii().begin(), spec.link_radii().end());
  if (spec.has_preset() && !chain->link_radii.empty() && !chain->link_shapes.empty()) {
    // The caller's own stand-in wins over the preset's model; say so with the arm.
    chain->link_shapes.clear();
    chain->geometry_notes = {"link_radii replace the preset's collision model"};
  }
  if (absl::Status s = ApplyRateLimits(spec, path, *chain); !s.ok()) return s;
  if (spec.has_check_self_collision()) chain->check_self_collision = spec.check_self_collision();
  for (const v1::LinkPair& pair : spec.allowed_collisions()) {
    chain->allowed_collisions.emplace_back(pair.link_a(), pair.link_b());
  }
  if (absl::Status s = chain->Validate(); !s.ok()) {
    return SolverFieldViolation(s, [&](const std::string& f) { return absl::StrCat(path, ".", f); });
  }
  return chain;
}

// An industrial arm's ArmSpec leaves the chain-arm fields unset.
absl::Status CheckNoChainFields(const v1::ArmSpec& spec, const std::string& path) {
  const std::pair<const char*, bool> fields[] = {
      {"base_position", spec.has_base_position()}, {"base_orientation", spec.has_base_orientation()},
      {"planar", spec.planar()},                   {"limbs", spec.limbs_size() > 0},
      {"joint_limits", spec.joint_limits_size() > 0}, {"site_weights", spec.site_weights_size() > 0},
      {"home_angles", spec.home_angles_size() > 0},
      {"default_rate_limit", spec.has_default_rate_limit()},
      {"rate_limits", spec.rate_limits_size() > 0}};
  for (const auto& [name, set] : fields) {
    if (set) {
      return FieldViolation(absl::StrCat(path, ".", name),
                            "must be unset for an industrial arm (robot is set): use robot.base "
                            "and robot.home_positions");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<robot::Robot> RobotFromArmSpec(const v1::ArmSpec& spec, const std::string& path) {
  if (absl::Status s = CheckNoChainFields(spec, path); !s.ok()) return s;
  const std::string robot_path = path + ".robot";
  absl::StatusOr<robot::ChainSpec> chain = ChainFromProto(spec.robot(), robot_path);
  if (!chain.ok()) return chain.status();
  absl::StatusOr<robot::Robot> robot = robot::Robot::Create(*chain);
  if (!robot.ok()) {
    return SolverFieldViolation(robot.status(), [&](const std::string& f) {
      return spec.robot().has_urdf() ? UrdfFieldPath(robot_path, f) : DhFieldPath(robot_path, f);
    });
  }
  const auto& home = spec.robot().home_positions();
  if (!home.empty()) {
    const Eigen::VectorXd mid = robot->MidRange();
    absl::StatusOr<Eigen::VectorXd> q = RobotPositions(*robot, home, mid, robot_path + ".home_positions");
    if (!q.ok()) return q.status();
  }
  return robot;
}

Eigen::VectorXd RobotHome(const robot::Robot& robot, const v1::RobotSpec& spec) {
  if (spec.home_positions_size() != robot.num_joints()) return robot.MidRange();
  return Eigen::Map<const Eigen::VectorXd>(spec.home_positions().data(), robot.num_joints());
}

absl::StatusOr<Eigen::VectorXd> RobotPositions(const robot::Robot& robot,
                                               const google::protobuf::RepeatedField<double>& positions,
                                               const Eigen::VectorXd& home, const std::string& path) {
  if (positions.empty()) return home;
  if (positions.size() != robot.num_joints()) {
    return FieldViolation(path, absl::StrCat("must hold one value per joint (", robot.num_joints(),
                                             "), got ", positions.size()));
  }
  Eigen::VectorXd q(robot.num_joints());
  for (int k = 0; k < q.size(); ++k) {
    q[k] = positions[k];
    const auto& limits = robot.spec().joints[k].limits;
    if (!std::isfinite(q[k])) return FieldViolation(absl::StrCat(path, "[", k, "]"), "must be finite");
    if (limits && (q[k] < limits->lower || q[k] > limits->upper)) {
      return FieldViolation(absl::StrCat(path, "[", k, "]"),
                            absl::StrCat("must be inside the joint range [", limits->lower, ", ",
                                         limits->upper, "], got ", q[k]));
    }
  }
  return q;
}

absl::StatusOr<robot::ToolTarget> ToolTargetFromProto(const v1::Vector3& position,
                                                      const std::string& position_path,
                                                      bool has_orientation,
                                                      const v1::Quaternion& orientation,
                                                      const std::string& orientation_path) {
  const Eigen::Vector3d p = FromProto(position);
  if (!p.allFinite()) return FieldViolation(position_path, "must be finite");
  // Far beyond any arm: the errors of such a target (|p|^2) would overflow to inf.
  if (p.cwiseAbs().maxCoeff() > kWorldExtent) {
    return FieldViolation(position_path,
                          absl::StrCat("must be within ", kWorldExtent, " m of the world origin in "
                                       "every coordinate, got (", p.x(), ", ", p.y(), ", ", p.z(), ")"));
  }
  if (!has_orientation) return robot::ToolTarget::Position(p);
  const Eigen::Quaterniond q(orientation.w(), orientation.x(), orientation.y(), orientation.z());
  absl::StatusOr<robot::ToolTarget> target = robot::ToolTarget::Pose(p, q);
  if (!target.ok()) {
    return FieldViolation(orientation_path,
                          absl::StrCat("must be a unit quaternion (|q| = 1 within 1e-6, finite), got "
                                       "norm ", q.norm()));
  }
  return target;
}

namespace {

// A chain-only IkOptions field set for an industrial arm, or OK.
absl::Status RefuseChainOnlyOptions(const v1::IkOptions& options, const std::string& path) {
  auto refuse = [&](const std::string& field, const std::string& meaning) {
    return FieldViolation(Below(path, field),
                          absl::StrCat("chain arms only (", meaning,
                                       "); leave it unset for an industrial arm"));
  };
  if (options.tolerance() != 0.0) {
    return refuse("tolerance", "the limb-length tolerance; an industrial arm's answers are "
                               "checked by forward kinematics within 1e-5 m and 1e-5 rad");
  }
  const v1::CostWeights& w = options.weights();
  const std::pair<const char*, double> weights[] = {
      {"clearance", w.clearance()},     {"self_clearance", w.self_clearance()},
      {"velocity", w.velocity()},       {"acceleration", w.acceleration()},
      {"joint_limit", w.joint_limit()}, {"bending", w.bending()}};
  for (const auto& [name, value] : weights) {
    if (value != 0.0) {
      return refuse(absl::StrCat("weights.", name), "the chain tracker's cost terms");
    }
  }
  if (options.patience() != 0) return refuse("patience", "the chain tracker's trial rule");
  if (options.explore_unconstrained()) {
    return refuse("explore_unconstrained", "the chain tracker's trials in free space");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<robot::RobotIkOptions> RobotIkOptionsFromProto(const v1::IkOptions& options,
                                                              const std::string& path) {
  if (absl::Status s = RefuseChainOnlyOptions(options, path); !s.ok()) return s;
  robot::RobotIkOptions out;
  if (options.seed() != 0) out.seed = options.seed();
  out.trials_per_step = TrialsFromProto(options, out.trials_per_step);
  if (options.safety_margin() != 0.0) out.safety_margin = options.safety_margin();
  if (options.max_step_fraction() != 0.0) {
    if (!(options.max_step_fraction() > 0.0 && options.max_step_fraction() <= 1.0)) {
      return FieldViolation(Below(path, "max_step_fraction"),
                            absl::StrCat("must be in (0, 1], got ", options.max_step_fraction()));
    }
    out.max_step_fraction = options.max_step_fraction();
  }
  // Checked here, with the chain tracker's bound: the solver would name its own field.
  const double budget = options.time_budget_seconds();
  if (!(budget >= 0.0 && budget <= 3600.0)) {
    return FieldViolation(Below(path, "time_budget_seconds"),
                          absl::StrCat("must be in [0, 3600], got ", budget));
  }
  out.time_budget = budget;
  switch (options.solver()) {
    case v1::IK_SOLVER_UNSPECIFIED:
    case v1::IK_SOLVER_AUTO:
      out.solver = robot::IkSolver::kAuto;
      break;
    case v1::IK_SOLVER_ANALYTIC:
      out.solver = robot::IkSolver::kAnalytic;
      break;
    case v1::IK_SOLVER_NUMERIC:
      out.solver = robot::IkSolver::kNumeric;
      break;
    default:
      return FieldViolation(
          Below(path, "solver"),
          absl::StrCat("must be AUTO, ANALYTIC or NUMERIC, got ", options.solver()));
  }
  if (absl::Status s = out.Validate(); !s.ok()) return AtRequestPath(s, path);
  return out;
}

std::vector<std::string> RobotJointNames(const robot::Robot& robot) {
  std::vector<std::string> names;
  for (const auto& joint : robot.spec().joints) names.push_back(joint.name);
  return names;
}

absl::StatusOr<v1::JointState> RobotJointState(const robot::Robot& robot,
                                               const robot::RobotIkResult& result,
                                               const robot::ToolTarget& target, double time,
                                               const v1::JointState* previous) {
  v1::JointState out;
  SetJointMotion(time, result.q, result.sites, previous, out);
  *out.mutable_target() = ToProto(target.position);
  out.set_hand_error(result.position_error);
  out.set_rotation_error(result.rotation_error);
  out.set_solver(result.solver == robot::IkSolver::kAnalytic ? v1::IK_SOLVER_ANALYTIC
                                                             : v1::IK_SOLVER_NUMERIC);
  out.set_constraint_residual(robot.model(robot::TargetMode::kPose).MaxRelativeViolation(result.sites));
  out.set_iterations(result.iterations);
  out.set_status(ToProto(result.status));
  if (std::isfinite(result.min_clearance)) out.set_min_clearance(result.min_clearance);
  out.set_trials_accepted(result.trials_accepted);
  if (absl::Status finite = CheckStateFinite(out); !finite.ok()) return finite;
  return out;
}

}  // namespace ikd::server
