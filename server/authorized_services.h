// Bearer-token gates in front of ikd's four services: each gate is a service of the same
// interface whose handlers check the call's token (TokenAuthenticator) and then hand the call to
// the real implementation, or answer UNAUTHENTICATED / PERMISSION_DENIED without running it.
//
// Why gates and not another mechanism: a grpc::AuthMetadataProcessor only runs on secure
// (TLS) ports, and tokens must also work on plaintext loopback; a server interceptor can look at
// the metadata but cannot stop gRPC from running the handler (a rejected CreateArm would still
// write). A gate also knows, per method, whether it writes models. A method added to a proto
// but not to its gate fails closed: gRPC answers it UNIMPLEMENTED with no message, as it
// answers an unparsable request, so parse_errors.h reports it as INVALID_ARGUMENT "could not
// be parsed"; security_test catches it by calling every method of every service.
//
// grpc.health.v1 and server reflection are not gated: health must answer load balancers and
// probes without credentials, and reflection reveals only the schema, which is public in
// proto/ (no model, no data).
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>

#include "kinematics_service.h"
#include "model_service.h"
#include "pose_service.h"
#include "security.h"
#include "simulation_service.h"

namespace ikd::server {

struct ServiceImpls {
  ModelServiceImpl* model = nullptr;
  KinematicsServiceImpl* kinematics = nullptr;
  SimulationServiceImpl* simulation = nullptr;
  PoseServiceImpl* pose = nullptr;
};

class AuthorizedServices {
 public:
  // `impls` and `authenticator` must outlive this object and the server it is registered on.
  AuthorizedServices(const ServiceImpls& impls, const TokenAuthenticator* authenticator);
  ~AuthorizedServices();

  // Registers the four gates (instead of the implementations) on `builder`.
  void RegisterOn(grpc::ServerBuilder& builder);

 private:
  std::unique_ptr<grpc::Service> model_;
  std::unique_ptr<grpc::Service> kinematics_;
  std::unique_ptr<grpc::Service> simulation_;
  std::unique_ptr<grpc::Service> pose_;
};

}  // namespace ikd::server
