// Streaming pose estimation: fits a skeleton with exact bone lengths to observed 3-D points,
// frame by frame, in the spirit of Bakken & Hilton (2012, "Real-time pose estimation using
// constrained dynamics"): observations pull their sites, rigid bones are distance constraints
// restored by projection (the matrix method, Vesely 2013 eq. 6-7, Bailey 2008 eq. 13-14), and
// the previous frames supply a prediction that damps jitter and fills in missing sites.
//
// Per frame (PoseFitter::Fit):
//  1. Prediction p_i = x_i + v_i dt (constant velocity). On the first frame of a track the
//     prediction is the rest pose aligned to the data (robust weighted Kabsch) and the data
//     decide (vanishing smoothing, no gate on the first pass).
//  2. Robust weights: residual e_o = |o - x_site| of each observation against the current
//     iterate (first pass: the prediction); noise scale sigma from the median residual
//     (for 3-D Gaussian noise of sigma per axis, median |e| = 1.5382 sigma), never below the
//     running estimate of the stream or min_noise_sigma; weight = confidence * w(e / sigma) with
//     w = 1 up to huber_threshold (Huber), huber_threshold * sigma / e beyond, 0 beyond
//     outlier_gate (a skipped Huber estimator: gross outliers are rejected outright).
//  3. Minimize sum_o w_o |x_site(o) - o|^2 + smoothing * sum_i |x_i - p_i|^2 subject to the
//     bones: the unconstrained minimizer x~_i = (sum_o w_o o + s p_i) / (sum_o w_o + s), then
//     the mass-weighted projection onto the constraints with m_i = sum_o w_o + s (Gauss's least
//     constraint: the metric of the weighted objective). Sites without data have m_i = s and
//     absorb the corrections: the model fills them in. Violated angle limits join as distance
//     constraints at their bound (active set) and the projection is repeated.
//  4. Steps 2-3 repeat robust_iterations times (iteratively reweighted least squares); the
//     last residuals give each observation's outlier flag.
//  5. Velocities v += velocity_gain (x - p) / dt (an alpha-beta tracker on the fitted sites).
//     A new track starts with the velocity gain of the growing-memory filter and relaxes to the
//     steady-state option (see GainsForFrame); data refused reacquire_after frames in a row
//     are believed again, so a site that lost its track recovers.
//
//   auto fitter = ikd::pose::PoseFitter::Create(ikd::pose::Skeleton::Human17(), options);
//   for (const Frame& frame : stream) {
//     auto result = fitter->Fit(frame.time, frame.observations);
//     if (!result.ok()) { log(result.status()); continue; }  // a bad frame; the stream goes on
//     use(result->sites);  // exact bone lengths, every site filled in
//   }
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "ikd/constraints/model.h"
#include "ikd/constraints/solver.h"
#include "ikd/pose/skeleton.h"

namespace ikd::pose {

// One observed point: a label of the skeleton, a position (metres) and a confidence in [0, 1]
// (0 = present but to be ignored).
struct Observation {
  std::string label;
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
  double confidence = 1.0;
};

// ---- Calibration: bone lengths from the first frames of a stream ----

struct CalibrationOptions {
  // Frames in which both ends of a bone must be observed before its length is estimated.
  int min_samples_per_bone = 10;
  // Observations below this confidence are not used.
  double min_confidence = 0.5;
  // Remove the first-order bias of noisy distances: with per-axis noise sigma on both ends,
  // the centre of the distances |d + e| is about l + 2 sigma^2 / l to first order (the noise across
  // the bone, of mean square 4 sigma^2, only lengthens it); sigma from the spread of the distances
  // along the bones (MAD).
  bool correct_noise_bias = true;

  // OK, or InvalidArgument naming the field and its bound.
  absl::Status Validate() const;
};

struct CalibrationResult {
  std::vector<double> lengths;  // one per bone, in bone order (metres)
  std::vector<int> samples;     // frames that observed both ends of each bone
  std::vector<double> spread;   // robust std of the per-frame distances (1.4826 MAD)
  double noise_sigma = 0.0;     // per-axis point noise implied by the spreads (median)
};

// Estimates bone lengths robustly. Per bone, over the frames that observe both ends: the median
// of the distances (a rigid bone's distance varies only by noise, so the median shrugs off up
// to half of the frames being outliers), then the mean of the distances within 3 robust
// standard deviations (1.4826 MAD) of it (a skipped mean: near the efficiency of the mean on
// Gaussian noise, which the median alone loses by a factor pi/2 in variance), then the noise
// bias correction above.
//
//   auto calibrator = Calibrator::Create(Skeleton::Human17(), {});
//   for (...) calibrator->AddFrame(observations);
//   auto result = calibrator->Finish();
//   auto fitted = skeleton.WithBoneLengths(result->lengths);
class Calibrator {
 public:
  static absl::StatusOr<Calibrator> Create(const Skeleton& skeleton,
                                           const CalibrationOptions& options);

