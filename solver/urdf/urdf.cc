#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <console_bridge/console.h>
#include <urdf_parser/urdf_parser.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ikd/robot/link_geometry.h"
#include "ikd/urdf/stl.h"
#include "ikd/urdf/urdf.h"
#include "ikd/world.h"

namespace ikd::robot {
namespace {

// urdfdom reports why a document is rejected through console_bridge; this handler keeps the
// messages so the Status can carry them instead of stderr.
class CollectingHandler : public console_bridge::OutputHandler {
 public:
  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_WARN) absl::StrAppend(&messages_, messages_.empty() ? "" : "; ", text);
  }
  const std::string& messages() const { return messages_; }

 private:
  std::string messages_;
};

// Offset of the first byte that does not belong to a well-formed UTF-8 sequence (a NUL, a stray
// continuation, a bad or truncated lead byte), or npos. TinyXML skips a multi-byte character by
// its lead byte's length, so a truncated one at the end reads past the buffer (fuzzer finding).
size_t FirstInvalidUtf8(const std::string& text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto continuation = [&](size_t i) { return i < text.size() && (byte(i) & 0xC0) == 0x80; };
  for (size_t i = 0; i < text.size();) {
    const unsigned char lead = byte(i);
    const size_t length = lead == 0 ? 0
                          : lead < 0x80 ? 1
                          : lead >= 0xC2 && lead <= 0xDF ? 2
                          : lead >= 0xE0 && lead <= 0xEF ? 3
                          : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                         : 0;
    if (length == 0) return i;
    for (size_t k = 1; k < length; ++k) {
      if (!continuation(i + k)) return i;
    }
    i += length;
  }
  return std::string::npos;
}

urdf::ModelInterfaceSharedPtr Parse(const std::string& xml, std::string& why) {
  // console_bridge's handler is process-wide: one parse at a time swaps it.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  CollectingHandler handler;
  console_bridge::OutputHandler* previous = console_bridge::getOutputHandler();
  console_bridge::useOutputHandler(&handler);
  urdf::ModelInterfaceSharedPtr model = urdf::parseURDF(xml);
  console_bridge::useOutputHandler(previous);
  why = handler.messages();
  return model;
}

// urdfdom links own their children (shared_ptr) and point at their parents: a document whose
// joints close a loop leaves a reference cycle that outlives the model (a leak per request,
// found by fuzzing). Clearing the child lists when the import is done breaks any cycle.
class BreakLinkCycles {
 public:
  explicit BreakLinkCycles(const urdf::ModelInterfaceSharedPtr& model) : model_(model) {}
  ~BreakLinkCycles() {
    if (model_ == nullptr) return;
    for (auto& [name, link] : model_->links_) {
      if (link == nullptr) continue;
      link->child_links.clear();
      link->child_joints.clear();
    }
  }

 private:
  const urdf::ModelInterfaceSharedPtr& model_;
};

Eigen::Isometry3d ToIsometry(const urdf::Pose& pose) {
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  X.linear() = Eigen::Quaterniond(pose.rotation.w, pose.rotation.x, pose.rotation.y, pose.rotation.z)
                   .normalized()
                   .toRotationMatrix();
  X.translation() = Eigen::Vector3d(pose.position.x, pose.position.y, pose.position.z);
  return X;
}

