"""Every RPC of the protos is implemented by boaf's servicers (the stubs' staleness: tests/client)."""

from __future__ import annotations

from boaf.service.grpc.game_servicer import GameServicer
from boaf.service.grpc.servicer import BoafServicer
from boaf.v1 import boaf_pb2, boaf_pb2_grpc, game_pb2, game_pb2_grpc


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
