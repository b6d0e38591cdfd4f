#include "connect_flags.h"

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA certificate that signed ikd's certificate: connect with TLS");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM client certificate (with --tls_key), for an ikd started with --tls_client_ca");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, token, "",
          "bearer token sent on every call (visible in the process list: prefer --token_file)");
ABSL_FLAG(std::string, token_file, "", "file whose first non-comment line is the bearer token");

namespace ikd::clients {

absl::StatusOr<ConnectOptions> ConnectOptionsFromFlags() {
  ConnectOptions options;
  options.tls_ca_file = absl::GetFlag(FLAGS_tls_ca);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  options.token = absl::GetFlag(FLAGS_token);
  const std::string token_file = absl::GetFlag(FLAGS_token_file);
  if (!token_file.empty()) {
    if (!options.token.empty()) {
      return absl::InvalidArgumentError("--token and --token_file are exclusive");
    }
    absl::StatusOr<std::string> token = ReadTokenFile(token_file);
    if (!token.ok()) return token.status();
    options.token = *std::move(token);
  }
  return options;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> ConnectFromFlags(const std::string& address) {
  absl::StatusOr<ConnectOptions> options = ConnectOptionsFromFlags();
  if (!options.ok()) return options.status();
  return Connect(address, *options);
}

}  // namespace ikd::clients