absl::StatusOr<JointSpec> ToJointSpec(const urdf::Joint& joint) {
  const std::string field = absl::StrCat("joint '", joint.name, "'");
  JointSpec spec;
  spec.name = joint.name;
  spec.X_PJ = ToIsometry(joint.parent_to_joint_origin_transform);
  switch (joint.type) {
    case urdf::Joint::REVOLUTE:
    case urdf::Joint::CONTINUOUS: spec.type = JointType::kRevolute; break;
    case urdf::Joint::PRISMATIC: spec.type = JointType::kPrismatic; break;
    case urdf::Joint::FIXED: spec.type = JointType::kFixed; return spec;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": unsupported joint type (floating, planar or unknown); the chain may hold "
                 "revolute, continuous, prismatic and fixed joints"));
  }
  const Eigen::Vector3d axis(joint.axis.x, joint.axis.y, joint.axis.z);
  if (!axis.allFinite() || axis.norm() < 1e-12) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": axis must be a non-zero vector"));
  }
  spec.axis = axis.normalized();
  if (joint.type != urdf::Joint::CONTINUOUS && joint.limits) {
    JointLimits limits{joint.limits->lower, joint.limits->upper,
                       joint.limits->velocity > 0.0 ? joint.limits->velocity
                                                    : std::numeric_limits<double>::infinity()};
    if (!(limits.lower <= limits.upper)) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": limit lower ", limits.lower,
                                                     " must be <= upper ", limits.upper));
    }
    spec.limits = limits;
  }
  return spec;
}

// A size of a <collision> element: finite, >= 0 and within the world.
absl::Status CheckSize(double value, const std::string& element, const char* what) {
  if (std::isfinite(value) && value >= 0.0 && value <= kWorldExtent) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      element, ": ", what, " must be finite, >= 0 and <= ", kWorldExtent, " m, got ", value));
}

// The file sent for `filename`: by the name as written, else by its last path component.
const std::string* FindMesh(const MeshFiles& meshes, const std::string& filename) {
  if (auto it = meshes.find(filename); it != meshes.end()) return &it->second;
  const std::string base = filename.substr(filename.find_last_of('/') + 1);
  if (auto it = meshes.find(base); it != meshes.end()) return &it->second;
  return nullptr;
}

absl::StatusOr<std::optional<CapsuleCover>> CoverMeshElement(const urdf::Mesh& mesh,
                                                             const Eigen::Isometry3d& X_LG,
                                                             const std::string& element,
                                                             const MeshFiles& meshes,
                                                             std::vector<std::string>& notes) {
  const Eigen::Vector3d scale(mesh.scale.x, mesh.scale.y, mesh.scale.z);
  if (!scale.allFinite()) {
    return absl::InvalidArgumentError(absl::StrCat(element, ": mesh scale must be finite"));
  }
  const std::string* bytes = FindMesh(meshes, mesh.filename);
  if (bytes == nullptr) {
    notes.push_back(absl::StrCat(element, ": mesh '", mesh.filename,
                                 "' was not sent (UrdfChain.meshes): left out"));
    return std::nullopt;
  }
  if (!absl::EndsWithIgnoreCase(mesh.filename, ".stl")) {
    notes.push_back(absl::StrCat(element, ": mesh '", mesh.filename,
                                 "' is not STL (the one mesh format read): left out"));
    return std::nullopt;
  }
  absl::StatusOr<TriangleMesh> triangles = ParseStl(*bytes);
  if (!triangles.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("meshes: '", mesh.filename, "' (", element,
                                                   "): ", triangles.status().message()));
  }
  const Eigen::Matrix3Xd vertices = X_LG * (scale.asDiagonal() * triangles->vertices);
  if (vertices.cwiseAbs().maxCoeff() > kWorldExtent) {
    return absl::InvalidArgumentError(
        absl::StrCat(element, ": mesh '", mesh.filename, "' reaches beyond ", kWorldExtent, " m"));
  }
  CapsuleCover cover = CoverMesh(vertices, triangles->triangles);
  notes.push_back(absl::StrFormat(
      "%s: mesh '%s' (%d triangles) covered by %d capsule(s) of radius up to %.4g m", element,
      mesh.filename, triangles->triangles.size(), cover.capsules.size(), cover.overshoot));
  return cover;
}

