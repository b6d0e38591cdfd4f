// Metrics and access log end to end in process: the real server on 127.0.0.1:0 with /metrics on
// 127.0.0.1:0, scraped over HTTP with a plain socket, and the access log captured by a sink.
// Each test states the contract it checks (docs/operations.md, "Metrics and logs").
#include "metrics.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "ikd/v1/model_service.grpc.pb.h"
#include "ikd/v1/simulation_service.grpc.pb.h"
#include "model_store.h"
#include "server.h"
#include "server/service_test_util.h"

namespace ikd::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using test_util::PlanarArm;
using test_util::Vec;

// GET /metrics over HTTP/1.0 (the server closes the connection after the body).
std::string Scrape(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{10, 0};  // bounds a stuck server
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[8192];
      for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) response.append(buffer, n);
    }
  }
  close(fd);
  return response;
}

// The value of one series (`name{labels}` exactly as exposed, labels sorted by name), 0 when
// the series does not exist yet (children are created on first use).
double Value(const std::string& exposition, const std::string& series) {
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::strtod(line.c_str() + series.size() + 1, nullptr);
    }
  }
  return 0.0;
}

std::string Labels(const std::string& service, const std::string& method) {
  return absl::StrCat("{method=\"", method, "\",service=\"", service, "\"}");
}

std::string CodeLabels(const std::string& code, const std::string& service,
                       const std::string& method) {
  return absl::StrCat("{code=\"", code, "\",method=\"", method, "\",service=\"", service, "\"}");
}

google::protobuf::Struct ParseJson(const std::string& line) {
  google::protobuf::Struct parsed;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(line, &parsed).ok()) << line;
  return parsed;
}

// The value of `key`, found through reflection rather than Map's inline lookup: protobuf's
// headers lay Map out differently under ThreadSanitizer than Debian's uninstrumented library
// that filled it (the inline find crashed in the tsan stage).
const google::protobuf::Value* FindField(const google::protobuf::Struct& s,
                                         const std::string& key) {
  const google::protobuf::Reflection* reflection = s.GetReflection();
  const google::protobuf::FieldDescriptor* fields = s.GetDescriptor()->FindFieldByName("fields");
  for (int k = 0; k < reflection->FieldSize(s, fields); ++k) {
    const google::protobuf::Message& entry = reflection->GetRepeatedMessage(s, fields, k);
    const google::protobuf::Descriptor* type = entry.GetDescriptor();
    if (entry.GetReflection()->GetString(entry, type->FindFieldByName("key")) == key) {
      return static_cast<const google::protobuf::Value*>(
          &entry.GetReflection()->GetMessage(entry, type->FindFieldByName("value")));
    }
  }
  return nullptr;
}

std::string Field(const google::protobuf::Struct& s, const std::string& key) {
  const google::protobuf::Value* value = FindField(s, key);
  return value == nullptr ? "<missing>" : value->string_value();
}

double Number(const google::protobuf::Struct& s, const std::string& key) {
  const google::protobuf::Value* value = FindField(s, key);
  return value == nullptr ? -1.0 : value->number_value();
}

class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = NewMemoryModelStore();
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.pool.threads = 2;
    options.observability.metrics_listen = "127.0.0.1:0";
    options.observability.access_log = true;
    options.observability.access_log_sink = [this](std::string_view line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      log_.emplace_back(line);
    };
    auto server = IkdServer::Start(options, store_.get());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_NE(server_->metrics_port(), 0);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
    models_ = v1::ModelService::NewStub(channel_);
    kinematics_ = v1::KinematicsService::NewStub(channel_);
    simulation_ = v1::SimulationService::NewStub(channel_);
  }

  std::string Metrics() { return Scrape(server_->metrics_port()); }

  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }

  static void SetDeadline(grpc::ClientContext& context) {
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  }

  grpc::Status GetArm(const std::string& name) {
    grpc::ClientContext context;
    SetDeadline(context);
    v1::GetArmRequest request;
    request.set_name(name);
    v1::Arm arm;
    return models_->GetArm(&context, request, &arm);
  }

  grpc::Status ListArms() {
    grpc::ClientContext context;
    SetDeadline(context);
    v1::ListArmsResponse response;
    return models_->ListArms(&context, v1::ListArmsRequest(), &response);
  }

  // Declared before server_ so they outlive it: a cancelled stream's worker may write its
  // access-log line while the server shuts down after the test body has returned.
  std::mutex log_mu_;
  std::vector<std::string> log_;
  std::unique_ptr<ModelStore> store_;
  std::unique_ptr<IkdServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ModelService::Stub> models_;
  std::unique_ptr<v1::KinematicsService::Stub> kinematics_;
  std::unique_ptr<v1::SimulationService::Stub> simulation_;
};

