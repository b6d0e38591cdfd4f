"""The generated ikd.v1 modules under short names, for requests the Client does not cover:
ikd.v1.types (Vector3, ArmSpec, ...), ikd.v1.kinematics, ikd.v1.models and their gRPC stubs."""
from ikd._pb import kinematics_grpc, kinematics_pb2 as kinematics, model_grpc
from ikd._pb import model_pb2 as models, types_pb2 as types

__all__ = ["types", "kinematics", "kinematics_grpc", "models", "model_grpc"]
