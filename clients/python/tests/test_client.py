"""Tests of the Python client against a live ikd (started by run_tests.py, which sets
IKD_ADDRESS, IKD_BINARY and IKD_MODELS_DIR and loads the demo models of deploy/models).

Answers are checked with the tests' own geometry: limb lengths and forward kinematics of the
returned joint positions (numpy), the Panda's DH table, distances to obstacles.
"""
import json
import math
import os
import pathlib
import queue
import tempfile
import unittest

import grpc
import numpy as np

import ikd
from certificates import make_certificates
from ikd_process import IkdProcess

ADDRESS = os.environ.get("IKD_ADDRESS")

# A planar chain in the plane z = 0.5 (identity base orientation: the arm frame's x-y plane).
BASE = np.array([0.1, -0.2, 0.5])
LENGTHS = np.array([0.3, 0.25, 0.2, 0.15])
CHAIN = {"planar": True, "base_position": dict(zip("xyz", BASE)),
         "limbs": [{"length": length, "radius": 0.01} for length in LENGTHS]}
CHAIN_ID = "py-chain"


def in_plane(x, y):
    return np.array([x, y, BASE[2]])


def limb_lengths(sites):
    return np.linalg.norm(np.diff(sites, axis=0), axis=1)


def planar_sites(positions, lengths=LENGTHS, base=BASE):
    """Forward kinematics: limb 0's angle from the x axis, then relative angles."""
    angles = np.cumsum(positions)
    steps = np.stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)], axis=1)
    return np.vstack([base, base + np.cumsum(lengths[:, None] * steps, axis=0)])


def segment_point_distance(a, b, p):
    t = np.clip(np.dot(p - a, b - a) / np.dot(b - a, b - a), 0.0, 1.0)
    return np.linalg.norm(a + t * (b - a) - p)


def panda_tool_pose(q):
    """The Panda's flange pose by its modified DH table (Franka's documentation)."""
    rows = [(0, 0.333, 0), (0, 0, -np.pi / 2), (0, 0.316, np.pi / 2), (0.0825, 0, np.pi / 2),
            (-0.0825, 0.384, -np.pi / 2), (0, 0, np.pi / 2), (0.088, 0, np.pi / 2)]
    pose = np.eye(4)
    for (a, d, alpha), theta in zip(rows, q):
        pose = pose @ _rot_x(alpha) @ _translate(a, 0) @ _rot_z(theta) @ _translate(0, d)
    return pose @ _translate(0, 0.107)


def ur5_tool_pose(q):
    """The UR5's tool flange pose by Universal Robots' standard DH table."""
    rows = [(0, 0.089159, np.pi / 2), (-0.425, 0, 0), (-0.39225, 0, 0), (0, 0.10915, np.pi / 2),
            (0, 0.09465, -np.pi / 2), (0, 0.0823, 0)]
    pose = np.eye(4)
    for (a, d, alpha), theta in zip(rows, q):
        pose = pose @ _rot_z(theta) @ _translate(0, d) @ _translate(a, 0) @ _rot_x(alpha)
    return pose


def turn_distance(a, b):
    """The largest joint difference, each modulo a full turn."""
    return float(np.max(np.abs(np.remainder(np.asarray(a) - b + np.pi, 2 * np.pi) - np.pi)))


def _rot_x(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1]])


def _rot_z(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])


def _translate(x, z):
    pose = np.eye(4)
    pose[0, 3], pose[2, 3] = x, z
    return pose


def setUpModule():  # pylint: disable=invalid-name
    if not ADDRESS:
        raise RuntimeError("IKD_ADDRESS is not set: run these tests with run_tests.py")