constexpr char kModel[] = "ikd.v1.ModelService";

// Contract: counters rise by exactly the calls made, by method and code; errors count non-OK
// calls only; the latency histogram's count rises by the calls made.
TEST_F(MetricsTest, UnaryCallsAreCountedByMethodAndCode) {
  const std::string before = Metrics();
  ASSERT_THAT(before, HasSubstr("# TYPE ikd_worker_pool_threads gauge"));  // the scrape worked
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ListArms().ok());
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(GetArm("arms/missing").error_code(), grpc::StatusCode::NOT_FOUND);
  }
  const std::string after = Metrics();
  auto delta = [&](const std::string& series) {
    return Value(after, series) - Value(before, series);
  };
  EXPECT_EQ(delta("ikd_rpc_started_total" + Labels(kModel, "ListArms")), 3);
  EXPECT_EQ(delta("ikd_rpc_handled_total" + CodeLabels("OK", kModel, "ListArms")), 3);
  EXPECT_EQ(delta("ikd_rpc_errors_total" + Labels(kModel, "ListArms")), 0);
  EXPECT_EQ(delta("ikd_rpc_handled_total" + CodeLabels("NOT_FOUND", kModel, "GetArm")), 2);
  EXPECT_EQ(delta("ikd_rpc_handled_total" + CodeLabels("OK", kModel, "GetArm")), 0);
  EXPECT_EQ(delta("ikd_rpc_errors_total" + Labels(kModel, "GetArm")), 2);
  EXPECT_EQ(delta("ikd_rpc_duration_seconds_count" + Labels(kModel, "ListArms")), 3);
  EXPECT_EQ(delta("ikd_rpc_duration_seconds_count" + Labels(kModel, "GetArm")), 2);
  EXPECT_EQ(delta("ikd_rpc_messages_received_total" + Labels(kModel, "GetArm")), 2);
  EXPECT_EQ(delta("ikd_rpc_messages_sent_total" + Labels(kModel, "ListArms")), 3);
  // The +Inf bucket holds every observation.
  EXPECT_EQ(Value(after, "ikd_rpc_duration_seconds_bucket{method=\"GetArm\","
                         "service=\"ikd.v1.ModelService\",le=\"+Inf\"}"),
            Value(after, "ikd_rpc_duration_seconds_count" + Labels(kModel, "GetArm")));
  // Unary methods have no open-streams series.
  EXPECT_THAT(after, Not(HasSubstr("ikd_rpc_open_streams{method=\"ListArms\"")));
  // The pool's gauges are read at scrape time: the configured two threads.
  EXPECT_EQ(Value(after, "ikd_worker_pool_threads"), 2);
  EXPECT_THAT(after, HasSubstr("# TYPE ikd_worker_pool_rejected_total counter"));
}

