"""Python client of ikd, the inverse-kinematics gRPC service.

    import ikd
    with ikd.Client("localhost:50051") as client:
        state = client.solve(arm="planar7", position=(0.8, 0.3, 0.3))
        print(state.status.name, state.positions, state.hand)

The generated protobuf modules are in ikd.v1 (messages) for requests this layer does not cover.
"""
from ikd.client import Batch, Client, Trajectory, read_token_file
from ikd.errors import FieldViolation, IkdError, QuotaViolation
from ikd.messages import BatchResult, JointState, Reason, StepStatus, Target
from ikd import v1

__all__ = ["Client", "Trajectory", "Batch", "IkdError", "FieldViolation", "QuotaViolation",
           "JointState", "BatchResult", "Reason", "StepStatus", "Target", "read_token_file", "v1"]
__version__ = "0.1.0"
