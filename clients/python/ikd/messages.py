"""Python values to ikd.v1 request messages, and answers back to Python values.

Vectors accept any 3-sequence or numpy array; orientations are quaternions (x, y, z, w), as ROS
geometry_msgs. Arms and scenes are a stored model's name ("planar7" or "arms/planar7"), a
message, or a dict in the JSON form of deploy/models/*.json (the model or its bare spec).
"""
import dataclasses
import enum
import types
from typing import NamedTuple, Optional, Sequence, Tuple

import numpy as np
from google.protobuf import json_format
from google.protobuf.message import Message

from ikd import _pb

_types = _pb.types_pb2
_kinematics = _pb.kinematics_pb2


class _NamedIntEnum(enum.IntEnum):
    def __str__(self):  # "REACHED", not IntEnum's "1" (Python 3.11)
        return self.name


StepStatus = _NamedIntEnum("StepStatus", {
    name.removeprefix("STEP_STATUS_"): number
    for name, number in _kinematics.StepStatus.items()})
StepStatus.__doc__ = "A sample's outcome (ikd.v1.StepStatus without its prefix)."


def _components(value, length, what) -> np.ndarray:
    """The value as `length` floats; their bounds (finite, in range) are the server's to check,
    so that every bad value is answered with the field it came in."""
    array = np.asarray(value, dtype=float).reshape(-1)
    if array.shape != (length,):
        raise ValueError(f"{what} must have {length} components, got {array.size}")
    return array


def vector3(value, what="position") -> _types.Vector3:
    x, y, z = _components(value, 3, what)
    return _types.Vector3(x=x, y=y, z=z)


def quaternion(value, what="orientation") -> _types.Quaternion:
    x, y, z, w = _components(value, 4, what)
    return _types.Quaternion(x=x, y=y, z=z, w=w)


def joint_values(values) -> list:
    return [] if values is None else np.asarray(values, dtype=float).reshape(-1).tolist()


def resource_name(name: str, collection: str) -> str:
    """"planar7" -> "arms/planar7"; a full name is kept."""
    return name if "/" in name else f"{collection}/{name}"


def spec_message(value, spec_type, model_type):
    """A spec message from a spec, a model (its spec) or their JSON dict form."""
    if isinstance(value, spec_type):
        return value
    if isinstance(value, model_type):
        return value.spec
    if isinstance(value, dict):
        body = value["spec"] if "spec" in value else value
        return json_format.ParseDict(body, spec_type())
    raise TypeError(f"expected a {spec_type.DESCRIPTOR.name}, {model_type.DESCRIPTOR.name} or "
                    f"dict, got {type(value).__name__}")


def arm_ref(arm) -> _kinematics.ArmRef:
    if isinstance(arm, _kinematics.ArmRef):
        return arm
    if isinstance(arm, str):
        return _kinematics.ArmRef(name=resource_name(arm, "arms"))
    return _kinematics.ArmRef(spec=spec_message(arm, _types.ArmSpec, _types.Arm))


def scene_ref(scene) -> Optional[_kinematics.SceneRef]:
    """None (free space), a stored scene's name, or an inline scene."""
    if scene is None or isinstance(scene, _kinematics.SceneRef):
        return scene
    if isinstance(scene, str):
        return _kinematics.SceneRef(name=resource_name(scene, "scenes"))
    return _kinematics.SceneRef(spec=spec_message(scene, _types.SceneSpec, _types.Scene))


def ik_options(options) -> Optional[_kinematics.IkOptions]:
    """None (the server's defaults), an IkOptions message or its dict form ({"seed": 7})."""
    if options is None or isinstance(options, _kinematics.IkOptions):
        return options
    return json_format.ParseDict(options, _kinematics.IkOptions())


_INTERPOLATIONS = {"linear": _kinematics.INTERPOLATION_LINEAR,
                   "cubic": _kinematics.INTERPOLATION_CUBIC}


def trajectory_path(line=None, waypoints=None, polyline=None, arc=None, duration=None,
                    speed=None, interpolation="linear") -> _kinematics.Trajectory:
    """Exactly one of: line=(start, end) with duration; waypoints=[(time, position), ...];
    polyline=[points] with speed; arc=dict(center, axis, start, angle) with duration."""
    given = [n for n, v in (("line", line), ("waypoints", waypoints), ("polyline", polyline),
                            ("arc", arc)) if v is not None]
    if len(given) != 1:
        raise ValueError(f"give exactly one of line, waypoints, polyline, arc (got {given})")
    if line is not None:
        start, end = line
        return _kinematics.Trajectory(line=_kinematics.LinePath(
            **{"from": vector3(start, "line start")}, to=vector3(end, "line end"),
            duration=_required(duration, "duration")))
    if waypoints is not None:
        return _kinematics.Trajectory(waypoints=_kinematics.WaypointPath(
            waypoints=[_kinematics.Waypoint(time=t, position=vector3(p, "waypoint"))
                       for t, p in waypoints],
            interpolation=_INTERPOLATIONS[interpolation]))
    if polyline is not None:
        return _kinematics.Trajectory(polyline=_kinematics.PolylinePath(
            points=[vector3(p, "polyline point") for p in polyline],
            speed=_required(speed, "speed")))
    return _kinematics.Trajectory(arc=_kinematics.ArcPath(
        center=vector3(arc["center"], "arc center"), axis=vector3(arc["axis"], "arc axis"),
        start=vector3(arc["start"], "arc start"), angle=arc["angle"],
        duration=_required(duration, "duration")))


