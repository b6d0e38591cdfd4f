// ikctl: command-line client of the ikd gRPC service (models, single solves, trajectories,
// health). `ikctl --help` lists the commands with an example each.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "client_util.h"
#include "connect_flags.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "ikctl_common.h"
#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "ikd/v1/model_service.grpc.pb.h"
#include "svg_plot.h"
#include "table_printer.h"

ABSL_FLAG(std::string, arm, "", "solve/trajectory: stored arm, \"ID\" or \"arms/ID\"");
ABSL_FLAG(std::string, arm_file, "", "solve/trajectory: inline arm from a JSON file");
ABSL_FLAG(std::string, scene, "", "solve/trajectory: stored scene, \"ID\" or \"scenes/ID\"");
ABSL_FLAG(std::string, scene_file, "", "solve/trajectory: inline scene from a JSON file");
ABSL_FLAG(std::string, target, "", "solve: hand target x,y,z (m, world frame)");
ABSL_FLAG(std::string, orientation, "",
          "solve/trajectory/track, industrial arms: tool orientation x,y,z,w (full-pose targets)");
ABSL_FLAG(std::string, line, "", "trajectory: straight hand path x0,y0,z0:x1,y1,z1");
ABSL_FLAG(std::string, waypoints_file, "",
          "trajectory: timed waypoints, a JSON ikd.v1.WaypointPath "
          "({\"waypoints\": [{\"time\": 0, \"position\": {\"x\": 1}}, ...]}; linear unless "
          "\"interpolation\" says otherwise)");
ABSL_FLAG(double, duration, 1.0, "trajectory --line: seconds from start to end");
ABSL_FLAG(double, period, 0.01,
          "trajectory: sample period; track: the controller's cycle, declared for admission "
          "(TrackConfig.period); seconds");
ABSL_FLAG(absl::Duration, track_deadline, absl::ZeroDuration(),
          "track: a target not answered within this long of being read comes back LATE, the "
          "arm braked from the last answer (TrackConfig.deadline; 0: none)");
ABSL_FLAG(uint64_t, seed, 0, "solve/trajectory: random seed (0: the server default)");
ABSL_FLAG(int32_t, trials, 0, "solve/trajectory: stochastic trials per sub-step (0: default)");
ABSL_FLAG(bool, explore, false,
          "solve/trajectory/track: run the trials also where the arm is clear of every margin "
          "(IkOptions.explore_unconstrained)");
ABSL_FLAG(std::string, solver, "",
          "solve/trajectory/track, industrial arms: auto, analytic (the closed form; refused for "
          "an arm without one) or numeric (IkOptions.solver; empty: the options' own, else auto)");
ABSL_FLAG(std::string, options_file, "",
          "solve/trajectory/track: IK options as a JSON ikd.v1.IkOptions (weights, margin, "
          "max_step_fraction, ...); --seed and --trials override its fields");
ABSL_FLAG(std::string, targets_file, "-",
          "track: hand targets, one \"time,x,y,z\" line each (s, m; '#' lines and a header "
          "ignored); \"-\" reads standard input, answering each line as it arrives");
ABSL_FLAG(std::string, svg, "",
          "solve/trajectory/track: also draw the arm's sweep, the hand path and the obstacles "
          "into this SVG file; pose: the last fitted frame (bones, sites, observations)");
ABSL_FLAG(std::string, svg_view, "auto", "--svg projection: auto, xy, xz or yz");
ABSL_FLAG(bool, wait_for_ready, false,
          "health: wait (up to --timeout) for the server to come up instead of failing at once");