// One <collision> element as capsules in the moving link's frame (X_LC: the URDF link's frame
// in it), or nothing (left out, with a note).
absl::StatusOr<std::optional<CapsuleCover>> CoverCollision(const urdf::Collision& collision,
                                                           const Eigen::Isometry3d& X_LC,
                                                           const std::string& element,
                                                           const MeshFiles& meshes,
                                                           std::vector<std::string>& notes) {
  if (collision.geometry == nullptr) return std::nullopt;
  const Eigen::Isometry3d X_LG = X_LC * ToIsometry(collision.origin);
  const urdf::Geometry& geometry = *collision.geometry;
  switch (geometry.type) {
    case urdf::Geometry::SPHERE: {
      const auto& sphere = static_cast<const urdf::Sphere&>(geometry);
      if (absl::Status s = CheckSize(sphere.radius, element, "sphere radius"); !s.ok()) return s;
      return CoverSphere(X_LG, sphere.radius);
    }
    case urdf::Geometry::CYLINDER: {
      const auto& cylinder = static_cast<const urdf::Cylinder&>(geometry);
      if (absl::Status s = CheckSize(cylinder.radius, element, "cylinder radius"); !s.ok())
        return s;
      if (absl::Status s = CheckSize(cylinder.length, element, "cylinder length"); !s.ok())
        return s;
      CapsuleCover cover = CoverCylinder(X_LG, cylinder.radius, cylinder.length);
      notes.push_back(
          absl::StrFormat("%s: cylinder covered by a capsule (rounded ends reach %.4g m "
                          "beyond the flat ones)",
                          element, cover.overshoot));
      return cover;
    }
    case urdf::Geometry::BOX: {
      const auto& box = static_cast<const urdf::Box&>(geometry);
      const Eigen::Vector3d size(box.dim.x, box.dim.y, box.dim.z);
      for (int i = 0; i < 3; ++i) {
        if (absl::Status s = CheckSize(size[i], element, "box size"); !s.ok()) return s;
      }
      CapsuleCover cover = CoverBox(X_LG, size);
      notes.push_back(absl::StrFormat(
          "%s: box %.4g x %.4g x %.4g m covered by %d capsule(s) "
          "(reaching up to %.4g m beyond it)",
          element, size.x(), size.y(), size.z(), cover.capsules.size(), cover.overshoot));
      return cover;
    }
    case urdf::Geometry::MESH:
      return CoverMeshElement(static_cast<const urdf::Mesh&>(geometry), X_LG, element, meshes,
                              notes);
  }
  notes.push_back(absl::StrCat(element, ": unsupported geometry type: left out"));
  return std::nullopt;
}

// The link's <collision> elements into `shapes` (nullptr: a link no joint moves, noted).
absl::Status AddLinkCollisions(const urdf::Link& link, const Eigen::Isometry3d& X_LC,
                               const MeshFiles& meshes, std::vector<LinkShape>* shapes,
                               std::vector<std::string>& notes, bool& any) {
  for (size_t i = 0; i < link.collision_array.size(); ++i) {
    if (link.collision_array[i] == nullptr) continue;
    // Not "link ...": a message that begins with a lower-case word names a field on the wire.
    const std::string element = absl::StrCat("<collision> #", i, " of link '", link.name, "'");
    any = true;
    if (shapes == nullptr) {
      notes.push_back(absl::StrCat(element,
                                   ": on the base side of the first moving joint, which "
                                   "nothing moves: left out (no link is checked against it)"));
      continue;
    }
    absl::StatusOr<std::optional<CapsuleCover>> cover =
        CoverCollision(*link.collision_array[i], X_LC, element, meshes, notes);
    if (!cover.ok()) return cover.status();
    if (*cover) shapes->insert(shapes->end(), (*cover)->capsules.begin(), (*cover)->capsules.end());
  }
  return absl::OkStatus();
}