def _required(value, name):
    if value is None:
        raise ValueError(f"{name} is required for this path")
    return value


class Target(NamedTuple):
    """One Track target: time (s), hand position, and optionally the tool's orientation."""
    time: float
    position: Sequence[float]
    orientation: Optional[Sequence[float]] = None


def track_target(target) -> _kinematics.TrackTarget:
    time, position, orientation = Target(*target)
    message = _kinematics.TrackTarget(time=time, position=vector3(position))
    if orientation is not None:
        message.orientation.CopyFrom(quaternion(orientation))
    return message


# ------------------------------------------------------------------------------------------
# Answers


def _array(vectors) -> np.ndarray:
    return np.array([(v.x, v.y, v.z) for v in vectors], dtype=float).reshape(-1, 3)


@dataclasses.dataclass(frozen=True)
class Reason:
    """What kept an answer from its target (ikd.v1.Reason): kind is "COLLISION",
    "NEAR_COLLISION", "JOINT_LIMIT", "OUT_OF_REACH", "SINGULAR", "RESIDUAL" or
    "ROTATION_RESIDUAL"; link / other_link / joint are -1 and obstacle_id "" where they do not
    apply; description says it all in one line."""
    kind: str
    description: str
    link: int
    other_link: int
    obstacle_id: str
    joint: int
    joint_name: str
    distance: float
    value: float
    bound: float
    direction: np.ndarray


def reason(message) -> Reason:
    return Reason(
        kind=_kinematics.Reason.Kind.Name(message.kind).removeprefix("KIND_"),
        description=message.description, link=message.link, other_link=message.other_link,
        obstacle_id=message.obstacle_id, joint=message.joint, joint_name=message.joint_name,
        distance=message.distance, value=message.value, bound=message.bound,
        direction=_array([message.direction])[0])


@dataclasses.dataclass(frozen=True)
class JointState:
    """The arm at one time (ikd.v1.JointState): joint positions, sites and diagnostics.

    sites is an (n + 1) x 3 array, base first and hand last (world frame, m); positions and
    velocities follow joint_names (rad, rad/s).
    """
    time: float
    positions: np.ndarray
    velocities: np.ndarray
    sites: np.ndarray
    target: np.ndarray
    status: StepStatus
    hand_error: float
    clamp_distance: float
    min_clearance: Optional[float]  # None when nothing is there to collide with
    constraint_residual: float
    rotation_error: float
    iterations: int
    trials_accepted: int
    joint_names: Tuple[str, ...] = ()
    # Solve and solve_batch answers that are not REACHED: why (empty otherwise).
    reasons: Tuple[Reason, ...] = ()
    # Which inverse kinematics answered: "ANALYTIC" (the closed form) or "NUMERIC".
    solver: str = ""

    @property
    def hand(self) -> np.ndarray:
        """The last site: the hand of a chain arm. (An industrial arm's sites are the
        constraint sites of its links, solver/include/ikd/robot/robot.h: see hand_error.)"""
        return self.sites[-1]

    @property
    def reached(self) -> bool:
        return self.status == StepStatus.REACHED


def joint_state(message, joint_names: Sequence[str] = ()) -> JointState:
    return JointState(
        time=message.time,
        positions=np.array(message.positions, dtype=float),
        velocities=np.array(message.velocities, dtype=float),
        sites=_array(message.sites),
        target=_array([message.target])[0],
        status=StepStatus(message.status),
        hand_error=message.hand_error,
        clamp_distance=message.clamp_distance,
        min_clearance=message.min_clearance if message.HasField("min_clearance") else None,
        constraint_residual=message.constraint_residual,
        rotation_error=message.rotation_error,
        iterations=message.iterations,
        trials_accepted=message.trials_accepted,
        joint_names=tuple(joint_names),
        reasons=tuple(reason(r) for r in message.reasons),
        solver=_solver_name(message.solver))


def _solver_name(value: int) -> str:
    """IK_SOLVER_ANALYTIC -> "ANALYTIC"; "" when unset (an older server)."""
    if value == _kinematics.IK_SOLVER_UNSPECIFIED:
        return ""
    return _kinematics.IkSolver.Name(value).removeprefix("IK_SOLVER_")


@dataclasses.dataclass(frozen=True)
class BatchResult:
    """One target of a SolveBatch (ikd.v1.BatchResult): its index in the request, the answer
    (as solve gives it), the branches when max_solutions >= 2, and the solve's wall time on its
    server worker (s)."""
    index: int
    state: JointState
    solutions: Tuple[JointState, ...]
    solve_seconds: float


def batch_result(message, joint_names: Sequence[str] = ()) -> BatchResult:
    return BatchResult(
        index=message.index,
        state=joint_state(message.state, joint_names),
        solutions=tuple(joint_state(s, joint_names) for s in message.solutions),
        solve_seconds=message.solve_seconds)


def batch_target(position, orientation=None, seed=None) -> _kinematics.BatchTarget:
    message = _kinematics.BatchTarget(position=vector3(position),
                                      seed_positions=joint_values(seed))
    if orientation is not None:
        message.orientation.CopyFrom(quaternion(orientation))
    return message


def plain(message: Message) -> types.SimpleNamespace:
    """A message's scalar fields as attributes; an unset optional field is None."""
    values = {}
    for field in message.DESCRIPTOR.fields:
        unset = field.has_presence and not message.HasField(field.name)
        values[field.name] = None if unset else getattr(message, field.name)
    return types.SimpleNamespace(**values)
