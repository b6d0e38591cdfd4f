// ikctl pose: replays a CSV of observed points through PoseService.EstimatePose, writes one
// line (or JSON object) per fitted frame and, with --svg, draws the last fitted frame.
//
// Input, one point per line: "timestamp,label,x,y,z[,confidence]" (s, m; '#' lines and a
// header skipped); consecutive lines with the same timestamp form one frame.
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client_util.h"
#include "ikctl_common.h"
#include "ikd/v1/pose_service.grpc.pb.h"
#include "svg_plot.h"

ABSL_FLAG(std::string, frames_file, "-",
          "pose: observed points, one \"timestamp,label,x,y,z[,confidence]\" line each; \"-\" "
          "reads standard input");
ABSL_FLAG(std::string, skeleton_file, "",
          "pose: an ikd.v1.SkeletonSpec (JSON or textproto); default: the Human17 preset");
ABSL_FLAG(std::string, skeleton, "", "pose: a stored skeleton, \"ID\" or \"skeletons/ID\"");
ABSL_FLAG(int32_t, calibration_frames, 0, "pose: frames used to calibrate the bone lengths");
ABSL_FLAG(bool, ignore_unknown_labels, false, "pose: skip unknown labels instead of rejecting");
ABSL_DECLARE_FLAG(std::string, svg);
ABSL_DECLARE_FLAG(std::string, svg_view);

namespace ikd::clients {
namespace {

using PoseStream = grpc::ClientReaderWriter<v1::EstimatePoseRequest, v1::EstimatePoseResponse>;

absl::StatusOr<v1::PoseConfig> PoseConfigFromFlags() {
  v1::PoseConfig config;
  const std::string path = absl::GetFlag(FLAGS_skeleton_file);
  const std::string name = absl::GetFlag(FLAGS_skeleton);
  if (!path.empty() && !name.empty()) {
    return absl::InvalidArgumentError("give at most one of --skeleton and --skeleton_file");
  }
  if (!name.empty()) {
    config.set_skeleton_name(ResourceName("skeletons", name));
  } else if (path.empty()) {
    config.set_preset(v1::SKELETON_PRESET_HUMAN17);
  } else if (absl::Status loaded = LoadMessageFile(path, config.mutable_spec()); !loaded.ok()) {
    return loaded;
  }
  config.set_calibration_frames(absl::GetFlag(FLAGS_calibration_frames));
  config.set_ignore_unknown_labels(absl::GetFlag(FLAGS_ignore_unknown_labels));
  return config;
}

// One input line: its timestamp and point, or nothing for blank, '#' and header lines.
struct PointLine {
  double timestamp = 0;
  v1::ObservedPoint point;
};

absl::StatusOr<std::optional<PointLine>> ParsePointLine(const std::string& line, int number) {
  const absl::string_view text = absl::StripAsciiWhitespace(line);
  if (text.empty() || text[0] == '#' || absl::StartsWithIgnoreCase(text, "timestamp")) {
    return std::nullopt;
  }
  const std::vector<absl::string_view> cells = absl::StrSplit(text, ',');
  std::vector<double> numbers;
  for (size_t k = 0; k < cells.size(); ++k) {
    double value = 0;
    if (k != 1 && absl::SimpleAtod(absl::StripAsciiWhitespace(cells[k]), &value)) {
      numbers.push_back(value);
    }
  }
  if ((cells.size() != 5 && cells.size() != 6) || numbers.size() + 1 != cells.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--frames_file line ", number, ": expected \"timestamp,label,x,y,z[,confidence]\", got \"",
        text, "\""));
  }
  PointLine out;
  out.timestamp = numbers[0];
  out.point.set_label(std::string(absl::StripAsciiWhitespace(cells[1])));
  *out.point.mutable_position() = MakeVector3(numbers[1], numbers[2], numbers[3]);
  if (numbers.size() == 5) out.point.set_confidence(numbers[4]);
  return out;
}

std::vector<std::string> FrameHeader(const v1::EstimatePoseResponse& first) {
  std::vector<std::string> header = {"timestamp", "outcome", "bone_length_residual", "outliers",
                                     "processing_us"};
  for (const std::string& site : first.site_names()) {
    for (const char* axis : {"_x", "_y", "_z"}) header.push_back(site + axis);
  }
  return header;
}

