#include "parse_errors.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/unknown_field_set.h"

namespace ikd::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

// The largest field number protobuf allows: no ikd message declares it.
constexpr int kSentinelField = (1 << 29) - 1;

class ParseErrorInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit ParseErrorInterceptor(std::string method) : method_(std::move(method)) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      const std::string type = status.error_code() == grpc::StatusCode::UNIMPLEMENTED &&
                                       status.error_message().empty()
                                   ? RequestTypeOf(method_)
                                   : std::string();
      if (!type.empty()) {
        methods->ModifySendStatus(grpc::Status(
            grpc::StatusCode::INVALID_ARGUMENT,
            absl::StrCat("the request could not be parsed as ", type,
                         " (its bytes are not that message: a client built from another "
                         "proto, or a corrupted message)")));
      }
    }
    methods->Proceed();
  }

 private:
  std::string method_;
};

class ParseErrorInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new ParseErrorInterceptor(info->method() != nullptr ? info->method() : "");
  }
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeParseErrorInterceptorFactory() {
  return std::make_unique<ParseErrorInterceptorFactory>();
}

std::string RequestTypeOf(const std::string& method) {
  // "/package.Service/Method"
  const size_t slash = method.rfind('/');
  if (method.empty() || method[0] != '/' || slash == 0 || slash == std::string::npos) return "";
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          method.substr(1, slash - 1));
  if (service == nullptr) return "";
  const google::protobuf::MethodDescriptor* rpc = service->FindMethodByName(method.substr(slash + 1));
  return rpc == nullptr ? "" : rpc->input_type()->full_name();
}

void MarkUnread(google::protobuf::Message& message) {
  google::protobuf::UnknownFieldSet* unknown =
      message.GetReflection()->MutableUnknownFields(&message);
  unknown->Clear();
  unknown->AddVarint(kSentinelField, 1);
}

bool ReadFailedToParse(const google::protobuf::Message& message) {
  const google::protobuf::UnknownFieldSet& unknown = message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    if (unknown.field(i).number() == kSentinelField) return false;
  }
  return true;
}

absl::Status UnparsableStreamMessage(const google::protobuf::Message& message) {
  return absl::InvalidArgumentError(
      absl::StrCat("a message of the stream could not be parsed as ",
                   message.GetDescriptor()->full_name(),
                   " (its bytes are not that message); the stream ends here"));
}

}  // namespace ikd::server
