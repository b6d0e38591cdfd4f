// Security of the server in process (127.0.0.1:0): bearer tokens (UNAUTHENTICATED without or
// with a wrong token on every method of every ikd service, PERMISSION_DENIED for a read-only
// token on every ModelService write, health open), TLS and mutual TLS with certificates made by
// the `openssl` command at test time, the checks of the security options and the tokens file,
// and the call caps (streams per client address, default deadline, message size). Each test
// states the contract it checks.
#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "call_limits.h"
#include "client_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "ikd/v1/model_service.grpc.pb.h"
#include "ikd/v1/pose_service.grpc.pb.h"
#include "ikd/v1/simulation_service.grpc.pb.h"
#include "model_store.h"
#include "security.h"
#include "server.h"
#include "testing/generic_call.h"
#include "testing/test_certificates.h"

namespace ikd::server {
namespace {

using ::testing::HasSubstr;

constexpr char kReadWriteToken[] = "rw-0123456789abcdef";
constexpr char kReadOnlyToken[] = "ro-0123456789abcdef";
constexpr char kWrongToken[] = "xx-0123456789abcdef";

class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/ikd-security-test-XXXXXX";
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(File(name)) << text;
  }

 private:
  std::string path_;
};

ServerOptions TokenOptions() {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.max_request_bytes = 64 << 10;
  options.pool.threads = 2;
  options.security.tokens = {{TokenRole::kReadWrite, kReadWriteToken},
                             {TokenRole::kReadOnly, kReadOnlyToken}};
  return options;
}

// A running server on a memory store.
class Server {
 public:
  explicit Server(const ServerOptions& options) : store_(NewMemoryModelStore()) {
    auto server = IkdServer::Start(options, store_.get());
    EXPECT_TRUE(server.ok()) << server.status();
    if (server.ok()) server_ = *std::move(server);
  }
  bool running() const { return server_ != nullptr; }
  std::string address() const { return absl::StrCat("127.0.0.1:", server_->port()); }
  std::string localhost() const { return absl::StrCat("localhost:", server_->port()); }

 private:
  std::unique_ptr<ModelStore> store_;
  std::unique_ptr<IkdServer> server_;
};

std::shared_ptr<grpc::Channel> Channel(const std::string& address,
                                       const clients::ConnectOptions& options) {
  auto channel = clients::Connect(address, options);
  EXPECT_TRUE(channel.ok()) << channel.status();
  return channel.ok() ? *channel : nullptr;
}

clients::ConnectOptions Secure(const std::string& ca, const std::string& token,
                               const std::string& cert = "", const std::string& key = "") {
  clients::ConnectOptions options;
  options.tls_ca_file = ca;
  options.tls_cert_file = cert;
  options.tls_key_file = key;
  options.token = token;
  return options;
}

std::shared_ptr<grpc::Channel> TokenChannel(const std::string& address, const std::string& token) {
  return Channel(address, Secure("", token));
}

void SetDeadline(grpc::ClientContext& context) {
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
}

// Calls `method` ("/pkg.Service/Method") with one empty request message and returns the final
// status.
grpc::Status CallGeneric(grpc::Channel& channel, const std::string& method) {
  return testing_util::CallWithBytes(channel.shared_from_this(), method, {std::string()});
}

// "/ikd.v1.ModelService/CreateArm", ... for every method of ikd's four services.
std::vector<std::string> AllIkdMethods() {
  std::vector<std::string> methods;
  for (const char* name : {"ikd.v1.ModelService", "ikd.v1.KinematicsService",
                           "ikd.v1.SimulationService", "ikd.v1.PoseService"}) {
    const google::protobuf::ServiceDescriptor* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    EXPECT_NE(service, nullptr) << name;
    if (service == nullptr) continue;
    for (int k = 0; k < service->method_count(); ++k) {
      methods.push_back(absl::StrCat("/", service->full_name(), "/", service->method(k)->name()));
    }
  }
  return methods;
}

