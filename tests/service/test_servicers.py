"""The committed stubs in service/generated are exactly what scripts/generate-protos makes from proto/."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from boaf.service.game_servicer import GameServicer
from boaf.service.generated.boaf.v1 import boaf_pb2, boaf_pb2_grpc, game_pb2, game_pb2_grpc
from boaf.service.servicer import BoafServicer

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "service" / "generated"

# Lines that record the version of the generator, not the contract; a newer grpcio-tools
# changes them without the stubs being stale.
VERSION_STAMPS = re.compile(
    r"^(# Protobuf Python Version:.*|GRPC_GENERATED_VERSION = .*|\s+\d+,)$|_runtime_version\.Domain\.PUBLIC,",
    re.MULTILINE,
)


def stub_files(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): VERSION_STAMPS.sub("<version>", p.read_text(encoding="utf-8"))
        for p in sorted(directory.rglob("*"))
        if p.suffix in {".py", ".pyi"}
    }


def test_committed_stubs_match_a_fresh_generation(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate-protos"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    fresh, committed = stub_files(tmp_path), stub_files(COMMITTED)
    assert sorted(fresh) == sorted(committed), "files differ: run scripts/generate-protos and commit"
    for name, text in fresh.items():
        assert committed[name] == text, f"service/generated/{name} is stale: run scripts/generate-protos and commit"


def test_every_rpc_of_the_protos_is_implemented_by_boafs_servicers() -> None:
    # The generated base classes answer UNIMPLEMENTED by raising NotImplementedError (grpcio's
    # scaffolding, regenerated, never edited): each RPC of each service must be overridden here.
    pairs = (
        (boaf_pb2, "Boaf", boaf_pb2_grpc.BoafServicer, BoafServicer),
        (game_pb2, "Game", game_pb2_grpc.GameServicer, GameServicer),
    )
    for module, service, base, ours in pairs:
        methods = [m.name for m in module.DESCRIPTOR.services_by_name[service].methods]
        assert methods
        missing = [m for m in methods if getattr(ours, m) is getattr(base, m)]
        assert not missing, f"{ours.__name__} leaves {missing} to the generated NotImplementedError"
