// Test helper for the service tests: the google.rpc.BadRequest field path carried in the details
// of an INVALID_ARGUMENT grpc::Status.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <string>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace ikd::testing {

// The single field violation's path; "<no details>" or "<no BadRequest>" when there is none
// (and a failed expectation when the code is not INVALID_ARGUMENT).
inline std::string ViolatedField(const grpc::Status& status) {
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  google::rpc::Status details;
  if (!details.ParseFromString(status.error_details())) return "<no details>";
  google::rpc::BadRequest bad_request;
  for (const auto& any : details.details()) {
    if (any.UnpackTo(&bad_request) && bad_request.field_violations_size() == 1) {
      return bad_request.field_violations(0).field();
    }
  }
  return "<no BadRequest>";
}

}  // namespace ikd::testing
