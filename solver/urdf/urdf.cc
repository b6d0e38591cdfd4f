#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <console_bridge/console.h>
#include <urdf_parser/urdf_parser.h>

#include "absl/strings/str_cat.h"
#include "ikd/urdf/urdf.h"

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

}  // namespace

absl::StatusOr<ChainSpec> ChainFromUrdf(const std::string& urdf_xml, const std::string& base_link,
                                        const std::string& tip_link, const Eigen::Isometry3d& X_FT) {
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
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

}  // namespace ikd::robot
