#include "security.h"

#include <arpa/inet.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace ikd::server {
namespace {

constexpr absl::string_view kBearerPrefix = "Bearer ";

absl::StatusOr<TokenRole> ParseRole(absl::string_view role) {
  if (role == "read-write") return TokenRole::kReadWrite;
  if (role == "read-only") return TokenRole::kReadOnly;
  return absl::InvalidArgumentError("the role must be read-write or read-only");
}

// Visible ASCII only: the token travels as an HTTP/2 header value.
bool IsTokenText(absl::string_view token) {
  for (char c : token) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

absl::StatusOr<Token> ParseTokenLine(absl::string_view line) {
  std::vector<absl::string_view> fields =
      absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (fields.size() != 2) {
    return absl::InvalidArgumentError("expected \"read-write <token>\" or \"read-only <token>\"");
  }
  absl::StatusOr<TokenRole> role = ParseRole(fields[0]);
  if (!role.ok()) return role.status();
  if (fields[1].size() < kMinTokenLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("the token must be at least ", kMinTokenLength, " characters"));
  }
  if (!IsTokenText(fields[1])) {
    return absl::InvalidArgumentError("the token must be visible ASCII characters");
  }
  return Token{*role, std::string(fields[1])};
}

// Equality whose running time depends only on the lengths, never on where the bytes differ.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  uint8_t difference = a.size() == b.size() ? 0 : 1;
  const size_t n = a.size();
  for (size_t i = 0; i < n; ++i) {
    const uint8_t other = b.empty() ? 0 : static_cast<uint8_t>(b[i % b.size()]);
    difference |= static_cast<uint8_t>(a[i]) ^ other;
  }
  return difference == 0;
}

absl::StatusOr<std::string> ReadFile(const std::string& path, absl::string_view flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": cannot read \"", path, "\""));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": error reading \"", path, "\""));
  }
  return buffer.str();
}

absl::StatusOr<std::string> ReadPem(const std::string& path, absl::string_view flag,
                                    absl::string_view what, absl::string_view marker) {
  absl::StatusOr<std::string> pem = ReadFile(path, flag);
  if (!pem.ok()) return pem.status();
  if (!absl::StrContains(*pem, marker)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": \"", path, "\" holds no PEM ", what));
  }
  return pem;
}

// The host part of "host:port", "[v6]:port" or "scheme:host:port".
std::string ListenHost(std::string listen) {
  for (absl::string_view scheme : {"dns:", "ipv4:", "ipv6:"}) {
    if (absl::StartsWith(listen, scheme)) listen = listen.substr(scheme.size());
  }
  if (absl::StartsWith(listen, "[")) {
    const size_t close = listen.find(']');
    return close == std::string::npos ? listen : listen.substr(1, close - 1);
  }
  const size_t colon = listen.rfind(':');
  return colon == std::string::npos ? listen : listen.substr(0, colon);
}

}  // namespace

absl::StatusOr<std::vector<Token>> ParseTokens(const std::string& text,
                                               const std::string& source) {
  std::vector<Token> tokens;
  std::unordered_set<std::string> seen;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    absl::StatusOr<Token> token = ParseTokenLine(line);
    if (!token.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, " line ", line_number, ": ", token.status().message()));
    }
    if (!seen.insert(token->secret).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, " line ", line_number, ": the token repeats an earlier line's token"));
    }
    tokens.push_back(*std::move(token));
  }
  if (tokens.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": no token"));
  }
  return tokens;
}

absl::StatusOr<std::vector<Token>> ReadTokensFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path, "tokens_file");
  if (!text.ok()) return text.status();
  return ParseTokens(*text, absl::StrCat("--tokens_file \"", path, "\""));
}

bool IsLoopbackAddress(const std::string& listen) {
  if (absl::StartsWith(listen, "unix:") || absl::StartsWith(listen, "unix-abstract:")) return true;
  const std::string host = ListenHost(listen);
  if (host == "localhost" || host == "::1") return true;
  // A numeric 127.0.0.0/8 address only: "127.corp.example" is a name that may resolve anywhere.
  in_addr address{};
  return inet_pton(AF_INET, host.c_str(), &address) == 1 &&
         (ntohl(address.s_addr) >> 24) == 127;
}

absl::Status ValidateSecurityOptions(const SecurityOptions& options, const std::string& listen) {
  const TlsFiles& tls = options.tls;
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key must be given together");
  }
  if (!tls.client_ca_file.empty() && !tls.enabled()) {
    return absl::InvalidArgumentError("--tls_client_ca needs --tls_cert and --tls_key");
  }
  if (!options.tokens.empty() && !tls.enabled() && !IsLoopbackAddress(listen) &&
      !options.allow_insecure_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tokens_file with a plaintext non-loopback --listen=", listen,
        " would send tokens in clear: add --tls_cert and --tls_key, listen on loopback, or set "
        "--allow_insecure_tokens behind a TLS-terminating proxy"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const TlsFiles& tls) {
  if (!tls.enabled()) return grpc::InsecureServerCredentials();
  absl::StatusOr<std::string> cert = ReadPem(tls.cert_file, "tls_cert", "certificate",
                                             "-----BEGIN CERTIFICATE-----");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key =
      ReadPem(tls.key_file, "tls_key", "private key", "PRIVATE KEY-----");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  if (!tls.client_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadPem(tls.client_ca_file, "tls_client_ca",
                                             "certificate", "-----BEGIN CERTIFICATE-----");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

const Token* TokenAuthenticator::Find(const std::string& presented) const {
  const Token* found = nullptr;
  for (const Token& token : tokens_) {  // no early exit: every token is compared
    if (ConstantTimeEquals(token.secret, presented)) found = &token;
  }
  return found;
}

grpc::Status TokenAuthenticator::Check(const grpc::ServerContextBase& context, Access access,
                                       const char* method) const {
  const auto& metadata = context.client_metadata();
  const auto header = metadata.find("authorization");
  if (header == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        absl::StrCat(method, " needs \"authorization: Bearer <token>\" metadata"));
  }
  const absl::string_view value(header->second.data(), header->second.size());
  const Token* token = nullptr;
  if (absl::StartsWith(value, kBearerPrefix)) {
    token = Find(std::string(value.substr(kBearerPrefix.size())));
  }
  if (token == nullptr) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        absl::StrCat(method, ": the bearer token is not valid"));
  }
  if (access == Access::kWrite && token->role != TokenRole::kReadWrite) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(method, " writes models: it needs a read-write token"));
  }
  return grpc::Status::OK;
}

}  // namespace ikd::server