bool IsModelWrite(const std::string& method) {
  const std::string prefix = "/ikd.v1.ModelService/";
  if (!absl::StartsWith(method, prefix)) return false;
  const std::string name = method.substr(prefix.size());
  for (const char* verb : {"Create", "Update", "Delete", "Edit"}) {
    if (absl::StartsWith(name, verb)) return true;
  }
  return false;
}

v1::ArmSpec PlanarArm(int limbs) {
  v1::ArmSpec spec;
  spec.set_planar(true);
  for (int k = 0; k < limbs; ++k) {
    v1::Limb* limb = spec.add_limbs();
    limb->set_length(0.5);
    limb->set_radius(0.05);
  }
  return spec;
}

grpc::Status CreateArm(grpc::Channel& channel, const std::string& id) {
  auto stub = v1::ModelService::NewStub(channel.shared_from_this());
  grpc::ClientContext context;
  SetDeadline(context);
  v1::CreateArmRequest request;
  request.set_arm_id(id);
  *request.mutable_arm()->mutable_spec() = PlanarArm(3);
  v1::Arm arm;
  return stub->CreateArm(&context, request, &arm);
}

grpc::Status ListArms(grpc::Channel& channel, v1::ListArmsResponse* response) {
  auto stub = v1::ModelService::NewStub(channel.shared_from_this());
  grpc::ClientContext context;
  SetDeadline(context);
  return stub->ListArms(&context, v1::ListArmsRequest(), response);
}

grpc::Status HealthCheck(grpc::Channel& channel) {
  auto stub = grpc::health::v1::Health::NewStub(channel.shared_from_this());
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::health::v1::HealthCheckResponse response;
  return stub->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
}

// --- tokens file and options ----------------------------------------------------------------

// A tokens file: roles, '#' comments and blank lines; both roles come back in order.
TEST(TokensFileTest, ParsesRolesCommentsAndBlankLines) {
  auto tokens = ParseTokens(absl::StrCat("# operators\n\nread-write ", kReadWriteToken,
                                         "\n  read-only\t", kReadOnlyToken, "  \n"),
                            "tokens");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  ASSERT_EQ(tokens->size(), 2u);
  EXPECT_EQ((*tokens)[0].role, TokenRole::kReadWrite);
  EXPECT_EQ((*tokens)[0].secret, kReadWriteToken);
  EXPECT_EQ((*tokens)[1].role, TokenRole::kReadOnly);
  EXPECT_EQ((*tokens)[1].secret, kReadOnlyToken);
}

