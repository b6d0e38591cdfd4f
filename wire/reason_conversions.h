// Reasons (solver/include/ikd/ik/diagnosis.h) on the wire: JointState.reasons, each with the
// obstacle's id, the joint's name and a one-line description.
#pragma once

#include <string>
#include <vector>

#include "ikd/ik/diagnosis.h"
#include "ikd/planning/scene.h"
#include "ikd/v1/kinematics_service.pb.h"

namespace ikd::server {

// `scene` names the obstacles (may be null when no reason names one); `joint_names` the joints;
// `link_word` is "limb" (chain arms) or "link" (industrial arms).
void ReasonsToProto(const std::vector<ik::Reason>& reasons, const planning::Scene* scene,
                    const std::vector<std::string>& joint_names, const char* link_word,
                    google::protobuf::RepeatedPtrField<v1::Reason>* out);

}  // namespace ikd::server
