// ikctl pendulum / chain: SimulationService.StepPendulum and StepChain from flags (the common
// cases) or from a whole request in JSON (--request_file), frames printed as they arrive.
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client_util.h"
#include "ikctl_common.h"
#include "ikd/v1/simulation_service.grpc.pb.h"

ABSL_FLAG(std::string, request_file, "",
          "pendulum/chain: the whole StepPendulumRequest / StepChainRequest, JSON or "
          "textproto (the other simulation flags are then ignored)");
ABSL_FLAG(std::string, method, "rattle", "pendulum/chain: shake, rattle, milc, matrix or auto");
ABSL_FLAG(double, dt, 1e-3, "pendulum/chain: time step, s");
ABSL_FLAG(int64_t, steps, 1000, "pendulum/chain: steps");
ABSL_FLAG(int64_t, stride, 10, "pendulum/chain: one frame every STRIDE steps (and the last)");
ABSL_FLAG(double, tolerance, 0, "pendulum/chain: relative constraint tolerance (0: 1e-10)");
ABSL_FLAG(std::string, lengths, "1", "pendulum: rod lengths, m, comma-separated (n bobs)");
ABSL_FLAG(std::string, masses, "", "pendulum: bob masses, kg (default: 1 each)");
ABSL_FLAG(std::string, angles, "0.5", "pendulum: initial angles, rad (planar n, spatial 2 n)");
ABSL_FLAG(std::string, angular_velocities, "", "pendulum: rad/s, as --angles (default: 0)");
ABSL_FLAG(bool, planar, true, "pendulum: swing in a vertical plane (false: spatial)");
ABSL_FLAG(std::string, gravity, "",
          "pendulum: g in m/s^2 (default 9.81); chain: gravity vector x,y,z (default none)");
ABSL_FLAG(std::string, shape, "helix", "chain: generated chain shape: straight, helix, ring, coil");
ABSL_FLAG(int32_t, sites, 100, "chain: number of sites of the generated chain");
ABSL_FLAG(double, link, 1.0, "chain: link length, m");
ABSL_FLAG(double, helix_radius, 5.0, "chain --shape=helix: radius, m (Bailey's helix)");
ABSL_FLAG(double, helix_pitch, 2.0, "chain --shape=helix: rise per turn, m");
ABSL_FLAG(std::string, fixed_sites, "", "chain: indices of sites held fixed, comma-separated");
ABSL_FLAG(double, bending, 0, "chain: bending stiffness A (J m) over every interior site");
ABSL_FLAG(double, brownian_diffusion, 0,
          "chain: > 0 runs a Brownian (Kramers) walk with this diffusion constant, m^2/s");
ABSL_DECLARE_FLAG(uint64_t, seed);