namespace ikd::clients {
namespace {

constexpr char kUsage[] = R"(command-line client of the ikd gRPC service.

Usage: ikctl [--server=HOST:PORT] [--timeout=30s] [--format=json|csv|table] COMMAND ARGS...
A secured ikd: [--tls_ca=CA.pem [--tls_cert=C.pem --tls_key=C.key]] [--token_file=F|--token=T]

Commands, an example each:
  health                        ikctl health --wait_for_ready --timeout=20s
  arms create ID FILE.json|-    ikctl arms create demo deploy/models/demo.arm.json
  arms get NAME                 ikctl arms get demo
  arms list                     ikctl arms list --format=csv
  arms update NAME FILE.json    ikctl arms update demo arm.json --etag=<etag from get>
  arms delete NAME              ikctl arms delete demo
  arms import-urdf ID FILE      ikctl arms import-urdf ur5 ur5.urdf --base_link=base_link
                                  --tip_link=tool0 [--tool=x,y,z] [--mesh_dir=meshes/]: an
                                  industrial arm (printed without the mesh contents)
  scenes create ID FILE.json|-  ikctl scenes create demo deploy/models/demo.scene.json
  scenes get|list|update|delete as for arms: ikctl scenes get demo
  skeletons create|get|list|update|delete   as for arms (a SkeletonSpec for PoseService)
  scenes edit NAME FILE.json    ikctl scenes edit demo ops.json   (an EditSceneRequest:
                                {"operations": [{"operation": "OPERATION_MOVE",
                                "obstacle_id": "ball", "translation": {"x": 0.1}}]})
  solve                         ikctl solve --arm=demo --scene=demo --target=0.9,0.5,0
  trajectory                    ikctl trajectory --arm=demo --scene=demo
                                  --line=1.1,0.3,0:0.6,0.9,0 --duration=1 --period=0.05
                                  --svg=sweep.svg
                                ikctl trajectory --arm_file=arm.json --waypoints_file=path.json
  track                         ikctl track --arm=demo --scene=demo --targets_file=targets.csv
                                  (lines "time,x,y,z"; "-" or no file: standard input, live)
  pendulum                      ikctl pendulum --lengths=1,1 --angles=1.5,0 --dt=1e-3
                                  --steps=5000 --stride=100 --method=rattle
  chain                         ikctl chain --shape=helix --sites=100 --bending=1 --dt=0.05
                                  --steps=1000 --method=milc
                                ikctl chain --request_file=step_chain_request.json
  pose                          ikctl pose --frames_file=points.csv [--skeleton_file=s.json]
                                  (lines "timestamp,label,x,y,z[,confidence]"; default
                                  skeleton: Human17)

Models, options and requests are files in protobuf's JSON mapping of proto/ikd/v1 (starting
with '{') or in protobuf text format (a textproto): an Arm (Scene) as `get` prints it, or a
bare ArmSpec (SceneSpec). NAME is "ID" or "arms/ID" ("scenes/ID").
trajectory and track print one line per sample (time, status, hand error, clearance, joint
positions); trajectory ends with a "# summary" line. pendulum and chain print one line per
frame, pose one line per fitted frame. Errors go to stderr with the gRPC code, message and
every field violation; the exit status is 1 for an RPC error, 2 for bad usage or input.)";

// --orientation as a wire quaternion (x, y, z, w); nothing when the flag is empty.
absl::StatusOr<std::optional<v1::Quaternion>> OrientationFromFlags() {
  const std::string text = absl::GetFlag(FLAGS_orientation);
  if (text.empty()) return std::nullopt;
  auto q = ParseNumbers(text, "--orientation");
  if (!q.ok()) return q.status();
  if (q->size() != 4) return absl::InvalidArgumentError("--orientation needs x,y,z,w");
  v1::Quaternion out;
  out.set_x((*q)[0]);
  out.set_y((*q)[1]);
  out.set_z((*q)[2]);
  out.set_w((*q)[3]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Health

int Health(std::shared_ptr<grpc::Channel> channel) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  PrepareContext(context);
  context.set_wait_for_ready(absl::GetFlag(FLAGS_wait_for_ready));
  grpc::health::v1::HealthCheckRequest request;  // service "": the server as a whole
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) return RpcError(status);
  std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status())
            << "\n";
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? kExitOk
                                                                              : kExitRpcError;
}

// ---------------------------------------------------------------------------------------------
// Kinematics

absl::StatusOr<v1::ArmRef> ArmFromFlags() {
  const std::string name = absl::GetFlag(FLAGS_arm);
  const std::string file = absl::GetFlag(FLAGS_arm_file);
  if (name.empty() == file.empty()) {
    return absl::InvalidArgumentError("give exactly one of --arm=NAME and --arm_file=FILE");
  }
  v1::ArmRef ref;
  if (!name.empty()) {
    ref.set_name(ResourceName("arms", name));
    return ref;
  }
  auto spec = LoadArmSpec(file);
  if (!spec.ok()) return spec.status();
  *ref.mutable_spec() = *spec;
  return ref;
}

