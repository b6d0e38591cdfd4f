// Test helper for the wire tests: the google.rpc.BadRequest field violation that
// wire/errors.h's FieldViolation carries in an absl::Status, read back from the payload with the
// proto's own parser (not with the code under test).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "google/rpc/error_details.pb.h"

namespace ikd::testing {

inline constexpr char kBadRequestUrl[] = "type.googleapis.com/google.rpc.BadRequest";

// Success when `status` is INVALID_ARGUMENT with exactly one BadRequest violation whose field is
// exactly `field` and whose description contains `bound`, and the message reads
// "<field>: <description>" (errors.h).
inline ::testing::AssertionResult IsFieldViolation(const absl::Status& status,
                                                   const std::string& field,
                                                   const std::string& bound) {
  if (status.code() != absl::StatusCode::kInvalidArgument) {
    return ::testing::AssertionFailure() << "not INVALID_ARGUMENT: " << status;
  }
  const auto payload = status.GetPayload(kBadRequestUrl);
  if (!payload.has_value()) return ::testing::AssertionFailure() << "no BadRequest: " << status;
  google::rpc::BadRequest bad_request;
  if (!bad_request.ParseFromString(std::string(*payload))) {
    return ::testing::AssertionFailure() << "unparsable BadRequest: " << status;
  }
  if (bad_request.field_violations_size() != 1) {
    return ::testing::AssertionFailure()
           << bad_request.field_violations_size() << " violations: " << status;
  }
  const auto& violation = bad_request.field_violations(0);
  if (violation.field() != field) {
    return ::testing::AssertionFailure() << "field \"" << violation.field() << "\", expected \""
                                         << field << "\" (" << status << ")";
  }
  if (!absl::StrContains(violation.description(), bound)) {
    return ::testing::AssertionFailure() << "description \"" << violation.description()
                                         << "\" does not mention \"" << bound << "\"";
  }
  if (status.message() != field + ": " + violation.description()) {
    return ::testing::AssertionFailure()
           << "message \"" << status.message() << "\" is not \"<field>: <description>\"";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ikd::testing