namespace ikd::clients {
namespace {

absl::StatusOr<v1::ConstraintMethod> MethodFromFlag() {
  const std::string method = absl::GetFlag(FLAGS_method);
  if (method == "shake") return v1::CONSTRAINT_METHOD_SHAKE;
  if (method == "rattle") return v1::CONSTRAINT_METHOD_RATTLE;
  if (method == "milc") return v1::CONSTRAINT_METHOD_MILC_SHAKE;
  if (method == "matrix") return v1::CONSTRAINT_METHOD_MATRIX;
  if (method == "auto") return v1::CONSTRAINT_METHOD_AUTO;
  return absl::InvalidArgumentError(absl::StrCat(
      "--method must be shake, rattle, milc, matrix or auto, got \"", method, "\""));
}

absl::StatusOr<v1::ProjectionSettings> ProjectionFromFlags() {
  auto method = MethodFromFlag();
  if (!method.ok()) return method.status();
  v1::ProjectionSettings settings;
  settings.set_method(*method);
  settings.set_tolerance(absl::GetFlag(FLAGS_tolerance));
  return settings;
}

// Fills `request` from --request_file (JSON or textproto); false when the flag is not given.
absl::StatusOr<bool> RequestFromFile(google::protobuf::Message* request) {
  const std::string path = absl::GetFlag(FLAGS_request_file);
  if (path.empty()) return false;
  absl::Status loaded = LoadMessageFile(path, request);
  if (!loaded.ok()) return loaded;
  return true;
}

absl::StatusOr<v1::StepPendulumRequest> PendulumFromFlags() {
  v1::StepPendulumRequest request;
  auto lengths = ParseNumbers(absl::GetFlag(FLAGS_lengths), "--lengths");
  auto masses = ParseNumbers(absl::GetFlag(FLAGS_masses), "--masses");
  auto angles = ParseNumbers(absl::GetFlag(FLAGS_angles), "--angles");
  auto rates = ParseNumbers(absl::GetFlag(FLAGS_angular_velocities), "--angular_velocities");
  auto gravity = ParseNumbers(absl::GetFlag(FLAGS_gravity), "--gravity");
  auto projection = ProjectionFromFlags();
  for (const absl::Status& status : {lengths.status(), masses.status(), angles.status(),
                                     rates.status(), gravity.status(), projection.status()}) {
    if (!status.ok()) return status;
  }
  if (gravity->size() > 1) return absl::InvalidArgumentError("pendulum --gravity is one number, g");
  if (masses->empty()) masses->assign(lengths->size(), 1.0);
  if (rates->empty()) rates->assign(angles->size(), 0.0);
  request.set_planar(absl::GetFlag(FLAGS_planar));
  request.mutable_lengths()->Add(lengths->begin(), lengths->end());
  request.mutable_masses()->Add(masses->begin(), masses->end());
  request.mutable_angles()->Add(angles->begin(), angles->end());
  request.mutable_angular_velocities()->Add(rates->begin(), rates->end());
  if (!gravity->empty()) request.set_gravity(gravity->front());
  *request.mutable_projection() = *projection;
  request.set_dt(absl::GetFlag(FLAGS_dt));
  request.set_steps(absl::GetFlag(FLAGS_steps));
  request.set_stride(absl::GetFlag(FLAGS_stride));
  return request;
}

absl::StatusOr<v1::GeneratedChain::Shape> ShapeFromFlag() {
  const std::string shape = absl::GetFlag(FLAGS_shape);
  if (shape == "straight") return v1::GeneratedChain::SHAPE_STRAIGHT;
  if (shape == "helix") return v1::GeneratedChain::SHAPE_HELIX;
  if (shape == "ring") return v1::GeneratedChain::SHAPE_RING;
  if (shape == "coil") return v1::GeneratedChain::SHAPE_COIL;
  return absl::InvalidArgumentError(
      absl::StrCat("--shape must be straight, helix, ring or coil, got \"", shape, "\""));
}

// Bending over every interior site of the generated open chain (ring: every site).
void AddBending(const v1::GeneratedChain& chain, double stiffness, v1::Potentials* potentials) {
  v1::Bending* bending = potentials->mutable_bending();
  bending->set_stiffness(stiffness);
  bending->set_segment_length(chain.link());
  const int n = chain.num_sites();
  const bool ring = chain.shape() == v1::GeneratedChain::SHAPE_RING;
  for (int b = ring ? 0 : 1; b < (ring ? n : n - 1); ++b) {
    v1::SiteTriple* triple = bending->add_triples();
    triple->set_a((b + n - 1) % n);
    triple->set_b(b);
    triple->set_c((b + 1) % n);
  }
}

absl::StatusOr<v1::StepChainRequest> ChainFromFlags() {
  v1::StepChainRequest request;
  auto shape = ShapeFromFlag();
  auto fixed = ParseNumbers(absl::GetFlag(FLAGS_fixed_sites), "--fixed_sites");
  auto gravity = ParseNumbers(absl::GetFlag(FLAGS_gravity), "--gravity");
  auto projection = ProjectionFromFlags();
  for (const absl::Status& status :
       {shape.status(), fixed.status(), gravity.status(), projection.status()}) {
    if (!status.ok()) return status;
  }
  v1::GeneratedChain* chain = request.mutable_generated();
  chain->set_shape(*shape);
  chain->set_num_sites(absl::GetFlag(FLAGS_sites));
  chain->set_link(absl::GetFlag(FLAGS_link));
  chain->set_radius(absl::GetFlag(FLAGS_helix_radius));
  chain->set_pitch(absl::GetFlag(FLAGS_helix_pitch));
  chain->set_seed(absl::GetFlag(FLAGS_seed));
  for (double site : *fixed) chain->add_fixed_sites(static_cast<int32_t>(site));
  const double diffusion = absl::GetFlag(FLAGS_brownian_diffusion);
  if (diffusion > 0) {
    request.mutable_brownian()->set_diffusion(diffusion);
    request.mutable_brownian()->set_seed(absl::GetFlag(FLAGS_seed));
  } else {
    if (gravity->size() == 3) {
      *request.mutable_potentials()->mutable_gravity() =
          MakeVector3((*gravity)[0], (*gravity)[1], (*gravity)[2]);
    } else if (!gravity->empty()) {
      return absl::InvalidArgumentError("chain --gravity is a vector x,y,z");
    }
    if (absl::GetFlag(FLAGS_bending) != 0) {
      AddBending(*chain, absl::GetFlag(FLAGS_bending), request.mutable_potentials());
    }
  }
  *request.mutable_projection() = *projection;
  request.set_dt(absl::GetFlag(FLAGS_dt));
  request.set_steps(absl::GetFlag(FLAGS_steps));
  request.set_stride(absl::GetFlag(FLAGS_stride));
  return request;
}

std::vector<std::string> PendulumHeader(int angles) {
  std::vector<std::string> header = {"step", "time"};
  for (int k = 0; k < angles; ++k) header.push_back(absl::StrCat("angle_", k));
  for (const char* column : {"kinetic_energy", "potential_energy", "total_energy",
                             "max_relative_violation", "iterations"}) {
    header.push_back(column);
  }
  return header;
}

std::vector<std::string> PendulumCells(const v1::PendulumFrame& frame) {
  std::vector<std::string> cells = {absl::StrCat(frame.step()), Number(frame.time())};
  for (double angle : frame.angles()) cells.push_back(absl::StrFormat("%.9f", angle));
  cells.push_back(absl::StrFormat("%.12g", frame.kinetic_energy()));
  cells.push_back(absl::StrFormat("%.12g", frame.potential_energy()));
  cells.push_back(absl::StrFormat("%.12g", frame.total_energy()));
  cells.push_back(absl::StrFormat("%.3e", frame.max_relative_violation()));
  cells.push_back(absl::StrCat(frame.iterations()));
  return cells;
}

std::vector<std::string> ChainHeader() {
  return {"step", "time", "kinetic_energy", "potential_energy", "total_energy",
          "max_relative_violation", "iterations", "rejected_steps"};
}

std::vector<std::string> ChainCells(const v1::ChainFrame& frame) {
  return {absl::StrCat(frame.step()),
          Number(frame.time()),
          absl::StrFormat("%.12g", frame.kinetic_energy()),
          absl::StrFormat("%.12g", frame.potential_energy()),
          absl::StrFormat("%.12g", frame.kinetic_energy() + frame.potential_energy()),
          absl::StrFormat("%.3e", frame.max_relative_violation()),
          absl::StrCat(frame.iterations()),
          absl::StrCat(frame.rejected_steps())};
}

// Streams the frames of `reader` to stdout: a header, then one line (or JSON object) per frame.
template <typename Frame, typename Reader, typename HeaderFn, typename CellsFn>
int PrintFrames(Reader& reader, Format format, HeaderFn header, CellsFn cells) {
  Frame frame;
  bool first = true;
  while (reader.Read(&frame)) {
    if (format == Format::kJson) {
      std::cout << ToJson(frame, /*multiline=*/false) << "\n";
    } else {
      if (first) TablePrinter::PrintLine(std::cout, header(frame), StyleOf(format));
      TablePrinter::PrintLine(std::cout, cells(frame), StyleOf(format));
    }
    first = false;
  }
  std::cout.flush();
  grpc::Status status = reader.Finish();
  return status.ok() ? kExitOk : RpcError(status);
}

}  // namespace

int StepPendulumCommand(std::shared_ptr<grpc::Channel> channel) {
  auto format = OutputFormat(Format::kCsv);
  if (!format.ok()) return InputError(format.status());
  v1::StepPendulumRequest request;
  auto from_file = RequestFromFile(&request);
  if (!from_file.ok()) return InputError(from_file.status());
  if (!*from_file) {
    auto from_flags = PendulumFromFlags();
    if (!from_flags.ok()) return InputError(from_flags.status());
    request = *std::move(from_flags);
  }
  auto stub = v1::SimulationService::NewStub(channel);
  grpc::ClientContext context;
  PrepareContext(context);
  auto reader = stub->StepPendulum(&context, request);
  return PrintFrames<v1::PendulumFrame>(
      *reader, *format, [](const v1::PendulumFrame& f) { return PendulumHeader(f.angles_size()); },
      PendulumCells);
}

int StepChainCommand(std::shared_ptr<grpc::Channel> channel) {
  auto format = OutputFormat(Format::kCsv);
  if (!format.ok()) return InputError(format.status());
  v1::StepChainRequest request;
  auto from_file = RequestFromFile(&request);
  if (!from_file.ok()) return InputError(from_file.status());
  if (!*from_file) {
    auto from_flags = ChainFromFlags();
    if (!from_flags.ok()) return InputError(from_flags.status());
    request = *std::move(from_flags);
  }
  auto stub = v1::SimulationService::NewStub(channel);
  grpc::ClientContext context;
  PrepareContext(context);
  auto reader = stub->StepChain(&context, request);
  return PrintFrames<v1::ChainFrame>(
      *reader, *format, [](const v1::ChainFrame&) { return ChainHeader(); }, ChainCells);
}

}  // namespace ikd::clients