// No scene flag: free space (an unset SceneRef).
absl::StatusOr<v1::SceneRef> SceneFromFlags() {
  const std::string name = absl::GetFlag(FLAGS_scene);
  const std::string file = absl::GetFlag(FLAGS_scene_file);
  v1::SceneRef ref;
  if (!name.empty() && !file.empty()) {
    return absl::InvalidArgumentError("give at most one of --scene=NAME and --scene_file=FILE");
  }
  if (!name.empty()) ref.set_name(ResourceName("scenes", name));
  if (!file.empty()) {
    auto spec = LoadSceneSpec(file);
    if (!spec.ok()) return spec.status();
    *ref.mutable_spec() = *spec;
  }
  return ref;
}

// --options_file first, then --seed, --trials, --explore and --solver where they are given.
absl::StatusOr<v1::IkOptions> OptionsFromFlags() {
  v1::IkOptions options;
  const std::string path = absl::GetFlag(FLAGS_options_file);
  if (!path.empty()) {
    absl::Status loaded = LoadMessageFile(path, &options);
    if (!loaded.ok()) return loaded;
  }
  if (absl::GetFlag(FLAGS_seed) != 0) options.set_seed(absl::GetFlag(FLAGS_seed));
  if (absl::GetFlag(FLAGS_trials) != 0) options.set_trials_per_step(absl::GetFlag(FLAGS_trials));
  if (absl::GetFlag(FLAGS_explore)) options.set_explore_unconstrained(true);
  const std::string solver = absl::GetFlag(FLAGS_solver);
  if (!solver.empty()) {
    v1::IkSolver value;
    if (!v1::IkSolver_Parse(absl::StrCat("IK_SOLVER_", absl::AsciiStrToUpper(solver)), &value) ||
        value == v1::IK_SOLVER_UNSPECIFIED) {
      return absl::InvalidArgumentError(
          absl::StrCat("--solver must be auto, analytic or numeric, got \"", solver, "\""));
    }
    options.set_solver(value);
  }
  return options;
}

std::string ClearanceText(const v1::JointState& state, Format format) {
  if (state.has_min_clearance()) return Number(state.min_clearance());
  return format == Format::kCsv ? "" : "-";
}

std::vector<std::string> SampleHeader(
    const google::protobuf::RepeatedPtrField<std::string>& joints) {
  std::vector<std::string> header = {"time", "status", "hand_error", "min_clearance"};
  header.insert(header.end(), joints.begin(), joints.end());
  return header;
}

std::vector<std::string> SampleCells(const v1::JointState& state, Format format) {
  std::vector<std::string> cells = {Number(state.time()), StepStatusName(state.status()),
                                    absl::StrFormat("%.3e", state.hand_error()),
                                    ClearanceText(state, format)};
  for (double position : state.positions()) cells.push_back(absl::StrFormat("%.6f", position));
  return cells;
}

// The obstacles to draw for --svg: the inline scene, or the stored one fetched by name.
absl::StatusOr<v1::SceneSpec> SceneToDraw(const std::shared_ptr<grpc::Channel>& channel,
                                          const v1::SceneRef& ref) {
  if (ref.has_spec()) return ref.spec();
  if (ref.name().empty()) return v1::SceneSpec();
  return FetchSceneSpec(channel, ref.name(), absl::GetFlag(FLAGS_timeout));
}

// Collects the states of a command and, when --svg is given, draws them at the end.
class SvgOutput {
 public:
  // Checks --svg_view up front, so that a bad flag fails before any call.
  static absl::StatusOr<SvgOutput> FromFlags() {
    auto view = SweepPlot::ParseView(absl::GetFlag(FLAGS_svg_view));
    if (!view.ok()) return view.status();
    return SvgOutput(absl::GetFlag(FLAGS_svg), *view);
  }

  void Add(const v1::JointState& state) {
    if (!path_.empty()) plot_.AddState(state);
  }

  // kExitOk, or the exit code of the failure (reported on stderr).
  int Write(const std::shared_ptr<grpc::Channel>& channel, const v1::SceneRef& scene) {
    if (path_.empty()) return kExitOk;
    auto spec = SceneToDraw(channel, scene);
    if (!spec.ok()) return InputError(spec.status());
    plot_.AddScene(*spec);
    absl::Status written = plot_.WriteFile(path_);
    return written.ok() ? kExitOk : InputError(written);
  }

