// The error model of the service (errors.h): field paths, the BadRequest and QuotaFailure
// payloads of absl::Status, the mapping of solver messages onto request paths, and their
// google.rpc.Status form on the wire. Payloads are read back with the protos' own parsers.
#include "errors.h"

#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/cord.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace ikd::server {
namespace {

using ::testing::IsEmpty;

constexpr char kBadRequestUrl[] = "type.googleapis.com/google.rpc.BadRequest";
constexpr char kQuotaFailureUrl[] = "type.googleapis.com/google.rpc.QuotaFailure";

// The BadRequest payload of `status`, parsed; std::nullopt when absent or unparsable.
std::optional<google::rpc::BadRequest> BadRequestOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kBadRequestUrl);
  google::rpc::BadRequest bad_request;
  if (!payload.has_value() || !bad_request.ParseFromString(std::string(*payload))) {
    return std::nullopt;
  }
  return bad_request;
}

// A path_of that records what it was asked and nests the solver field below "arm.spec".
struct RecordingPath {
  std::vector<std::string>* asked;
  std::string operator()(const std::string& field) const {
    asked->push_back(field);
    return field.empty() ? "arm.spec" : "arm.spec." + field;
  }
};

TEST(BelowTest, JoinsWithADotAndSkipsAnEmptySide) {
  EXPECT_EQ(Below("config", "options"), "config.options");
  EXPECT_EQ(Below("arm.spec", "limbs[2].length"), "arm.spec.limbs[2].length");
  EXPECT_EQ(Below("", "options"), "options");
  EXPECT_EQ(Below("config", ""), "config");
  EXPECT_EQ(Below("", ""), "");
}

// INVALID_ARGUMENT, the message "<field>: <description>", one BadRequest violation.
TEST(FieldViolationTest, CarriesOneBadRequestViolationNamingTheField) {
  const absl::Status status =
      FieldViolation("arm.spec.limbs[2].length", "must be finite and > 0, got -1");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "arm.spec.limbs[2].length: must be finite and > 0, got -1");
  const std::optional<google::rpc::BadRequest> bad_request = BadRequestOf(status);
  ASSERT_TRUE(bad_request.has_value()) << status;
  ASSERT_EQ(bad_request->field_violations_size(), 1);
  EXPECT_EQ(bad_request->field_violations(0).field(), "arm.spec.limbs[2].length");
  EXPECT_EQ(bad_request->field_violations(0).description(), "must be finite and > 0, got -1");
  EXPECT_FALSE(status.GetPayload(kQuotaFailureUrl).has_value());
}

TEST(QuotaExceededTest, CarriesOneQuotaFailureViolationNamingTheSubject) {
  const absl::Status status = QuotaExceeded("worker pool", "all 4 workers are busy");
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(), "all 4 workers are busy");
  const auto payload = status.GetPayload(kQuotaFailureUrl);
  ASSERT_TRUE(payload.has_value()) << status;
  google::rpc::QuotaFailure failure;
  ASSERT_TRUE(failure.ParseFromString(std::string(*payload)));
  ASSERT_EQ(failure.violations_size(), 1);
  EXPECT_EQ(failure.violations(0).subject(), "worker pool");
  EXPECT_EQ(failure.violations(0).description(), "all 4 workers are busy");
  EXPECT_FALSE(status.GetPayload(kBadRequestUrl).has_value());
}

// "<solver field> must ..." : the field goes through path_of, the rest is the description.
TEST(SolverFieldViolationTest, MapsTheLeadingSolverFieldOntoTheRequestPath) {
  std::vector<std::string> asked;
  const absl::Status status = SolverFieldViolation(
      absl::InvalidArgumentError("limbs[2].length must be finite and > 0, got -1"),
      RecordingPath{&asked});
  EXPECT_EQ(asked, std::vector<std::string>{"limbs[2].length"});
  const std::optional<google::rpc::BadRequest> bad_request = BadRequestOf(status);
  ASSERT_TRUE(bad_request.has_value()) << status;
  ASSERT_EQ(bad_request->field_violations_size(), 1);
  EXPECT_EQ(bad_request->field_violations(0).field(), "arm.spec.limbs[2].length");
  EXPECT_EQ(bad_request->field_violations(0).description(), "must be finite and > 0, got -1");
  EXPECT_EQ(status.message(), "arm.spec.limbs[2].length: must be finite and > 0, got -1");
}

