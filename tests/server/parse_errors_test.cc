// Requests whose bytes do not parse (parse_errors.h; issue 18, Bad input): every method of
// ikd's four services, called on a running server with bytes that are no protobuf message,
// answers INVALID_ARGUMENT naming its request type (gRPC alone answered UNIMPLEMENTED with no
// message, or ended a bidirectional stream OK); a well-formed stream still ends OK at the
// client's half-close; an unknown method stays UNIMPLEMENTED; the server keeps serving.
#include "parse_errors.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "ikd/v1/kinematics_service.grpc.pb.h"
#include "model_store.h"
#include "server.h"
#include "server/service_test_util.h"
#include "testing/generic_call.h"

namespace ikd::server {
namespace {

using ::testing::HasSubstr;
using testing_util::CallWithBytes;

// A field tag of wire type 7, which no protobuf message may hold.
const std::string kGarbage("\xff\xff\xff\x07garbage", 11);

class ParseErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = NewMemoryModelStore();
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.pool.threads = 2;
    auto server = IkdServer::Start(options, store_.get());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
  }

  std::unique_ptr<ModelStore> store_;
  std::unique_ptr<IkdServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(ParseErrorsTest, EveryMethodNamesTheTypeItCouldNotParse) {
  int methods = 0;
  for (const char* name : {"ikd.v1.ModelService", "ikd.v1.KinematicsService",
                           "ikd.v1.SimulationService", "ikd.v1.PoseService"}) {
    const google::protobuf::ServiceDescriptor* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int k = 0; k < service->method_count(); ++k) {
      const google::protobuf::MethodDescriptor* rpc = service->method(k);
      const std::string method = absl::StrCat("/", service->full_name(), "/", rpc->name());
      const grpc::Status status = CallWithBytes(channel_, method, {kGarbage});
      EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
      EXPECT_THAT(status.error_message(), HasSubstr(rpc->input_type()->full_name())) << method;
      EXPECT_THAT(status.error_message(), HasSubstr("could not be parsed")) << method;
      ++methods;
    }
  }
  EXPECT_GE(methods, 25);
  // An unknown method is still that, and the server goes on serving.
  EXPECT_EQ(CallWithBytes(channel_, "/ikd.v1.KinematicsService/NoSuchMethod", {kGarbage}).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(CallWithBytes(channel_, "/ikd.v1.ModelService/ListArms", {std::string()}).error_code(),
            grpc::StatusCode::OK);
}

// A Track stream: a good config, then garbage, ends INVALID_ARGUMENT; the same stream without
// the garbage ends OK at the half-close (the sentinel does not mistake one for the other).
TEST_F(ParseErrorsTest, StreamTellsGarbageFromAHalfClose) {
  v1::TrackRequest config;
  *config.mutable_config()->mutable_arm()->mutable_spec() = test_util::PlanarArm();
  const std::string good = config.SerializeAsString();
  EXPECT_EQ(CallWithBytes(channel_, "/ikd.v1.KinematicsService/Track", {good}).error_code(),
            grpc::StatusCode::OK);
  const grpc::Status bad = CallWithBytes(channel_, "/ikd.v1.KinematicsService/Track", {good, kGarbage});
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(bad.error_message(), HasSubstr("could not be parsed as ikd.v1.TrackRequest"));
}

TEST(RequestType, FromTheMethodPath) {
  EXPECT_EQ(RequestTypeOf("/ikd.v1.KinematicsService/Solve"), "ikd.v1.SolveRequest");
  EXPECT_EQ(RequestTypeOf("/ikd.v1.KinematicsService/Nope"), "");
  EXPECT_EQ(RequestTypeOf("/no.Such/Method"), "");
  EXPECT_EQ(RequestTypeOf("garbage"), "");
  EXPECT_EQ(RequestTypeOf(""), "");
}

}  // namespace
}  // namespace ikd::server