 private:
  SvgOutput(std::string path, SweepPlot::View view) : path_(std::move(path)), plot_(view) {}
  std::string path_;
  SweepPlot plot_;
};

int Solve(std::shared_ptr<grpc::Channel> channel) {
  auto format = OutputFormat(Format::kJson);
  if (!format.ok()) return InputError(format.status());
  auto svg = SvgOutput::FromFlags();
  if (!svg.ok()) return InputError(svg.status());
  v1::SolveRequest request;
  auto arm = ArmFromFlags();
  if (!arm.ok()) return InputError(arm.status());
  auto scene = SceneFromFlags();
  if (!scene.ok()) return InputError(scene.status());
  auto target = ParseVector3(absl::GetFlag(FLAGS_target), "--target");
  if (!target.ok()) return InputError(target.status());
  *request.mutable_arm() = *arm;
  *request.mutable_scene() = *scene;
  *request.mutable_target() = *target;
  auto orientation = OrientationFromFlags();
  if (!orientation.ok()) return InputError(orientation.status());
  if (*orientation) *request.mutable_target_orientation() = **orientation;
  auto options = OptionsFromFlags();
  if (!options.ok()) return InputError(options.status());
  *request.mutable_options() = *options;

  auto stub = v1::KinematicsService::NewStub(channel);
  grpc::ClientContext context;
  PrepareContext(context);
  v1::SolveResponse response;
  grpc::Status status = stub->Solve(&context, request, &response);
  if (!status.ok()) return RpcError(status);
  if (*format == Format::kJson) {
    std::cout << ToJson(response);
  } else {
    TablePrinter table(SampleHeader(response.joint_names()), StyleOf(*format));
    table.AddRow(SampleCells(response.state(), *format));
    table.Print(std::cout);
  }
  svg->Add(response.state());
  return svg->Write(channel, *scene);
}

absl::StatusOr<v1::Trajectory> TrajectoryFromFlags() {
  const std::string line = absl::GetFlag(FLAGS_line);
  const std::string waypoints_file = absl::GetFlag(FLAGS_waypoints_file);
  if (line.empty() == waypoints_file.empty()) {
    return absl::InvalidArgumentError(
        "give exactly one of --line=x0,y0,z0:x1,y1,z1 and --waypoints_file=FILE");
  }
  v1::Trajectory trajectory;
  if (!line.empty()) {
    auto ends = ParseSegment(line, "--line");
    if (!ends.ok()) return ends.status();
    *trajectory.mutable_line()->mutable_from() = ends->first;
    *trajectory.mutable_line()->mutable_to() = ends->second;
    trajectory.mutable_line()->set_duration(absl::GetFlag(FLAGS_duration));
    return trajectory;
  }
  v1::WaypointPath* path = trajectory.mutable_waypoints();
  absl::Status loaded = LoadMessageFile(waypoints_file, path);
  if (!loaded.ok()) return loaded;
  if (path->interpolation() == v1::INTERPOLATION_UNSPECIFIED) {
    path->set_interpolation(v1::INTERPOLATION_LINEAR);
  }
  return trajectory;
}

std::string SummaryLine(const v1::TrajectorySummary& summary) {
  std::string line = absl::StrCat(
      "# summary samples=", summary.samples(), " fraction_reached=",
      Number(summary.fraction_reached()), " clamped=", summary.clamped(),
      " in_collision=", summary.in_collision(), " limit_blocked=", summary.limit_blocked(),
      " max_hand_error=", absl::StrFormat("%.3e", summary.max_hand_error()),
      " max_constraint_residual=", absl::StrFormat("%.3e", summary.max_constraint_residual()));
  if (summary.has_min_clearance()) {
    absl::StrAppend(&line, " min_clearance=", Number(summary.min_clearance()));
  }
  if (summary.not_converged() > 0 || summary.velocity_limited() > 0 ||
      summary.max_rotation_error() > 0) {  // industrial arms
    absl::StrAppend(&line, " not_converged=", summary.not_converged(), " velocity_limited=",
                    summary.velocity_limited(), " max_rotation_error=",
                    absl::StrFormat("%.3e", summary.max_rotation_error()));
  }
  if (summary.feasible_time_scaling() > 0) {  // the arm declares rate limits
    absl::StrAppend(&line, " velocity_limited=", summary.velocity_limited(),
                    " acceleration_limited=", summary.acceleration_limited(),
                    " feasible_time_scaling=", Number(summary.feasible_time_scaling()));
  }
  absl::StrAppend(&line, " solve_seconds=", Number(summary.solve_seconds()));
  return line;
}

