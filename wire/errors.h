// Error model of the service: absl::Status inside the server, google.rpc.Status on the wire.
// Details travel as absl::Status payloads keyed by their type URL
// ("type.googleapis.com/google.rpc.BadRequest"), and ToGrpcStatus packs every payload into the
// google.rpc.Status details (as google.protobuf.Any), so clients read them with
// grpc::ExtractErrorDetails.
#pragma once

#include <grpcpp/support/status.h>

#include <functional>
#include <string>

#include "absl/status/status.h"

namespace ikd::server {

// The request field path `field` below `prefix` ("options" below "config": "config.options");
// either may be empty ("" below "config" is "config").
std::string Below(const std::string& prefix, const std::string& field);

// INVALID_ARGUMENT with a google.rpc.BadRequest naming one field (a request field path such as
// "arm.spec.limbs[2].length") and what it must satisfy; the message reads
// "<field>: <description>".
absl::Status FieldViolation(const std::string& field, const std::string& description);

// RESOURCE_EXHAUSTED with a google.rpc.QuotaFailure violation (subject: what is limited).
absl::Status QuotaExceeded(const std::string& subject, const std::string& description);

// Maps an InvalidArgument of the solver, whose message starts with the solver-side field path
// ("limbs[2].length must be finite and > 0, got -1", "joint_limits[0]: min 1 must be <= max 0",
// "obstacles: at most ..."), onto a FieldViolation at request path `path_of(solver_field)`
// (solver_field is "" when the message names none). Other statuses are returned unchanged.
absl::Status SolverFieldViolation(const absl::Status& solver_status,
                                  const std::function<std::string(const std::string&)>& path_of);

// absl::Status -> grpc::Status with the same code and message and the payloads as details.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace ikd::server
