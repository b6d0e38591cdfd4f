// The bone-length calibration of pose_fitter.h: robust per-bone distances over frames.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ikd/pose/pose_fitter.h"
#include "observations.h"

namespace ikd::pose {
namespace {

using internal::CheckObservation;
using internal::InRange;
using internal::Median;
using internal::RangeError;
using internal::UnknownLabel;

// Normal consistency factor of the median absolute deviation.
constexpr double kMadToSigma = 1.4826;
// Calibration keeps distances within this many robust standard deviations of the median.
constexpr double kSkipSigmas = 3.0;

// Mean of the values within `radius` of `centre` (all of them when radius is 0): nearly the
// efficiency of the mean for Gaussian data, with the median's immunity to gross outliers.
double SkippedMean(const std::vector<double>& values, double centre, double radius) {
  double sum = 0.0;
  int count = 0;
  for (double x : values) {
    if (std::abs(x - centre) <= radius) sum += x, ++count;
  }
  return count > 0 && radius > 0.0 ? sum / count : centre;
}

}  // namespace

absl::Status CalibrationOptions::Validate() const {
  if (min_samples_per_bone < 1 || min_samples_per_bone > 1'000'000) {
    return RangeError("calibration.min_samples_per_bone", "in [1, 1000000]", min_samples_per_bone);
  }
  if (!InRange(min_confidence, 0.0, 1.0)) {
    return RangeError("calibration.min_confidence", "in [0, 1]", min_confidence);
  }
  return absl::OkStatus();
}

absl::StatusOr<Calibrator> Calibrator::Create(const Skeleton& skeleton,
                                              const CalibrationOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  return Calibrator(skeleton, options);
}

Calibrator::Calibrator(const Skeleton& skeleton, const CalibrationOptions& options)
    : skeleton_(skeleton), options_(options), distances_(skeleton.num_bones()) {}

absl::Status Calibrator::AddFrame(std::span<const Observation> observations) {
  std::vector<const Eigen::Vector3d*> at(skeleton_.num_sites(), nullptr);
  std::vector<bool> seen(skeleton_.num_sites(), false);
  for (size_t k = 0; k < observations.size(); ++k) {
    const Observation& o = observations[k];
    const std::optional<int> site = skeleton_.FindLabel(o.label);
    if (!site) return UnknownLabel(o, k);
    if (absl::Status s = CheckObservation(o, k); !s.ok()) return s;
    if (seen[*site]) {
      return absl::InvalidArgumentError(absl::StrCat("observations[", k, "]: site \"",
                                                     skeleton_.site_names()[*site],
                                                     "\" observed twice in one frame"));
    }
    seen[*site] = true;
    if (o.confidence >= options_.min_confidence) at[*site] = &o.position;
  }
  for (int b = 0; b < skeleton_.num_bones(); ++b) {
    const Bone& bone = skeleton_.bones()[b];
    if (at[bone.i] && at[bone.j]) distances_[b].push_back((*at[bone.i] - *at[bone.j]).norm());
  }
  ++frames_;
  return absl::OkStatus();
}

absl::StatusOr<CalibrationResult> Calibrator::Finish() const {
  CalibrationResult result;
  std::vector<double> centres, axis_sigmas;
  for (int b = 0; b < skeleton_.num_bones(); ++b) {
    std::vector<double> d = distances_[b];
    if (static_cast<int>(d.size()) < options_.min_samples_per_bone) {
      const Bone& bone = skeleton_.bones()[b];
      return absl::FailedPreconditionError(
          absl::StrCat("bone ", b, " (", skeleton_.site_names()[bone.i], " - ",
                       skeleton_.site_names()[bone.j], ") observed at both ends in ", d.size(),
                       " frames, fewer than min_samples_per_bone=", options_.min_samples_per_bone));
    }
    const double median = Median(d);
    for (double& x : d) x = std::abs(x - median);
    const double spread = kMadToSigma * Median(d);
    centres.push_back(SkippedMean(distances_[b], median, kSkipSigmas * spread));
    result.spread.push_back(spread);
    result.samples.push_back(static_cast<int>(distances_[b].size()));
    // The distance fluctuates by the along-bone difference of two noises: variance 2 sigma^2.
    axis_sigmas.push_back(spread / std::sqrt(2.0));
  }
  result.noise_sigma = Median(axis_sigmas);
  const double s2 = result.noise_sigma * result.noise_sigma;
  for (double m : centres) {
    // First-order bias of |d + e|: E|e_perp|^2 / (2 l) = 2 sigma^2 / l (see CalibrationOptions).
    const double corrected = options_.correct_noise_bias ? m - 2.0 * s2 / m : m;
    result.lengths.push_back(corrected > 0.5 * m ? corrected : m);
  }
  return result;
}

}  // namespace ikd::pose