// ChainSpec::link_shapes from the chain's links (`path`: its joints, base to tip): each link's
// elements go to the moving joint before it, through the fixed joints in between.
absl::Status ReadCollisionGeometry(const urdf::ModelInterface& model, const std::string& base_link,
                                   const std::vector<urdf::JointSharedPtr>& path,
                                   const MeshFiles& meshes, ChainSpec& spec) {
  std::vector<std::vector<LinkShape>> shapes;
  bool any = false;
  Eigen::Isometry3d X_LC = Eigen::Isometry3d::Identity();  // URDF link in the moving link
  if (absl::Status s = AddLinkCollisions(*model.getLink(base_link), X_LC, meshes, nullptr,
                                         spec.geometry_notes, any);
      !s.ok()) {
    return s;
  }
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    const urdf::Joint& joint = **it;
    if (joint.type == urdf::Joint::FIXED) {
      X_LC = X_LC * ToIsometry(joint.parent_to_joint_origin_transform);
    } else {
      X_LC = Eigen::Isometry3d::Identity();
      shapes.emplace_back();
    }
    std::vector<LinkShape>* into = shapes.empty() ? nullptr : &shapes.back();
    if (absl::Status s = AddLinkCollisions(*model.getLink(joint.child_link_name), X_LC, meshes,
                                           into, spec.geometry_notes, any);
        !s.ok()) {
      return s;
    }
  }
  // Geometry only where some element was read: a chain whose meshes were all left out keeps
  // the joint-origin capsules (link_radii may then stand in), its notes say what is missing.
  const bool covered =
      std::any_of(shapes.begin(), shapes.end(),
                  [](const std::vector<LinkShape>& link) { return !link.empty(); });
  if (any && covered) spec.link_shapes = std::move(shapes);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ChainSpec> ChainFromUrdf(const std::string& urdf_xml, const std::string& base_link,
                                        const std::string& tip_link, const Eigen::Isometry3d& X_FT,
                                        const MeshFiles& meshes) {
  if (const size_t bad = FirstInvalidUtf8(urdf_xml); bad != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "urdf: not valid UTF-8 text (a NUL or malformed byte sequence at byte offset ", bad, ")"));
  }
  std::string why;
  const urdf::ModelInterfaceSharedPtr model = Parse(urdf_xml, why);
  const BreakLinkCycles break_cycles(model);
  if (!model) {
    return absl::InvalidArgumentError(
        absl::StrCat("urdf: not a valid robot description", why.empty() ? "" : ": ", why));
  }
  // urdfdom drops a <collision> element it cannot read (a size that is no number) and goes on:
  // geometry must not disappear without a word, so that is an error here.
  if (absl::StrContains(why, "collision")) {
    return absl::InvalidArgumentError(absl::StrCat("urdf: a <collision> element: ", why));
  }
  if (!model->getLink(base_link)) {
    return absl::InvalidArgumentError(absl::StrCat("base_link '", base_link, "' is not a link of robot '",
                                                   model->getName(), "'"));
  }
  urdf::LinkConstSharedPtr link = model->getLink(tip_link);
  if (!link) {
    return absl::InvalidArgumentError(absl::StrCat("tip_link '", tip_link, "' is not a link of robot '",
                                                   model->getName(), "'"));
  }
  // From the tip up to the base along the parent joints, then reversed. A link met twice means
  // the joints form a loop (urdfdom accepts one): without this check the walk never ended and
  // grew `path` until the process ran out of memory (found by fuzzing).
  std::vector<urdf::JointSharedPtr> path;
  std::set<std::string> visited;
  while (link->name != base_link) {
    if (!visited.insert(link->name).second) {
      return absl::InvalidArgumentError(absl::StrCat("urdf: the joints above tip_link '", tip_link,
                                                     "' form a loop through link '", link->name,
                                                     "'"));
    }
    if (!link->parent_joint) {
      return absl::InvalidArgumentError(absl::StrCat("tip_link '", tip_link,
                                                     "' is not below base_link '", base_link, "'"));
    }
    path.push_back(link->parent_joint);
    link = model->getLink(link->parent_joint->parent_link_name);
  }
  ChainSpec spec;
  spec.name = model->getName();
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    auto joint = ToJointSpec(**it);
    if (!joint.ok()) return joint.status();
    spec.joints.push_back(*std::move(joint));
  }
  spec.X_FT = X_FT;
  if (absl::Status s = ReadCollisionGeometry(*model, base_link, path, meshes, spec); !s.ok()) {
    return s;
  }
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

}  // namespace ikd::robot
