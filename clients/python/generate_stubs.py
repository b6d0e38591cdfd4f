#!/usr/bin/env python3
"""Generates the ikd package's protobuf and gRPC modules into <out>/ikd/_proto.

Used by setup.py (pip install, wheel builds) and clients/python/CMakeLists.txt, so that both
produce the same modules from the same protos, with the system protoc and grpc_python_plugin
(Debian: protobuf-compiler, protobuf-compiler-grpc). The generated modules are never committed.

protoc writes absolute imports named after the proto packages ("from ikd.v1 import ...",
"from grpc.health.v1 import ..."); below ikd._proto those would resolve to the wrong packages
(the top-level ikd and grpc), so they are rewritten to ikd._proto.<package>.
"""
import argparse
import pathlib
import re
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_PROTO_ROOT = HERE.parent.parent / "proto"
DEFAULT_GOOGLEAPIS = pathlib.Path("/usr/share/gocode/src/github.com/gogo/googleapis")
DEFAULT_GRPC_PROTO = pathlib.Path("/usr/share/grpc-proto")

# Error details and health: messages only for google.rpc, a service for grpc.health.
GOOGLEAPIS_PROTOS = ["google/rpc/status.proto", "google/rpc/error_details.proto"]
GRPC_PROTO_PROTOS = ["grpc/health/v1/health.proto"]
PROTO_PACKAGE = "ikd._proto"
REWRITTEN_PACKAGES = ("ikd.v1", "google.rpc", "grpc.health.v1")
IMPORT_LINE = re.compile(
    r"^from (%s) import " % "|".join(re.escape(p) for p in REWRITTEN_PACKAGES), re.MULTILINE)


def find_tool(name, given):
    path = given or shutil.which(name)
    if not path:
        sys.exit(f"generate_stubs: {name} not found (Debian: apt-get install "
                 "protobuf-compiler protobuf-compiler-grpc)")
    return path


def run_protoc(protoc, plugin, include_dirs, protos, out_dir, with_grpc):
    args = [protoc, *(f"-I{d}" for d in include_dirs), f"--python_out={out_dir}"]
    if with_grpc:
        args += [f"--plugin=protoc-gen-grpc_python={plugin}", f"--grpc_python_out={out_dir}"]
    subprocess.run(args + [str(p) for p in protos], check=True)


def fix_imports(proto_dir):
    for module in proto_dir.rglob("*.py"):
        text = module.read_text()
        fixed = IMPORT_LINE.sub(lambda m: f"from {PROTO_PACKAGE}.{m.group(1)} import ", text)
        if fixed != text:
            module.write_text(fixed)


def add_package_markers(proto_dir):
    """Every generated directory becomes a regular package (setuptools lists packages)."""
    for directory in [proto_dir, *(d for d in proto_dir.rglob("*") if d.is_dir())]:
        (directory / "__init__.py").touch()


def generate(out_root, proto_root=DEFAULT_PROTO_ROOT, googleapis=DEFAULT_GOOGLEAPIS,
             grpc_proto=DEFAULT_GRPC_PROTO, protoc=None, plugin=None):
    """Writes <out_root>/ikd/_proto/... and returns the list of files written."""
    protoc = find_tool("protoc", protoc)
    plugin = find_tool("grpc_python_plugin", plugin)
    proto_root, googleapis, grpc_proto = map(pathlib.Path, (proto_root, googleapis, grpc_proto))
    ikd_protos = sorted((proto_root / "ikd" / "v1").glob("*.proto"))
    if not ikd_protos:
        sys.exit(f"generate_stubs: no ikd/v1/*.proto under {proto_root} (build from the "
                 "repository: the protos live in its proto/ directory)")
    for root, names in ((googleapis, GOOGLEAPIS_PROTOS), (grpc_proto, GRPC_PROTO_PROTOS)):
        if not all((root / n).is_file() for n in names):
            sys.exit(f"generate_stubs: {names} not under {root} (Debian: "
                     "golang-github-gogo-googleapis-dev, grpc-proto)")

    proto_dir = pathlib.Path(out_root) / "ikd" / "_proto"
    shutil.rmtree(proto_dir, ignore_errors=True)  # no stale modules of deleted protos
    proto_dir.mkdir(parents=True)
    includes = [proto_root, googleapis, grpc_proto]
    run_protoc(protoc, plugin, includes, ikd_protos, proto_dir, with_grpc=True)
    run_protoc(protoc, plugin, includes, [googleapis / n for n in GOOGLEAPIS_PROTOS], proto_dir,
               with_grpc=False)
    run_protoc(protoc, plugin, includes, [grpc_proto / n for n in GRPC_PROTO_PROTOS], proto_dir,
               with_grpc=True)
    fix_imports(proto_dir)
    add_package_markers(proto_dir)
    return sorted(p for p in proto_dir.rglob("*.py"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory that receives ikd/_proto")
    parser.add_argument("--proto-root", default=DEFAULT_PROTO_ROOT)
    parser.add_argument("--googleapis", default=DEFAULT_GOOGLEAPIS)
    parser.add_argument("--grpc-proto", default=DEFAULT_GRPC_PROTO)
    parser.add_argument("--protoc")
    parser.add_argument("--plugin", help="grpc_python_plugin")
    parser.add_argument("--stamp", help="file touched after success (build systems)")
    args = parser.parse_args()
    generate(args.out, args.proto_root, args.googleapis, args.grpc_proto, args.protoc,
             args.plugin)
    if args.stamp:
        pathlib.Path(args.stamp).touch()


if __name__ == "__main__":
    main()
