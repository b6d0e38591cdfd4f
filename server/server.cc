#include "server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "parse_errors.h"

namespace ikd::server {
namespace {

constexpr const char* kServiceNames[] = {"ikd.v1.ModelService", "ikd.v1.KinematicsService",
                                         "ikd.v1.SimulationService", "ikd.v1.PoseService"};

void SetServing(grpc::Server& server, bool serving) {
  grpc::HealthCheckServiceInterface* health = server.GetHealthCheckService();
  if (health == nullptr) return;
  health->SetServingStatus(serving);  // every service, including the overall ""
  for (const char* name : kServiceNames) health->SetServingStatus(name, serving);
}

}  // namespace

absl::StatusOr<std::unique_ptr<IkdServer>> IkdServer::Start(const ServerOptions& options,
                                                            ModelStore* store) {
  if (absl::Status s = ValidateSecurityOptions(options.security, options.listen); !s.ok()) {
    return s;
  }
  if (absl::Status s = options.calls.Validate(); !s.ok()) return s;
  if (absl::Status s = options.track_admission.Validate(); !s.ok()) return s;
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      ServerCredentialsFor(options.security.tls);
  if (!credentials.ok()) return credentials.status();
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  std::unique_ptr<IkdServer> ikd(new IkdServer());
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Create(options.observability);
  if (!metrics.ok()) return metrics.status();
  ikd->metrics_ = *std::move(metrics);
  ikd->pool_ = std::make_unique<WorkerPool>(options.pool);
  ikd->metrics_->ObserveWorkerPool(ikd->pool_.get());
  ikd->model_service_ = std::make_unique<ModelServiceImpl>(store, options.limits);
  ikd->simulation_service_ = std::make_unique<SimulationServiceImpl>(
      ikd->pool_.get(), options.simulation, ikd->metrics_.get());
  ikd->kinematics_service_ = std::make_unique<KinematicsServiceImpl>(
      store, ikd->pool_.get(), options.limits, options.kinematics, ikd->metrics_.get(),
      options.track_admission);
  ikd->pose_service_ = std::make_unique<PoseServiceImpl>(
      store, ikd->pool_.get(), options.limits, options.pose, ikd->metrics_.get());

  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, *credentials, &ikd->port_);
  builder.SetMaxReceiveMessageSize(options.max_request_bytes);
  AddKeepaliveArguments(options.calls, builder);
  if (options.security.tokens.empty()) {
    builder.RegisterService(ikd->model_service_.get());
    builder.RegisterService(ikd->simulation_service_.get());
    builder.RegisterService(ikd->kinematics_service_.get());
    builder.RegisterService(ikd->pose_service_.get());
  } else {
    ikd->authenticator_ = std::make_unique<TokenAuthenticator>(options.security.tokens);
    ikd->authorized_services_ = std::make_unique<AuthorizedServices>(
        ServiceImpls{ikd->model_service_.get(), ikd->kinematics_service_.get(),
                     ikd->simulation_service_.get(), ikd->pose_service_.get()},
        ikd->authenticator_.get());
    ikd->authorized_services_->RegisterOn(builder);
  }
  // Parse errors first: a status's interceptors run in this order, so the metrics count the
  // INVALID_ARGUMENT the client gets. Metrics before the call limits: they see every call, the
  // ones the call limits refuse too.
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(MakeParseErrorInterceptorFactory());
  creators.push_back(ikd->metrics_->NewRpcInterceptorFactory());
  creators.push_back(MakeCallLimitsInterceptorFactory(options.calls));
  builder.experimental().SetInterceptorCreators(std::move(creators));
  ikd->server_ = builder.BuildAndStart();
  if (ikd->server_ == nullptr || ikd->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  }
  SetServing(*ikd->server_, true);
  return ikd;
}

IkdServer::~IkdServer() {
  Shutdown(absl::ZeroDuration());
  if (metrics_ != nullptr) metrics_->StopServing();  // scrapes read the pool, destroyed next
}

void IkdServer::Shutdown(absl::Duration grace) {
  if (shut_down_ || server_ == nullptr) return;
  shut_down_ = true;
  SetServing(*server_, false);
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
}

void IkdServer::Wait() {
  if (server_ != nullptr) server_->Wait();
}

}  // namespace ikd::server