class ClientTestCase(unittest.TestCase):
    """A client of the live server, with the test chain stored as arms/py-chain."""

    @classmethod
    def setUpClass(cls):
        cls.client = ikd.Client(ADDRESS, timeout=30)
        try:
            cls.client.delete_arm(CHAIN_ID)  # left over by an earlier run on this server
        except ikd.IkdError as error:
            if error.code != grpc.StatusCode.NOT_FOUND:
                raise
        cls.client.create_arm(CHAIN_ID, CHAIN)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()

    def assert_chain_state(self, state, target):
        """Limbs of the model's lengths, sites by forward kinematics, hand on the target."""
        self.assertEqual(state.sites.shape, (len(LENGTHS) + 1, 3))
        np.testing.assert_allclose(limb_lengths(state.sites), LENGTHS, rtol=0, atol=1e-9)
        np.testing.assert_allclose(state.sites, planar_sites(state.positions), rtol=0, atol=1e-9)
        np.testing.assert_allclose(state.hand, target, rtol=0, atol=1e-6)
        self.assertEqual(state.status, ikd.StepStatus.REACHED)


class SolveTest(ClientTestCase):
    def test_chain_solution_keeps_limb_lengths_and_puts_hand_on_target(self):
        target = in_plane(0.5, 0.3)
        state = self.client.solve(arm=CHAIN_ID, position=target)
        self.assert_chain_state(state, target)
        self.assertTrue(state.reached)
        self.assertEqual(state.joint_names, ("joint_0", "joint_1", "joint_2", "joint_3"))
        np.testing.assert_array_equal(state.target, target)

    def test_inline_arm_answers_as_the_stored_one(self):
        target = in_plane(0.4, 0.35)
        stored = self.client.solve(arm="arms/" + CHAIN_ID, position=target, options={"seed": 3})
        inline = self.client.solve(arm={"spec": CHAIN}, position=target, options={"seed": 3})
        np.testing.assert_array_equal(inline.positions, stored.positions)

    def test_arm_seeded_at_a_configuration_reaching_the_target_stays_there(self):
        seed = np.array([0.3, -0.8, 1.2, 0.5])
        target = planar_sites(seed)[-1]
        seeded = self.client.solve(arm=CHAIN_ID, position=target, seed=seed)
        from_home = self.client.solve(arm=CHAIN_ID, position=target)
        np.testing.assert_allclose(seeded.positions, seed, rtol=0, atol=1e-6)
        self.assertGreater(np.abs(from_home.positions - seed).max(), 1e-3)  # the seed mattered

    def test_target_out_of_reach_is_clamped_to_the_reachable_shell(self):
        target = in_plane(1.5, 0.6)
        state = self.client.solve(arm=CHAIN_ID, position=target)
        self.assertEqual(state.status, ikd.StepStatus.CLAMPED_UNREACHABLE)
        reach, distance = LENGTHS.sum(), np.linalg.norm(target - BASE)
        self.assertAlmostEqual(state.clamp_distance, distance - reach, delta=1e-9)
        closest = BASE + (target - BASE) * reach / distance
        np.testing.assert_allclose(state.hand, closest, rtol=0, atol=1e-6)

    def test_target_out_of_reach_says_why(self):
        target = BASE + np.array([1.2, 0.0, 0.0])  # reach 0.9 m
        state = self.client.solve(arm=CHAIN_ID, position=target)
        kinds = [r.kind for r in state.reasons]
        self.assertEqual(kinds[:2], ["OUT_OF_REACH", "RESIDUAL"])
        self.assertAlmostEqual(state.reasons[0].distance, 1.2 - LENGTHS.sum(), delta=1e-9)
        self.assertAlmostEqual(state.reasons[1].value, np.linalg.norm(state.hand - target),
                               delta=1e-9)
        self.assertIn("beyond the reach", state.reasons[0].description)
        reached = self.client.solve(arm=CHAIN_ID, position=in_plane(0.4, 0.2))
        self.assertEqual(reached.reasons, ())

    def test_panda_pose_matches_its_forward_kinematics(self):
        position, orientation = np.array([0.5, 0.1, 0.4]), (1.0, 0.0, 0.0, 0.0)  # tool down
        state = self.client.solve(arm="panda", position=position, orientation=orientation)
        self.assertEqual(state.status, ikd.StepStatus.REACHED)
        self.assertEqual(len(state.positions), 7)
        pose = panda_tool_pose(state.positions)
        np.testing.assert_allclose(pose[:3, 3], position, rtol=0, atol=1e-6)
        np.testing.assert_allclose(pose[:3, :3], np.diag([1.0, -1.0, -1.0]), rtol=0, atol=1e-6)

    def test_panda_with_a_heavy_posture_answers_the_posture(self):
        ready = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
        nominal = np.array([0.5, -0.4, -0.6, -2.0, 0.4, 1.9, 0.2])
        point = panda_tool_pose(nominal)[:3, 3]
        plain = self.client.solve(arm="panda", position=point, seed=ready)
        preferred = self.client.solve(arm="panda", position=point, seed=ready, posture=nominal,
                                      posture_weight=1e4)
        self.assertEqual(preferred.status, ikd.StepStatus.REACHED)
        np.testing.assert_allclose(panda_tool_pose(preferred.positions)[:3, 3], point, rtol=0,
                                   atol=1e-5)
        self.assertLess(turn_distance(preferred.positions, nominal), 2e-2)
        self.assertGreater(turn_distance(plain.positions, nominal), 0.2)
        with self.assertRaises(ikd.IkdError) as caught:
            self.client.solve(arm="panda", position=point, posture=nominal[:6])
        self.assertIn("preferred_posture", caught.exception.fields)

    def test_ur5_answers_its_eight_branches_each_on_the_pose(self):
        made = np.array([0.3, -1.2, 1.4, -1.5, -1.3, 0.4])
        pose = ur5_tool_pose(made)
        w = math.sqrt(max(0.0, 1.0 + np.trace(pose[:3, :3]))) / 2.0
        rotation = pose[:3, :3]
        quaternion = ((rotation[2, 1] - rotation[1, 2]) / (4 * w),
                      (rotation[0, 2] - rotation[2, 0]) / (4 * w),
                      (rotation[1, 0] - rotation[0, 1]) / (4 * w), w)
        # The DH lines (link_radii 0 replace the collision model): every kinematic branch, one
        # of which the UR5's body could not take (it folds into itself).
        ur5 = {"robot": {"preset": "ROBOT_PRESET_UR5", "link_radii": [0.0] * 6}}
        seed = np.full(6, 0.1)
        branches = self.client.solve_branches(ur5, pose[:3, 3], quaternion, max_solutions=8,
                                              seed=seed)
        self.assertEqual(len(branches), 8)
        for i, state in enumerate(branches):
            self.assertEqual(state.status, ikd.StepStatus.REACHED)
            reached = ur5_tool_pose(state.positions)
            np.testing.assert_allclose(reached[:3, 3], pose[:3, 3], rtol=0, atol=1e-5)
            np.testing.assert_allclose(reached[:3, :3], rotation, rtol=0, atol=1e-5)
            for other in branches[:i]:
                self.assertGreater(turn_distance(state.positions, other.positions), 0.1)
        distances = [turn_distance(state.positions, seed) for state in branches]
        self.assertEqual(distances, sorted(distances))
        self.assertTrue(any(turn_distance(state.positions, made) < 1e-4 for state in branches))
        self.assertTrue(all(state.solver == "ANALYTIC" for state in branches))
        numeric = self.client.solve(ur5, pose[:3, 3], quaternion, seed=made,
                                    options={"solver": "IK_SOLVER_NUMERIC"})
        self.assertEqual(numeric.solver, "NUMERIC")
        np.testing.assert_allclose(ur5_tool_pose(numeric.positions)[:3, 3], pose[:3, 3],
                                   rtol=0, atol=1e-5)

    def test_clearance_to_an_inline_and_a_stored_scene_is_the_distance_to_the_obstacle(self):
        lengths, radius = np.array([0.3, 0.3]), 0.02
        arm = {"planar": True, "base_position": dict(zip("xyz", BASE)),
               "limbs": [{"length": length, "radius": radius} for length in lengths]}
        center, sphere_radius = in_plane(0.0, 0.4), 0.05
        scene = {"obstacles": [{"id": "ball", "sphere": {
            "center": dict(zip("xyz", center)), "radius": sphere_radius}}]}
        self.client.create_scene("py-ball", scene)
        self.addCleanup(self.client.delete_scene, "py-ball")
        target = in_plane(0.45, 0.0)
        inline = self.client.solve(arm=arm, position=target, scene=scene)
        stored = self.client.solve(arm=arm, position=target, scene="py-ball")
        free = self.client.solve(arm=arm, position=target)

        sites = inline.sites
        expected = min(segment_point_distance(sites[i], sites[i + 1], center)
                       for i in range(len(lengths))) - radius - sphere_radius
        self.assertAlmostEqual(inline.min_clearance, expected, delta=1e-9)
        np.testing.assert_array_equal(stored.positions, inline.positions)
        self.assertIsNone(free.min_clearance)  # two limbs, no obstacle: nothing to collide with

    def test_wrong_vector_length_is_refused_before_any_call(self):
        with self.assertRaisesRegex(ValueError, "position must have 3 components"):
            self.client.solve(arm=CHAIN_ID, position=(0.5, 0.3))


