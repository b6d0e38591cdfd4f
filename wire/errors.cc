#include "errors.h"

#include <grpcpp/support/error_details.h>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace ikd::server {

std::string Below(const std::string& prefix, const std::string& field) {
  if (prefix.empty()) return field;
  return field.empty() ? prefix : absl::StrCat(prefix, ".", field);
}
namespace {

constexpr char kTypeUrlPrefix[] = "type.googleapis.com/";

std::string TypeUrl(const google::protobuf::Message& message) {
  return absl::StrCat(kTypeUrlPrefix, message.GetDescriptor()->full_name());
}

bool IsFieldPathChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '[' ||
         c == ']';
}

// Splits "<field> rest" / "<field>: rest" into the field path and the rest; the field is ""
// when the message does not start with a lower-case field path.
std::pair<std::string, std::string> SplitFieldPath(const std::string& message) {
  size_t end = 0;
  while (end < message.size() && IsFieldPathChar(message[end])) ++end;
  const bool named = end > 0 && message[0] >= 'a' && message[0] <= 'z' &&
                     (end == message.size() || message[end] == ' ' || message[end] == ':');
  if (!named) return {"", message};
  std::string rest = message.substr(end);
  while (!rest.empty() && (rest[0] == ' ' || rest[0] == ':')) rest.erase(0, 1);
  return {message.substr(0, end), rest};
}

}  // namespace

absl::Status FieldViolation(const std::string& field, const std::string& description) {
  google::rpc::BadRequest bad_request;
  auto* violation = bad_request.add_field_violations();
  violation->set_field(field);
  violation->set_description(description);
  absl::Status status(absl::StatusCode::kInvalidArgument, absl::StrCat(field, ": ", description));
  status.SetPayload(TypeUrl(bad_request), absl::Cord(bad_request.SerializeAsString()));
  return status;
}

absl::Status QuotaExceeded(const std::string& subject, const std::string& description) {
  google::rpc::QuotaFailure failure;
  auto* violation = failure.add_violations();
  violation->set_subject(subject);
  violation->set_description(description);
  absl::Status status(absl::StatusCode::kResourceExhausted, description);
  status.SetPayload(TypeUrl(failure), absl::Cord(failure.SerializeAsString()));
  return status;
}

absl::Status SolverFieldViolation(const absl::Status& solver_status,
                                  const std::function<std::string(const std::string&)>& path_of) {
  if (solver_status.code() != absl::StatusCode::kInvalidArgument) return solver_status;
  auto [field, rest] = SplitFieldPath(std::string(solver_status.message()));
  return FieldViolation(path_of(field), rest);
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  google::rpc::Status rpc_status;
  rpc_status.set_code(static_cast<int>(status.code()));  // absl and gRPC codes coincide
  rpc_status.set_message(std::string(status.message()));
  status.ForEachPayload([&](absl::string_view type_url, const absl::Cord& payload) {
    auto* any = rpc_status.add_details();
    any->set_type_url(std::string(type_url));
    any->set_value(std::string(payload));
  });
  grpc::Status out;
  grpc::SetErrorDetails(rpc_status, &out);
  return out;
}

}  // namespace ikd::server