// Malformed lines are rejected naming the line number and never echoing the token.
TEST(TokensFileTest, MalformedLinesNameTheLineNotTheToken) {
  const std::string secret = "s3cr3t-never-printed-123";
  const std::pair<std::string, std::string> cases[] = {
      {"admin " + secret, "line 2: the role must be read-write or read-only"},
      {"read-write", "line 2: expected"},
      {"read-write " + secret + " extra", "line 2: expected"},
      {"read-only short", "line 2: the token must be at least 16 characters"},
      {"read-only " + secret + "\nread-write " + secret, "line 3: the token repeats"},
  };
  for (const auto& [line, message] : cases) {
    auto tokens = ParseTokens("# header\n" + line + "\n", "tokens");
    ASSERT_FALSE(tokens.ok()) << line;
    EXPECT_EQ(tokens.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(tokens.status().message(), HasSubstr(message)) << line;
    EXPECT_THAT(std::string(tokens.status().message()), ::testing::Not(HasSubstr(secret)));
  }
  EXPECT_THAT(ParseTokens("# nothing\n", "tokens").status().message(), HasSubstr("no token"));
}

// An unreadable tokens file names --tokens_file and the path.
TEST(TokensFileTest, UnreadableFileNamesTheFlag) {
  auto tokens = ReadTokensFile("/nonexistent/ikd-tokens");
  EXPECT_EQ(tokens.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tokens.status().message(), HasSubstr("--tokens_file: cannot read"));
}

// Loopback listen addresses are recognised in each spelling gRPC accepts.
TEST(SecurityOptionsTest, LoopbackAddresses) {
  for (const char* address :
       {"127.0.0.1:50051", "localhost:1", "[::1]:50051", "127.1.2.3:0", "unix:/tmp/ikd.sock"}) {
    EXPECT_TRUE(IsLoopbackAddress(address)) << address;
  }
  for (const char* address : {"0.0.0.0:50051", "[::]:50051", "10.0.0.5:1", "ikd.example:1",
                              "127.corp.example:1", "127.0.0.1.nip.io:1"}) {
    EXPECT_FALSE(IsLoopbackAddress(address)) << address;
  }
}

// Tokens over plaintext on a non-loopback address are refused unless explicitly allowed; TLS or
// loopback makes them acceptable.
TEST(SecurityOptionsTest, TokensNeedTlsOrLoopback) {
  SecurityOptions options;
  options.tokens = {{TokenRole::kReadOnly, kReadOnlyToken}};
  absl::Status refused = ValidateSecurityOptions(options, "0.0.0.0:50051");
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("--tokens_file with a plaintext non-loopback"));
  EXPECT_TRUE(ValidateSecurityOptions(options, "127.0.0.1:50051").ok());
  options.allow_insecure_tokens = true;
  EXPECT_TRUE(ValidateSecurityOptions(options, "0.0.0.0:50051").ok());
  options.allow_insecure_tokens = false;
  options.tls = {"cert.pem", "key.pem", ""};
  EXPECT_TRUE(ValidateSecurityOptions(options, "0.0.0.0:50051").ok());
}

// Half a key pair, or a client CA without a key pair, is refused naming the flags.
TEST(SecurityOptionsTest, TlsFlagsComeInPairs) {
  SecurityOptions options;
  options.tls.cert_file = "cert.pem";
  EXPECT_THAT(ValidateSecurityOptions(options, "127.0.0.1:1").message(),
              HasSubstr("--tls_cert and --tls_key must be given together"));
  options.tls = {"", "", "ca.pem"};
  EXPECT_THAT(ValidateSecurityOptions(options, "127.0.0.1:1").message(),
              HasSubstr("--tls_client_ca needs --tls_cert and --tls_key"));
}

// Missing or non-PEM files fail at start-up naming the flag and the path.
TEST(SecurityOptionsTest, UnreadableOrNonPemFilesNameTheFlag) {
  TempDir dir;
  dir.Write("not.pem", "hello\n");
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.security.tls = {dir.File("missing.pem"), dir.File("not.pem"), ""};
  auto store = NewMemoryModelStore();
  auto server = IkdServer::Start(options, store.get());
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), HasSubstr("--tls_cert: cannot read"));
  EXPECT_THAT(server.status().message(), HasSubstr("missing.pem"));

  ikd::testing::TestCertificates certificates;
  ASSERT_TRUE(certificates.ok()) << certificates.log();
  options.security.tls = {certificates.File("server.pem"), dir.File("not.pem"), ""};
  server = IkdServer::Start(options, store.get());
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), HasSubstr("--tls_key:"));
  EXPECT_THAT(server.status().message(), HasSubstr("holds no PEM private key"));
}

// --- bearer tokens ------------------------------------------------------------------------------