// "<solver field>: ..." (a colon after the field) is the other form the solver writes.
TEST(SolverFieldViolationTest, AcceptsAColonAfterTheSolverField) {
  std::vector<std::string> asked;
  const absl::Status status = SolverFieldViolation(
      absl::InvalidArgumentError("joint_limits[0]: min 1 must be <= max 0"), RecordingPath{&asked});
  EXPECT_EQ(asked, std::vector<std::string>{"joint_limits[0]"});
  const std::optional<google::rpc::BadRequest> bad_request = BadRequestOf(status);
  ASSERT_TRUE(bad_request.has_value()) << status;
  EXPECT_EQ(bad_request->field_violations(0).field(), "arm.spec.joint_limits[0]");
  EXPECT_EQ(bad_request->field_violations(0).description(), "min 1 must be <= max 0");
}

// A message that does not start with a lower-case field path names no field: path_of("") and
// the whole message as the description.
TEST(SolverFieldViolationTest, AMessageNamingNoFieldAsksForTheEmptyField) {
  for (const std::string& message :
       {std::string("Base orientation is zero"), std::string("from, to and duration give a path "
                                                             "speed beyond the double range")}) {
    std::vector<std::string> asked;
    const absl::Status status =
        SolverFieldViolation(absl::InvalidArgumentError(message), RecordingPath{&asked});
    EXPECT_EQ(asked, std::vector<std::string>{""}) << message;
    const std::optional<google::rpc::BadRequest> bad_request = BadRequestOf(status);
    ASSERT_TRUE(bad_request.has_value()) << status;
    EXPECT_EQ(bad_request->field_violations(0).field(), "arm.spec") << message;
    EXPECT_EQ(bad_request->field_violations(0).description(), message);
  }
}

// Only INVALID_ARGUMENT is a field error: other codes pass through untouched, payloads kept.
TEST(SolverFieldViolationTest, OtherCodesAreReturnedUnchanged) {
  absl::Status not_found = absl::NotFoundError("limbs[0] is gone");
  not_found.SetPayload("type.googleapis.com/example.Detail", absl::Cord("x"));
  for (const absl::Status& in :
       {absl::OkStatus(), not_found, absl::FailedPreconditionError("singular: rank 2 < 3")}) {
    std::vector<std::string> asked;
    const absl::Status out = SolverFieldViolation(in, RecordingPath{&asked});
    EXPECT_EQ(out, in);  // code, message and payloads
    EXPECT_THAT(asked, IsEmpty()) << in;
  }
}

TEST(ToGrpcStatusTest, OkIsOk) { EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok()); }

// Same code and message; the BadRequest arrives as a google.protobuf.Any in google.rpc.Status.
TEST(ToGrpcStatusTest, PacksTheBadRequestIntoTheStatusDetails) {
  const grpc::Status status = ToGrpcStatus(FieldViolation("operations[1].obstacle_id", "no such"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "operations[1].obstacle_id: no such");
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(status.error_details()));
  EXPECT_EQ(details.code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(details.message(), "operations[1].obstacle_id: no such");
  ASSERT_EQ(details.details_size(), 1);
  EXPECT_EQ(details.details(0).type_url(), kBadRequestUrl);
  google::rpc::BadRequest bad_request;
  ASSERT_TRUE(details.details(0).UnpackTo(&bad_request));
  ASSERT_EQ(bad_request.field_violations_size(), 1);
  EXPECT_EQ(bad_request.field_violations(0).field(), "operations[1].obstacle_id");
  EXPECT_EQ(bad_request.field_violations(0).description(), "no such");
}

// Every payload becomes one Any, whatever its type; codes other than INVALID_ARGUMENT keep
// their number.
TEST(ToGrpcStatusTest, PacksEveryPayloadAndKeepsTheCode) {
  absl::Status in = QuotaExceeded("streams", "at most 8 streams");
  in.SetPayload(kBadRequestUrl, absl::Cord(google::rpc::BadRequest().SerializeAsString()));
  const grpc::Status status = ToGrpcStatus(in);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(status.error_details()));
  EXPECT_EQ(details.code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  ASSERT_EQ(details.details_size(), 2);
  int quota = 0, bad_request = 0;
  for (const google::protobuf::Any& any : details.details()) {
    google::rpc::QuotaFailure failure;
    if (any.UnpackTo(&failure)) {
      ++quota;
      ASSERT_EQ(failure.violations_size(), 1);
      EXPECT_EQ(failure.violations(0).subject(), "streams");
    }
    bad_request += any.type_url() == kBadRequestUrl ? 1 : 0;
  }
  EXPECT_EQ(quota, 1);
  EXPECT_EQ(bad_request, 1);
}

// A status without payloads still carries google.rpc.Status with its code and message.
TEST(ToGrpcStatusTest, AStatusWithoutPayloadsHasNoDetailEntries) {
  const grpc::Status status = ToGrpcStatus(absl::NotFoundError("arms/a1 not found"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "arms/a1 not found");
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(status.error_details()));
  EXPECT_EQ(details.code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(details.message(), "arms/a1 not found");
  EXPECT_EQ(details.details_size(), 0);
}

}  // namespace
}  // namespace ikd::server
