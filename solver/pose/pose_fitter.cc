#include "ikd/pose/pose_fitter.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/LU>
#include <Eigen/SVD>

#include "absl/strings/str_cat.h"
#include "ikd/world.h"
#include "observations.h"

namespace ikd::pose {

using constraints::ConstraintModel;
using constraints::ConstraintSolver;
using constraints::DistanceConstraint;
using constraints::MakeConstraintSolver;
using constraints::Method;
using constraints::ProjectionSummary;

namespace {

using internal::CheckObservation;
using internal::InRange;
using internal::Median;
using internal::RangeError;
using internal::UnknownLabel;

// Median of |e| for e ~ N(0, sigma^2 I_3) (a chi distribution with 3 degrees of freedom).
constexpr double kChi3Median = 1.5382;
// Smoothing of the first frame of a track: the prediction there is only the aligned rest pose.
// Sites without data still need a mass for the projection: light, but not so light (1e3 times
// lighter, say) that the chord iteration stalls on the lopsided masses.
constexpr double kFirstFrameSmoothing = 0.05;
// Smoothing of a snapping site with data (first frame, re-acquired): the data decide.
constexpr double kSnapSmoothing = 1e-3;
constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr int kMaxLimitRounds = 4;
constexpr int kContinuationSteps = 8;
constexpr int kAlignPasses = 3;

}  // namespace

const char* FrameOutcomeName(FrameOutcome outcome) {
  switch (outcome) {
    case FrameOutcome::kFitted:
      return "FITTED";
    case FrameOutcome::kPredicted:
      return "PREDICTED";
    case FrameOutcome::kNoPose:
      return "NO_POSE";
    case FrameOutcome::kCalibrating:
      return "CALIBRATING";
    case FrameOutcome::kProjectionFailed:
      return "PROJECTION_FAILED";
  }
  return "UNKNOWN";
}

// ---- FitOptions ----

absl::Status FitOptions::Validate() const {
  if (!InRange(smoothing, 1e-6, 1e6)) return RangeError("smoothing", "in [1e-6, 1e6]", smoothing);
  if (!InRange(velocity_gain, 0.0, 1.0))
    return RangeError("velocity_gain", "in [0, 1]", velocity_gain);
  if (!InRange(velocity_damping, 0.0, 1.0) || velocity_damping == 1.0) {
    return RangeError("velocity_damping", "in [0, 1)", velocity_damping);
  }
  if (!InRange(max_gap_seconds, 0.0, 1e9) || max_gap_seconds == 0.0) {
    return RangeError("max_gap_seconds", "finite and > 0", max_gap_seconds);
  }
  if (!InRange(huber_threshold, 0.5, 100.0)) {
    return RangeError("huber_threshold", "in [0.5, 100]", huber_threshold);
  }
  if (!InRange(outlier_gate, huber_threshold, 1000.0)) {
    return RangeError("outlier_gate", "in [huber_threshold, 1000]", outlier_gate);
  }
  if (!InRange(min_noise_sigma, 1e-12, 1e3)) {
    return RangeError("min_noise_sigma", "in [1e-12, 1000] metres", min_noise_sigma);
  }
  if (!InRange(noise_rate, 0.0, 1.0) || noise_rate == 0.0) {
    return RangeError("noise_rate", "in (0, 1]", noise_rate);
  }
  if (reacquire_after < 0 || reacquire_after > 1'000'000) {
    return RangeError("reacquire_after", "in [0, 1000000]", reacquire_after);
  }
  if (robust_iterations < 1 || robust_iterations > 100) {
    return RangeError("robust_iterations", "in [1, 100]", robust_iterations);
  }
  if (!InRange(tolerance, 1e-15, 1e-3))
    return RangeError("tolerance", "in [1e-15, 1e-3]", tolerance);
  if (max_projection_iterations < 1 || max_projection_iterations > 100000) {
    return RangeError("max_projection_iterations", "in [1, 100000]", max_projection_iterations);
  }
  if (unknown_labels != UnknownLabelPolicy::kReject &&
      unknown_labels != UnknownLabelPolicy::kIgnore) {
    return absl::InvalidArgumentError("unknown_labels: unknown policy");
  }
  if (calibration_frames < 0 || calibration_frames > 1'000'000) {
    return RangeError("calibration_frames", "in [0, 1000000]", calibration_frames);
  }
  return calibration.Validate();
}

// ---- PoseFitter ----

absl::StatusOr<PoseFitter> PoseFitter::Create(Skeleton skeleton, const FitOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  return PoseFitter(std::move(skeleton), options);
}

PoseFitter::PoseFitter(Skeleton skeleton, const FitOptions& options)
    : skeleton_(std::move(skeleton)), options_(options), bones_(skeleton_.BoneConstraints()) {
  projection_.tolerance = options.tolerance;
  projection_.max_iterations = options.max_projection_iterations;
  if (options.calibration_frames > 0)
    calibrator_.emplace(*Calibrator::Create(skeleton_, options.calibration));
}

void PoseFitter::Reset() {
  has_pose_ = false;
  has_timestamp_ = false;
  running_sigma_ = 0.0;
  sites_.resize(3, 0);
  velocities_.resize(3, 0);
}

absl::Status PoseFitter::ResolveFrame(double timestamp, std::span<const Observation> observations,
                                      std::vector<Resolved>& resolved, FrameResult& result) const {
  if (!std::isfinite(timestamp)) return RangeError("timestamp", "finite", timestamp);
  if (has_timestamp_ && !(timestamp > last_timestamp_)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "timestamp ", timestamp, " is not after the previous frame's ", last_timestamp_));
  }
  result.observations.assign(observations.size(), ObservationFit{});
  for (size_t k = 0; k < observations.size(); ++k) {
    const Observation& o = observations[k];
    if (absl::Status s = CheckObservation(o, k); !s.ok()) return s;
    for (size_t q = 0; q < k; ++q) {
      if (observations[q].label == o.label) {
        return absl::InvalidArgumentError(absl::StrCat("observations[", k, "].label: \"", o.label,
                                                       "\" repeats observations[", q, "]"));
      }
    }
    const std::optional<int> site = skeleton_.FindLabel(o.label);
    if (!site) {
      if (options_.unknown_labels == UnknownLabelPolicy::kReject) return UnknownLabel(o, k);
      result.observations[k].ignored = true;
      continue;
    }
    result.observations[k].site = *site;
    resolved.push_back({static_cast<int>(k), *site, o.position, o.confidence});
  }
  return absl::OkStatus();
}