// Every method of every ikd service answers UNAUTHENTICATED without a token and with a wrong
// one (a method missing from its gate would answer UNIMPLEMENTED instead).
TEST(TokenAuthTest, EveryMethodNeedsAValidToken) {
  Server server(TokenOptions());
  ASSERT_TRUE(server.running());
  auto anonymous = TokenChannel(server.address(), "");
  auto wrong = TokenChannel(server.address(), kWrongToken);
  const std::vector<std::string> methods = AllIkdMethods();
  ASSERT_EQ(methods.size(), 16u + 4u + 4u + 1u);
  for (const std::string& method : methods) {
    grpc::Status missing = CallGeneric(*anonymous, method);
    EXPECT_EQ(missing.error_code(), grpc::StatusCode::UNAUTHENTICATED) << method;
    EXPECT_THAT(missing.error_message(), HasSubstr("authorization: Bearer")) << method;
    grpc::Status invalid = CallGeneric(*wrong, method);
    EXPECT_EQ(invalid.error_code(), grpc::StatusCode::UNAUTHENTICATED) << method;
    EXPECT_THAT(invalid.error_message(), HasSubstr("not valid")) << method;
  }
}

// A read-only token gets PERMISSION_DENIED on every ModelService write, and reads (List, Get)
// and a read-write token's write succeed.
TEST(TokenAuthTest, ReadOnlyTokenCannotWrite) {
  Server server(TokenOptions());
  ASSERT_TRUE(server.running());
  auto read_only = TokenChannel(server.address(), kReadOnlyToken);
  auto read_write = TokenChannel(server.address(), kReadWriteToken);
  int writes = 0;
  for (const std::string& method : AllIkdMethods()) {
    if (!IsModelWrite(method)) continue;
    ++writes;
    grpc::Status denied = CallGeneric(*read_only, method);
    EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED) << method;
    EXPECT_THAT(denied.error_message(), HasSubstr("needs a read-write token")) << method;
  }
  EXPECT_EQ(writes, 10);  // Create, Update, Delete of three collections, and EditScene

  EXPECT_EQ(CreateArm(*read_only, "denied").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  grpc::Status created = CreateArm(*read_write, "arm-1");
  EXPECT_TRUE(created.ok()) << created.error_message();
  v1::ListArmsResponse listed;
  grpc::Status read = ListArms(*read_only, &listed);
  ASSERT_TRUE(read.ok()) << read.error_message();
  ASSERT_EQ(listed.arms_size(), 1);
  EXPECT_EQ(listed.arms(0).name(), "arms/arm-1");
}

// grpc.health.v1 answers without a token, so load balancers and probes need no credentials.
TEST(TokenAuthTest, HealthNeedsNoToken) {
  Server server(TokenOptions());
  ASSERT_TRUE(server.running());
  grpc::Status health = HealthCheck(*TokenChannel(server.address(), ""));
  EXPECT_TRUE(health.ok()) << health.error_message();
}

// --- TLS ----------------------------------------------------------------------------------------

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { certificates_ = new ikd::testing::TestCertificates(); }
  static void TearDownTestSuite() { delete certificates_; }
  void SetUp() override { ASSERT_TRUE(certificates_->ok()) << certificates_->log(); }

  static ServerOptions TlsOptions(bool verify_clients) {
    ServerOptions options = TokenOptions();
    options.security.tls = {certificates_->File("server.pem"), certificates_->File("server.key"),
                            verify_clients ? certificates_->File("ca.pem") : ""};
    return options;
  }
  static std::string File(const std::string& name) { return certificates_->File(name); }

  static ikd::testing::TestCertificates* certificates_;
};

ikd::testing::TestCertificates* TlsTest::certificates_ = nullptr;

// A client trusting the CA that signed the server's certificate talks TLS (with a token) to
// both 127.0.0.1 and localhost, the certificate's two names.
TEST_F(TlsTest, ClientTrustingTheCaConnects) {
  Server server(TlsOptions(false));
  ASSERT_TRUE(server.running());
  for (const std::string& address : {server.address(), server.localhost()}) {
    auto channel = Channel(address, Secure(File("ca.pem"), kReadWriteToken));
    v1::ListArmsResponse listed;
    grpc::Status status = ListArms(*channel, &listed);
    EXPECT_TRUE(status.ok()) << address << ": " << status.error_message();
  }
}

