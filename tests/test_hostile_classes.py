"""The attack suite of ``benchmarks/hostile.py``: its payloads are what they say, and two classes run live.

A test of the harness, not of the server's defences: the live run asserts that each class sent its
attacks, that the bystander called throughout, and that every figure of the table was measured. The
verdicts are the suite's to report (``python benchmarks/hostile.py``), not this test's to hold.
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import pytest

from benchmarks import attacks, hostile
from benchmarks.attacks import compression, harness, parser, wire
from boaf.v1 import boaf_pb2 as pb


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
@pytest.mark.parametrize("size", [1_000, 4 * 1024 * 1024 - 17, 4 * 1024 * 1024 + 17])
def test_a_bomb_inflates_to_exactly_its_size_and_parses(encoding: str, size: int) -> None:
    bomb = compression.padded_classify(size, encoding)
    inflated = gzip.decompress(bomb) if encoding == "gzip" else zlib.decompress(bomb)
    assert len(inflated) == size
    assert len(bomb) < size // 100 + 200
    request = pb.ClassifyRequest.FromString(inflated)
    assert len(request.states) == 1 and len(request.states[0].cells) == 16


def test_parser_shapes_are_what_they_say() -> None:
    proto, body = parser.empty_states(1_000)
    assert len(pb.ClassifyRequest.FromString(proto).states) == 1_000
    assert body.count(b"{}") == 1_000
    proto, body = parser.many_cells(500)
    assert len(pb.ClassifyRequest.FromString(proto).states[0].cells) == 500
    proto, _ = parser.unknown_fields(300)
    assert len(pb.ClassifyRequest.FromString(proto).states) == 0


def test_a_frame_has_the_head_http2_says() -> None:
    data = wire.frame(wire.RST_STREAM, 0, 7, wire.CANCEL.to_bytes(4, "big"))
    assert data == bytes([0, 0, 4, 3, 0, 0, 0, 0, 7, 0, 0, 0, 8])
    assert wire.grpc_message(b"abc", compressed=True) == b"\x01\x00\x00\x00\x03abc"
    assert wire.status_of("3") == "INVALID_ARGUMENT"


def test_the_verdict_names_each_reason() -> None:
    figures = harness.ClassFigures("x", idle_mb=100.0, settled_mb=130.0, log_bytes=2_000_000)
    figures.failed_calls = {"CANCELLED": 3}
    figures.codes = {"OK": 5, "INTERNAL": 1, "503": 2, "502 (no JSON error body)": 1}
    reasons = " | ".join(figures.failures())
    for part in ("3 failed calls", "settled RSS 130 MiB", "log grew 2,000,000", "INTERNAL", "502"):
        assert part in reasons
    assert "'503'" not in reasons
    assert not harness.ClassFigures("y", idle_mb=100.0, settled_mb=119.0, log_bytes=10).failures()


def test_an_unknown_class_is_refused() -> None:
    with pytest.raises(SystemExit):
        hostile.main(["--classes", "frames,nonsense"])


@pytest.mark.slow
def test_two_classes_run_against_a_live_server(tmp_path: Path) -> None:
    target, results = attacks.run_suite(["parser", "frames"], seed=1, quick=True, work_dir=tmp_path)
    assert [r.name for r in results] == ["parser amplification", "HTTP/2 frames"]
    for figures in results:
        assert figures.sent > 0 and figures.codes, figures
        assert figures.calls >= 10 and figures.health_checks >= 1, figures
        assert None not in (figures.idle_mb, figures.peak_mb, figures.settled_mb, figures.cpu_s, figures.log_bytes)
        assert figures.peak_mb is not None and figures.idle_mb is not None and figures.peak_mb >= figures.idle_mb * 0.9
        assert not [f for f in figures.findings if "harness raised" in f], figures.findings
    text = "\n".join(harness.table(results))
    assert text.count("\n| ") == 2 and "| parser amplification |" in text and "rapid reset" in text
    assert target.log_path is not None and target.log_path.is_file()
    harness.write_json(results, tmp_path / "figures.json", {"seed": 1})
    written = json.loads((tmp_path / "figures.json").read_text())
    assert written["seed"] == 1 and [c["name"] for c in written["classes"]] == [r.name for r in results]
    assert set(attacks.ATTACKS) == {"connection", "frames", "compression", "parser", "errors", "control"}