absl::StatusOr<FrameResult> PoseFitter::Fit(double timestamp,
                                            std::span<const Observation> observations) {
  FrameResult result;
  result.timestamp = timestamp;
  resolved_.clear();
  if (absl::Status s = ResolveFrame(timestamp, observations, resolved_, result); !s.ok()) return s;
  if (calibrator_) return Calibrate(observations, std::move(result));

  const bool usable = std::any_of(resolved_.begin(), resolved_.end(),
                                  [](const Resolved& r) { return r.confidence > 0.0; });
  const double dt = has_timestamp_ ? timestamp - last_timestamp_ : 0.0;
  last_timestamp_ = timestamp;
  has_timestamp_ = true;
  if (!has_pose_ && !usable) {
    result.outcome = FrameOutcome::kNoPose;
    return result;
  }
  const bool first = !has_pose_;
  if (first) {
    velocities_ = Eigen::Matrix3Xd::Zero(3, skeleton_.num_sites());
    lost_frames_.assign(skeleton_.num_sites(), 0);
    track_frames_ = 0;
  } else if (dt > options_.max_gap_seconds) {
    velocities_.setZero();
  }
  ++track_frames_;
  const Eigen::Matrix3Xd prediction = first ? AlignRestPose(resolved_) : Predict(dt);
  const Gains gains = GainsForFrame(track_frames_);
  MarkSnappingSites(first);
  const int passes = !usable ? 1 : (first ? 2 : 1) * options_.robust_iterations;

  Eigen::Matrix3Xd x = prediction, target;
  Eigen::VectorXd inverse_masses;
  for (int pass = 0; pass < passes; ++pass) {
    ComputeResiduals(x);
    // The first pass of a track weighs the data against a rest pose, not a prediction: no gate.
    Reweight(first && pass == 0 ? kInfinity : NoiseScale(), result);
    Blend(prediction, gains.smoothing, target, inverse_masses);
    x = target;
    ++result.robust_passes;
    if (!Project(prediction, inverse_masses, x, result)) {
      result.outcome = FrameOutcome::kProjectionFailed;
      // A first frame fails in its ungated pass, whose scale is infinite: report the floor
      // (found by fuzzing: noise_sigma inf on the wire).
      if (!std::isfinite(result.noise_sigma)) {
        result.noise_sigma = std::max(options_.min_noise_sigma, running_sigma_);
      }
      result.sites = sites_;  // the previous pose, or empty on a first frame
      velocities_.setZero();
      if (first) has_pose_ = false;
      return result;
    }
  }
  // The flags come from the residuals of the final fit against the scale they imply.
  ComputeResiduals(x);
  Reweight(NoiseScale(), result);
  sites_ = std::move(x);
  Finish(prediction, first ? 0.0 : dt, gains.velocity_gain, result);
  return result;
}

