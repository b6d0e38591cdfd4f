#include "reason_conversions.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ikd::server {
namespace {

v1::Reason::Kind KindToProto(ik::Reason::Kind kind) {
  switch (kind) {
    case ik::Reason::Kind::kCollision: return v1::Reason::KIND_COLLISION;
    case ik::Reason::Kind::kNearCollision: return v1::Reason::KIND_NEAR_COLLISION;
    case ik::Reason::Kind::kJointLimit: return v1::Reason::KIND_JOINT_LIMIT;
    case ik::Reason::Kind::kOutOfReach: return v1::Reason::KIND_OUT_OF_REACH;
    case ik::Reason::Kind::kSingular: return v1::Reason::KIND_SINGULAR;
    case ik::Reason::Kind::kResidual: return v1::Reason::KIND_RESIDUAL;
    case ik::Reason::Kind::kRotationResidual: return v1::Reason::KIND_ROTATION_RESIDUAL;
  }
  return v1::Reason::KIND_UNSPECIFIED;
}

// What the pair's first member meets: the obstacle "id", or the other limb / link.
std::string Partner(const v1::Reason& r, const char* link_word) {
  if (!r.obstacle_id().empty()) return absl::StrCat("obstacle \"", r.obstacle_id(), "\"");
  return absl::StrCat(link_word, " ", r.other_link());
}

std::string Describe(const v1::Reason& r, const char* link_word) {
  switch (r.kind()) {
    case v1::Reason::KIND_COLLISION:
      return absl::StrFormat("%s %d penetrates %s by %.6g m", link_word, r.link(),
                             Partner(r, link_word), -r.distance());
    case v1::Reason::KIND_NEAR_COLLISION:
      return absl::StrFormat("%s %d is %.6g m from %s, inside the %.6g m safety margin",
                             link_word, r.link(), r.distance(), Partner(r, link_word), r.bound());
    case v1::Reason::KIND_JOINT_LIMIT:
      return absl::StrFormat("joint %s (positions[%d]) at %.6g rad, its limit %.6g",
                             r.joint_name(), r.joint(), r.value(), r.bound());
    case v1::Reason::KIND_OUT_OF_REACH:
      if (std::string_view(link_word) == "link") {  // an industrial arm's full pose
        if (r.distance() == 0.0 && r.value() == 0.0) {
          return "no configuration within the joint limits reaches the tool pose: every "
                 "closed-form branch on it passes a joint limit";
        }
        return absl::StrFormat(
            "no configuration reaches the tool pose: the closed form's nearest branch misses it "
            "by %.6g m and %.6g rad",
            r.distance(), r.value());
      }
      return absl::StrFormat("the target is %.6g m from the base, %.6g m beyond the reach %.6g m",
                             r.value(), r.distance(), r.bound());
    case v1::Reason::KIND_SINGULAR:
      return absl::StrFormat(
          "singular: the tool Jacobian's least singular value %.6g is below %.6g; the tool can "
          "barely move along (%.3f, %.3f, %.3f)",
          r.value(), r.bound(), r.direction().x(), r.direction().y(), r.direction().z());
    case v1::Reason::KIND_RESIDUAL:
      return absl::StrFormat("the hand is %.6g m from its target (tolerance %.6g m)", r.value(),
                             r.bound());
    case v1::Reason::KIND_ROTATION_RESIDUAL:
      return absl::StrFormat("the tool is turned %.6g rad from its target orientation "
                             "(tolerance %.6g rad)", r.value(), r.bound());
    default: return "";
  }
}

}  // namespace

void ReasonsToProto(const std::vector<ik::Reason>& reasons, const planning::Scene* scene,
                    const std::vector<std::string>& joint_names, const char* link_word,
                    google::protobuf::RepeatedPtrField<v1::Reason>* out) {
  for (const ik::Reason& reason : reasons) {
    v1::Reason* r = out->Add();
    r->set_kind(KindToProto(reason.kind));
    r->set_link(reason.link);
    r->set_other_link(reason.other_link);
    if (scene != nullptr && reason.obstacle >= 0 && reason.obstacle < scene->size()) {
      r->set_obstacle_id(scene->obstacles()[reason.obstacle].id);
    }
    r->set_joint(reason.joint);
    if (reason.joint >= 0 && reason.joint < static_cast<int>(joint_names.size())) {
      r->set_joint_name(joint_names[reason.joint]);
    }
    r->set_distance(reason.distance);
    r->set_value(reason.value);
    r->set_bound(reason.bound);
    r->mutable_direction()->set_x(reason.direction.x());
    r->mutable_direction()->set_y(reason.direction.y());
    r->mutable_direction()->set_z(reason.direction.z());
    r->set_description(Describe(*r, link_word));
  }
}

}  // namespace ikd::server
