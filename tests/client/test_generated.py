"""The committed stubs (boaf.v1, in clients/python) describe exactly what proto/ says.

scripts/generate-protos makes them with a pinned generator in a tool environment of its own;
this test needs neither. It compiles proto/ with the grpcio-tools of the development install
into descriptors and compares them, message by message, with the descriptors the committed
stubs register, and the services' methods with those the gRPC stubs route. A change to proto/
without a new generation fails here; a newer protoc, which writes other text for the same
contract, does not.
"""

from __future__ import annotations

import importlib.resources
import subprocess
import sys
from pathlib import Path

from google.protobuf import descriptor_pb2

from boaf.v1 import boaf_pb2, boaf_pb2_grpc, game_pb2, game_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
PROTO_FILES = ("boaf/v1/boaf.proto", "boaf/v1/game.proto")
STUBS = {"boaf/v1/boaf.proto": (boaf_pb2, boaf_pb2_grpc), "boaf/v1/game.proto": (game_pb2, game_pb2_grpc)}
FRESH = "scripts/generate-protos and commit"


def compiled(tmp_path: Path) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """proto/'s files as protoc compiles them now, by name."""
    out = tmp_path / "descriptors.binpb"
    well_known = importlib.resources.files("grpc_tools") / "_proto"
    args = [f"-I{ROOT / 'proto'}", f"-I{well_known}", f"--descriptor_set_out={out}", *PROTO_FILES]
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", *args], check=True, capture_output=True)
    files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    for file in files:
        for message in file.message_type:
            _drop_json_names(message)
    return {file.name: file for file in files}


def _drop_json_names(message: descriptor_pb2.DescriptorProto) -> None:
    # protoc writes each field's default JSON name into a descriptor set, never into generated code.
    for field in message.field:
        field.ClearField("json_name")
    for nested in message.nested_type:
        _drop_json_names(nested)


def committed(module: object) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto()
    module.DESCRIPTOR.CopyToProto(proto)  # type: ignore[attr-defined]
    return proto


def test_the_committed_stubs_describe_proto_exactly(tmp_path: Path) -> None:
    fresh = compiled(tmp_path)
    assert sorted(fresh) == sorted(STUBS), f"proto/ has other files than the stubs: run {FRESH}"
    for name, (messages, _) in STUBS.items():
        assert committed(messages) == fresh[name], f"the stubs of {name} are stale: run {FRESH}"


def test_the_grpc_stubs_route_every_method_of_every_service() -> None:
    for messages, services in STUBS.values():
        for service in messages.DESCRIPTOR.services_by_name.values():
            stub = getattr(services, f"{service.name}Stub")
            routed = {name for name in vars(stub(_NoChannel())) if not name.startswith("_")}
            assert routed == {method.name for method in service.methods}, f"{service.full_name}: run {FRESH}"


class _NoChannel:
    """A channel that only records what a generated stub asks of it (no connection is made)."""

    def unary_unary(self, *args: object, **kwargs: object) -> object:
        return object()

    unary_stream = stream_unary = stream_stream = unary_unary
