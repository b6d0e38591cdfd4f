#include "pose_service.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "bidi_stream.h"
#include "conversions.h"
#include "errors.h"
#include "pose_conversions.h"
#include "ikd/pose/pose_fitter.h"
#include "ikd/pose/skeleton.h"

namespace ikd::server {
namespace {

std::function<std::string(const std::string&)> Below(const std::string& prefix) {
  return [prefix](const std::string& field) {
    return field.empty() ? prefix : absl::StrCat(prefix, ".", field);
  };
}

// A stored "skeletons/{id}" (ModelService), validated again as it is built.
absl::StatusOr<pose::Skeleton> StoredSkeleton(const std::string& name, ModelStore& store,
                                              const ModelLimits& limits) {
  absl::StatusOr<std::string> id = IdFromName(name, "skeletons", "config.skeleton_name");
  if (!id.ok()) return id.status();
  absl::StatusOr<StoredModel> stored = store.Get("skeletons", *id);
  if (!stored.ok()) return stored.status();
  v1::SkeletonSpec spec;
  if (!spec.ParseFromString(stored->payload)) {
    return absl::DataLossError(absl::StrCat(name, ": stored skeleton cannot be parsed"));
  }
  return SkeletonFromProto(spec, "config.skeleton_name", limits);
}

absl::StatusOr<pose::Skeleton> SkeletonFromConfig(const v1::PoseConfig& config,
                                                  ModelStore& store, const ModelLimits& limits) {
  switch (config.skeleton_case()) {
    case v1::PoseConfig::kPreset:
      if (config.preset() == v1::SKELETON_PRESET_HUMAN17) return pose::Skeleton::Human17();
      return FieldViolation("config.preset", "must be SKELETON_PRESET_HUMAN17");
    case v1::PoseConfig::kSpec:
      return SkeletonFromProto(config.spec(), "config.spec", limits);
    case v1::PoseConfig::kSkeletonName:
      return StoredSkeleton(config.skeleton_name(), store, limits);
    default:
      return FieldViolation("config.skeleton", "give a preset, a spec or a skeleton_name");
  }
}

// Zero fields keep the library's defaults.
absl::StatusOr<pose::FitOptions> FitOptionsFromConfig(const v1::PoseConfig& config) {
  pose::FitOptions options;
  if (config.smoothing() != 0) options.smoothing = config.smoothing();
  if (config.outlier_gate() != 0) options.outlier_gate = config.outlier_gate();
  options.calibration_frames = config.calibration_frames();
  if (config.ignore_unknown_labels()) {
    options.unknown_labels = pose::UnknownLabelPolicy::kIgnore;
  }
  if (absl::Status valid = options.Validate(); !valid.ok()) {
    return SolverFieldViolation(valid, Below("config"));
  }
  return options;
}

std::vector<pose::Observation> ObservationsFromFrame(const v1::PoseFrame& frame) {
  std::vector<pose::Observation> observations;
  observations.reserve(frame.points_size());
  for (const v1::ObservedPoint& point : frame.points()) {
    observations.push_back({point.label(), FromProto(point.position()),
                            point.has_confidence() ? point.confidence() : 1.0});
  }
  return observations;
}

// The bends reported per frame: at every site with a parent and a child in the skeleton's
// spanning tree, between the two bones (grandparent, parent, site).
struct JointAngles {
  std::vector<pose::AngleLimit> triples;  // only a, center, b are used
  std::vector<std::string> names;
};

JointAngles JointAnglesOf(const pose::Skeleton& skeleton) {
  JointAngles angles;
  const std::vector<int>& parent = skeleton.tree_parents();
  const std::vector<std::string>& name = skeleton.site_names();
  for (int site : skeleton.tree_order()) {
    const int center = parent[site];
    if (center < 0 || parent[center] < 0) continue;
    angles.triples.push_back({parent[center], center, site});
    angles.names.push_back(absl::StrCat(name[parent[center]], "-", name[center], "-", name[site]));
  }
  return angles;
}

v1::FrameOutcome OutcomeToProto(pose::FrameOutcome outcome) {
  switch (outcome) {
    case pose::FrameOutcome::kFitted: return v1::FRAME_OUTCOME_FITTED;
    case pose::FrameOutcome::kPredicted: return v1::FRAME_OUTCOME_PREDICTED;
    case pose::FrameOutcome::kNoPose: return v1::FRAME_OUTCOME_NO_POSE;
    case pose::FrameOutcome::kCalibrating: return v1::FRAME_OUTCOME_CALIBRATING;
    case pose::FrameOutcome::kProjectionFailed: return v1::FRAME_OUTCOME_PROJECTION_FAILED;
  }
  return v1::FRAME_OUTCOME_UNSPECIFIED;
}

void FillFittedFrame(const pose::FrameResult& result, const v1::PoseFrame& frame,
                     const JointAngles& angles, v1::FittedFrame* out) {
  out->set_outcome(OutcomeToProto(result.outcome));
  out->set_message(result.message);
  for (Eigen::Index k = 0; k < result.sites.cols(); ++k) {
    *out->add_sites() = ToProto(Eigen::Vector3d(result.sites.col(k)));
  }
  if (result.sites.cols() > 0) {
    for (const pose::AngleLimit& triple : angles.triples) {
      out->add_joint_angles(pose::Skeleton::AngleAt(triple, result.sites));
    }
  }
  for (size_t k = 0; k < result.observations.size(); ++k) {
    const pose::ObservationFit& fit = result.observations[k];
    v1::ObservationResult* observation = out->add_observations();
    observation->set_label(frame.points(static_cast<int>(k)).label());
    observation->set_residual(fit.residual);
    observation->set_outlier(fit.outlier);
    observation->set_ignored(fit.ignored);
  }
  out->set_bone_length_residual(result.bone_length_residual);
  out->set_noise_sigma(result.noise_sigma);
}

// OK when every number of the frame is finite; else OUT_OF_RANGE naming the field.
absl::Status CheckFrameFinite(const v1::FittedFrame& frame) {
  FiniteCheck check;
  check.Number(frame.timestamp(), "timestamp");
  for (int k = 0; k < frame.sites_size(); ++k) check.Vector(frame.sites(k), "sites", k);
  for (int k = 0; k < frame.joint_angles_size(); ++k) {
    check.Number(frame.joint_angles(k), "joint_angles", k);
  }
  for (int k = 0; k < frame.observations_size(); ++k) {
    check.Number(frame.observations(k).residual(), "observations.residual", k);
  }
  check.Number(frame.bone_length_residual(), "bone_length_residual");
  check.Number(frame.noise_sigma(), "noise_sigma");
  return check.Result(absl::StrCat("the fitted frame at t = ", frame.timestamp(), " s"));
}

// "observations[3].position ..." of the library, in the wire's terms.
std::string RejectionMessage(const absl::Status& status) {
  std::string message(status.message());
  if (absl::StartsWith(message, "observations[")) {
    message = absl::StrCat("frame.points[", absl::StripPrefix(message, "observations["));
  }
  return message;
}

// One stream (bidi_stream.h): read -> (configure | fit on the pool -> write) -> read ...
class PoseReactor final
    : public BidiStreamReactor<v1::EstimatePoseRequest, v1::EstimatePoseResponse> {
 public:
  PoseReactor(ModelStore* store, WorkerPool* pool, const ModelLimits& model_limits,
              const PoseLimits& limits, Metrics* metrics)
      : store_(store),
        pool_(pool),
        model_limits_(model_limits),
        limits_(limits),
        metrics_(metrics) {
    ReadNext();
  }

 private:
  // The first message configures; then one frame each.
  absl::Status OnMessage() override {
    if (!fitter_) return Configure();
    if (!request_.has_frame()) {
      return FieldViolation("request", "after the config, every message must carry a frame");
    }
    auto fit = [this] { FitAndWrite(); };
    // The first frame admits the stream to the pool; later frames are continuations.
    return SubmitStreamTask(*pool_, fitted_ == 0, std::move(fit));
  }

  absl::Status Configure() {
    if (!request_.has_config()) {
      return FieldViolation("config", "the first message must carry a config");
    }
    absl::StatusOr<pose::Skeleton> skeleton =
        SkeletonFromConfig(request_.config(), *store_, model_limits_);
    if (!skeleton.ok()) return skeleton.status();
    absl::StatusOr<pose::FitOptions> options = FitOptionsFromConfig(request_.config());
    if (!options.ok()) return options.status();
    angles_ = JointAnglesOf(*skeleton);
    absl::StatusOr<pose::PoseFitter> fitter = pose::PoseFitter::Create(*skeleton, *options);
    if (!fitter.ok()) return SolverFieldViolation(fitter.status(), Below("config"));
    fitter_.emplace(*std::move(fitter));
    ReadNext();
    return absl::OkStatus();
  }

  // On a worker. No read is pending, so request_ is stable here.
  void FitAndWrite() {
    const absl::Time start = absl::Now();
    const v1::PoseFrame& frame = request_.frame();
    response_.Clear();
    v1::FittedFrame* out = response_.mutable_frame();
    out->set_timestamp(frame.timestamp());
    if (frame.points_size() > limits_.max_points_per_frame) {
      out->set_outcome(v1::FRAME_OUTCOME_REJECTED);
      out->set_message(absl::StrCat("frame.points: at most ", limits_.max_points_per_frame,
                                    " points, got ", frame.points_size()));
    } else {
      const std::vector<pose::Observation> observations = ObservationsFromFrame(frame);
      absl::StatusOr<pose::FrameResult> result = fitter_->Fit(frame.timestamp(), observations);
      if (result.ok()) {
        RecordFit(*result);
        FillFittedFrame(*result, frame, angles_, out);
      } else {
        out->set_outcome(v1::FRAME_OUTCOME_REJECTED);
        out->set_message(RejectionMessage(result.status()));
      }
    }
    if (fitted_ == 0) {
      const std::vector<std::string>& names = fitter_->skeleton().site_names();
      response_.mutable_site_names()->Add(names.begin(), names.end());
      response_.mutable_joint_angle_names()->Add(angles_.names.begin(), angles_.names.end());
      for (const pose::Bone& bone : fitter_->skeleton().bones()) {
        v1::SkeletonBone* out_bone = response_.add_bones();
        out_bone->set_i(bone.i);
        out_bone->set_j(bone.j);
        out_bone->set_length(bone.length);
      }
    }
    // The fitter has taken the frame: a non-finite answer cannot be a REJECTED frame (whose
    // state is unchanged), so the stream ends.
    if (absl::Status finite = CheckFrameFinite(*out); !finite.ok()) return End(finite);
    ++fitted_;
    out->set_processing_seconds(absl::ToDoubleSeconds(absl::Now() - start));
    WriteResponse();  // hands the call to gRPC: nothing may follow
  }

  void RecordFit(const pose::FrameResult& result) {
    metrics_->RecordSolverStep(SolverKind::kPoseFit, result.iterations);
    if (result.outcome == pose::FrameOutcome::kProjectionFailed) {
      metrics_->RecordNotConverged(SolverKind::kPoseFit);
    }
  }

  ModelStore* const store_;
  WorkerPool* const pool_;
  const ModelLimits model_limits_;
  const PoseLimits limits_;
  Metrics* const metrics_;
  std::optional<pose::PoseFitter> fitter_;  // empty until configured
  JointAngles angles_;
  int64_t fitted_ = 0;
};

}  // namespace

grpc::ServerBidiReactor<v1::EstimatePoseRequest, v1::EstimatePoseResponse>*
PoseServiceImpl::EstimatePose(grpc::CallbackServerContext* /*context*/) {
  return new PoseReactor(store_, pool_, model_limits_, limits_, metrics_);
}

}  // namespace ikd::server