// Prints the stream as it arrives: csv/table one line per sample, json one object per message.
void PrintTrajectoryMessage(const v1::SolveTrajectoryResponse& response, Format format) {
  if (format == Format::kJson) {
    std::cout << ToJson(response, /*multiline=*/false) << "\n";
    return;
  }
  if (response.joint_names_size() > 0) {
    TablePrinter::PrintLine(std::cout, SampleHeader(response.joint_names()), StyleOf(format));
  }
  if (response.has_sample()) {
    TablePrinter::PrintLine(std::cout, SampleCells(response.sample(), format), StyleOf(format));
  } else if (response.has_summary()) {
    std::cout << SummaryLine(response.summary()) << "\n";
  }
}

int SolveTrajectory(std::shared_ptr<grpc::Channel> channel) {
  auto format = OutputFormat(Format::kCsv);
  if (!format.ok()) return InputError(format.status());
  auto svg = SvgOutput::FromFlags();
  if (!svg.ok()) return InputError(svg.status());
  v1::SolveTrajectoryRequest request;
  auto arm = ArmFromFlags();
  if (!arm.ok()) return InputError(arm.status());
  auto scene = SceneFromFlags();
  if (!scene.ok()) return InputError(scene.status());
  auto trajectory = TrajectoryFromFlags();
  if (!trajectory.ok()) return InputError(trajectory.status());
  *request.mutable_arm() = *arm;
  *request.mutable_scene() = *scene;
  *request.mutable_trajectory() = *trajectory;
  request.set_sample_period(absl::GetFlag(FLAGS_period));
  auto orientation = OrientationFromFlags();
  if (!orientation.ok()) return InputError(orientation.status());
  if (*orientation) *request.mutable_tool_orientation() = **orientation;
  auto options = OptionsFromFlags();
  if (!options.ok()) return InputError(options.status());
  *request.mutable_options() = *options;

  auto stub = v1::KinematicsService::NewStub(channel);
  grpc::ClientContext context;
  PrepareContext(context);
  auto reader = stub->SolveTrajectory(&context, request);
  v1::SolveTrajectoryResponse response;
  while (reader->Read(&response)) {
    PrintTrajectoryMessage(response, *format);
    if (response.has_sample()) svg->Add(response.sample());
  }
  std::cout.flush();
  grpc::Status status = reader->Finish();
  if (!status.ok()) return RpcError(status);
  return svg->Write(channel, *scene);
}

// One "time,x,y,z" line of --targets_file; nothing for blank, '#' and header lines.
// A header ("time,x,y,z") may only come before the first target.
absl::StatusOr<std::optional<v1::TrackTarget>> ParseTargetLine(const std::string& line,
                                                               int line_number,
                                                               bool header_allowed) {
  const absl::string_view text = absl::StripAsciiWhitespace(line);
  if (text.empty() || text[0] == '#') return std::nullopt;
  if (header_allowed && absl::ascii_isalpha(text[0])) return std::nullopt;
  absl::StatusOr<std::vector<double>> values = ParseNumbers(std::string(text), "a target line");
  if (!values.ok() || values->size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--targets_file line ", line_number, ": expected \"time,x,y,z\", got \"", text, "\""));
  }
  v1::TrackTarget target;
  target.set_time((*values)[0]);
  *target.mutable_position() = MakeVector3((*values)[1], (*values)[2], (*values)[3]);
  return target;
}

void PrintTrackResponse(const v1::TrackResponse& response, Format format) {
  if (format == Format::kJson) {
    std::cout << ToJson(response, /*multiline=*/false) << std::endl;
    return;
  }
  if (response.joint_names_size() > 0) {
    TablePrinter::PrintLine(std::cout, SampleHeader(response.joint_names()), StyleOf(format));
  }
  TablePrinter::PrintLine(std::cout, SampleCells(response.state(), format), StyleOf(format));
  std::cout.flush();  // a live controller reads each answer as soon as it exists
}