// A client trusting another CA, and a plaintext client, cannot complete a call.
TEST_F(TlsTest, ClientWithoutTheCaFails) {
  Server server(TlsOptions(false));
  ASSERT_TRUE(server.running());
  auto other_ca =
      Channel(server.address(), Secure(File("other-ca.pem"), kReadWriteToken));
  v1::ListArmsResponse listed;
  EXPECT_EQ(ListArms(*other_ca, &listed).error_code(), grpc::StatusCode::UNAVAILABLE);
  auto plaintext = TokenChannel(server.address(), kReadWriteToken);
  EXPECT_EQ(ListArms(*plaintext, &listed).error_code(), grpc::StatusCode::UNAVAILABLE);
}

// With --tls_client_ca a client without a certificate is refused during the handshake, and one
// presenting a certificate signed by that CA gets through.
TEST_F(TlsTest, ClientCertificateVerification) {
  Server server(TlsOptions(true));
  ASSERT_TRUE(server.running());
  auto no_certificate =
      Channel(server.address(), Secure(File("ca.pem"), kReadWriteToken));
  v1::ListArmsResponse listed;
  EXPECT_EQ(ListArms(*no_certificate, &listed).error_code(), grpc::StatusCode::UNAVAILABLE);
  auto self_signed = Channel(server.address(), Secure(File("ca.pem"), kReadWriteToken,
                                                     File("other-ca.pem"), File("other-ca.key")));
  EXPECT_EQ(ListArms(*self_signed, &listed).error_code(), grpc::StatusCode::UNAVAILABLE);
  auto with_certificate = Channel(server.address(), Secure(File("ca.pem"), kReadWriteToken,
                                                          File("client.pem"), File("client.key")));
  grpc::Status status = ListArms(*with_certificate, &listed);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

// --- caps ---------------------------------------------------------------------------------------

// gRPC peer strings reduce to the client's IP address.
TEST(CallLimitsTest, PeerAddress) {
  EXPECT_EQ(PeerAddress("ipv4:127.0.0.1:5000"), "127.0.0.1");
  EXPECT_EQ(PeerAddress("ipv6:[::1]:5000"), "::1");
  EXPECT_EQ(PeerAddress("unix:/tmp/s"), "unix:/tmp/s");
}

// Out-of-range limits are refused naming the field.
TEST(CallLimitsTest, Validate) {
  EXPECT_TRUE(CallLimits().Validate().ok());
  EXPECT_THAT(CallLimits{.max_streams_per_peer = -1}.Validate().message(),
              HasSubstr("max_streams_per_peer must be >= 0"));
  EXPECT_THAT(CallLimits{.max_live_streams = -1}.Validate().message(),
              HasSubstr("max_live_streams must be >= 0"));
  EXPECT_THAT(CallLimits{.default_deadline = absl::ZeroDuration()}.Validate().message(),
              HasSubstr("default_deadline must be > 0"));
  EXPECT_TRUE(CallLimits{.keepalive_time = absl::InfiniteDuration()}.Validate().ok());
  EXPECT_THAT(CallLimits{.keepalive_time = absl::ZeroDuration()}.Validate().message(),
              HasSubstr("keepalive_time must be in [1ms, "));
  EXPECT_THAT(CallLimits{.keepalive_time = absl::Hours(24 * 30)}.Validate().message(),
              HasSubstr("keepalive_time must be in [1ms, "));
  EXPECT_THAT(CallLimits{.keepalive_timeout = absl::InfiniteDuration()}.Validate().message(),
              HasSubstr("keepalive_timeout must be in [1ms, "));
  EXPECT_THAT(CallLimits{.keepalive_timeout = absl::Microseconds(10)}.Validate().message(),
              HasSubstr("keepalive_timeout must be in [1ms, "));
}

// A server stream refused INVALID_ARGUMENT with `message` in its status, before any frame.
template <typename Frame>
void ExpectRefusedBeforeAnyFrame(grpc::ClientReader<Frame>& reader, const std::string& message) {
  Frame frame;
  EXPECT_FALSE(reader.Read(&frame)) << "a frame came before the refusal";
  const grpc::Status status = reader.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr(message));
}

