#include "authorized_services.h"

#include <utility>

namespace ikd::server {
namespace {

// A reactor that answers `status` at once and runs nothing (as gRPC's own error reactors do).
template <class Reactor>
class RejectedReactor final : public Reactor {
 public:
  explicit RejectedReactor(const grpc::Status& status) { this->Finish(status); }
  void OnDone() override { delete this; }
};

// The checks shared by the four gates.
class Gate {
 public:
  explicit Gate(const TokenAuthenticator* authenticator) : authenticator_(authenticator) {}

  template <class Forward>
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* context, Access access,
                                  const char* method, Forward&& forward) const {
    grpc::Status status = authenticator_->Check(*context, access, method);
    if (status.ok()) return forward();
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(status);
    return reactor;
  }

  template <class Reactor, class Forward>
  Reactor* Streaming(grpc::CallbackServerContext* context, const char* method,
                     Forward&& forward) const {
    grpc::Status status = authenticator_->Check(*context, Access::kRead, method);
    if (status.ok()) return forward();
    return new RejectedReactor<Reactor>(status);
  }

 private:
  const TokenAuthenticator* const authenticator_;
};

// One unary ModelService method: check the token for `access`, then forward.
#define IKD_GATED_MODEL_METHOD(Method, Request, Response, access)                        \
  grpc::ServerUnaryReactor* Method(grpc::CallbackServerContext* context,                 \
                                   const Request* request, Response* response) override { \
    return gate_.Unary(context, access, #Method,                                          \
                       [&] { return impl_->Method(context, request, response); });        \
  }

class ModelGate final : public v1::ModelService::CallbackService {
 public:
  ModelGate(ModelServiceImpl* impl, const TokenAuthenticator* authenticator)
      : impl_(impl), gate_(authenticator) {}

  static constexpr Access kRead = Access::kRead;
  static constexpr Access kWrite = Access::kWrite;
  IKD_GATED_MODEL_METHOD(CreateArm, v1::CreateArmRequest, v1::Arm, kWrite)
  IKD_GATED_MODEL_METHOD(GetArm, v1::GetArmRequest, v1::Arm, kRead)
  IKD_GATED_MODEL_METHOD(ListArms, v1::ListArmsRequest, v1::ListArmsResponse, kRead)
  IKD_GATED_MODEL_METHOD(UpdateArm, v1::UpdateArmRequest, v1::Arm, kWrite)
  IKD_GATED_MODEL_METHOD(DeleteArm, v1::DeleteArmRequest, google::protobuf::Empty, kWrite)
  IKD_GATED_MODEL_METHOD(CreateScene, v1::CreateSceneRequest, v1::Scene, kWrite)
  IKD_GATED_MODEL_METHOD(GetScene, v1::GetSceneRequest, v1::Scene, kRead)
  IKD_GATED_MODEL_METHOD(ListScenes, v1::ListScenesRequest, v1::ListScenesResponse, kRead)
  IKD_GATED_MODEL_METHOD(UpdateScene, v1::UpdateSceneRequest, v1::Scene, kWrite)
  IKD_GATED_MODEL_METHOD(DeleteScene, v1::DeleteSceneRequest, google::protobuf::Empty, kWrite)
  IKD_GATED_MODEL_METHOD(EditScene, v1::EditSceneRequest, v1::Scene, kWrite)
  IKD_GATED_MODEL_METHOD(CreateSkeleton, v1::CreateSkeletonRequest, v1::Skeleton, kWrite)
  IKD_GATED_MODEL_METHOD(GetSkeleton, v1::GetSkeletonRequest, v1::Skeleton, kRead)
  IKD_GATED_MODEL_METHOD(ListSkeletons, v1::ListSkeletonsRequest, v1::ListSkeletonsResponse,
                         kRead)
  IKD_GATED_MODEL_METHOD(UpdateSkeleton, v1::UpdateSkeletonRequest, v1::Skeleton, kWrite)
  IKD_GATED_MODEL_METHOD(DeleteSkeleton, v1::DeleteSkeletonRequest, google::protobuf::Empty,
                         kWrite)

 private:
  ModelServiceImpl* const impl_;
  const Gate gate_;
};

#undef IKD_GATED_MODEL_METHOD

// Kinematics, Simulation and Pose only read stored models: any valid token may call them.
class KinematicsGate final : public v1::KinematicsService::CallbackService {
 public:
  KinematicsGate(KinematicsServiceImpl* impl, const TokenAuthenticator* authenticator)
      : impl_(impl), gate_(authenticator) {}

