// Helpers shared by the ikd command-line clients (ikctl, mock_arm): channels and deadlines,
// readable RPC errors (code, message and every google.rpc.BadRequest field violation), models
// as JSON (protobuf's JSON mapping of proto/ikd/v1/types.proto), and parsing of "x,y,z" text.
//
//   auto channel = ikd::clients::Connect("127.0.0.1:50051");
//   auto stub = ikd::v1::ModelService::NewStub(channel);
//   grpc::ClientContext context;
//   ikd::clients::SetTimeout(context, absl::Seconds(10));
//   grpc::Status status = stub->GetArm(&context, request, &arm);
//   if (!status.ok()) std::cerr << ikd::clients::DescribeRpcError(status);
#pragma once

#include <google/protobuf/message.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ikd/v1/kinematics_service.pb.h"
#include "ikd/v1/pose_service.pb.h"
#include "ikd/v1/types.pb.h"

namespace ikd::clients {

// An insecure channel to "host:port" without a token (ikd's default: plaintext on loopback).
std::shared_ptr<grpc::Channel> Connect(const std::string& address);

// How to reach a secured ikd (docs/operations.md, "Security").
struct ConnectOptions {
  // PEM CA certificate(s) that signed the server's certificate. TLS is used when this or a
  // client certificate is set; empty with TLS: the system's roots.
  std::string tls_ca_file;
  // PEM client certificate and key, for a server that verifies clients (--tls_client_ca).
  std::string tls_cert_file;
  std::string tls_key_file;
  // Sent on every call as "authorization: Bearer <token>"; empty: none.
  std::string token;
};

// A channel to "host:port" per `options`; an unreadable PEM file is InvalidArgument naming its
// flag (--tls_ca, --tls_cert, --tls_key) and path. The token is attached by a client
// interceptor rather than call credentials, because gRPC refuses call credentials on plaintext
// channels and ikd accepts tokens on plaintext loopback.
absl::StatusOr<std::shared_ptr<grpc::Channel>> Connect(const std::string& address,
                                                       const ConnectOptions& options);

// The token of a token file: its first non-blank line that is not a '#' comment, trimmed.
// InvalidArgument naming --token_file when it cannot be read or holds none.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// Sets the call's deadline `timeout` from now; an infinite timeout leaves it unset.
void SetTimeout(grpc::ClientContext& context, absl::Duration timeout);

// "INVALID_ARGUMENT: <message>" followed by one indented line per detail carried in the
// google.rpc.Status of the trailers (BadRequest field violations with their field paths,
// QuotaFailure violations, else the detail's type URL). Ends with a newline.
std::string DescribeRpcError(const grpc::Status& status);

// The whole of file `path`; "-" reads standard input.
absl::StatusOr<std::string> ReadTextFile(const std::string& path);

// Protobuf JSON mapping. Parsing rejects unknown fields so that typos are not silently dropped;
// printing keeps the proto field names (arm.spec.limbs[0].length reads as in the error paths).
absl::Status ParseJson(const std::string& json, google::protobuf::Message* message);
std::string ToJson(const google::protobuf::Message& message, bool multiline = true);
// JSON when the text starts with '{', else protobuf text format (a textproto).
absl::Status ParseText(const std::string& text, google::protobuf::Message* message);

// An arm (scene) file, JSON or textproto, holds either a whole Arm (Scene) as `ikctl arms get`
// prints it, or a bare ArmSpec (SceneSpec). Errors name the file.
absl::StatusOr<v1::ArmSpec> LoadArmSpec(const std::string& path);
absl::StatusOr<v1::SceneSpec> LoadSceneSpec(const std::string& path);
absl::StatusOr<v1::SkeletonSpec> LoadSkeletonSpec(const std::string& path);

// `message` from the file `path` ("-": standard input), JSON or textproto (ParseText); errors
// name the file.
absl::Status LoadMessageFile(const std::string& path, google::protobuf::Message* message);

// The spec of the stored "arms/{id}" ("scenes/{id}") through ModelService, with a deadline of
// `timeout`; UNAVAILABLE naming the model and the RPC error otherwise.
absl::StatusOr<v1::ArmSpec> FetchArmSpec(const std::shared_ptr<grpc::Channel>& channel,
                                         const std::string& name, absl::Duration timeout);
absl::StatusOr<v1::SceneSpec> FetchSceneSpec(const std::shared_ptr<grpc::Channel>& channel,
                                             const std::string& name, absl::Duration timeout);

// "1,2,3" (spaces allowed) -> Vector3; anything else is InvalidArgument naming `what`.
absl::StatusOr<v1::Vector3> ParseVector3(absl::string_view text, absl::string_view what);

// "1, 2.5,3" -> {1, 2.5, 3}; blank text -> {}; anything else InvalidArgument naming `what`.
absl::StatusOr<std::vector<double>> ParseNumbers(const std::string& text, const std::string& what);
// "x0,y0,z0:x1,y1,z1" -> the two ends of a segment.
absl::StatusOr<std::pair<v1::Vector3, v1::Vector3>> ParseSegment(absl::string_view text,
                                                                  absl::string_view what);

// "demo" or "arms/demo" -> "arms/demo" for collection "arms".
std::string ResourceName(absl::string_view collection, absl::string_view id_or_name);

// STEP_STATUS_REACHED -> "REACHED".
std::string StepStatusName(v1::StepStatus status);

v1::Vector3 MakeVector3(double x, double y, double z);
double Distance(const v1::Vector3& a, const v1::Vector3& b);

}  // namespace ikd::clients
