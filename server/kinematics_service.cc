#include "kinematics_service.h"

#include <memory>
#include <optional>
#include <utility>

#include "errors.h"
#include "ik_conversions.h"
#include "model_refs.h"
#include "ik_problem.h"
#include "ikd/robot/robot_ik.h"
#include "robot_conversions.h"
#include "solve_batch.h"
#include "solve_trajectory.h"
#include "track_reactor.h"

namespace ikd::server {
namespace {

// Single-pose IK of an industrial arm: continuation from the seed with restarts
// (robot::SolveRobotIk), on the pool like the chain arms' Solve; with max_solutions >= 2 also
// the distinct branches (robot::SolveBranches).
grpc::ServerUnaryReactor* SolveRobot(grpc::CallbackServerContext* context,
                                     const v1::SolveRequest& request, const ResolvedArmSpec& arm,
                                     v1::SolveResponse* response, WorkerPool& pool,
                                     ModelStore& store, const ModelLimits& limits,
                                     Metrics& metrics) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<std::shared_ptr<RobotProblem>> problem =
      MakeRobotProblem(arm, request.scene(), request.options(), request.seed_positions(), "",
                       "seed_positions", store, limits);
  absl::StatusOr<robot::ToolTarget> target =
      problem.ok() ? ToolTargetFromProto(request.target(), "target", request.has_target_orientation(),
                                         request.target_orientation(), "target_orientation")
                   : absl::StatusOr<robot::ToolTarget>(problem.status());
  if (!target.ok()) {
    reactor->Finish(ToGrpcStatus(target.status()));
    return reactor;
  }
  absl::StatusOr<std::optional<robot::BranchOptions>> branches =
      BranchOptionsFromProto(request.max_solutions(), request.max_seed_distance());
  absl::StatusOr<std::optional<ik::Posture>> posture =
      PostureFromProto(request.preferred_posture(), request.posture_weight(),
                       (*problem)->robot->num_joints());
  absl::Status valid = branches.ok() ? posture.status() : branches.status();
  if (!valid.ok()) {
    reactor->Finish(ToGrpcStatus(valid));
    return reactor;
  }
  (*problem)->posture = *std::move(posture);
  auto solve = [context, reactor, response, &metrics, problem = *problem, target = *target,
                branches = *branches] {
    if (context->IsCancelled()) {
      return reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
    }
    absl::StatusOr<robot::RobotTracker> tracker = robot::RobotTracker::Create(
        *problem->robot, problem->options, problem->initial, problem->scene.get());
    if (!tracker.ok()) return reactor->Finish(ToGrpcStatus(tracker.status()));
    SetJointNames(RobotJointNames(*problem->robot), response->mutable_joint_names());
    const absl::Status solved = SolveRobotPose(
        *problem, *tracker, problem->initial, target, branches,
        [context] { return context->IsCancelled(); }, response->mutable_state(),
        response->mutable_solutions());
    if (!solved.ok()) return reactor->Finish(ToGrpcStatus(solved));
    RecordIkStep(metrics, response->state());
    reactor->Finish(grpc::Status::OK);
  };
  if (!pool.TrySubmit(std::move(solve))) reactor->Finish(ToGrpcStatus(PoolFull()));
  return reactor;
}

}  // namespace

KinematicsServiceImpl::KinematicsServiceImpl(ModelStore* store, WorkerPool* pool,
                                             ModelLimits model_limits, KinematicsLimits limits,
                                             Metrics* metrics)
    : store_(store),
      pool_(pool),
      model_limits_(model_limits),
      limits_(limits),
      metrics_(metrics) {}

grpc::ServerUnaryReactor* KinematicsServiceImpl::Solve(grpc::CallbackServerContext* context,
                                                       const v1::SolveRequest* request,
                                                       v1::SolveResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<ResolvedArmSpec> arm = ResolveArmSpec(request->arm(), "arm", *store_);
  if (!arm.ok()) {
    reactor->Finish(ToGrpcStatus(arm.status()));
    return reactor;
  }
  if (arm->spec.has_robot()) {
    return SolveRobot(context, *request, *arm, response, *pool_, *store_, model_limits_,
                      *metrics_);
  }
  absl::StatusOr<std::shared_ptr<IkProblem>> problem =
      MakeProblem(*arm, request->scene(), request->options(), request->seed_positions(), "",
                  "seed_positions", *store_, model_limits_);
  if (!problem.ok()) {
    reactor->Finish(ToGrpcStatus(problem.status()));
    return reactor;
  }
  absl::StatusOr<Eigen::Vector3d> target = TargetFromProto(request->target(), "target");
  absl::Status valid = target.status();
  if (valid.ok()) valid = CheckNoOrientation(request->has_target_orientation(), "target_orientation");
  if (valid.ok() && request->max_solutions() > 1) {
    valid = FieldViolation("max_solutions", "more than one solution is for industrial arms "
                                            "(an arm with a robot spec); a chain arm answers one");
  }
  if (valid.ok()) {
    valid = CheckSubSteps(**problem, (*problem)->InitialHand(), *target,
                          limits_.max_substeps_per_sample, "options");
  }
  absl::StatusOr<std::optional<ik::Posture>> posture =
      PostureFromProto(request->preferred_posture(), request->posture_weight(),
                       (*problem)->arm->num_angles());
  if (valid.ok()) valid = posture.status();
  if (valid.ok()) (*problem)->posture = *std::move(posture);
  if (!valid.ok()) {
    reactor->Finish(ToGrpcStatus(valid));
    return reactor;
  }
  // The default reactor may be finished from any thread, once: by this task or, when the pool
  // refuses it, right below.
  auto solve = [context, reactor, response, metrics = metrics_, problem = *problem,
                target = *target] {
    if (context->IsCancelled()) {
      return reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
    }
    absl::StatusOr<v1::JointState> state = SolveChainPose(
        *problem, problem->initial_sites, target, [context] { return context->IsCancelled(); });
    if (!state.ok()) return reactor->Finish(ToGrpcStatus(state.status()));
    SetJointNames(JointNames(*problem->arm), response->mutable_joint_names());
    *response->mutable_state() = *std::move(state);
    RecordIkStep(*metrics, response->state());
    reactor->Finish(grpc::Status::OK);
  };
  if (!pool_->TrySubmit(std::move(solve))) reactor->Finish(ToGrpcStatus(PoolFull()));
  return reactor;
}

grpc::ServerWriteReactor<v1::SolveTrajectoryResponse>* KinematicsServiceImpl::SolveTrajectory(
    grpc::CallbackServerContext* context, const v1::SolveTrajectoryRequest* request) {
  return StartSolveTrajectory(context, *request, *pool_, *store_, model_limits_, limits_,
                              *metrics_);
}

grpc::ServerBidiReactor<v1::TrackRequest, v1::TrackResponse>* KinematicsServiceImpl::Track(
    grpc::CallbackServerContext* /*context*/) {
  return NewTrackReactor(*store_, *pool_, model_limits_, limits_, *metrics_);
}

grpc::ServerWriteReactor<v1::SolveBatchResponse>* KinematicsServiceImpl::SolveBatch(
    grpc::CallbackServerContext* context, const v1::SolveBatchRequest* request) {
  return StartSolveBatch(context, *request, *pool_, *store_, model_limits_, limits_, *metrics_);
}

}  // namespace ikd::server