// The first frame follows the data (the prediction is only the aligned rest pose). The
// velocity gain starts at that of the growing-memory g-h filter (least-squares line through
// all frames so far; Brookner, "Tracking and Kalman Filtering Made Easy", 1998, sec. 1.2.10),
// h_n / g_n = 3 / (2n - 1) for the n-th frame, and relaxes to velocity_gain: a new track learns
// its velocity in a few frames instead of lagging for tens. The smoothing stays constant so
// that residuals against the fit, and the noise scale drawn from them, mean the same on every
// frame.
PoseFitter::Gains PoseFitter::GainsForFrame(int n) const {
  Gains gains;
  gains.smoothing = n == 1 ? kFirstFrameSmoothing : options_.smoothing;
  gains.velocity_gain = std::min(1.0, std::max(options_.velocity_gain, 3.0 / (2.0 * n - 1.0)));
  return gains;
}

FrameResult PoseFitter::Calibrate(std::span<const Observation> observations, FrameResult result) {
  result.outcome = FrameOutcome::kCalibrating;
  std::vector<Observation> known;
  for (const Resolved& r : resolved_) known.push_back(observations[r.input]);
  last_timestamp_ = result.timestamp;
  has_timestamp_ = true;
  if (known.empty()) return result;
  if (absl::Status s = calibrator_->AddFrame(known); !s.ok()) {
    result.message = absl::StrCat("frame not used for calibration: ", s.message());
    return result;
  }
  if (calibrator_->frames() < options_.calibration_frames) return result;
  absl::StatusOr<CalibrationResult> calibrated = calibrator_->Finish();
  if (!calibrated.ok()) {  // some bone not yet seen often enough: keep collecting
    result.message = std::string(calibrated.status().message());
    return result;
  }
  skeleton_ = *skeleton_.WithBoneLengths(calibrated->lengths);
  bones_ = skeleton_.BoneConstraints();
  result.message = absl::StrCat("bone lengths calibrated from ", calibrator_->frames(), " frames");
  calibrator_.reset();
  return result;
}

Eigen::Matrix3Xd PoseFitter::Predict(double dt) const { return sites_ + dt * velocities_; }