// A health Watch stream, opened and its first status read (so the server has admitted it).
struct WatchStream {
  explicit WatchStream(grpc::Channel& channel)
      : stub(grpc::health::v1::Health::NewStub(channel.shared_from_this())) {
    SetDeadline(context);
    reader = stub->Watch(&context, grpc::health::v1::HealthCheckRequest());
    admitted = reader->Read(&response);
  }
  grpc::Status Close() {
    context.TryCancel();
    while (reader->Read(&response)) {
    }
    return reader->Finish();
  }

  std::unique_ptr<grpc::health::v1::Health::Stub> stub;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<grpc::health::v1::HealthCheckResponse>> reader;
  grpc::health::v1::HealthCheckResponse response;
  bool admitted = false;
};

// Beyond --max_streams_per_peer open streams from one address the next gets RESOURCE_EXHAUSTED
// naming the flag and the bound; unary calls are not counted, and a closed stream frees its slot.
TEST(CallLimitsTest, StreamsPerPeer) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.calls.max_streams_per_peer = 2;
  Server server(options);
  ASSERT_TRUE(server.running());
  auto channel = TokenChannel(server.address(), "");
  auto first = std::make_unique<WatchStream>(*channel);
  WatchStream second(*channel);
  ASSERT_TRUE(first->admitted);
  ASSERT_TRUE(second.admitted);
  {
    WatchStream third(*channel);
    EXPECT_FALSE(third.admitted);
    grpc::Status refused = third.reader->Finish();
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(refused.error_message(), HasSubstr("--max_streams_per_peer"));
    EXPECT_THAT(refused.error_message(), HasSubstr("already has 2 streaming calls open"));
  }
  EXPECT_TRUE(HealthCheck(*channel).ok());  // unary calls are not streams

  first->Close();
  first.reset();
  // The slot is released when the server destroys the cancelled call, shortly after; poll a
  // bounded number of times for it.
  bool readmitted = false;
  for (int attempt = 0; attempt < 200 && !readmitted; ++attempt) {
    WatchStream again(*channel);
    readmitted = again.admitted;
    if (readmitted) {
      again.Close();
    } else {
      again.reader->Finish();
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }
  EXPECT_TRUE(readmitted);
  second.Close();
}

// A Track stream of a 3-limb planar arm, configured and one target answered (admitted).
struct TrackStream {
  explicit TrackStream(grpc::Channel& channel)
      : stub(v1::KinematicsService::NewStub(channel.shared_from_this())) {
    SetDeadline(context);
    stream = stub->Track(&context);
    v1::TrackRequest config;
    v1::ArmSpec* arm = config.mutable_config()->mutable_arm()->mutable_spec();
    arm->set_planar(true);
    for (int k = 0; k < 3; ++k) arm->add_limbs()->set_length(0.5);
    v1::TrackRequest target;
    target.mutable_target()->mutable_position()->set_x(1.0);
    target.mutable_target()->mutable_position()->set_y(0.5);
    admitted = stream->Write(config) && stream->Write(target) && stream->Read(&response);
  }
  grpc::Status Close() {
    stream->WritesDone();
    while (stream->Read(&response)) {
    }
    return stream->Finish();
  }

  std::unique_ptr<v1::KinematicsService::Stub> stub;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::TrackRequest, v1::TrackResponse>> stream;
  v1::TrackResponse response;
  bool admitted = false;
};