std::vector<std::string> FrameCells(const v1::FittedFrame& frame, int sites) {
  int outliers = 0;
  for (const auto& observation : frame.observations()) outliers += observation.outlier();
  std::string outcome = v1::FrameOutcome_Name(frame.outcome());
  std::vector<std::string> cells = {Number(frame.timestamp()),
                                    std::string(absl::StripPrefix(outcome, "FRAME_OUTCOME_")),
                                    absl::StrFormat("%.3e", frame.bone_length_residual()),
                                    absl::StrCat(outliers),
                                    absl::StrFormat("%.1f", frame.processing_seconds() * 1e6)};
  for (int k = 0; k < sites; ++k) {
    if (k < frame.sites_size()) {
      for (double c : {frame.sites(k).x(), frame.sites(k).y(), frame.sites(k).z()}) {
        cells.push_back(absl::StrFormat("%.10f", c));
      }
    } else {
      cells.insert(cells.end(), 3, "");
    }
  }
  return cells;
}

// Streams the frames of the input one at a time (write a frame, read its answer), so that a
// live source piped into ikctl gets each answer as soon as it exists.
class PoseReplay {
 public:
  PoseReplay(PoseStream& stream, Format format) : stream_(stream), format_(format) {}

  // False when the stream broke (Finish says why).
  bool Send(v1::PoseFrame& frame) {
    if (frame.points_size() == 0) return true;
    v1::EstimatePoseRequest request;
    *request.mutable_frame() = std::move(frame);
    frame.Clear();
    v1::EstimatePoseResponse response;
    if (!stream_.Write(request) || !stream_.Read(&response)) return false;
    Print(response);
    Remember(response, request.frame());
    return true;
  }

  // Draws the last frame that has sites (--svg); OK when there is none to draw or no --svg.
  absl::Status Draw(const std::string& path, SweepPlot::View view) const {
    if (path.empty() || last_fitted_.sites_size() == 0) return absl::OkStatus();
    return PosePlot(view).WriteFile(path, last_fitted_, bones_, last_observed_);
  }

 private:
  void Print(const v1::EstimatePoseResponse& response) {
    if (format_ == Format::kJson) {
      std::cout << ToJson(response, /*multiline=*/false) << std::endl;
      return;
    }
    if (response.site_names_size() > 0) {
      sites_ = response.site_names_size();
      TablePrinter::PrintLine(std::cout, FrameHeader(response), StyleOf(format_));
    }
    TablePrinter::PrintLine(std::cout, FrameCells(response.frame(), sites_), StyleOf(format_));
    std::cout.flush();
  }

  void Remember(const v1::EstimatePoseResponse& response, const v1::PoseFrame& observed) {
    if (response.bones_size() > 0) bones_.assign(response.bones().begin(), response.bones().end());
    if (response.frame().sites_size() == 0) return;
    last_fitted_ = response.frame();
    last_observed_ = observed;
  }

  PoseStream& stream_;
  Format format_;
  int sites_ = 0;
  std::vector<v1::SkeletonBone> bones_;
  v1::FittedFrame last_fitted_;
  v1::PoseFrame last_observed_;
};

}  // namespace

int EstimatePoseCommand(std::shared_ptr<grpc::Channel> channel) {
  auto format = OutputFormat(Format::kCsv);
  if (!format.ok()) return InputError(format.status());
  auto config = PoseConfigFromFlags();
  if (!config.ok()) return InputError(config.status());
  auto view = SweepPlot::ParseView(absl::GetFlag(FLAGS_svg_view));
  if (!view.ok()) return InputError(view.status());
  const std::string path = absl::GetFlag(FLAGS_frames_file);
  std::ifstream file;
  if (path != "-") {
    file.open(path);
    if (!file) return InputError(absl::NotFoundError(absl::StrCat("cannot read ", path)));
  }
  std::istream& input = path == "-" ? std::cin : file;

  auto stub = v1::PoseService::NewStub(channel);
  grpc::ClientContext context;
  PrepareContext(context);
  auto stream = stub->EstimatePose(&context);
  v1::EstimatePoseRequest first;
  *first.mutable_config() = *config;
  bool open = stream->Write(first);
  PoseReplay replay(*stream, *format);
  v1::PoseFrame frame;
  std::string line;
  int number = 0;
  while (open && std::getline(input, line)) {
    auto point = ParsePointLine(line, ++number);
    if (!point.ok()) {
      context.TryCancel();
      stream->Finish();
      return InputError(point.status());
    }
    if (!point->has_value()) continue;
    if (frame.points_size() > 0 && (*point)->timestamp != frame.timestamp()) {
      open = replay.Send(frame);
    }
    frame.set_timestamp((*point)->timestamp);
    *frame.add_points() = (*point)->point;
  }
  if (open) replay.Send(frame);
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  if (!status.ok()) return RpcError(status);
  absl::Status drawn = replay.Draw(absl::GetFlag(FLAGS_svg), *view);
  return drawn.ok() ? kExitOk : InputError(drawn);
}

}  // namespace ikd::clients