  // Errors (InvalidArgument, nothing recorded): an unknown label, a non-finite coordinate or
  // one beyond 1e6 m, a confidence outside [0, 1], a site observed twice.
  absl::Status AddFrame(std::span<const Observation> observations);
  int frames() const { return frames_; }
  // FailedPrecondition naming the bone when it has fewer than min_samples_per_bone samples.
  absl::StatusOr<CalibrationResult> Finish() const;

 private:
  Calibrator(const Skeleton& skeleton, const CalibrationOptions& options);
  Skeleton skeleton_;
  CalibrationOptions options_;
  std::vector<std::vector<double>> distances_;  // per bone
  int frames_ = 0;
};

// ---- Fitting ----

enum class UnknownLabelPolicy {
  kReject,  // the frame is refused with InvalidArgument (nothing changes)
  kIgnore,  // the observation is skipped and reported with ignored = true
};

struct FitOptions {
  // Weight of the prediction relative to an observation of confidence 1: the damping. 0 would
  // follow the data alone; larger is smoother and lags more. Must be > 0 (it also holds sites
  // without data). Per frame, independent of the frame rate.
  double smoothing = 2.0;
  // Fraction of the prediction error fed back into the velocities (the beta / alpha of an
  // alpha-beta tracker), in [0, 1]; 0 = constant position prediction.
  double velocity_gain = 0.25;
  // Fraction of its velocity a site without accepted data loses per frame, in [0, 1): coasting
  // stops when the data stop.
  double velocity_damping = 0.05;
  // A gap between frames longer than this (seconds) resets the velocities to 0.
  double max_gap_seconds = 0.5;
  // Residuals beyond outlier_gate * sigma are rejected (weight 0, flagged).
  double outlier_gate = 5.0;
  // Residuals beyond huber_threshold * sigma are down-weighted as huber_threshold * sigma / e.
  double huber_threshold = 3.0;
  // Floor of the noise scale sigma (metres): exact data must not gate out everything.
  double min_noise_sigma = 1e-3;
  // Rate of the running noise scale (an exponential average of per-frame estimates), in (0, 1].
  double noise_rate = 0.05;
  // A site whose observations were all refused this many frames in a row is believed again
  // (re-acquired: a lost track, not an outlier); 0 = never.
  int reacquire_after = 3;
  // Reweight-and-project passes per frame (the first frame of a track uses twice as many).
  int robust_iterations = 3;
  // Relative bone-length tolerance of the projection (Bailey eq. 24) and its iteration cap.
  double tolerance = 1e-12;
  int max_projection_iterations = 200;
  bool enforce_limits = true;
  UnknownLabelPolicy unknown_labels = UnknownLabelPolicy::kReject;
  // When > 0, the first calibration_frames frames (with at least one observation) calibrate the
  // bone lengths (outcome kCalibrating, no sites); fitting starts with the next frame.
  int calibration_frames = 0;
  CalibrationOptions calibration;

  // OK, or InvalidArgument naming the field and its bound.
  absl::Status Validate() const;
};

enum class FrameOutcome {
  kFitted,            // observations fitted; bone lengths exact
  kPredicted,         // no usable observation (none, all confidence 0, or all rejected): the
                      // prediction projected to exact bone lengths
  kNoPose,            // no pose yet and nothing to start one from: sites is empty
  kCalibrating,       // frame used for bone-length calibration: sites is empty
  kProjectionFailed,  // the constraints could not be restored: sites repeat the previous pose
                      // (exact) and the velocities are reset; `message` says why
};
const char* FrameOutcomeName(FrameOutcome outcome);

// What became of one input observation (same order as the input).
struct ObservationFit {
  int site = -1;          // -1 when ignored (unknown label under kIgnore)
  double residual = 0.0;  // |observation - fitted site| (metres)
  double weight = 0.0;    // final confidence * robust weight; 0 for outliers
  bool outlier = false;   // refused: residual beyond outlier_gate * noise_sigma (never while
                          // its site is being re-acquired)
  bool ignored = false;
};

struct FrameResult {
  FrameOutcome outcome = FrameOutcome::kFitted;
  double timestamp = 0.0;
  Eigen::Matrix3Xd sites;      // 3 x num_sites (empty for kNoPose, kCalibrating)
  std::vector<bool> observed;  // per site: an accepted (non-outlier) observation
  std::vector<ObservationFit> observations;
  double bone_length_residual = 0.0;  // max |r_ij - l| / l over the bones
  double noise_sigma = 0.0;           // the scale the outlier gate used (metres)
  int iterations = 0;                 // projection iterations, all passes
  int robust_passes = 0;
  int active_limits = 0;  // angle limits held at their bound
  std::string message;    // why, for kProjectionFailed
};

class PoseFitter {
 public:
  // Errors: invalid options. With calibration_frames > 0 the skeleton's lengths are replaced.
  static absl::StatusOr<PoseFitter> Create(Skeleton skeleton, const FitOptions& options);