// Weighted, iteratively reweighted Kabsch alignment of the rest pose onto the observed sites
// (translation only with fewer than 3 distinct sites): the first frame's prediction.
Eigen::Matrix3Xd PoseFitter::AlignRestPose(const std::vector<Resolved>& resolved) const {
  const Eigen::Matrix3Xd& rest = skeleton_.rest_pose();
  std::vector<double> weight(resolved.size());
  for (size_t k = 0; k < resolved.size(); ++k) weight[k] = resolved[k].confidence;
  std::vector<bool> sites_seen(skeleton_.num_sites(), false);
  int distinct = 0;
  for (const Resolved& r : resolved) {
    if (r.confidence > 0.0 && !sites_seen[r.site]) sites_seen[r.site] = true, ++distinct;
  }
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
  Eigen::Vector3d rest_centre, data_centre;
  for (int pass = 0; pass < kAlignPasses; ++pass) {
    double total = 0.0;
    rest_centre.setZero();
    data_centre.setZero();
    for (size_t k = 0; k < resolved.size(); ++k) {
      total += weight[k];
      rest_centre += weight[k] * rest.col(resolved[k].site);
      data_centre += weight[k] * resolved[k].position;
    }
    rest_centre /= total;
    data_centre /= total;
    if (distinct >= 3) {
      Eigen::Matrix3d h = Eigen::Matrix3d::Zero();
      for (size_t k = 0; k < resolved.size(); ++k) {
        h += weight[k] * (rest.col(resolved[k].site) - rest_centre) *
             (resolved[k].position - data_centre).transpose();
      }
      Eigen::JacobiSVD<Eigen::Matrix3d> svd(h, Eigen::ComputeFullU | Eigen::ComputeFullV);
      Eigen::Matrix3d fix = Eigen::Matrix3d::Identity();
      // A proper rotation: flip the weakest axis when V U^T would be a reflection.
      if ((svd.matrixV() * svd.matrixU().transpose()).determinant() < 0.0) fix(2, 2) = -1.0;
      rotation = svd.matrixV() * fix * svd.matrixU().transpose();
    }
    // Down-weight points far beyond the typical misfit (3 x the median): outliers, odd limbs.
    std::vector<double> misfit(resolved.size());
    for (size_t k = 0; k < resolved.size(); ++k) {
      misfit[k] = (rotation * (rest.col(resolved[k].site) - rest_centre) + data_centre -
                   resolved[k].position)
                      .norm();
    }
    std::vector<double> sorted = misfit;
    const double cut = 3.0 * Median(sorted) + 1e-12;
    for (size_t k = 0; k < resolved.size(); ++k) {
      weight[k] = misfit[k] > cut ? 0.0 : resolved[k].confidence;
    }
  }
  Eigen::Matrix3Xd aligned = rotation * (rest.colwise() - rest_centre);
  aligned.colwise() += data_centre;
  return aligned;
}

// Residual of every resolved observation against the sites `x`.
void PoseFitter::ComputeResiduals(const Eigen::Matrix3Xd& x) {
  residuals_.resize(resolved_.size());
  for (size_t k = 0; k < resolved_.size(); ++k) {
    residuals_[k] = (resolved_[k].position - x.col(resolved_[k].site)).norm();
  }
}

// Robust per-axis noise scale: the median residual of the usable observations over the chi-3
// median, never below the stream's running estimate or the floor.
double PoseFitter::NoiseScale() {
  scratch_.clear();
  for (size_t k = 0; k < resolved_.size(); ++k) {
    if (resolved_[k].confidence > 0.0) scratch_.push_back(residuals_[k]);
  }
  frame_sigma_ = Median(scratch_) / kChi3Median;
  return std::max({options_.min_noise_sigma, frame_sigma_, running_sigma_});
}

// Skipped Huber weights: 1 up to huber_threshold sigma, h sigma / e beyond, 0 past the gate;
// a site whose data the gate refused for reacquire_after frames in a row is believed again
// (the model, not the data, is then likely wrong).
void PoseFitter::Reweight(double sigma, FrameResult& result) {
  weights_.resize(resolved_.size());
  for (size_t k = 0; k < resolved_.size(); ++k) {
    ObservationFit& fit = result.observations[resolved_[k].input];
    fit.residual = residuals_[k];
    const double u = residuals_[k] / sigma;
    const bool reacquire =
        options_.reacquire_after > 0 && lost_frames_[resolved_[k].site] >= options_.reacquire_after;
    fit.outlier = u > options_.outlier_gate && !reacquire;
    const double robust = reacquire     ? 1.0
                          : fit.outlier ? 0.0
                                        : std::min(1.0, options_.huber_threshold / u);
    fit.weight = weights_[k] = resolved_[k].confidence * robust;
  }
  result.noise_sigma = sigma;
}