  grpc::ServerUnaryReactor* Solve(grpc::CallbackServerContext* context,
                                  const v1::SolveRequest* request,
                                  v1::SolveResponse* response) override {
    return gate_.Unary(context, Access::kRead, "Solve",
                       [&] { return impl_->Solve(context, request, response); });
  }
  grpc::ServerWriteReactor<v1::SolveTrajectoryResponse>* SolveTrajectory(
      grpc::CallbackServerContext* context, const v1::SolveTrajectoryRequest* request) override {
    return gate_.Streaming<grpc::ServerWriteReactor<v1::SolveTrajectoryResponse>>(
        context, "SolveTrajectory", [&] { return impl_->SolveTrajectory(context, request); });
  }
  grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse>* Track(
      grpc::CallbackServerContext* context) override {
    return gate_.Streaming<grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse>>(
        context, "Track", [&] { return impl_->Track(context); });
  }
  grpc::ServerWriteReactor<v1::SolveBatchResponse>* SolveBatch(
      grpc::CallbackServerContext* context, const v1::SolveBatchRequest* request) override {
    return gate_.Streaming<grpc::ServerWriteReactor<v1::SolveBatchResponse>>(
        context, "SolveBatch", [&] { return impl_->SolveBatch(context, request); });
  }

 private:
  KinematicsServiceImpl* const impl_;
  const Gate gate_;
};

class SimulationGate final : public v1::SimulationService::CallbackService {
 public:
  SimulationGate(SimulationServiceImpl* impl, const TokenAuthenticator* authenticator)
      : impl_(impl), gate_(authenticator) {}

  grpc::ServerWriteReactor<v1::ChainFrame>* StepChain(
      grpc::CallbackServerContext* context, const v1::StepChainRequest* request) override {
    return gate_.Streaming<grpc::ServerWriteReactor<v1::ChainFrame>>(
        context, "StepChain", [&] { return impl_->StepChain(context, request); });
  }
  grpc::ServerWriteReactor<v1::PendulumFrame>* StepPendulum(
      grpc::CallbackServerContext* context, const v1::StepPendulumRequest* request) override {
    return gate_.Streaming<grpc::ServerWriteReactor<v1::PendulumFrame>>(
        context, "StepPendulum", [&] { return impl_->StepPendulum(context, request); });
  }
  grpc::ServerUnaryReactor* FollowShape(grpc::CallbackServerContext* context,
                                        const v1::FollowShapeRequest* request,
                                        v1::FollowShapeResponse* response) override {
    return gate_.Unary(context, Access::kRead, "FollowShape",
                       [&] { return impl_->FollowShape(context, request, response); });
  }
  grpc::ServerUnaryReactor* ResponseMatrix(grpc::CallbackServerContext* context,
                                           const v1::ResponseMatrixRequest* request,
                                           v1::ResponseMatrixResponse* response) override {
    return gate_.Unary(context, Access::kRead, "ResponseMatrix",
                       [&] { return impl_->ResponseMatrix(context, request, response); });
  }

 private:
  SimulationServiceImpl* const impl_;
  const Gate gate_;
};

class PoseGate final : public v1::PoseService::CallbackService {
 public:
  PoseGate(PoseServiceImpl* impl, const TokenAuthenticator* authenticator)
      : impl_(impl), gate_(authenticator) {}

  grpc::ServerBidiReactor<v1::EstimatePoseRequest, v1::EstimatePoseResponse>* EstimatePose(
      grpc::CallbackServerContext* context) override {
    return gate_.Streaming<
        grpc::ServerBidiReactor<v1::EstimatePoseRequest, v1::EstimatePoseResponse>>(
        context, "EstimatePose", [&] { return impl_->EstimatePose(context); });
  }

 private:
  PoseServiceImpl* const impl_;
  const Gate gate_;
};

}  // namespace

AuthorizedServices::AuthorizedServices(const ServiceImpls& impls,
                                       const TokenAuthenticator* authenticator)
    : model_(std::make_unique<ModelGate>(impls.model, authenticator)),
      kinematics_(std::make_unique<KinematicsGate>(impls.kinematics, authenticator)),
      simulation_(std::make_unique<SimulationGate>(impls.simulation, authenticator)),
      pose_(std::make_unique<PoseGate>(impls.pose, authenticator)) {}

AuthorizedServices::~AuthorizedServices() = default;

void AuthorizedServices::RegisterOn(grpc::ServerBuilder& builder) {
  builder.RegisterService(model_.get());
  builder.RegisterService(kinematics_.get());
  builder.RegisterService(simulation_.get());
  builder.RegisterService(pose_.get());
}

}  // namespace ikd::server
