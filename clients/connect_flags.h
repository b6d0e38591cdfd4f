// The connection flags shared by ikctl and mock_arm: --tls_ca, --tls_cert, --tls_key (TLS and
// a client certificate) and --token / --token_file (a bearer token on every call).
//
//   auto channel = ikd::clients::ConnectFromFlags(absl::GetFlag(FLAGS_server));
//   if (!channel.ok()) { std::cerr << channel.status().message() << "\n"; return 2; }
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "client_util.h"

namespace ikd::clients {

// The ConnectOptions the flags ask for; InvalidArgument naming the flag when --token and
// --token_file are both set or the token file cannot be read.
absl::StatusOr<ConnectOptions> ConnectOptionsFromFlags();

// Connect(address, ConnectOptionsFromFlags()).
absl::StatusOr<std::shared_ptr<grpc::Channel>> ConnectFromFlags(const std::string& address);

}  // namespace ikd::clients