// Sites that snap (see MarkSnappingSites) take a vanishing smoothing where they have data.
void PoseFitter::Blend(const Eigen::Matrix3Xd& prediction, double smoothing,
                       Eigen::Matrix3Xd& target, Eigen::VectorXd& inverse_masses) const {
  Eigen::VectorXd data_weight = Eigen::VectorXd::Zero(skeleton_.num_sites());
  target = Eigen::Matrix3Xd::Zero(3, skeleton_.num_sites());
  for (size_t k = 0; k < resolved_.size(); ++k) {
    target.col(resolved_[k].site) += weights_[k] * resolved_[k].position;
    data_weight[resolved_[k].site] += weights_[k];
  }
  inverse_masses.resize(skeleton_.num_sites());
  for (int i = 0; i < skeleton_.num_sites(); ++i) {
    const double s_i = snap_[i] && data_weight[i] > 0.0 ? kSnapSmoothing : smoothing;
    const double mass = data_weight[i] + s_i;  // masses first
    target.col(i) = (target.col(i) + s_i * prediction.col(i)) / mass;
    inverse_masses[i] = 1.0 / mass;
  }
}

// Sites whose prediction is no guide: all of them on the first frame of a track (the
// prediction is the aligned rest pose), and sites re-acquired after reacquire_after refused
// frames. They follow their data; their velocities restart from 0.
void PoseFitter::MarkSnappingSites(bool first) {
  snap_.assign(skeleton_.num_sites(), first);
  if (first || options_.reacquire_after == 0) return;
  for (const Resolved& r : resolved_) {
    if (r.confidence > 0.0 && lost_frames_[r.site] >= options_.reacquire_after) {
      snap_[r.site] = true;
      velocities_.col(r.site).setZero();
    }
  }
}

// Projection onto the bones plus the active angle limits (Vesely eq. 6-7 with the matrix
// method); the link directions of the unconstrained target are the reference, the prediction
// the fallback when those are degenerate.
bool PoseFitter::Project(const Eigen::Matrix3Xd& fallback_reference,
                         const Eigen::VectorXd& inverse_masses, Eigen::Matrix3Xd& x,
                         FrameResult& result) {
  const Eigen::Matrix3Xd target = x;
  std::vector<DistanceConstraint> constraints = bones_;
  std::vector<bool> active(skeleton_.limits().size(), false);
  for (int round = 0; round <= kMaxLimitRounds; ++round) {
    x = target;
    absl::StatusOr<ProjectionSummary> summary = ProjectOnce(constraints, inverse_masses, target, x);
    if (!summary.ok() || !summary->converged()) {
      x = target;
      summary = ProjectOnce(constraints, inverse_masses, fallback_reference, x);
    }
    if (!summary.ok() || !summary->converged()) {
      summary = ProjectByContinuation(constraints, inverse_masses, fallback_reference, target, x);
    }
    if (!summary.ok() || !summary->converged()) {
      result.message = summary.ok() ? summary->message : std::string(summary.status().message());
      return false;
    }
    result.iterations += summary->iterations;
    if (!options_.enforce_limits || !ActivateViolatedLimits(x, active, constraints)) break;
  }
  result.active_limits = static_cast<int>(std::count(active.begin(), active.end(), true));
  return true;
}

// For targets too far from the constraint surface for one chord iteration (a first frame, a
// site re-acquired far away): walk from `start` (near-valid, e.g. the prediction) to the target
// in kContinuationSteps, each projected with the previous step's result as the reference.
absl::StatusOr<ProjectionSummary> PoseFitter::ProjectByContinuation(
    const std::vector<DistanceConstraint>& constraints, const Eigen::VectorXd& inverse_masses,
    const Eigen::Matrix3Xd& start, const Eigen::Matrix3Xd& target, Eigen::Matrix3Xd& x) {
  Eigen::Matrix3Xd reference = start;
  int iterations = 0;
  absl::StatusOr<ProjectionSummary> summary;
  for (int step = 0; step <= kContinuationSteps; ++step) {
    x = start + (static_cast<double>(step) / kContinuationSteps) * (target - start);
    summary = ProjectOnce(constraints, inverse_masses, reference, x);
    if (!summary.ok() || !summary->converged()) return summary;
    iterations += summary->iterations;
    reference = x;
  }
  summary->iterations = iterations;
  return summary;
}

