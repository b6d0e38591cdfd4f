// Draws what a person wants to see of an IK answer as an SVG picture: the obstacles of the
// scene, the arm at a selection of samples (its sweep, faint) and at the last sample (bold),
// the hand path and the requested path, with samples that were not REACHED marked in red.
// 3-D content is projected orthographically onto a world coordinate plane.
//
//   ikd::clients::SweepPlot plot(ikd::clients::SweepPlot::View::kAuto);
//   plot.AddScene(scene_spec);
//   for (const auto& state : states) plot.AddState(state);
//   absl::Status written = plot.WriteFile("sweep.svg");
#pragma once

#include <Eigen/Core>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ikd/v1/kinematics_service.pb.h"
#include "ikd/v1/pose_service.pb.h"
#include "ikd/v1/types.pb.h"

namespace ikd::clients {

class SweepPlot {
 public:
  // kAuto picks the plane of the two world axes along which the drawn sites spread most
  // (a planar arm in the x-y plane is drawn in x-y).
  enum class View { kAuto, kXY, kXZ, kYZ };
  // "auto", "xy", "xz" or "yz".
  static absl::StatusOr<View> ParseView(absl::string_view text);

  explicit SweepPlot(View view = View::kAuto, int max_arms = 40)
      : view_(view), max_arms_(max_arms) {}

  void AddScene(const v1::SceneSpec& scene);
  void AddState(const v1::JointState& state);

  // The whole picture; ~800 px wide, y up.
  std::string Render() const;
  absl::Status WriteFile(const std::string& path) const;

 private:
  View view_;
  int max_arms_;
  v1::SceneSpec scene_;
  std::vector<v1::JointState> states_;
};

// A fitted skeleton frame (PoseService): the bones between the fitted sites, the sites, and
// the observed points (grey; the ones the fit refused as outliers in red).
//
//   PosePlot plot(SweepPlot::View::kAuto);
//   absl::Status written = plot.WriteFile("frame.svg", fitted, bones, observed);
class PosePlot {
 public:
  explicit PosePlot(SweepPlot::View view = SweepPlot::View::kAuto) : view_(view) {}

  std::string Render(const v1::FittedFrame& fitted, const std::vector<v1::SkeletonBone>& bones,
                     const v1::PoseFrame& observed) const;
  absl::Status WriteFile(const std::string& path, const v1::FittedFrame& fitted,
                         const std::vector<v1::SkeletonBone>& bones,
                         const v1::PoseFrame& observed) const;

 private:
  SweepPlot::View view_;
};

}  // namespace ikd::clients
