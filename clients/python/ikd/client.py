"""ikd.Client: the ikd services (KinematicsService, ModelService, health) as Python calls."""
import pathlib
from typing import Iterable, Iterator, List, Optional

import grpc

from ikd import _pb
from ikd import messages as m
from ikd.errors import IkdError, from_rpc_error, translated_errors

_kinematics = _pb.kinematics_pb2
_models = _pb.model_pb2


class _BearerToken(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor,
                   grpc.StreamUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
    """Adds "authorization: Bearer <token>" to every call, on plaintext channels too (as the
    C++ clients' --token; call credentials would need TLS)."""

    def __init__(self, token: str):
        self._header = ("authorization", f"Bearer {token}")

    def _with_token(self, details):
        metadata = list(details.metadata or []) + [self._header]
        return details._replace(metadata=metadata)

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._with_token(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._with_token(details), request)

    def intercept_stream_unary(self, continuation, details, requests):
        return continuation(self._with_token(details), requests)

    def intercept_stream_stream(self, continuation, details, requests):
        return continuation(self._with_token(details), requests)


def read_token_file(path) -> str:
    """The first line that is neither blank nor a '#' comment (as the C++ --token_file)."""
    for line in pathlib.Path(path).read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line.strip()
    raise ValueError(f"token file {path} holds no token")


def _read(path) -> Optional[bytes]:
    return pathlib.Path(path).read_bytes() if path else None


def _channel(address, tls_ca, tls_cert, tls_key, token) -> grpc.Channel:
    if tls_ca or tls_cert or tls_key:
        credentials = grpc.ssl_channel_credentials(_read(tls_ca), _read(tls_key), _read(tls_cert))
        channel = grpc.secure_channel(address, credentials)
    else:
        channel = grpc.insecure_channel(address)
    return grpc.intercept_channel(channel, _BearerToken(token)) if token else channel


class _Stream:
    """A server stream read as an iterator of answers (`_receive` makes them); `cancel` stops
    the server's work (the iterator then raises IkdError CANCELLED)."""

    def __init__(self, call):
        self._call = call
        self._answers = self._receive()
        self.joint_names = ()

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._answers)

    def cancel(self):
        self._call.cancel()

    def _receive(self):
        raise NotImplementedError


class Trajectory(_Stream):
    """The samples of a SolveTrajectory call, as an iterator of JointState.

    Samples arrive as the server solves them; once the iterator is exhausted, `summary` holds
    the TrajectorySummary fields (samples, fraction_reached, max_hand_error, ...).
    """

    def __init__(self, call):
        super().__init__(call)
        self.summary = None

    def _receive(self) -> Iterator[m.JointState]:
        with translated_errors():
            for response in self._call:
                self.joint_names = tuple(response.joint_names) or self.joint_names
                if response.HasField("summary"):
                    self.summary = m.plain(response.summary)
                batch = [response.sample] if response.HasField("sample") else response.samples
                for sample in batch:
                    yield m.joint_state(sample, self.joint_names)


class Batch(_Stream):
    """The answers of a SolveBatch call, as an iterator of BatchResult in target order.

    Results arrive in chunks as the server's workers finish them.
    """

    def _receive(self) -> Iterator[m.BatchResult]:
        with translated_errors():
            for response in self._call:
                self.joint_names = tuple(response.joint_names) or self.joint_names
                for result in response.results:
                    yield m.batch_result(result, self.joint_names)


class _TrackRequests:
    """The Track request stream: the config, then one message per target.

    gRPC reads `messages` on a thread of its own, as the stream needs it (the targets iterable
    may block, e.g. on a queue). An exception there would only cancel the call: it ends the
    stream instead and is kept in `error`, for the caller once the earlier targets are answered.
    """

    def __init__(self, config, targets):
        self.error = None
        self.messages = self._generate(config, targets)

    def _generate(self, config, targets):
        yield _kinematics.TrackRequest(config=config)
        try:
            for target in targets:
                yield _kinematics.TrackRequest(target=m.track_target(target))
        except Exception as error:  # pylint: disable=broad-except  (re-raised to the caller)
            self.error = error