// Contract: a bidirectional stream shows in ikd_rpc_open_streams while it is open and not after
// its status; its messages in and out are counted; each step of it is a solver observation.
TEST_F(MetricsTest, OpenStreamGaugeWhileTrackIsOpenAndZeroAfter) {
  const std::string open_series =
      "ikd_rpc_open_streams" + Labels("ikd.v1.KinematicsService", "Track");
  const std::string before = Metrics();
  EXPECT_EQ(Value(before, open_series), 0);
  grpc::ClientContext context;
  SetDeadline(context);
  auto stream = kinematics_->Track(&context);
  v1::TrackRequest config;
  *config.mutable_config()->mutable_arm()->mutable_spec() = PlanarArm();
  ASSERT_TRUE(stream->Write(config));
  v1::TrackResponse response;
  for (int k = 0; k < 2; ++k) {
    v1::TrackRequest target;
    target.mutable_target()->set_time(0.01 * k);
    *target.mutable_target()->mutable_position() = Vec(1.2, 0.3 + 0.01 * k, 0);
    ASSERT_TRUE(stream->Write(target));
    ASSERT_TRUE(stream->Read(&response));  // the server is inside the call
  }
  EXPECT_EQ(Value(Metrics(), open_series), 1);
  ASSERT_TRUE(stream->WritesDone());
  EXPECT_FALSE(stream->Read(&response));
  ASSERT_TRUE(stream->Finish().ok());
  const std::string after = Metrics();
  EXPECT_EQ(Value(after, open_series), 0);
  EXPECT_EQ(Value(after, "ikd_rpc_messages_received_total" +
                             Labels("ikd.v1.KinematicsService", "Track")),
            3);  // config and two targets
  EXPECT_EQ(Value(after, "ikd_rpc_messages_sent_total" +
                             Labels("ikd.v1.KinematicsService", "Track")),
            2);
  EXPECT_EQ(Value(after, "ikd_solver_iterations_count{kind=\"ik_step\"}") -
                Value(before, "ikd_solver_iterations_count{kind=\"ik_step\"}"),
            2);

  // Its access-log line counts the same messages.
  std::vector<std::string> track_lines;
  for (const std::string& line : Log()) {
    if (line.find("/ikd.v1.KinematicsService/Track") != std::string::npos) {
      track_lines.push_back(line);
    }
  }
  ASSERT_EQ(track_lines.size(), 1u);
  const google::protobuf::Struct entry = ParseJson(track_lines[0]);
  EXPECT_EQ(Field(entry, "code"), "OK");
  EXPECT_EQ(Number(entry, "messages_in"), 3);
  EXPECT_EQ(Number(entry, "messages_out"), 2);
}

// Contract: a stream the client cancels is counted CANCELLED (whatever the handler finished
// with) and leaves ikd_rpc_open_streams; the server records it after the client gave up, so
// the test waits for it (bounded).
TEST_F(MetricsTest, CancelledStreamIsCountedCancelledAndClosed) {
  const std::string open_series =
      "ikd_rpc_open_streams" + Labels("ikd.v1.SimulationService", "StepPendulum");
  const std::string cancelled_series =
      "ikd_rpc_handled_total" +
      CodeLabels("CANCELLED", "ikd.v1.SimulationService", "StepPendulum");
  v1::StepPendulumRequest request;
  request.set_planar(true);
  request.add_masses(1.0);
  request.add_lengths(1.0);
  request.add_angles(0.5);
  request.add_angular_velocities(0.0);
  request.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_RATTLE);
  request.set_dt(1e-3);
  request.set_steps(10'000'000);  // far more than the test reads
  request.set_stride(100);
  grpc::ClientContext context;
  SetDeadline(context);
  auto reader = simulation_->StepPendulum(&context, request);
  v1::PendulumFrame frame;
  ASSERT_TRUE(reader->Read(&frame)) << reader->Finish().error_message();
  EXPECT_EQ(Value(Metrics(), open_series), 1);
  context.TryCancel();
  while (reader->Read(&frame)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  std::string after = Metrics();
  for (int i = 0; i < 200 && Value(after, cancelled_series) < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // at most 10 s in all
    after = Metrics();
  }
  EXPECT_EQ(Value(after, cancelled_series), 1);
  EXPECT_EQ(Value(after, open_series), 0);
  EXPECT_EQ(Value(after, "ikd_rpc_handled_total" +
                             CodeLabels("OK", "ikd.v1.SimulationService", "StepPendulum")),
            0);
}