// Track is answered one state per target, in order: write a target, read its state, print it.
// Reading the targets one line at a time makes `ikctl track` usable live from a pipe.
int Track(std::shared_ptr<grpc::Channel> channel) {
  auto format = OutputFormat(Format::kCsv);
  if (!format.ok()) return InputError(format.status());
  auto svg = SvgOutput::FromFlags();
  if (!svg.ok()) return InputError(svg.status());
  v1::TrackRequest config;
  auto arm = ArmFromFlags();
  if (!arm.ok()) return InputError(arm.status());
  auto scene = SceneFromFlags();
  if (!scene.ok()) return InputError(scene.status());
  *config.mutable_config()->mutable_arm() = *arm;
  *config.mutable_config()->mutable_scene() = *scene;
  auto options = OptionsFromFlags();
  if (!options.ok()) return InputError(options.status());
  *config.mutable_config()->mutable_options() = *options;
  config.mutable_config()->set_period(absl::GetFlag(FLAGS_period));
  config.mutable_config()->set_deadline(absl::ToDoubleSeconds(absl::GetFlag(FLAGS_track_deadline)));
  auto orientation = OrientationFromFlags();  // held by every target of the stream
  if (!orientation.ok()) return InputError(orientation.status());
  const std::string path = absl::GetFlag(FLAGS_targets_file);
  std::ifstream file;
  if (path != "-") {
    file.open(path);
    if (!file) return InputError(absl::NotFoundError(absl::StrCat("cannot read ", path)));
  }
  std::istream& input = path == "-" ? std::cin : file;

  auto stub = v1::KinematicsService::NewStub(channel);
  grpc::ClientContext context;
  PrepareContext(context);
  auto stream = stub->Track(&context);
  bool open = stream->Write(config);
  std::string line;
  int line_number = 0, targets = 0;
  while (open && std::getline(input, line)) {
    auto target = ParseTargetLine(line, ++line_number, /*header_allowed=*/targets == 0);
    if (!target.ok()) {
      context.TryCancel();
      stream->Finish();
      return InputError(target.status());
    }
    if (!target->has_value()) continue;
    ++targets;
    v1::TrackRequest request;
    *request.mutable_target() = **target;
    if (*orientation) *request.mutable_target()->mutable_orientation() = **orientation;
    v1::TrackResponse response;
    open = stream->Write(request) && stream->Read(&response);
    if (!open) break;
    PrintTrackResponse(response, *format);
    svg->Add(response.state());
  }
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  if (!status.ok()) return RpcError(status);
  return svg->Write(channel, *scene);
}

// ---------------------------------------------------------------------------------------------

int Dispatch(const Args& positional) {
  if (positional.empty() || positional[0] == "help") {
    std::cerr << "ikctl: " << kUsage << "\n";
    return positional.empty() ? kExitUsage : kExitOk;
  }
  const std::string& command = positional[0];
  absl::StatusOr<std::shared_ptr<grpc::Channel>> connected =
      ConnectFromFlags(absl::GetFlag(FLAGS_server));
  if (!connected.ok()) return InputError(connected.status());
  std::shared_ptr<grpc::Channel> channel = *std::move(connected);
  const bool is_model = command == "arms" || command == "scenes" || command == "skeletons";
  if (is_model && positional.size() < 2) return UsageError(command + " needs a verb");
  const Args rest = is_model ? Args(positional.begin() + 2, positional.end()) : Args{};
  if (is_model) return ModelCommand(channel, command, positional[1], rest);
  if (positional.size() > 1) return UsageError(command + " takes no arguments, only flags");
  if (command == "health") return Health(channel);
  if (command == "solve") return Solve(channel);
  if (command == "trajectory") return SolveTrajectory(channel);
  if (command == "track") return Track(channel);
  if (command == "pendulum") return StepPendulumCommand(channel);
  if (command == "chain") return StepChainCommand(channel);
  if (command == "pose") return EstimatePoseCommand(channel);
  return UsageError("unknown command \"" + command + "\"");
}

}  // namespace
}  // namespace ikd::clients

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(ikd::clients::kUsage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  // args[0] is the program; the rest are the command and its operands.
  return ikd::clients::Dispatch(ikd::clients::Args(args.begin() + 1, args.end()));
}
