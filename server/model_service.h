// ikd.v1.ModelService on the gRPC callback API: arms and scenes in a ModelStore, validated by
// the solver, stored in canonical form (what a later Get returns is exactly what the solver
// uses). Handlers are short (one store transaction) and run inline on gRPC's callback threads.
#pragma once

#include <grpcpp/grpcpp.h>

#include "ikd/v1/model_service.grpc.pb.h"
#include "model_store.h"
#include "validation.h"

namespace ikd::server {

class ModelServiceImpl final : public v1::ModelService::CallbackService {
 public:
  // `store` must outlive the service.
  ModelServiceImpl(ModelStore* store, ModelLimits limits);

  grpc::ServerUnaryReactor* CreateArm(grpc::CallbackServerContext* context,
                                      const v1::CreateArmRequest* request,
                                      v1::Arm* response) override;
  grpc::ServerUnaryReactor* GetArm(grpc::CallbackServerContext* context,
                                   const v1::GetArmRequest* request, v1::Arm* response) override;
  grpc::ServerUnaryReactor* ListArms(grpc::CallbackServerContext* context,
                                     const v1::ListArmsRequest* request,
                                     v1::ListArmsResponse* response) override;
  grpc::ServerUnaryReactor* UpdateArm(grpc::CallbackServerContext* context,
                                      const v1::UpdateArmRequest* request,
                                      v1::Arm* response) override;
  grpc::ServerUnaryReactor* DeleteArm(grpc::CallbackServerContext* context,
                                      const v1::DeleteArmRequest* request,
                                      google::protobuf::Empty* response) override;

  grpc::ServerUnaryReactor* CreateScene(grpc::CallbackServerContext* context,
                                        const v1::CreateSceneRequest* request,
                                        v1::Scene* response) override;
  grpc::ServerUnaryReactor* GetScene(grpc::CallbackServerContext* context,
                                     const v1::GetSceneRequest* request,
                                     v1::Scene* response) override;
  grpc::ServerUnaryReactor* ListScenes(grpc::CallbackServerContext* context,
                                       const v1::ListScenesRequest* request,
                                       v1::ListScenesResponse* response) override;
  grpc::ServerUnaryReactor* UpdateScene(grpc::CallbackServerContext* context,
                                        const v1::UpdateSceneRequest* request,
                                        v1::Scene* response) override;
  grpc::ServerUnaryReactor* DeleteScene(grpc::CallbackServerContext* context,
                                        const v1::DeleteSceneRequest* request,
                                        google::protobuf::Empty* response) override;
  grpc::ServerUnaryReactor* EditScene(grpc::CallbackServerContext* context,
                                      const v1::EditSceneRequest* request,
                                      v1::Scene* response) override;
  grpc::ServerUnaryReactor* CreateSkeleton(grpc::CallbackServerContext* context,
                                           const v1::CreateSkeletonRequest* request,
                                           v1::Skeleton* response) override;
  grpc::ServerUnaryReactor* GetSkeleton(grpc::CallbackServerContext* context,
                                        const v1::GetSkeletonRequest* request,
                                        v1::Skeleton* response) override;
  grpc::ServerUnaryReactor* ListSkeletons(grpc::CallbackServerContext* context,
                                          const v1::ListSkeletonsRequest* request,
                                          v1::ListSkeletonsResponse* response) override;
  grpc::ServerUnaryReactor* UpdateSkeleton(grpc::CallbackServerContext* context,
                                           const v1::UpdateSkeletonRequest* request,
                                           v1::Skeleton* response) override;
  grpc::ServerUnaryReactor* DeleteSkeleton(grpc::CallbackServerContext* context,
                                           const v1::DeleteSkeletonRequest* request,
                                           google::protobuf::Empty* response) override;

 private:
  ModelStore* const store_;
  const ModelLimits limits_;
};

}  // namespace ikd::server