  // Fits one frame. Errors (InvalidArgument; the fitter's state is left unchanged, so the
  // stream goes on with the next frame): a non-finite timestamp or one not after the previous
  // accepted frame, an unknown label (under kReject), a repeated label, a non-finite
  // coordinate or one beyond 1e6 m, a confidence outside [0, 1]. Everything else is an outcome in the result.
  absl::StatusOr<FrameResult> Fit(double timestamp, std::span<const Observation> observations);

  // Forgets the track (pose, velocities, noise estimate); calibrated lengths are kept.
  void Reset();

  const Skeleton& skeleton() const { return skeleton_; }
  const FitOptions& options() const { return options_; }
  bool has_pose() const { return has_pose_; }
  const Eigen::Matrix3Xd& sites() const { return sites_; }

 private:
  struct Resolved {  // one usable observation
    int input;       // index in the input span
    int site;
    Eigen::Vector3d position;
    double confidence;
  };
  PoseFitter(Skeleton skeleton, const FitOptions& options);

  absl::Status ResolveFrame(double timestamp, std::span<const Observation> observations,
                            std::vector<Resolved>& resolved, FrameResult& result) const;
  FrameResult Calibrate(std::span<const Observation> observations, FrameResult result);
  Eigen::Matrix3Xd Predict(double dt) const;
  Eigen::Matrix3Xd AlignRestPose(const std::vector<Resolved>& resolved) const;
  void ComputeResiduals(const Eigen::Matrix3Xd& x);
  double NoiseScale();
  void Reweight(double sigma, FrameResult& result);
  // Weighted target x~ and inverse masses of step 3.
  void Blend(const Eigen::Matrix3Xd& prediction, double smoothing, Eigen::Matrix3Xd& target,
             Eigen::VectorXd& inverse_masses) const;
  // Projects `x` onto the bones (and violated limits); false on failure with `message` set.
  bool Project(const Eigen::Matrix3Xd& fallback_reference, const Eigen::VectorXd& inverse_masses,
               Eigen::Matrix3Xd& x, FrameResult& result);
  bool ActivateViolatedLimits(const Eigen::Matrix3Xd& x, std::vector<bool>& active,
                              std::vector<constraints::DistanceConstraint>& constraints) const;
  absl::StatusOr<constraints::ProjectionSummary> ProjectByContinuation(
      const std::vector<constraints::DistanceConstraint>& constraints,
      const Eigen::VectorXd& inverse_masses, const Eigen::Matrix3Xd& start,
      const Eigen::Matrix3Xd& target, Eigen::Matrix3Xd& x);
  absl::StatusOr<constraints::ProjectionSummary> ProjectOnce(
      const std::vector<constraints::DistanceConstraint>& constraints,
      const Eigen::VectorXd& inverse_masses, const Eigen::Matrix3Xd& reference,
      Eigen::Matrix3Xd& x);
  void MarkSnappingSites(bool first);
  struct Gains {
    double smoothing;
    double velocity_gain;
  };
  Gains GainsForFrame(int n) const;
  void Finish(const Eigen::Matrix3Xd& prediction, double dt, double velocity_gain,
              FrameResult& result);

  Skeleton skeleton_;
  FitOptions options_;
  std::vector<constraints::DistanceConstraint> bones_;
  std::optional<Calibrator> calibrator_;
  constraints::ProjectionOptions projection_;

  bool has_pose_ = false;
  double last_timestamp_ = 0.0;
  bool has_timestamp_ = false;
  Eigen::Matrix3Xd sites_, velocities_;
  double running_sigma_ = 0.0;    // 0 = no estimate yet
  int track_frames_ = 0;          // frames since the track started
  std::vector<int> lost_frames_;  // per site: consecutive frames its data were all refused

  // Per-frame scratch, kept to reuse storage.
  std::vector<Resolved> resolved_;
  std::vector<double> residuals_;  // per resolved observation
  std::vector<double> weights_;    // per resolved observation
  std::vector<double> scratch_;
  std::vector<bool> snap_;    // per site: follows its data this frame
  double frame_sigma_ = 0.0;  // this frame's median-based estimate
};

}  // namespace ikd::pose