class BatchTest(ClientTestCase):
    def test_each_target_is_answered_in_order_as_solve_answers_it(self):
        targets = [in_plane(0.2 + 0.02 * i, 0.1 * (i % 4) - 0.15) for i in range(30)]
        targets.append(in_plane(2.0, 0.0))  # out of reach
        seeds = [None] * len(targets)
        seeds[3] = [0.4, -0.3, 0.2, 0.1]
        results = list(self.client.solve_batch(CHAIN_ID, targets, seeds=seeds, chunk_size=4))
        self.assertEqual([r.index for r in results], list(range(len(targets))))
        for result, target, seed in zip(results, targets, seeds):
            single = self.client.solve(arm=CHAIN_ID, position=target, seed=seed)
            np.testing.assert_array_equal(result.state.positions, single.positions)
            self.assertEqual(result.state.status, single.status)
            self.assertGreater(result.solve_seconds, 0.0)
        for result, target in zip(results[:-1], targets):
            self.assertEqual(result.state.status, ikd.StepStatus.REACHED)
            np.testing.assert_allclose(result.state.hand, target, rtol=0, atol=1e-9)
        self.assertEqual(results[-1].state.status, ikd.StepStatus.CLAMPED_UNREACHABLE)

    def test_ur5_poses_with_branches_are_on_their_poses(self):
        ur5 = {"robot": {"preset": "ROBOT_PRESET_UR5"}}
        made = [np.array([0.3, -1.2, 1.4, -1.5, -1.3, 0.4]), np.array([-0.5, -1.0, 1.0, 0.3, 1.2, -0.6])]
        poses = [ur5_tool_pose(q) for q in made]
        positions = [pose[:3, 3] for pose in poses]
        results = list(self.client.solve_batch(ur5, positions, max_solutions=8))
        self.assertEqual(len(results), 2)
        for result, position in zip(results, positions):
            self.assertEqual(result.state.status, ikd.StepStatus.REACHED)
            self.assertGreaterEqual(len(result.solutions), 2)  # position only: many branches
            for state in result.solutions:
                np.testing.assert_allclose(ur5_tool_pose(state.positions)[:3, 3], position,
                                           rtol=0, atol=1e-5)

    def test_bad_target_names_its_index(self):
        targets = [in_plane(0.3, 0.0), (0.3, float("nan"), 0.5)]
        with self.assertRaises(ikd.IkdError) as raised:
            list(self.client.solve_batch(CHAIN_ID, targets))
        self.assertEqual(raised.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("targets[1].position", raised.exception.fields)

    def test_mismatched_lengths_are_refused_before_any_call(self):
        with self.assertRaisesRegex(ValueError, "one entry per position"):
            self.client.solve_batch(CHAIN_ID, [in_plane(0.3, 0.0)], seeds=[None, None])


class TrajectoryTest(ClientTestCase):
    START, END = in_plane(0.5, 0.2), in_plane(0.2, 0.45)

    def line(self, **kwargs):
        return self.client.trajectory(CHAIN_ID, line=(self.START, self.END), duration=1.0,
                                      period=0.1, **kwargs)

    def test_line_yields_every_sample_on_the_line_then_the_summary(self):
        trajectory = self.line()
        samples = list(trajectory)
        self.assertEqual(len(samples), 11)
        fractions = np.arange(11) / 10
        np.testing.assert_allclose([s.time for s in samples], fractions, rtol=0, atol=1e-12)
        for sample, fraction in zip(samples, fractions):
            self.assert_chain_state(sample, self.START + fraction * (self.END - self.START))
        self.assertEqual(trajectory.joint_names, ("joint_0", "joint_1", "joint_2", "joint_3"))
        self.assertEqual(trajectory.summary.samples, 11)
        self.assertEqual(trajectory.summary.fraction_reached, 1.0)
        self.assertEqual(trajectory.summary.max_hand_error, max(s.hand_error for s in samples))

    def test_batched_messages_carry_the_same_samples(self):
        single = list(self.line())
        batched = list(self.line(batch=4))
        self.assertEqual(len(batched), len(single))
        for a, b in zip(single, batched):
            np.testing.assert_array_equal(a.positions, b.positions)

    def test_polyline_at_constant_speed_turns_at_its_corner(self):
        points = [in_plane(0.5, 0.25), in_plane(0.25, 0.25), in_plane(0.25, 0.5)]  # 0.5 m
        samples = list(self.client.trajectory(CHAIN_ID, polyline=points, speed=1.0,
                                              period=0.125))
        self.assertEqual(len(samples), 5)
        expected = [points[0], in_plane(0.375, 0.25), points[1], in_plane(0.25, 0.375),
                    points[2]]
        for sample, target in zip(samples, expected):
            np.testing.assert_allclose(sample.target, target, rtol=0, atol=1e-12)
            self.assert_chain_state(sample, target)

    def test_cancel_stops_the_stream(self):
        trajectory = self.client.trajectory(CHAIN_ID, line=(self.START, self.END),
                                            duration=50.0, period=0.001)
        next(trajectory)
        trajectory.cancel()
        with self.assertRaises(ikd.IkdError) as raised:
            list(trajectory)
        self.assertEqual(raised.exception.code, grpc.StatusCode.CANCELLED)

    def test_bad_period_names_the_field(self):
        with self.assertRaises(ikd.IkdError) as raised:
            list(self.client.trajectory(CHAIN_ID, line=(self.START, self.END), duration=1.0,
                                        period=-0.1))
        self.assertEqual(raised.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(raised.exception.fields, ["sample_period"])


class TrackTest(ClientTestCase):
    def test_answers_each_target_in_order(self):
        angles = np.linspace(0.0, 0.6, 8)
        targets = [(0.05 * i, in_plane(0.1 + 0.45 * math.cos(a), -0.2 + 0.45 * math.sin(a)))
                   for i, a in enumerate(angles)]
        states = list(self.client.track(CHAIN_ID, targets))
        self.assertEqual(len(states), len(targets))
        for state, (time, position) in zip(states, targets):
            self.assertEqual(state.time, time)
            np.testing.assert_array_equal(state.target, position)
            self.assert_chain_state(state, position)
        self.assertEqual(states[0].joint_names, ("joint_0", "joint_1", "joint_2", "joint_3"))

    def test_targets_are_read_as_the_stream_goes(self):
        """Each target is made from the answer to the one before (a closed loop): a client
        that read the targets ahead of the answers would wait here forever."""
        answers = queue.Queue()
        step = np.array([0.0, 0.02, 0.0])

        def closed_loop_targets():
            position = in_plane(0.45, 0.0)
            for i in range(5):
                yield ikd.Target(0.05 * i, position)
                position = answers.get(timeout=10).hand + step

        states = []
        for state in self.client.track(CHAIN_ID, closed_loop_targets()):
            states.append(state)
            answers.put(state)
        self.assertEqual(len(states), 5)
        for before, after in zip(states, states[1:]):
            np.testing.assert_allclose(after.target, before.hand + step, rtol=0, atol=1e-12)

    def test_bad_target_mid_stream_raises_after_the_answers_before_it(self):
        targets = [(0.0, in_plane(0.45, 0.0)), (0.05, in_plane(0.45, 0.02)),
                   (0.1, (math.nan, 0.0, 0.5))]
        states = []
        with self.assertRaises(ikd.IkdError) as raised:
            for state in self.client.track(CHAIN_ID, targets):
                states.append(state)
        self.assertEqual(len(states), 2)
        self.assertEqual(raised.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(raised.exception.fields, ["target.position"])

    def test_malformed_target_raises_the_clients_error(self):
        targets = [(0.0, in_plane(0.45, 0.0)), (0.05, (0.45, 0.02))]
        states = []
        with self.assertRaisesRegex(ValueError, "position must have 3 components"):
            for state in self.client.track(CHAIN_ID, targets):
                states.append(state)
        self.assertEqual(len(states), 1)


class ErrorTest(ClientTestCase):
    def test_negative_radius_names_the_limb_and_stores_nothing(self):
        bad = {"planar": True, "limbs": [{"length": 0.3, "radius": 0.01},
                                         {"length": 0.2, "radius": -0.5}]}
        with self.assertRaises(ikd.IkdError) as raised:
            self.client.create_arm("py-bad", bad)
        error = raised.exception
        self.assertEqual(error.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(error.fields, ["arm.spec.limbs[1].radius"])
        self.assertIn("-0.5", error.field_violations[0].description)
        with self.assertRaises(ikd.IkdError) as missing:
            self.client.arm("py-bad")
        self.assertEqual(missing.exception.code, grpc.StatusCode.NOT_FOUND)

    def test_nan_target_names_the_target(self):
        with self.assertRaises(ikd.IkdError) as raised:
            self.client.solve(arm=CHAIN_ID, position=(math.nan, 0.0, 0.5))
        self.assertEqual(raised.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(raised.exception.fields, ["target"])
        self.assertIn("INVALID_ARGUMENT", str(raised.exception))

    def test_unknown_arm_is_not_found_without_violations(self):
        with self.assertRaises(ikd.IkdError) as raised:
            self.client.solve(arm="no-such-arm", position=in_plane(0.5, 0.3))
        self.assertEqual(raised.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertIn("arms/no-such-arm", raised.exception.message)
        self.assertEqual(raised.exception.field_violations, [])

    def test_no_server_is_unavailable(self):
        with ikd.Client("127.0.0.1:1", timeout=5) as client:
            with self.assertRaises(ikd.IkdError) as raised:
                client.health()
        self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)


class ModelTest(ClientTestCase):
    def test_demo_models_are_listed_with_their_specs(self):
        self.assertEqual(self.client.health(), "SERVING")
        arms = {arm.name: arm for arm in self.client.arms()}
        self.assertLessEqual({"arms/planar7", "arms/panda", "arms/spatial6"}, set(arms))
        self.assertIn("scenes/pillars", {scene.name for scene in self.client.scenes()})
        demo = json.loads((pathlib.Path(os.environ["IKD_MODELS_DIR"]) /
                           "planar7.arm.json").read_text())
        self.assertEqual([limb.length for limb in arms["arms/planar7"].spec.limbs],
                         [limb["length"] for limb in demo["spec"]["limbs"]])

    def test_pages_of_one_list_every_arm(self):
        every = [arm.name for arm in self.client.arms()]
        self.assertGreaterEqual(len(every), 4)
        self.assertEqual([arm.name for arm in self.client.arms(page_size=1)], every)

    def test_deleted_scene_is_gone(self):
        created = self.client.create_scene("py-empty", {"obstacles": []})
        self.assertEqual(created.name, "scenes/py-empty")
        self.assertEqual(self.client.scene("py-empty").version, 1)
        self.client.delete_scene("py-empty", etag=created.etag)
        with self.assertRaises(ikd.IkdError) as raised:
            self.client.scene("py-empty")
        self.assertEqual(raised.exception.code, grpc.StatusCode.NOT_FOUND)


class TokenTest(unittest.TestCase):
    """An ikd of its own with --tokens_file: the client's token on every call."""

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.TemporaryDirectory(prefix="ikd-python-tokens-")
        tokens = pathlib.Path(cls.scratch.name) / "tokens"
        tokens.write_text("read-write rw-secret-0123456789\nread-only ro-secret-0123456789\n")
        cls.token_file = pathlib.Path(cls.scratch.name) / "token"
        cls.token_file.write_text("# the read-write token\nrw-secret-0123456789\n")
        cls.server = IkdProcess(os.environ["IKD_BINARY"], flags=[f"--tokens_file={tokens}"])

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.scratch.cleanup()

    def call_code(self, client, call):
        with self.assertRaises(ikd.IkdError) as raised:
            call(client)
        return raised.exception.code

    def test_calls_need_a_valid_token(self):
        for token in (None, "wrong"):
            with ikd.Client(self.server.address, token=token, timeout=10) as client:
                self.assertEqual(self.call_code(client, lambda c: c.arms()),
                                 grpc.StatusCode.UNAUTHENTICATED)

    def test_read_only_token_solves_but_cannot_write(self):
        with ikd.Client(self.server.address, token="ro-secret-0123456789",
                        timeout=10) as client:
            state = client.solve(arm=CHAIN, position=in_plane(0.5, 0.3))
            self.assertEqual(state.status, ikd.StepStatus.REACHED)
            states = list(client.track(CHAIN, [(0.0, in_plane(0.5, 0.3))]))
            self.assertEqual(len(states), 1)
            self.assertEqual(self.call_code(client, lambda c: c.create_arm("ro", CHAIN)),
                             grpc.StatusCode.PERMISSION_DENIED)

    def test_token_file_gives_write_access(self):
        with ikd.Client(self.server.address, token_file=self.token_file, timeout=10) as client:
            self.assertEqual(client.create_arm("rw", CHAIN).name, "arms/rw")


class TlsTest(unittest.TestCase):
    """An ikd of its own serving mutual TLS: the client's CA, certificate and key files."""

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.TemporaryDirectory(prefix="ikd-python-tls-")
        cls.files = pathlib.Path(cls.scratch.name)
        make_certificates(cls.files)
        cls.server = IkdProcess(os.environ["IKD_BINARY"], flags=[
            f"--tls_cert={cls.files / 'server.pem'}", f"--tls_key={cls.files / 'server.key'}",
            f"--tls_client_ca={cls.files / 'ca.pem'}"])

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.scratch.cleanup()

    def test_client_certificate_opens_the_server(self):
        address = f"localhost:{self.server.port}"
        with ikd.Client(address, tls_ca=self.files / "ca.pem", tls_cert=self.files / "client.pem",
                        tls_key=self.files / "client.key", timeout=10) as client:
            self.assertEqual(client.health(), "SERVING")
            state = client.solve(arm=CHAIN, position=in_plane(0.5, 0.3))
            np.testing.assert_allclose(state.hand, in_plane(0.5, 0.3), rtol=0, atol=1e-6)

    def test_without_a_client_certificate_or_tls_no_call_passes(self):
        address = f"localhost:{self.server.port}"
        for options in ({"tls_ca": self.files / "ca.pem"}, {}):
            with ikd.Client(address, timeout=5, **options) as client:
                with self.assertRaises(ikd.IkdError) as raised:
                    client.health()
                self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)


if __name__ == "__main__":
    unittest.main()