class Client:
    """A connection to ikd.

        with ikd.Client("localhost:50051") as client:
            state = client.solve(arm="planar7", position=(0.8, 0.3, 0.3))

    tls_ca (and tls_cert, tls_key for a client certificate) are PEM files: with any of them the
    channel uses TLS. token (or token_file) is sent as a bearer token on every call. timeout is
    the default deadline of unary calls, in seconds (None: none).
    """

    def __init__(self, address: str = "localhost:50051", *, token: Optional[str] = None,
                 token_file=None, tls_ca=None, tls_cert=None, tls_key=None,
                 timeout: Optional[float] = None):
        if token and token_file:
            raise ValueError("token and token_file are exclusive")
        token = read_token_file(token_file) if token_file else token
        self._channel = _channel(address, tls_ca, tls_cert, tls_key, token)
        self._timeout = timeout
        self._kinematics = _pb.kinematics_grpc.KinematicsServiceStub(self._channel)
        self._models = _pb.model_grpc.ModelServiceStub(self._channel)
        self._health = _pb.health_pb2_grpc.HealthStub(self._channel)

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _unary(self, method, request, timeout=None):
        with translated_errors():
            return method(request, timeout=timeout if timeout is not None else self._timeout)

    # -- health --------------------------------------------------------------------------------

    def health(self, service: str = "", timeout: Optional[float] = None) -> str:
        """The serving status ("SERVING", "NOT_SERVING", ...) of the server or a service."""
        response = self._unary(self._health.Check,
                               _pb.health_pb2.HealthCheckRequest(service=service), timeout)
        return _pb.health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)

    def wait_until_serving(self, timeout: float = 10.0):
        """Waits for the server to come up and answer SERVING (IkdError after `timeout` s)."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise IkdError(grpc.StatusCode.UNAVAILABLE,
                           f"no connection within {timeout} s") from None
        status = self.health(timeout=timeout)
        if status != "SERVING":
            raise IkdError(grpc.StatusCode.UNAVAILABLE, f"health is {status}")

    # -- kinematics ----------------------------------------------------------------------------

    def solve(self, arm, position, orientation=None, *, seed=None, scene=None, options=None,
              posture=None, posture_weight: float = 0.0,
              timeout: Optional[float] = None) -> m.JointState:
        """One pose: the arm's configuration with the hand at `position`.

        seed: the start configuration (joint positions; default the arm's home). orientation:
        the tool's quaternion (x, y, z, w), industrial arms. options: IkOptions as a dict, e.g.
        {"seed": 7, "trials_per_step": 48} ("seed" there is the random seed; "solver":
        "IK_SOLVER_NUMERIC" skips an industrial arm's closed form, and the state's `solver`
        says which answered). posture: a
        preferred configuration (one value per joint); redundant arms answer the configuration
        on the target that is locally least in seed distance + posture_weight (0: 1) x posture
        distance, a 6-DOF arm the posture's branch when it costs less. An unreachable target is
        no error: see the state's status and clamp_distance.
        """
        request = _kinematics.SolveRequest(arm=m.arm_ref(arm), target=m.vector3(position),
                                           seed_positions=m.joint_values(seed),
                                           preferred_posture=m.joint_values(posture),
                                           posture_weight=posture_weight)
        self._set_common(request, scene, options)
        if orientation is not None:
            request.target_orientation.CopyFrom(m.quaternion(orientation))
        response = self._unary(self._kinematics.Solve, request, timeout)
        return m.joint_state(response.state, response.joint_names)

    def solve_branches(self, arm, position, orientation=None, *, max_solutions: int = 8,
                       max_seed_distance: float = 0.0, seed=None, scene=None, options=None,
                       timeout: Optional[float] = None) -> List[m.JointState]:
        """Every IK branch of one pose (industrial arms): up to `max_solutions` (2..64) distinct
        solutions, nearest to the seed first, each checked by forward kinematics on the server
        (a 6-DOF arm has up to 8). max_seed_distance (rad, 0: any) keeps only solutions whose
        largest joint difference to the seed is at most that: the seed's own branch.
        """
        request = _kinematics.SolveRequest(arm=m.arm_ref(arm), target=m.vector3(position),
                                           seed_positions=m.joint_values(seed),
                                           max_solutions=max_solutions,
                                           max_seed_distance=max_seed_distance)
        self._set_common(request, scene, options)
        if orientation is not None:
            request.target_orientation.CopyFrom(m.quaternion(orientation))
        response = self._unary(self._kinematics.Solve, request, timeout)
        return [m.joint_state(state, response.joint_names) for state in response.solutions]

    def solve_batch(self, arm, positions, orientations=None, *, seeds=None, seed=None,
                    scene=None, options=None, max_solutions: int = 0,
                    max_seed_distance: float = 0.0, chunk_size: int = 0, posture=None,
                    posture_weight: float = 0.0, timeout: Optional[float] = None) -> Batch:
        """Many poses of one arm and scene in one call (reachability maps, grasp selection):
        yields one BatchResult per target, in order, each answered as solve would answer it.

        positions: N positions (an N x 3 array or a list). orientations: None, or N tool
        quaternions (x, y, z, w; None entries for position-only targets), industrial arms.
        seeds: None, or N start configurations (None entries: `seed`, else the arm's home).
        max_solutions >= 2 also asks every branch of each pose (industrial arms). posture and
        posture_weight: as solve's, for every target. chunk_size:
        results per message (0: the server's 64). The server solves the targets in parallel on
        its workers and refuses more than its --max_batch_targets (IkdError naming "targets").
        """
        positions = list(positions)
        orientations = [None] * len(positions) if orientations is None else list(orientations)
        seeds = [None] * len(positions) if seeds is None else list(seeds)
        if len(orientations) != len(positions) or len(seeds) != len(positions):
            raise ValueError(f"orientations and seeds need one entry per position "
                             f"({len(positions)}), got {len(orientations)} and {len(seeds)}")
        request = _kinematics.SolveBatchRequest(
            arm=m.arm_ref(arm), seed_positions=m.joint_values(seed), chunk_size=chunk_size,
            max_solutions=max_solutions, max_seed_distance=max_seed_distance,
            preferred_posture=m.joint_values(posture), posture_weight=posture_weight,
            targets=[m.batch_target(p, o, s) for p, o, s in zip(positions, orientations, seeds)])
        self._set_common(request, scene, options)
        return Batch(self._kinematics.SolveBatch(request, timeout=timeout))

    def trajectory(self, arm, *, period: float, line=None, waypoints=None, polyline=None,
                   arc=None, duration=None, speed=None, interpolation="linear", scene=None,
                   start=None, orientation=None, options=None, batch: int = 0,
                   timeout: Optional[float] = None) -> Trajectory:
        """The joint path that moves the hand along a path, sampled every `period` s.

        The path: line=(start, end) with duration; waypoints=[(time, position), ...] with
        interpolation "linear" or "cubic"; polyline=[points] with speed; or arc=dict(center,
        axis, start, angle) with duration. start: the initial joint positions (default home).
        orientation: the tool's quaternion held along the path (industrial arms). batch: samples
        per response message (throughput; the iterator yields one sample at a time anyway).
        """
        request = _kinematics.SolveTrajectoryRequest(
            arm=m.arm_ref(arm), sample_period=period, samples_per_message=batch,
            initial_positions=m.joint_values(start),
            trajectory=m.trajectory_path(line, waypoints, polyline, arc, duration, speed,
                                         interpolation))
        self._set_common(request, scene, options)
        if orientation is not None:
            request.tool_orientation.CopyFrom(m.quaternion(orientation))
        return Trajectory(self._kinematics.SolveTrajectory(request, timeout=timeout))

    def track(self, arm, targets: Iterable, *, scene=None, start=None, options=None,
              timeout: Optional[float] = None) -> Iterator[m.JointState]:
        """Live tracking: yields one JointState per target, in order.

        targets: an iterable of (time, position) or (time, position, orientation) tuples (or
        ikd.Target); times are non-decreasing. It is read as the stream goes, so it may be a
        generator that waits for the next target of a controller.
        """
        config = _kinematics.TrackConfig(arm=m.arm_ref(arm),
                                         initial_positions=m.joint_values(start))
        self._set_common(config, scene, options)
        requests = _TrackRequests(config, targets)
        call = self._kinematics.Track(requests.messages, timeout=timeout)
        joint_names = ()
        try:
            for response in call:
                joint_names = tuple(response.joint_names) or joint_names
                yield m.joint_state(response.state, joint_names)
        except grpc.RpcError as error:
            if requests.error is not None:
                raise requests.error from None
            raise from_rpc_error(error) from None
        finally:
            call.cancel()  # the caller stopped early: end the stream (a no-op once it is done)
        if requests.error is not None:
            raise requests.error

    @staticmethod
    def _set_common(request, scene, options):
        scene = m.scene_ref(scene)
        if scene is not None:
            request.scene.CopyFrom(scene)
        options = m.ik_options(options)
        if options is not None:
            request.options.CopyFrom(options)

    # -- models --------------------------------------------------------------------------------

    def arms(self, page_size: int = 0) -> List:
        """Every stored arm (ikd.v1.Arm messages: name, spec, version, etag, times)."""
        return self._list(self._models.ListArms, _models.ListArmsRequest, "arms", page_size)

    def scenes(self, page_size: int = 0) -> List:
        """Every stored scene (ikd.v1.Scene messages)."""
        return self._list(self._models.ListScenes, _models.ListScenesRequest, "scenes",
                          page_size)

    def _list(self, method, request_type, field, page_size):
        items, token = [], ""
        while True:
            response = self._unary(method, request_type(page_size=page_size, page_token=token))
            items += list(getattr(response, field))
            token = response.next_page_token
            if not token:
                return items

    def arm(self, name: str):
        return self._unary(self._models.GetArm,
                           _models.GetArmRequest(name=m.resource_name(name, "arms")))

    def scene(self, name: str):
        return self._unary(self._models.GetScene,
                           _models.GetSceneRequest(name=m.resource_name(name, "scenes")))

    def create_arm(self, arm_id: str, spec):
        """Stores arms/{arm_id}; spec: an ArmSpec, or its JSON dict (deploy/models/*.arm.json)."""
        arm = _pb.types_pb2.Arm(spec=m.spec_message(spec, _pb.types_pb2.ArmSpec,
                                                    _pb.types_pb2.Arm))
        return self._unary(self._models.CreateArm,
                           _models.CreateArmRequest(arm_id=arm_id, arm=arm))

    def create_scene(self, scene_id: str, spec):
        """Stores scenes/{scene_id}; spec: a SceneSpec or its JSON dict."""
        scene = _pb.types_pb2.Scene(spec=m.spec_message(spec, _pb.types_pb2.SceneSpec,
                                                        _pb.types_pb2.Scene))
        return self._unary(self._models.CreateScene,
                           _models.CreateSceneRequest(scene_id=scene_id, scene=scene))

    def delete_arm(self, name: str, etag: str = ""):
        self._unary(self._models.DeleteArm,
                    _models.DeleteArmRequest(name=m.resource_name(name, "arms"), etag=etag))

    def delete_scene(self, name: str, etag: str = ""):
        self._unary(self._models.DeleteScene,
                    _models.DeleteSceneRequest(name=m.resource_name(name, "scenes"), etag=etag))

