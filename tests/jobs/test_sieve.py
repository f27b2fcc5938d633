"""The sieve-verify job: solver answers per chunk, and the sieve scored against them."""

from __future__ import annotations

import pyarrow as pa
import pytest

from boaf.jobs.sieve import SolveChunk, score, solve_chunk


def test_recall_and_precision() -> None:
    statuses = {1: "solvable", 2: "unsolvable", 3: "unsolvable", 4: "unknown", 5: "solvable"}
    result = score(flagged=[2, 5], statuses=statuses)
    assert result.ffud == [2, 3]
    assert result.unknown == [4]
    assert result.solved == 4
    assert result.recall == pytest.approx(0.5)
    assert result.precision == pytest.approx(0.5)


def test_no_ffuds_and_no_flags_have_no_ratios() -> None:
    result = score(flagged=[], statuses={1: "solvable"})
    assert result.recall is None and result.precision is None


def test_solve_chunk_finds_deal_1163_unsolvable() -> None:
    table = solve_chunk(SolveChunk((1163, 557593)))
    assert table.to_pylist()[0]["status"] == "unsolvable"
    assert table.to_pylist()[1]["status"] == "solvable"
    # The columns the runner writes as a part and ``verify`` reads back.
    assert table.schema == pa.schema([("seed", pa.int64()), ("status", pa.string()), ("reason", pa.string())])
