#include "validation.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "conversions.h"
#include "errors.h"

namespace ikd::server {
namespace {

constexpr size_t kMaxIdLength = 63;

bool IsIdChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

std::string ShapeFieldName(const v1::Obstacle& obstacle) {
  const auto* field = v1::Obstacle::descriptor()->FindFieldByNumber(obstacle.shape_case());
  return field == nullptr ? "" : field->name();
}

// Request path of a solver field below an obstacle: the solver names a shape's members
// directly ("radius"), the wire nests them in the oneof ("sphere.radius").
std::string ObstacleMemberPath(const std::string& obstacle_path, const v1::Obstacle& obstacle,
                               const std::string& member) {
  if (member.empty()) return obstacle_path;
  if (member == "id") return obstacle_path + ".id";
  return absl::StrCat(obstacle_path, ".", ShapeFieldName(obstacle), ".", member);
}

// Splits a solver field "obstacles[3].radius" into (3, "radius"); false if it is not one.
bool ParseObstacleField(const std::string& field, int* index, std::string* member) {
  if (!absl::StartsWith(field, "obstacles[")) return false;
  const size_t close = field.find(']');
  if (close == std::string::npos) return false;
  const size_t open = sizeof("obstacles[") - 1;
  if (!absl::SimpleAtoi(field.substr(open, close - open), index)) return false;
  *member = close + 1 < field.size() && field[close + 1] == '.' ? field.substr(close + 2) : "";
  return true;
}

std::string Joined(const std::string& path, const std::string& field) {
  return field.empty() ? path : absl::StrCat(path, ".", field);
}

absl::Status RequireShape(const v1::Obstacle& obstacle, const std::string& path) {
  if (obstacle.shape_case() != v1::Obstacle::SHAPE_NOT_SET) return absl::OkStatus();
  return FieldViolation(path, "must set a shape: sphere, capsule, box or half_space");
}

absl::Status ApplyAdd(const v1::ObstacleOperation& op, const std::string& path,
                      const std::string& scene_name, const ModelLimits& limits,
                      planning::Scene& scene) {
  const std::string obstacle_path = path + ".obstacle";
  if (scene.size() >= limits.max_obstacles) {
    return FieldViolation(
        path, absl::StrCat("the scene would exceed ", limits.max_obstacles, " obstacles"));
  }
  absl::Status added = scene.Add(FromProto(op.obstacle()));
  if (added.code() == absl::StatusCode::kAlreadyExists) {
    return FieldViolation(obstacle_path + ".id",
                          absl::StrCat("\"", op.obstacle().id(), "\" is already in ", scene_name));
  }
  return SolverFieldViolation(added, [&](const std::string& field) {
    int index;
    std::string member;
    return ParseObstacleField(field, &index, &member)
               ? ObstacleMemberPath(obstacle_path, op.obstacle(), member)
               : obstacle_path;
  });
}

absl::Status ApplyMove(const v1::ObstacleOperation& op, const std::string& path,
                       const std::string& scene_name, planning::Scene& scene) {
  absl::Status moved =
      scene.Move(op.obstacle_id(), FromProto(op.translation()), FromProto(op.rotation()));
  if (moved.code() == absl::StatusCode::kNotFound) {
    return FieldViolation(path + ".obstacle_id",
                          absl::StrCat("no obstacle \"", op.obstacle_id(), "\" in ", scene_name));
  }
  // The solver names "translation" and "rotation", as the operation does; a motion that carries
  // the obstacle out of the world ("obstacle \"id\" moved.center ...") is the operation's as a
  // whole (`obstacle` is OPERATION_ADD's field).
  return SolverFieldViolation(moved, [&](const std::string& field) {
    return field == "translation" || field == "rotation" ? Joined(path, field) : path;
  });
}

absl::Status ApplyRemove(const v1::ObstacleOperation& op, const std::string& path,
                         const std::string& scene_name, planning::Scene& scene) {
  if (scene.Remove(op.obstacle_id()).ok()) return absl::OkStatus();
  return FieldViolation(path + ".obstacle_id",
                        absl::StrCat("no obstacle \"", op.obstacle_id(), "\" in ", scene_name));
}

}  // namespace

absl::Status ValidateId(const std::string& id, const std::string& field) {
  bool valid = !id.empty() && id.size() <= kMaxIdLength;
  for (char c : id) valid = valid && IsIdChar(c);
  if (valid) return absl::OkStatus();
  return FieldViolation(field, absl::StrCat("must match [a-z0-9-]{1,", kMaxIdLength, "}, got \"",
                                            id.substr(0, 2 * kMaxIdLength), "\""));
}

absl::StatusOr<std::string> IdFromName(const std::string& name, const std::string& collection,
                                       const std::string& field) {
  const std::string prefix = collection + "/";
  if (!absl::StartsWith(name, prefix)) {
    return FieldViolation(field, absl::StrCat("must be \"", prefix, "{id}\", got \"",
                                              name.substr(0, 2 * kMaxIdLength), "\""));
  }
  std::string id = name.substr(prefix.size());
  if (absl::Status s = ValidateId(id, field); !s.ok()) return s;
  return id;
}

absl::Status CheckRateLimits(const v1::ArmSpec& spec, const std::string& path) {
  if (absl::Status s = CheckRateLimit(spec.default_rate_limit(), path + ".default_rate_limit");
      !s.ok()) {
    return s;
  }
  for (int k = 0; k < spec.rate_limits_size(); ++k) {
    absl::Status s =
        CheckRateLimit(spec.rate_limits(k), absl::StrCat(path, ".rate_limits[", k, "]"));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<ik::Arm> ArmFromProto(const v1::ArmSpec& spec, const std::string& path,
                                     const ModelLimits& limits) {
  if (spec.limbs_size() > limits.max_limbs) {
    return FieldViolation(path + ".limbs", absl::StrCat("at most ", limits.max_limbs,
                                                        " limbs, got ", spec.limbs_size()));
  }
  for (int k = 0; k < spec.joint_limits_size(); ++k) {
    const v1::JointLimit& limit = spec.joint_limits(k);
    if (!limit.limited() && (limit.min() != 0.0 || limit.max() != 0.0)) {
      return FieldViolation(absl::StrCat(path, ".joint_limits[", k, "].limited"),
                            "must be true when min or max is set");
    }
  }
  if (absl::Status s = CheckRateLimits(spec, path); !s.ok()) return s;
  absl::StatusOr<ik::Arm> arm = ik::Arm::Create(FromProto(spec));
  if (arm.ok()) return arm;
  // The solver's field names are the wire's (arm.h and types.proto share them).
  return SolverFieldViolation(arm.status(),
                              [&](const std::string& field) { return Joined(path, field); });
}

absl::StatusOr<planning::Scene> SceneFromProto(const v1::SceneSpec& spec, const std::string& path,
                                               const ModelLimits& limits) {
  if (spec.obstacles_size() > limits.max_obstacles) {
    return FieldViolation(
        path + ".obstacles",
        absl::StrCat("at most ", limits.max_obstacles, " obstacles, got ", spec.obstacles_size()));
  }
  for (int k = 0; k < spec.obstacles_size(); ++k) {
    const std::string obstacle_path = absl::StrCat(path, ".obstacles[", k, "]");
    if (absl::Status s = RequireShape(spec.obstacles(k), obstacle_path); !s.ok()) return s;
  }
  absl::StatusOr<planning::Scene> scene = planning::Scene::Create(FromProto(spec));
  if (scene.ok()) return scene;
  return SolverFieldViolation(scene.status(), [&](const std::string& field) {
    int index;
    std::string member;
    if (!ParseObstacleField(field, &index, &member) || index < 0 ||
        index >= spec.obstacles_size()) {
      return Joined(path, field);
    }
    return ObstacleMemberPath(absl::StrCat(path, ".obstacles[", index, "]"), spec.obstacles(index),
                              member);
  });
}

absl::Status ValidateOperations(const v1::EditSceneRequest& request, const ModelLimits& limits) {
  const int n = request.operations_size();
  if (n == 0 || n > limits.max_operations) {
    return FieldViolation(
        "operations", absl::StrCat("need 1 to ", limits.max_operations, " operations, got ", n));
  }
  for (int i = 0; i < n; ++i) {
    const v1::ObstacleOperation& op = request.operations(i);
    const std::string path = absl::StrCat("operations[", i, "]");
    switch (op.operation()) {
      case v1::ObstacleOperation::OPERATION_ADD:
        if (!op.has_obstacle()) {
          return FieldViolation(path + ".obstacle", "is required for OPERATION_ADD");
        }
        if (absl::Status s = RequireShape(op.obstacle(), path + ".obstacle"); !s.ok()) return s;
        break;
      case v1::ObstacleOperation::OPERATION_MOVE:
      case v1::ObstacleOperation::OPERATION_REMOVE:
        if (op.obstacle_id().empty()) {
          return FieldViolation(
              path + ".obstacle_id",
              absl::StrCat("is required for ",
                           v1::ObstacleOperation::Operation_Name(op.operation())));
        }
        break;
      default:
        return FieldViolation(path + ".operation",
                              absl::StrCat("must be OPERATION_ADD, OPERATION_MOVE or "
                                           "OPERATION_REMOVE, got ",
                                           static_cast<int>(op.operation())));
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyOperations(const v1::EditSceneRequest& request, const std::string& scene_name,
                             const ModelLimits& limits, planning::Scene& scene) {
  for (int i = 0; i < request.operations_size(); ++i) {
    const v1::ObstacleOperation& op = request.operations(i);
    const std::string path = absl::StrCat("operations[", i, "]");
    absl::Status applied;
    switch (op.operation()) {
      case v1::ObstacleOperation::OPERATION_ADD:
        applied = ApplyAdd(op, path, scene_name, limits, scene);
        break;
      case v1::ObstacleOperation::OPERATION_MOVE:
        applied = ApplyMove(op, path, scene_name, scene);
        break;
      case v1::ObstacleOperation::OPERATION_REMOVE:
        applied = ApplyRemove(op, path, scene_name, scene);
        break;
      default:
        applied = FieldViolation(path + ".operation", "is not a known operation");
    }
    if (!applied.ok()) return applied;
  }
  return absl::OkStatus();
}

}  // namespace ikd::server
