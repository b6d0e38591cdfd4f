"""The generated protobuf and gRPC modules, in one place.

ikd's own protos are always the generated ikd._proto modules. google.rpc and grpc.health come
from googleapis-common-protos / grpcio-health-checking when those are installed: registering a
second google/rpc/status.proto in protobuf's default pool would make importing theirs fail.
"""
from ikd._proto.ikd.v1 import kinematics_service_pb2 as kinematics_pb2
from ikd._proto.ikd.v1 import kinematics_service_pb2_grpc as kinematics_grpc
from ikd._proto.ikd.v1 import model_service_pb2 as model_pb2
from ikd._proto.ikd.v1 import model_service_pb2_grpc as model_grpc
from ikd._proto.ikd.v1 import types_pb2

try:
    from google.rpc import error_details_pb2, status_pb2
except ImportError:
    from ikd._proto.google.rpc import error_details_pb2, status_pb2

try:
    from grpc_health.v1 import health_pb2, health_pb2_grpc
except ImportError:
    from ikd._proto.grpc.health.v1 import health_pb2, health_pb2_grpc

__all__ = ["kinematics_pb2", "kinematics_grpc", "model_pb2", "model_grpc", "types_pb2",
           "error_details_pb2", "status_pb2", "health_pb2", "health_pb2_grpc"]