// Beyond --max_live_streams open Track (EstimatePose) streams on the server the next gets
// RESOURCE_EXHAUSTED at once, naming the flag and the bound; other streams are not counted, and
// a closed live stream frees its slot.
TEST(CallLimitsTest, LiveStreamsOnTheServer) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.calls.max_live_streams = 2;
  Server server(options);
  ASSERT_TRUE(server.running());
  auto channel = TokenChannel(server.address(), "");
  auto first = std::make_unique<TrackStream>(*channel);
  TrackStream second(*channel);
  ASSERT_TRUE(first->admitted);
  ASSERT_TRUE(second.admitted);
  {
    TrackStream third(*channel);
    EXPECT_FALSE(third.admitted);
    const grpc::Status refused = third.stream->Finish();
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(refused.error_message(), HasSubstr("--max_live_streams: 2 live streams"));
  }
  WatchStream watch(*channel);  // not a live stream
  EXPECT_TRUE(watch.admitted);
  watch.Close();
  EXPECT_TRUE(first->Close().ok());
  first.reset();
  bool readmitted = false;
  for (int attempt = 0; attempt < 200 && !readmitted; ++attempt) {
    TrackStream again(*channel);
    readmitted = again.admitted;
    if (readmitted) {
      again.Close();
    } else {
      again.stream->Finish();
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }
  EXPECT_TRUE(readmitted);
  second.Close();
}

// A server-streaming call sent without a deadline ends with DEADLINE_EXCEEDED naming
// --default_deadline once the server's default passes (here 200 ms against a chain simulation
// of 10^7 steps of 2000 sites, which runs far longer).
TEST(CallLimitsTest, DefaultDeadline) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.pool.threads = 1;
  options.calls.default_deadline = absl::Milliseconds(200);
  Server server(options);
  ASSERT_TRUE(server.running());
  auto stub = v1::SimulationService::NewStub(TokenChannel(server.address(), ""));
  v1::StepChainRequest request;
  v1::GeneratedChain* chain = request.mutable_generated();
  chain->set_shape(v1::GeneratedChain::SHAPE_STRAIGHT);
  chain->set_num_sites(2000);
  chain->set_link(1.0);
  request.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_MILC_SHAKE);
  request.set_dt(1e-3);
  request.set_steps(10'000'000);
  request.set_stride(1'000);
  grpc::ClientContext context;  // deliberately no deadline
  auto reader = stub->StepChain(&context, request);
  v1::ChainFrame frame;
  while (reader->Read(&frame)) {
  }
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("--default_deadline"));
  EXPECT_THAT(status.error_message(), HasSubstr("200ms"));
}

// A request larger than max_request_bytes is RESOURCE_EXHAUSTED naming the bound, before any
// handler runs (also before the token check: nothing was read).
TEST(CallLimitsTest, MessageSize) {
  Server server(TokenOptions());  // max_request_bytes = 64 KiB
  ASSERT_TRUE(server.running());
  auto stub = v1::ModelService::NewStub(TokenChannel(server.address(), kReadWriteToken));
  grpc::ClientContext context;
  SetDeadline(context);
  v1::CreateArmRequest request;
  request.set_arm_id(std::string(100 << 10, 'a'));
  v1::Arm arm;
  grpc::Status status = stub->CreateArm(&context, request, &arm);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr(absl::StrCat("vs. ", 64 << 10)));
}

// A site joined by more constraints than max_constraints_per_site (a star of 65 around site 0)
// is INVALID_ARGUMENT naming the constraint and the limit, before any simulation work.
TEST(CallLimitsTest, ConstraintsPerSite) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  Server server(options);
  ASSERT_TRUE(server.running());
  auto stub = v1::SimulationService::NewStub(TokenChannel(server.address(), ""));
  v1::StepChainRequest request;
  v1::ChainSystem* system = request.mutable_chain();
  const int leaves = options.simulation.max_constraints_per_site + 1;
  for (int k = 0; k <= leaves; ++k) {
    v1::Site* site = system->add_sites();
    site->mutable_position()->set_x(k == 0 ? 0.0 : std::cos(k));
    site->mutable_position()->set_y(k == 0 ? 0.0 : std::sin(k));
    site->set_mass(1.0);
  }
  for (int k = 1; k <= leaves; ++k) {
    v1::DistanceConstraint* c = system->add_constraints();
    c->set_i(0);
    c->set_j(k);
    c->set_length(1.0);
  }
  request.set_dt(1e-3);
  request.set_steps(1);
  grpc::ClientContext context;
  SetDeadline(context);
  ExpectRefusedBeforeAnyFrame(*stub->StepChain(&context, request),
                              absl::StrCat("chain.constraints[", leaves - 1,
                                           "]: site 0 would have more than 64 constraints "
                                           "(max_constraints_per_site)"));
}

