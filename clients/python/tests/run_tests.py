#!/usr/bin/env python3
"""Runs the Python client's tests (test_*.py here) against a live ikd: starts the given ikd
binary on a free loopback port with a temporary model store, loads the demo models of
deploy/models through the client, runs the suite, stops ikd. Exit status 0 only when every
test ran and passed (ctest: python_client, see ../CMakeLists.txt).

    run_tests.py --ikd build/server/ikd --package-dir build/clients/python \
        --models deploy/models
"""
import argparse
import json
import os
import pathlib
import sys
import tempfile
import unittest

TESTS_DIR = pathlib.Path(__file__).resolve().parent


def load_demo_models(client, models_dir):
    """NAME.arm.json -> arms/NAME, NAME.scene.json -> scenes/NAME (as deploy/run.sh does)."""
    for path in sorted(pathlib.Path(models_dir).glob("*.json")):
        name, kind = path.name.split(".")[:2]
        create = {"arm": client.create_arm, "scene": client.create_scene}[kind]
        create(name, json.loads(path.read_text()))


def run_suite(verbosity):
    suite = unittest.defaultTestLoader.discover(str(TESTS_DIR), pattern="test_*.py")
    result = unittest.TextTestRunner(verbosity=verbosity).run(suite)
    return result.wasSuccessful() and result.testsRun > 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ikd", required=True, help="the ikd server binary")
    parser.add_argument("--package-dir", required=True,
                        help="directory holding the ikd package with its generated ikd/_proto")
    parser.add_argument("--models", required=True, help="deploy/models")
    parser.add_argument("-v", "--verbosity", type=int, default=2)
    args = parser.parse_args()

    if not (pathlib.Path(args.package_dir) / "ikd" / "_proto").is_dir():
        sys.exit(f"{args.package_dir} holds no ikd/_proto: build the ikd_python target first")
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree (tests/)
    sys.path[:0] = [str(pathlib.Path(args.package_dir).resolve()), str(TESTS_DIR)]
    import ikd  # pylint: disable=import-outside-toplevel  (from --package-dir)
    from ikd_process import IkdProcess  # pylint: disable=import-outside-toplevel

    with tempfile.TemporaryDirectory(prefix="ikd-python-") as scratch:
        with IkdProcess(args.ikd, store=os.path.join(scratch, "models.db")) as server:
            with ikd.Client(server.address, timeout=30) as client:
                client.wait_until_serving(timeout=10)
                load_demo_models(client, args.models)
            os.environ.update(IKD_ADDRESS=server.address, IKD_BINARY=args.ikd,
                              IKD_MODELS_DIR=str(pathlib.Path(args.models).resolve()))
            passed = run_suite(args.verbosity)
            exit_code = server.stop()
    if exit_code != 0:
        print(f"ikd exited with status {exit_code}:\n{server.output}", file=sys.stderr)
    return 0 if passed and exit_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
