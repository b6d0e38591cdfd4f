#include "client_util.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/client_interceptor.h>
#include <grpcpp/support/error_details.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "ikd/v1/model_service.grpc.pb.h"

namespace ikd::clients {

std::shared_ptr<grpc::Channel> Connect(const std::string& address) {
  return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
}

namespace {

// Adds "authorization: Bearer <token>" to the initial metadata of every call of a channel.
class BearerTokenInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit BearerTokenInterceptor(const std::string* header) : header_(header) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace("authorization", *header_);
    }
    methods->Proceed();
  }

 private:
  const std::string* const header_;
};

class BearerTokenInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerTokenInterceptorFactory(const std::string& token)
      : header_(absl::StrCat("Bearer ", token)) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* /*info*/) override {
    return new BearerTokenInterceptor(&header_);
  }

 private:
  const std::string header_;  // the channel owns the factory, so it outlives every call
};

absl::StatusOr<std::string> ReadFlagFile(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (!in || in.bad()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": cannot read \"", path, "\""));
  }
  return buffer.str();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::Channel>> Connect(const std::string& address,
                                                       const ConnectOptions& options) {
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!options.tls_ca_file.empty() || !options.tls_cert_file.empty()) {
    if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
      return absl::InvalidArgumentError("--tls_cert and --tls_key must be given together");
    }
    grpc::SslCredentialsOptions ssl;
    const std::pair<const std::string*, std::string*> files[] = {
        {&options.tls_ca_file, &ssl.pem_root_certs},
        {&options.tls_cert_file, &ssl.pem_cert_chain},
        {&options.tls_key_file, &ssl.pem_private_key}};
    const char* flags[] = {"tls_ca", "tls_cert", "tls_key"};
    for (int k = 0; k < 3; ++k) {
      if (files[k].first->empty()) continue;
      absl::StatusOr<std::string> pem = ReadFlagFile(*files[k].first, flags[k]);
      if (!pem.ok()) return pem.status();
      *files[k].second = *std::move(pem);
    }
    credentials = grpc::SslCredentials(ssl);
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> creators;
  if (!options.token.empty()) {
    creators.push_back(std::make_unique<BearerTokenInterceptorFactory>(options.token));
  }
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      address, credentials, grpc::ChannelArguments(), std::move(creators));
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFlagFile(path, "token_file");
  if (!text.ok()) return text.status();
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty() && line[0] != '#') return std::string(line);
  }
  return absl::InvalidArgumentError(absl::StrCat("--token_file: \"", path, "\" holds no token"));
}

void SetTimeout(grpc::ClientContext& context, absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) return;
  context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
}

namespace {

// The status code's canonical name; gRPC and absl codes are the same numbers.
std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

void DescribeDetail(const google::protobuf::Any& detail, std::string* out) {
  google::rpc::BadRequest bad_request;
  google::rpc::QuotaFailure quota_failure;
  if (detail.UnpackTo(&bad_request)) {
    for (const auto& violation : bad_request.field_violations()) {
      absl::StrAppend(out, "  field ", violation.field(), ": ", violation.description(), "\n");
    }
  } else if (detail.UnpackTo(&quota_failure)) {
    for (const auto& violation : quota_failure.violations()) {
      absl::StrAppend(out, "  quota ", violation.subject(), ": ", violation.description(), "\n");
    }
  } else {
    absl::StrAppend(out, "  detail ", detail.type_url(), "\n");
  }
}

}  // namespace

std::string DescribeRpcError(const grpc::Status& status) {
  std::string out = absl::StrCat(CodeName(status.error_code()), ": ", status.error_message(), "\n");
  google::rpc::Status rpc_status;
  // error_details() is the serialized google.rpc.Status of the grpc-status-details-bin trailer.
  if (!status.error_details().empty() && rpc_status.ParseFromString(status.error_details())) {
    for (const auto& detail : rpc_status.details()) DescribeDetail(detail, &out);
  }
  return out;
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

absl::Status ParseJson(const std::string& json, google::protobuf::Message* message) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(json, message, options);
  if (status.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("not a JSON ", message->GetDescriptor()->full_name(), ": ",
                   std::string(status.message())));
}

namespace {

// Collects the text-format parser's complaints into one message.
class TextErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    absl::StrAppend(&text_, text_.empty() ? "" : "; ", "line ", line + 1, " column ",
                    column + 1, ": ", message);
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace

absl::Status ParseText(const std::string& text, google::protobuf::Message* message) {
  const absl::string_view body = absl::StripLeadingAsciiWhitespace(text);
  if (body.empty() || body.front() == '{') return ParseJson(text, message);
  google::protobuf::TextFormat::Parser parser;
  TextErrors errors;
  parser.RecordErrorsTo(&errors);
  if (parser.ParseFromString(text, message)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "not a textproto ", message->GetDescriptor()->full_name(), ": ", errors.text()));
}

std::string ToJson(const google::protobuf::Message& message, bool multiline) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = multiline;
  options.preserve_proto_field_names = true;
  std::string json;
  // Printing a valid message cannot fail (no Any fields with unknown types in ikd.v1).
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!multiline || json.empty() || json.back() != '\n') json += multiline ? "\n" : "";
  return json;
}