// IkOptions.trials_per_step above max_trials_per_step is INVALID_ARGUMENT naming the field and
// the flag; the bound itself is accepted.
TEST(CallLimitsTest, TrialsPerStep) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.limits.max_trials_per_step = 50;
  Server server(options);
  ASSERT_TRUE(server.running());
  auto stub = v1::KinematicsService::NewStub(TokenChannel(server.address(), ""));
  for (const int trials : {50, 51}) {
    v1::SolveRequest request;
    *request.mutable_arm()->mutable_spec() = PlanarArm(3);
    request.mutable_target()->set_x(1.0);
    request.mutable_target()->set_y(0.5);
    request.mutable_options()->set_trials_per_step(trials);
    grpc::ClientContext context;
    SetDeadline(context);
    v1::SolveResponse response;
    grpc::Status status = stub->Solve(&context, request, &response);
    if (trials == 50) {
      EXPECT_TRUE(status.ok()) << status.error_message();
    } else {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
      EXPECT_THAT(status.error_message(),
                  HasSubstr("options.trials_per_step: at most 50 (--max_trials_per_step), got 51"));
    }
  }
}

// projection.max_iterations above max_projection_iterations is INVALID_ARGUMENT naming the
// field and the flag (the solver alone would allow 10^7 corrections per step).
TEST(CallLimitsTest, ProjectionIterations) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  Server server(options);
  ASSERT_TRUE(server.running());
  auto stub = v1::SimulationService::NewStub(TokenChannel(server.address(), ""));
  v1::StepPendulumRequest request;
  request.set_planar(true);
  request.add_masses(1.0);
  request.add_lengths(1.0);
  request.add_angles(0.5);
  request.add_angular_velocities(0.0);
  request.mutable_projection()->set_method(v1::CONSTRAINT_METHOD_RATTLE);
  request.mutable_projection()->set_max_iterations(options.simulation.max_projection_iterations +
                                                   1);
  request.set_dt(1e-3);
  request.set_steps(1);
  grpc::ClientContext context;
  SetDeadline(context);
  ExpectRefusedBeforeAnyFrame(*stub->StepPendulum(&context, request),
                              absl::StrCat("projection.max_iterations: at most ",
                                           options.simulation.max_projection_iterations,
                                           " (--max_projection_iterations)"));
}

// A skeleton with more bones than max_skeleton_bones is INVALID_ARGUMENT naming the field and
// the bound.
TEST(CallLimitsTest, SkeletonBones) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.limits.max_skeleton_bones = 3;
  Server server(options);
  ASSERT_TRUE(server.running());
  auto stub = v1::ModelService::NewStub(TokenChannel(server.address(), ""));
  v1::CreateSkeletonRequest request;
  request.set_skeleton_id("chain");
  v1::SkeletonSpec* spec = request.mutable_skeleton()->mutable_spec();
  for (int k = 0; k < 5; ++k) spec->add_sites(absl::StrCat("s", k));
  for (int k = 0; k < 4; ++k) {
    v1::SkeletonBone* bone = spec->add_bones();
    bone->set_i(k);
    bone->set_j(k + 1);
    bone->set_length(0.3);
  }
  grpc::ClientContext context;
  SetDeadline(context);
  v1::Skeleton skeleton;
  grpc::Status status = stub->CreateSkeleton(&context, request, &skeleton);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("skeleton.spec.bones: at most 3 bones, got 4"));
}

}  // namespace
}  // namespace ikd::server