// Contract: a StepChain run that cannot converge (SHAKE capped at 20 sweeps on a falling
// 10-link chain at 1e-10, as in simulation_service_test) counts one non-converged
// simulation step, one iteration observation per step that converged, and ABORTED.
TEST_F(MetricsTest, NonConvergenceIsCountedByKind) {
  v1::StepChainRequest request;
  v1::ChainSystem* chain = request.mutable_chain();
  for (int k = 0; k <= 10; ++k) {
    v1::Site* site = chain->add_sites();
    *site->mutable_position() = Vec(k, 0, 0);
    if (k == 0) {
      site->set_inverse_mass(0.0);
    } else {
      site->set_mass(1.0);
    }
  }
  for (int k = 0; k < 10; ++k) {
    v1::DistanceConstraint* c = chain->add_constraints();
    c->set_i(k);
    c->set_j(k + 1);
    c->set_length(1.0);
  }
  *request.mutable_potentials()->mutable_gravity() = Vec(0, -9.81, 0);
  request.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_SHAKE);
  request.mutable_projection()->set_tolerance(1e-10);
  request.mutable_projection()->set_max_iterations(20);
  request.set_dt(1e-3);
  request.set_steps(100);
  request.set_stride(1);

  const std::string before = Metrics();
  grpc::ClientContext context;
  SetDeadline(context);
  auto reader = simulation_->StepChain(&context, request);
  int frames = 0;
  for (v1::ChainFrame frame; reader->Read(&frame);) ++frames;
  ASSERT_EQ(reader->Finish().error_code(), grpc::StatusCode::ABORTED);
  ASSERT_GE(frames, 1);
  const std::string after = Metrics();
  auto delta = [&](const std::string& series) {
    return Value(after, series) - Value(before, series);
  };
  EXPECT_EQ(delta("ikd_solver_not_converged_total{kind=\"simulation_step\"}"), 1);
  EXPECT_EQ(delta("ikd_solver_iterations_count{kind=\"simulation_step\"}"), frames);
  EXPECT_EQ(delta("ikd_solver_not_converged_total{kind=\"ik_step\"}"), 0);
  EXPECT_EQ(delta("ikd_rpc_handled_total" +
                  CodeLabels("ABORTED", "ikd.v1.SimulationService", "StepChain")),
            1);
  EXPECT_EQ(delta("ikd_rpc_messages_sent_total" +
                  Labels("ikd.v1.SimulationService", "StepChain")),
            frames);
}