namespace {

// Parses `path` as `Whole` (e.g. Arm) and returns its `spec`, else as the bare spec type.
template <typename Whole, typename Spec>
absl::StatusOr<Spec> LoadSpec(const std::string& path) {
  auto text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  Whole whole;
  if (ParseText(*text, &whole).ok() && whole.has_spec()) return whole.spec();
  Spec spec;
  absl::Status parsed = ParseText(*text, &spec);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": neither a ", Whole::descriptor()->full_name(), " nor a ",
        Spec::descriptor()->full_name(), " (JSON or textproto): ", parsed.message()));
  }
  return spec;
}

}  // namespace

absl::StatusOr<v1::ArmSpec> LoadArmSpec(const std::string& path) {
  return LoadSpec<v1::Arm, v1::ArmSpec>(path);
}

absl::StatusOr<v1::SceneSpec> LoadSceneSpec(const std::string& path) {
  return LoadSpec<v1::Scene, v1::SceneSpec>(path);
}

absl::StatusOr<v1::SkeletonSpec> LoadSkeletonSpec(const std::string& path) {
  return LoadSpec<v1::Skeleton, v1::SkeletonSpec>(path);
}

absl::Status LoadMessageFile(const std::string& path, google::protobuf::Message* message) {
  auto text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  absl::Status parsed = ParseText(*text, message);
  if (!parsed.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", parsed.message()));
  return absl::OkStatus();
}

absl::StatusOr<v1::Vector3> ParseVector3(absl::string_view text, absl::string_view what) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ',');
  double xyz[3];
  bool ok = parts.size() == 3;
  for (size_t k = 0; ok && k < 3; ++k) {
    ok = absl::SimpleAtod(absl::StripAsciiWhitespace(parts[k]), &xyz[k]) && std::isfinite(xyz[k]);
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected three finite numbers x,y,z, got \"", text, "\""));
  }
  return MakeVector3(xyz[0], xyz[1], xyz[2]);
}

absl::StatusOr<std::pair<v1::Vector3, v1::Vector3>> ParseSegment(absl::string_view text,
                                                                  absl::string_view what) {
  std::vector<absl::string_view> ends = absl::StrSplit(text, ':');
  if (ends.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected x0,y0,z0:x1,y1,z1, got \"", text, "\""));
  }
  auto from = ParseVector3(ends[0], what);
  if (!from.ok()) return from.status();
  auto to = ParseVector3(ends[1], what);
  if (!to.ok()) return to.status();
  return std::make_pair(*from, *to);
}

std::string ResourceName(absl::string_view collection, absl::string_view id_or_name) {
  const std::string prefix = absl::StrCat(collection, "/");
  if (absl::StartsWith(id_or_name, prefix)) return std::string(id_or_name);
  return absl::StrCat(prefix, id_or_name);
}

std::string StepStatusName(v1::StepStatus status) {
  return std::string(absl::StripPrefix(v1::StepStatus_Name(status), "STEP_STATUS_"));
}

v1::Vector3 MakeVector3(double x, double y, double z) {
  v1::Vector3 v;
  v.set_x(x);
  v.set_y(y);
  v.set_z(z);
  return v;
}

double Distance(const v1::Vector3& a, const v1::Vector3& b) {
  return std::hypot(a.x() - b.x(), a.y() - b.y(), a.z() - b.z());
}

namespace {

// The spec of a stored model through ModelService.GetArm / GetScene (`get`).
template <typename Model, typename Request, typename Get>
auto FetchSpec(const std::shared_ptr<grpc::Channel>& channel, const std::string& name,
               absl::Duration timeout, Get get)
    -> absl::StatusOr<std::decay_t<decltype(Model().spec())>> {
  auto stub = v1::ModelService::NewStub(channel);
  grpc::ClientContext context;
  SetTimeout(context, timeout);
  Request request;
  request.set_name(name);
  Model model;
  grpc::Status status = ((*stub).*get)(&context, request, &model);
  if (!status.ok()) {
    return absl::UnavailableError(absl::StrCat("reading ", name, ": ", DescribeRpcError(status)));
  }
  return model.spec();
}

}  // namespace

absl::StatusOr<v1::ArmSpec> FetchArmSpec(const std::shared_ptr<grpc::Channel>& channel,
                                         const std::string& name, absl::Duration timeout) {
  return FetchSpec<v1::Arm, v1::GetArmRequest>(channel, name, timeout,
                                               &v1::ModelService::Stub::GetArm);
}

absl::StatusOr<v1::SceneSpec> FetchSceneSpec(const std::shared_ptr<grpc::Channel>& channel,
                                             const std::string& name, absl::Duration timeout) {
  return FetchSpec<v1::Scene, v1::GetSceneRequest>(channel, name, timeout,
                                                   &v1::ModelService::Stub::GetScene);
}

absl::StatusOr<std::vector<double>> ParseNumbers(const std::string& text, const std::string& what) {
  std::vector<double> values;
  if (absl::StripAsciiWhitespace(text).empty()) return values;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    double value = 0;
    if (!absl::SimpleAtod(absl::StripAsciiWhitespace(part), &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be comma-separated numbers, got \"", text, "\""));
    }
    values.push_back(value);
  }
  return values;
}

}  // namespace ikd::clients
