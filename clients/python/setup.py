"""Build hook of the ikd package: build_py generates the protobuf and gRPC modules (ikd/_proto)
from the repository's proto/ with the system protoc, into the build directory only, so that
pip install and wheels carry them while the source tree holds none (see generate_stubs.py).
Metadata lives in pyproject.toml."""
import pathlib
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import generate_stubs  # noqa: E402  (next to this file, not an installed module)


class BuildPyWithStubs(build_py):
    def run(self):
        super().run()
        if not self.dry_run:
            self._stubs = [str(p) for p in generate_stubs.generate(self.build_lib)]

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + getattr(self, "_stubs", [])


setup(cmdclass={"build_py": BuildPyWithStubs})
