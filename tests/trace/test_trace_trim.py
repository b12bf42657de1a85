"""Trimming keeps the timed-alone rounds that ran beside the kept iterations.

The documents are synthetic traces of 4 iterations (numbered 5 to 8 after 5 warm-up
iterations) with a hand-made ``isolated`` block whose round ``j`` is marked in every
number: backward alone returns at ``100 + j`` ms on both ranks, the 4 MiB all-reduce
took ``1 + j`` ms and the 48 MiB one ``11 + j`` ms. So round ``j`` ran beside
iteration ``5 + j``, and every expected value below is read off those marks.
"""

from __future__ import annotations

import json

import pytest
from synthetic import MIB, N_PARAMS, edited, synthetic_document

from app.cli import main
from traces import TraceError, from_document, keep_quietest, load_trace, validate_trace


def _round(j: int) -> dict:
    rank = {"backward_ms": 100.0 + j, "grad_ready": [50.0] * N_PARAMS}
    return {"ranks": [dict(rank), dict(rank)]}


def _marked_block(rounds: int = 4) -> dict:
    return {
        "method": "by hand: round j is marked by j",
        "allreduce": [
            {"bytes": 4 * MIB, "ms": [1.0 + j for j in range(rounds)]},
            {"bytes": 48 * MIB, "ms": [11.0 + j for j in range(rounds)]},
        ],
        "backward": [_round(j) for j in range(rounds)],
    }


def _document(loads: tuple[float | None, ...] = (0.5, 0.1, None, 0.3), **kwargs) -> dict:
    doc = synthetic_document([12], iterations=len(loads), **kwargs)
    for i, load in enumerate(loads):
        doc = edited(doc, f"iterations[{i}].other_load", load)
    doc["isolated"] = _marked_block()
    validate_trace(doc)
    return doc


def _marks(document: dict) -> tuple[list[float], list[float], list[float]]:
    """The rounds a block holds, by their marks: backward alone, 4 MiB, 48 MiB."""
    block = document["isolated"]
    backward = [it["ranks"][0]["backward_ms"] for it in block["backward"]]
    small, large = (e["ms"] for e in block["allreduce"])
    return backward, small, large


def test_the_isolated_block_keeps_the_rounds_of_the_kept_iterations() -> None:
    """Loads 0.5, 0.1, unknown (as 0), 0.3: the two quietest are iterations 6 and 7, whose
    rounds are 1 and 2 (backward alone 101 and 102 ms, all-reduces 2, 3 and 12, 13 ms)."""
    (kept,) = keep_quietest([_document()], 2)
    assert [it["iteration"] for it in kept["iterations"]] == [6, 7]
    assert _marks(kept) == ([101.0, 102.0], [2.0, 3.0], [12.0, 13.0])
    assert kept["isolated"]["method"] == "by hand: round j is marked by j"
    assert kept["metadata"]["note"] == (
        "Kept the 2 iterations of 4 with the least load from other processes (at most 10% of "
        "the cores), and the 2 of 4 rounds of backward and all-reduces timed alone that ran "
        "beside them."
    )
    validate_trace(kept)


def test_a_trimmed_trace_trimmed_again_pairs_rounds_in_order() -> None:
    """After the first trim, iterations 6 and 7 hold rounds 1 and 2 in order; keeping the
    quieter of them (7, unknown load) keeps round 2 alone."""
    (once,) = keep_quietest([_document()], 2)
    (twice,) = keep_quietest([once], 1)
    assert [it["iteration"] for it in twice["iterations"]] == [7]
    assert _marks(twice) == ([102.0], [3.0], [13.0])


def test_a_trace_trimmed_without_its_rounds_pairs_them_by_iteration_number() -> None:
    """Iterations 6 and 8 kept with all 4 rounds (as trimming did before it kept rounds):
    round = iteration - 5 warm-up, so 1 and 3; the quieter (8, load 0) keeps round 3."""
    doc = _document()
    doc["iterations"] = [doc["iterations"][1], doc["iterations"][3]]
    doc = edited(doc, "iterations[1].other_load", 0.0)
    (kept,) = keep_quietest([doc], 1)
    assert [it["iteration"] for it in kept["iterations"]] == [8]
    assert _marks(kept) == ([103.0], [4.0], [14.0])
    assert kept["metadata"]["note"].endswith(
        "and the 1 of 4 rounds of backward and all-reduces timed alone that ran beside them."
    )


def test_traces_of_one_run_keep_the_same_rounds() -> None:
    """Worst loads max(0.5, 0), max(0.1, 0.2), max(0, 0.6), max(0.3, 0) = 0.5, 0.2, 0.6,
    0.3: the two quietest are iterations 6 and 8, rounds 1 and 3, in both traces."""
    a = _document((0.5, 0.1, None, 0.3))
    b = _document((0.0, 0.2, 0.6, 0.0))
    out = keep_quietest([a, b], 2)
    assert [_marks(d) for d in out] == [([101.0, 103.0], [2.0, 4.0], [12.0, 14.0])] * 2


def test_the_trimmed_trace_loads_with_one_round_per_iteration() -> None:
    (kept,) = keep_quietest([_document()], 3)  # iterations 6, 7, 8: rounds 1, 2, 3
    trace = from_document(kept)
    assert trace.alone_backward_ms.tolist() == [[101.0, 101.0], [102.0, 102.0], [103.0, 103.0]]
    assert [ms.tolist() for ms in trace.isolated_ms] == [[2.0, 3.0, 4.0], [12.0, 13.0, 14.0]]


def _message(documents: list[dict], count: int) -> str:
    with pytest.raises(TraceError) as caught:
        keep_quietest(documents, count)
    return str(caught.value)


def test_rounds_that_cannot_be_matched_are_refused() -> None:
    uneven = _document()
    uneven["isolated"]["allreduce"][1]["ms"].pop()
    assert _message([uneven], 1) == (
        "trace.isolated: backward alone and the all-reduces alone hold different numbers of "
        "rounds (3, 4), so they cannot be matched to the iterations they ran beside"
    )
    # Iterations 6 and 20 beside 4 rounds: 20 - 5 = 15 names no round.
    far = _document((0.1, 0.0))
    far = edited(far, "iterations[1].iteration", 20)
    assert _message([far], 1) == (
        "trace.isolated: 4 rounds for 2 iterations, and the iteration numbers less "
        "metadata.warmup_iterations do not name rounds of it, so they cannot be matched to "
        "the iterations they ran beside"
    )
    # Without the warm-up count there is no way to number the rounds.
    unnumbered = edited(_document((0.1, 0.0)), "metadata.warmup_iterations", delete=True)
    assert "cannot be matched" in _message([unnumbered], 1)


def test_the_trim_command_writes_the_kept_rounds(tmp_path, capsys) -> None:
    src, out = tmp_path / "raw.json", tmp_path / "trimmed.json"
    src.write_text(json.dumps(_document()))
    with pytest.raises(SystemExit) as exit_info:
        main(["trim", str(src), "--quietest", "2", "--out", str(out)])
    assert exit_info.value.code == 0
    assert load_trace(out).alone_backward_ms[:, 0].tolist() == [101.0, 102.0]
    assert "and the 2 of 4 rounds of backward and all-reduces timed alone" in (
        capsys.readouterr().out
    )
