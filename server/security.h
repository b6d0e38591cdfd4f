// Transport security and caller authentication of ikd: TLS server credentials from PEM files
// (optionally requiring a client certificate signed by a given CA), bearer tokens with a
// read-only or read-write role, and the rule that tokens never travel in clear over a
// non-loopback address.
//
//   auto tokens = ikd::server::ReadTokensFile("/etc/ikd/tokens");   // errors name the line
//   ikd::server::SecurityOptions security{.tls = {"server.pem", "server.key", "ca.pem"},
//                                         .tokens = *tokens};
//   auto credentials = ikd::server::ServerCredentialsFor(security.tls);
//
// Tokens are compared in constant time and never appear in a message or a log line.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ikd::server {

enum class TokenRole { kReadOnly, kReadWrite };

struct Token {
  TokenRole role = TokenRole::kReadOnly;
  std::string secret;
};

// PEM files of the listening port. Empty cert and key: plaintext. A client CA: the server
// requests a client certificate and accepts only one signed by that CA.
struct TlsFiles {
  std::string cert_file;       // --tls_cert
  std::string key_file;        // --tls_key
  std::string client_ca_file;  // --tls_client_ca

  bool enabled() const { return !cert_file.empty() || !key_file.empty(); }
};

struct SecurityOptions {
  TlsFiles tls;
  // Empty: no authentication (every caller may call everything).
  std::vector<Token> tokens;
  // Permits tokens over plaintext on a non-loopback address, for a TLS-terminating proxy or
  // sidecar on the same host; off by default because the tokens would cross the network in clear.
  bool allow_insecure_tokens = false;
};

// Shortest accepted token: 16 characters keep a guess out of reach of an online attack.
inline constexpr size_t kMinTokenLength = 16;

// Parses a tokens file: one "read-write <token>" or "read-only <token>" per line, blank lines
// and lines starting with '#' ignored. A malformed line (unknown role, missing or extra field,
// a token shorter than kMinTokenLength or with characters outside visible ASCII, a repeated
// token) is INVALID_ARGUMENT naming `source` and the line number, never the token. No token at
// all is INVALID_ARGUMENT too.
absl::StatusOr<std::vector<Token>> ParseTokens(const std::string& text, const std::string& source);

// ParseTokens of the file at `path`; an unreadable file is INVALID_ARGUMENT naming
// --tokens_file and the path.
absl::StatusOr<std::vector<Token>> ReadTokensFile(const std::string& path);

// True for "localhost:P", "127.x.y.z:P", "[::1]:P" and "unix:..." addresses.
bool IsLoopbackAddress(const std::string& listen);

// Checks the combination: cert and key both or neither, a client CA only with them, and no
// tokens over plaintext on a non-loopback `listen` unless allow_insecure_tokens. Errors name the
// flags.
absl::Status ValidateSecurityOptions(const SecurityOptions& options, const std::string& listen);

// Plaintext credentials, or TLS credentials from the PEM files; a missing, unreadable or
// non-PEM file is INVALID_ARGUMENT naming its flag and path.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const TlsFiles& tls);

// Which calls a token may make: reads (and every Kinematics, Simulation and Pose call) or also
// ModelService writes.
enum class Access { kRead, kWrite };

// Checks the "authorization: Bearer <token>" metadata of each call against the configured
// tokens. Thread-safe (immutable after construction).
class TokenAuthenticator {
 public:
  explicit TokenAuthenticator(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  // OK; UNAUTHENTICATED when the metadata is missing, malformed or names no configured token;
  // PERMISSION_DENIED when a read-only token asks for kWrite. `method` appears in messages.
  grpc::Status Check(const grpc::ServerContextBase& context, Access access,
                     const char* method) const;

 private:
  // The role of `presented`, comparing it with every token in constant time.
  const Token* Find(const std::string& presented) const;

  const std::vector<Token> tokens_;
};

}  // namespace ikd::server