// Contract: one JSON line per call with the client's x-request-id echoed (and sent back in the
// initial metadata), method, peer, code, latency and error; never the payload (an arm id) or
// the authorization header.
TEST_F(MetricsTest, AccessLogLineEchoesRequestIdAndOmitsPayloadAndCredentials) {
  grpc::ClientContext create_context;
  SetDeadline(create_context);
  create_context.AddMetadata("x-request-id", "req-42.a");
  create_context.AddMetadata("authorization", "Bearer secret-token-123");
  v1::CreateArmRequest create;
  create.set_arm_id("payload-marker-7");
  *create.mutable_arm()->mutable_spec() = PlanarArm();
  v1::Arm created;
  ASSERT_TRUE(models_->CreateArm(&create_context, create, &created).ok());
  const auto& initial = create_context.GetServerInitialMetadata();
  auto echoed = initial.find("x-request-id");
  ASSERT_NE(echoed, initial.end());
  EXPECT_EQ(std::string(echoed->second.data(), echoed->second.size()), "req-42.a");

  std::vector<std::string> lines = Log();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], Not(HasSubstr("payload-marker-7")));
  EXPECT_THAT(lines[0], Not(HasSubstr("secret-token-123")));
  google::protobuf::Struct entry = ParseJson(lines[0]);
  EXPECT_EQ(Field(entry, "request_id"), "req-42.a");
  EXPECT_EQ(Field(entry, "method"), "/ikd.v1.ModelService/CreateArm");
  EXPECT_EQ(Field(entry, "code"), "OK");
  EXPECT_THAT(Field(entry, "peer"), HasSubstr("127.0.0.1"));
  EXPECT_GE(Number(entry, "latency_seconds"), 0.0);
  EXPECT_EQ(Number(entry, "messages_in"), 1);
  EXPECT_EQ(Number(entry, "messages_out"), 1);
  EXPECT_EQ(FindField(entry, "error"), nullptr);
  absl::Time time;
  std::string parse_error;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, Field(entry, "time"), &time, &parse_error))
      << parse_error;

  // No (or an implausible) request id: a generated one, the same in the reply and the log;
  // an error's message is logged.
  grpc::ClientContext get_context;
  SetDeadline(get_context);
  get_context.AddMetadata("x-request-id", "has space\"quote");
  v1::GetArmRequest get;
  get.set_name("arms/missing");
  v1::Arm arm;
  ASSERT_EQ(models_->GetArm(&get_context, get, &arm).error_code(), grpc::StatusCode::NOT_FOUND);
  auto generated = get_context.GetServerInitialMetadata().find("x-request-id");
  ASSERT_NE(generated, get_context.GetServerInitialMetadata().end());
  const std::string id(generated->second.data(), generated->second.size());
  EXPECT_EQ(id.size(), 32u);
  lines = Log();
  ASSERT_EQ(lines.size(), 2u);
  entry = ParseJson(lines[1]);
  EXPECT_EQ(Field(entry, "request_id"), id);
  EXPECT_EQ(Field(entry, "method"), "/ikd.v1.ModelService/GetArm");
  EXPECT_EQ(Field(entry, "code"), "NOT_FOUND");
  EXPECT_THAT(Field(entry, "error"), HasSubstr("arms/missing"));
}

// Contract: an access-log string is valid JSON whatever the client sent: well-formed UTF-8
// passes unchanged, quotes and control characters are escaped, stray bytes (invalid UTF-8,
// overlong forms, a character cut by the byte limit) become \u00XX escapes.
TEST(AccessLogJsonTest, InvalidUtf8IsEscapedValidUtf8Kept) {
  const auto json = [](std::string_view text, size_t max_bytes = 100) {
    std::string out;
    internal::AppendJsonString(out, text, max_bytes);
    return out;
  };
  EXPECT_EQ(json("arms/caf\xc3\xa9"), "\"arms/caf\xc3\xa9\"");
  EXPECT_EQ(json("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(json("x\xff\xfey"), "\"x\\u00ff\\u00fey\"");
  EXPECT_EQ(json("\xc0\xaf"), "\"\\u00c0\\u00af\"");  // overlong "/"
  EXPECT_EQ(json("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\"");  // a UTF-16 surrogate
  EXPECT_EQ(json("ab\xe2\x82\xac", 4), "\"ab\\u00e2\\u0082\"");  // the euro sign cut
  google::protobuf::Struct parsed =
      ParseJson(absl::StrCat("{\"s\":", json("q\xff\xc3\xa9"), "}"));
  EXPECT_EQ(Field(parsed, "s"), "q\xc3\xbf\xc3\xa9");  // U+00FF, then the kept U+00E9
}

// Contract: a metrics address that cannot be bound fails Start with UNAVAILABLE naming the flag.
TEST(MetricsStartTest, UnbindableMetricsAddressIsUnavailable) {
  ObservabilityOptions first;
  first.metrics_listen = "127.0.0.1:0";
  auto taken = Metrics::Create(first);
  ASSERT_TRUE(taken.ok()) << taken.status();
  auto store = NewMemoryModelStore();
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.observability.metrics_listen = absl::StrCat("127.0.0.1:", (*taken)->port());
  auto server = IkdServer::Start(options, store.get());
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(server.status().message()), StartsWith("metrics_listen"));
}

}  // namespace
}  // namespace ikd::server