// Adds a distance constraint at the bound of every limit `x` violates; false when none is.
bool PoseFitter::ActivateViolatedLimits(const Eigen::Matrix3Xd& x, std::vector<bool>& active,
                                        std::vector<DistanceConstraint>& constraints) const {
  bool added = false;
  for (size_t k = 0; k < skeleton_.limits().size(); ++k) {
    if (active[k]) continue;
    const AngleLimit& limit = skeleton_.limits()[k];
    const double angle = Skeleton::AngleAt(limit, x);
    if (angle >= limit.min && angle <= limit.max) continue;
    const double bound = angle < limit.min ? limit.min : limit.max;
    constraints.push_back({limit.a, limit.b, skeleton_.SpanAtAngle(limit, bound)});
    active[k] = added = true;
  }
  return added;
}

// The site weights change every pass, so the model (its inverse masses) is rebuilt each time.
absl::StatusOr<ProjectionSummary> PoseFitter::ProjectOnce(
    const std::vector<DistanceConstraint>& constraints, const Eigen::VectorXd& inverse_masses,
    const Eigen::Matrix3Xd& reference, Eigen::Matrix3Xd& x) {
  absl::StatusOr<ConstraintModel> model = ConstraintModel::Create(inverse_masses, constraints);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::unique_ptr<ConstraintSolver>> solver =
      MakeConstraintSolver(Method::kMatrix, *model, projection_);
  if (!solver.ok()) return solver.status();
  return (*solver)->ProjectPositions(reference, x);
}

// Step 5 and the frame's bookkeeping: observed sites, bone residual, velocities, noise scale,
// the count of frames each site's data were refused.
void PoseFitter::Finish(const Eigen::Matrix3Xd& prediction, double dt, double velocity_gain,
                        FrameResult& result) {
  result.observed.assign(skeleton_.num_sites(), false);
  std::vector<bool> refused(skeleton_.num_sites(), false);
  for (size_t k = 0; k < resolved_.size(); ++k) {
    const int site = resolved_[k].site;
    if (weights_[k] > 0.0) result.observed[site] = true;
    if (resolved_[k].confidence > 0.0 && result.observations[resolved_[k].input].outlier)
      refused[site] = true;
  }
  for (int i = 0; i < skeleton_.num_sites(); ++i) {
    lost_frames_[i] = result.observed[i] ? 0 : lost_frames_[i] + (refused[i] ? 1 : 0);
  }
  const bool any =
      std::find(result.observed.begin(), result.observed.end(), true) != result.observed.end();
  result.outcome = any ? FrameOutcome::kFitted : FrameOutcome::kPredicted;
  result.bone_length_residual = 0.0;
  for (const DistanceConstraint& c : bones_) {
    const double r = (sites_.col(c.i) - sites_.col(c.j)).norm();
    result.bone_length_residual =
        std::max(result.bone_length_residual, std::abs(r - c.length) / c.length);
  }
  result.sites = sites_;
  for (int i = 0; i < skeleton_.num_sites(); ++i) {
    if (dt > 0.0 && !snap_[i])
      velocities_.col(i) += (velocity_gain / dt) * (sites_.col(i) - prediction.col(i));
  }
  for (int i = 0; i < skeleton_.num_sites(); ++i) {
    if (!result.observed[i]) velocities_.col(i) *= 1.0 - options_.velocity_damping;  // coasting
  }
  // The first frame's residuals (a fit that follows the data) say nothing about the noise.
  if (any && track_frames_ > 1) {
    running_sigma_ = running_sigma_ == 0.0
                         ? frame_sigma_
                         : running_sigma_ + options_.noise_rate * (frame_sigma_ - running_sigma_);
  }
  has_pose_ = true;
}

}  // namespace ikd::pose
