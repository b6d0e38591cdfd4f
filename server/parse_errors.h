// Requests whose bytes do not parse as their message (issue 18, Bad input). gRPC's callback API
// answers such a unary or server-streaming request UNIMPLEMENTED with an empty message, as if
// the method did not exist, and ends a bidirectional stream's read as if the client had
// half-closed (the stream then finished OK). Here:
//   - an interceptor turns the first into INVALID_ARGUMENT naming the request's message type;
//   - a read sentinel lets a stream reactor tell the second from a half-close:
//       MarkUnread(request_); StartRead(&request_);
//       ... OnReadDone(false): if (ReadFailedToParse(request_)) End(UnparsableStreamMessage(request_));
#pragma once

#include <memory>
#include <string>

#include <grpcpp/support/server_interceptor.h>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace ikd::server {

// Rewrites UNIMPLEMENTED with an empty message on a method of a registered proto service (what
// gRPC answers when the request does not parse) into INVALID_ARGUMENT "the request could not be
// parsed as <type> ...". A method the descriptor pool does not know is left alone.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeParseErrorInterceptorFactory();

// "/ikd.v1.KinematicsService/Solve" -> "ikd.v1.SolveRequest"; empty when unknown.
std::string RequestTypeOf(const std::string& method);

// Puts a sentinel into `message` (an unknown field) that a parse attempt clears: after a failed
// read, a missing sentinel means bytes came and did not parse.
void MarkUnread(google::protobuf::Message& message);
bool ReadFailedToParse(const google::protobuf::Message& message);
absl::Status UnparsableStreamMessage(const google::protobuf::Message& message);

}  // namespace ikd::server
