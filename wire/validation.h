// Request validation of ModelService: resource ids and names, size limits, and the models
// themselves through the solver's own checks (ik::Arm::Create, planning::Scene::Create, Scene::Add,
// Scene::Move). Every error is INVALID_ARGUMENT with a google.rpc.BadRequest field violation
// whose path is the request's (e.g. "arm.spec.limbs[2].length", "operations[1].obstacle_id").
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ikd/ik/arm.h"
#include "ikd/planning/scene.h"
#include "ikd/v1/model_service.pb.h"

namespace ikd::server {

// Bounds on request contents (beyond them: INVALID_ARGUMENT naming the field and the bound).
struct ModelLimits {
  int max_limbs = 1000;        // per arm
  int max_obstacles = 10000;   // per scene (planning::Scene::kMaxObstacles at most)
  int max_skeleton_sites = 1000;  // per skeleton (stored or inline in PoseService)
  // Bones and angle limits per skeleton, each: a graph skeleton (allow_cycles) may join many
  // pairs of sites, and the fitter's work per frame grows with the bones (the matrix method's
  // factorization with their square per site).
  int max_skeleton_bones = 4000;
  int max_operations = 1000;   // per EditScene request
  // IkOptions.trials_per_step of every IK request (chain arms and industrial arms): the
  // stochastic trials of one sub-step, each a re-projection.
  int max_trials_per_step = 10'000;
  int default_page_size = 50;  // List with page_size 0
  int max_page_size = 1000;    // larger page sizes are capped to this
};

// A client-chosen resource id: [a-z0-9-]{1,63}.
absl::Status ValidateId(const std::string& id, const std::string& field);

// "arms/{id}" -> id for collection "arms"; INVALID_ARGUMENT naming `field` otherwise.
absl::StatusOr<std::string> IdFromName(const std::string& name, const std::string& collection,
                                       const std::string& field);

// The solver arm of a wire spec; errors name fields below `path` (e.g. "arm.spec").
absl::StatusOr<ik::Arm> ArmFromProto(const v1::ArmSpec& spec, const std::string& path,
                                     const ModelLimits& limits);

// The solver scene of a wire spec; errors name fields below `path` (e.g. "scene.spec").
absl::StatusOr<planning::Scene> SceneFromProto(const v1::SceneSpec& spec, const std::string& path,
                                               const ModelLimits& limits);

// Checks the shape of an EditScene request before the scene is read: operation count,
// operation kinds and the fields each kind needs. Errors name "operations[i]...".
absl::Status ValidateOperations(const v1::EditSceneRequest& request, const ModelLimits& limits);

// Applies the (validated) operations in order; an unknown or duplicate obstacle id, an invalid
// obstacle or motion, or a full scene is INVALID_ARGUMENT naming the operation's field.
// `scene_name` appears in messages. On error `scene` is partly edited: discard it.
absl::Status ApplyOperations(const v1::EditSceneRequest& request, const std::string& scene_name,
                             const ModelLimits& limits, planning::Scene& scene);

}  // namespace ikd::server
