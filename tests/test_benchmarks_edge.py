"""``benchmarks/edge_cost.py``'s variants: each patches what it names, and its server still answers Classify.

A variant whose patch missed (a part renamed in service/) would measure the full server
under another name; ``mock.patch.object`` fails on a missing attribute, and these check
that each replacement is in place while the variant runs. No timing is read.
"""

from __future__ import annotations

import grpc
import pytest
from servers import grid_state

from benchmarks import edge_cost
from boaf.v1 import boaf_pb2 as pb
from boaf.v1 import boaf_pb2_grpc

STATE = "AS 2S 3S\n4S 5S 6S"


@pytest.mark.parametrize("name", ["no call place", "no edge"])
def test_a_variants_server_answers_classify(name: str) -> None:
    with edge_cost.variant(name) as address, grpc.insecure_channel(address) as channel:
        answer = boaf_pb2_grpc.BoafStub(channel).Classify(pb.ClassifyRequest(states=[grid_state(STATE)]), timeout=30)
    assert len(answer.predictions) == 1
    assert answer.predictions[0].exact


def test_every_part_replaces_what_it_names_while_its_variant_runs_and_only_then(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inside: dict[str, bool] = {}

    def ready(settings: object) -> object:  # no server: the patches are what is checked
        inside[name] = all(getattr(owner, attribute) is new for owner, attribute, new in edge_cost.PARTS[name])
        raise KeyboardInterrupt  # leave the variant at once

    monkeypatch.setattr(edge_cost, "ready_server", ready)
    for name, parts in edge_cost.PARTS.items():
        with pytest.raises(KeyboardInterrupt), edge_cost.variant(name):
            pass
        assert all(getattr(owner, attribute) is not new for owner, attribute, new in parts), f"{name}: left in place"
    assert inside == dict.fromkeys(edge_cost.PARTS, True)
