"""Loading a trace to the letter: size limits at the boundary, whole error messages, the arrays.

Every expectation is worked out by hand from a small hand-made document whose times are
round numbers: iteration ``i`` (0-based) and rank ``r`` start at ``base = 100 * i + r`` ms,
and every event is a fixed offset from ``base`` (see ``_rank``).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from traces import (
    MAX_TRACE_BYTES,
    Trace,
    TraceError,
    from_document,
    keep_quietest,
    load_trace,
    parse_trace,
    validate_trace,
)

MIB = 1024 * 1024
#: Parameters in registration order: name and gradient bytes.
BYTES = {"a": 8, "b": 4, "c": 16}
#: DDP's usual layout: the last-registered parameter in bucket 0; bytes 16 and 4 + 8 = 12.
LAYOUT = [["c"], ["b", "a"]]


def _rank(r: int, base: float, layout: list[list[str]]) -> dict:
    """Rank ``r``'s entry: forward at ``base``, backward ``base+10`` to ``base+20``, then optimizer
    ``base+21`` to ``base+25``; gradients of a, b, c at ``base+12, 13, 14``; bucket ``k`` issued
    at ``base+15+k``, enqueued half a ms later, complete at ``base+18+k``."""
    return {
        "rank": r,
        "forward_start": base,
        "backward_start": base + 10,
        "backward_return": base + 20,
        "optimizer_start": base + 21,
        "optimizer_end": base + 25,
        "grad_ready": [base + 12, base + 13, base + 14],
        "buckets": [
            {
                "index": k,
                "bytes": sum(BYTES[n] for n in names),
                "parameters": list(names),
                "issue": base + 15 + k,
                "enqueued": base + 15.5 + k,
                "complete": base + 18 + k,
            }
            for k, names in enumerate(layout)
        ],
    }


def _document(
    loads: tuple[float | None, ...] = (0.0,),
    ranks: int = 1,
    layout: list[list[str]] = LAYOUT,
    first: int = 5,
    note: str | None = None,
) -> dict:
    """A valid trace: one iteration per entry of ``loads`` (numbered from ``first``)."""
    metadata = {
        "torch_version": "2.4.0",
        "backend": "gloo",
        "world_size": ranks,
        "bucket_cap_mb": 1.0,
        "cpu_count": 2,
        "threads_per_rank": 1,
        "origin_ns": 0,
    }
    if note is not None:
        metadata["note"] = note
    return {
        "format": "overlap-lab-trace",
        "version": 1,
        "time_unit": "ms",
        "metadata": metadata,
        "parameters": [{"name": n, "bytes": b} for n, b in BYTES.items()],
        "iterations": [
            {
                "iteration": first + i,
                "other_load": load,
                "ranks": [_rank(r, 100.0 * i + r, layout) for r in range(ranks)],
            }
            for i, load in enumerate(loads)
        ],
    }


def _message(call, *args, **kwargs) -> str:
    """The whole message of the ``TraceError`` that ``call`` raises."""
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    return str(caught.value)


def test_the_hand_made_documents_are_valid() -> None:
    validate_trace(_document())
    validate_trace(_document((0.5, 0.1, None), ranks=2, layout=[["a", "b", "c"]], note="x"))


# --- the arrays -----------------------------------------------------------------------------


def test_one_iteration_of_one_rank_loads_into_arrays() -> None:
    """The smallest trace: no second iteration or rank to read the bucket layout from."""
    t = from_document(_document())
    assert t.name == "trace"  # the default name
    assert t.n_iterations == 1 and t.n_ranks == 1 and t.n_buckets == 2
    assert t.parameter_names == ("a", "b", "c")
    assert t.parameter_bytes.tolist() == [8, 4, 16]
    assert [m.tolist() for m in t.bucket_parameters] == [[2], [1, 0]]
    assert t.bucket_bytes.tolist() == [16, 12]
    assert t.parameter_bucket.tolist() == [1, 1, 0]
    assert t.iteration.tolist() == [5]
    assert t.forward_start.tolist() == [[0.0]]
    assert t.grad_ready.tolist() == [[[12.0, 13.0, 14.0]]]
    assert t.issue.tolist() == [[[15.0, 16.0]]]


def test_each_iteration_and_rank_has_its_own_times() -> None:
    t = parse_trace(json.dumps(_document((0.25, None), ranks=2)), name="two.json")
    assert t.name == "two.json"
    assert t.iteration.tolist() == [5, 6]
    # An unknown load (null) is nan.
    np.testing.assert_array_equal(t.other_load, [0.25, np.nan])
    # base = 100 * iteration + rank.
    assert t.forward_start.tolist() == [[0.0, 1.0], [100.0, 101.0]]
    assert t.backward_start.tolist() == [[10.0, 11.0], [110.0, 111.0]]
    assert t.backward_return.tolist() == [[20.0, 21.0], [120.0, 121.0]]
    assert t.optimizer_start.tolist() == [[21.0, 22.0], [121.0, 122.0]]
    assert t.optimizer_end.tolist() == [[25.0, 26.0], [125.0, 126.0]]
    assert t.grad_ready[1, 1].tolist() == [113.0, 114.0, 115.0]
    assert t.issue[1].tolist() == [[115.0, 116.0], [116.0, 117.0]]
    assert t.enqueued[0, 1].tolist() == [16.5, 17.5]
    assert t.complete[1, 0].tolist() == [118.0, 119.0]


def test_the_layout_in_words_has_singular_and_plural() -> None:
    one = from_document(_document(layout=[["c", "b", "a"]]))
    assert one.layout == "1 bucket: 3 parameters"
    assert from_document(_document()).layout == "2 buckets: 1+2 parameters"
    three = from_document(_document(layout=[["c"], ["b"], ["a"]]))
    assert three.layout == "3 buckets: 1+1+1 parameters"


def test_a_trace_is_frozen_and_compared_by_identity() -> None:
    """Its arrays and document can't be compared or hashed by value, so a ``Trace`` is its own
    identity: hashable (usable as a cache key), equal only to itself, and read-only."""
    text = json.dumps(_document())
    t, again = parse_trace(text), parse_trace(text)
    assert isinstance(t, Trace)
    assert t == t and t != again
    assert len({t, again, t}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.name = "other"  # type: ignore[misc]


# --- size limits ----------------------------------------------------------------------------


def test_the_default_limit_is_8_mib() -> None:
    """8 MiB = 8388608 bytes pass the size check (then fail as JSON: only spaces); one more byte
    does not."""
    assert MAX_TRACE_BYTES == 8388608
    assert _message(parse_trace, b" " * (8 * MIB)) == (
        "trace: not valid JSON (line 1, column 8388609: Expecting value)"
    )
    assert _message(parse_trace, b" " * (8 * MIB + 1)) == (
        "trace: 8388609 bytes is more than the 8388608-byte limit"
    )


def test_text_exactly_at_the_limit_is_parsed() -> None:
    text = json.dumps(_document())
    size = len(text.encode())
    assert parse_trace(text, max_bytes=size).n_buckets == 2
    assert _message(parse_trace, text, name="t.json", max_bytes=size - 1) == (
        f"t.json: {size} bytes is more than the {size - 1}-byte limit"
    )


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    # Five "é" are five characters but ten bytes of UTF-8.
    assert _message(parse_trace, "é" * 5, max_bytes=9) == (
        "trace: 10 bytes is more than the 9-byte limit"
    )


def test_a_file_exactly_at_the_limit_is_loaded(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(json.dumps(_document()).encode())
    size = path.stat().st_size
    t = load_trace(path, max_bytes=size)
    assert t.name == "t.json" and t.n_buckets == 2


def test_a_file_over_the_limit_is_refused_by_its_size(tmp_path: Path) -> None:
    path = tmp_path / "ten.json"
    path.write_bytes(b"0123456789")
    assert _message(load_trace, path, max_bytes=9) == (
        "ten.json: 10 bytes is more than the 9-byte limit"
    )


def test_a_file_over_the_default_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with path.open("wb") as f:  # a sparse file of 8 MiB + 1 bytes
        f.seek(8 * MIB)
        f.write(b"x")
    assert _message(load_trace, path) == (
        "big.json: 8388609 bytes is more than the 8388608-byte limit"
    )


def test_a_missing_file_names_the_path_and_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "missing.json"
    assert _message(load_trace, path) == f"{path}: cannot read (No such file or directory)"


# --- what is not a trace --------------------------------------------------------------------


def test_bytes_that_are_not_utf8_name_the_first_bad_byte() -> None:
    # {"a": "\xff"}: the bytes { " a " : space " come first, so 0xff is byte 7.
    assert _message(parse_trace, b'{"a": "\xff"}', name="bad.json") == (
        "bad.json: not UTF-8 text (byte 7)"
    )


def test_invalid_json_names_line_column_and_what_was_expected() -> None:
    # Line 2 is "  oops}": its third character, "o", is where a quoted key should be.
    assert _message(parse_trace, "{\n  oops}", name="bad.json") == (
        "bad.json: not valid JSON (line 2, column 3: "
        "Expecting property name enclosed in double quotes)"
    )
    assert _message(parse_trace, "") == "trace: not valid JSON (line 1, column 1: Expecting value)"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_numbers_json_does_not_allow_are_refused(constant: str) -> None:
    text = json.dumps(_document()).replace('"other_load": 0.0', f'"other_load": {constant}', 1)
    assert _message(parse_trace, text) == f"trace: {constant} is not a number JSON allows"
    # The message names the file it came from, like every other load error.
    assert _message(parse_trace, text, name="run.json") == (
        f"run.json: {constant} is not a number JSON allows"
    )


def test_deep_nesting_is_refused() -> None:
    text = "[" * 100_000 + "]" * 100_000
    assert _message(parse_trace, text, max_bytes=10**6) == (
        "trace: nested too deeply to be a trace"
    )


def test_schema_errors_use_the_default_name_trace() -> None:
    assert _message(parse_trace, "[]") == "trace: expected an object, found list"


# --- keeping the quietest iterations --------------------------------------------------------


def test_keep_at_least_one_iteration() -> None:
    doc = _document((0.5, 0.1, None))
    assert _message(keep_quietest, [doc], 0) == "keep at least one iteration"
    # One is enough: the unknown load (None) counts as quiet, so iteration 7 is kept.
    (kept,) = keep_quietest([doc], 1)
    assert [it["iteration"] for it in kept["iterations"]] == [7]
    assert kept["metadata"]["note"].startswith("Kept the 1 iteration of 3 with the least load")


def test_keep_quietest_of_one_trace_says_what_was_kept() -> None:
    """Loads 0.5, 0.1 and unknown (as 0): the two quietest are iterations 6 and 7 (in order),
    the worst of them 0.1 = 10 % of the cores."""
    sentence = (
        "Kept the 2 iterations of 3 with the least load from other processes "
        "(at most 10% of the cores)."
    )
    (kept,) = keep_quietest([_document((0.5, 0.1, None))], 2)
    assert [it["iteration"] for it in kept["iterations"]] == [6, 7]
    assert kept["metadata"]["note"] == sentence  # no note before: the sentence alone
    validate_trace(kept)
    (kept,) = keep_quietest([_document((0.5, 0.1, None), note="Recorded by hand.")], 2)
    assert kept["metadata"]["note"] == f"Recorded by hand. {sentence}"


def test_traces_of_one_run_keep_the_same_iterations() -> None:
    """Per iteration the worst load of the two: max(0.5, 0.2), max(0.1, 0.3), max(None=0, 0.05)
    = 0.5, 0.3, 0.05; the two least are iterations 6 and 7, the worst of them 30 %."""
    a = _document((0.5, 0.1, None), note="Cap 1.")
    b = _document((0.2, 0.3, 0.05), layout=[["c", "b", "a"]])
    out = keep_quietest([a, b], 2)
    assert [[it["iteration"] for it in d["iterations"]] for d in out] == [[6, 7], [6, 7]]
    sentence = (
        "Kept the 2 iterations of 3 with the least load from other processes, "
        "in 2 traces of one run (at most 30% of the cores)."
    )
    assert [d["metadata"]["note"] for d in out] == [f"Cap 1. {sentence}", sentence]
    # The kept iterations are the originals, rank times included.
    assert out[1]["iterations"][0] == b["iterations"][1]


def test_traces_with_different_iteration_numbers_are_not_trimmed_together() -> None:
    a = _document((0.5, 0.1))
    b = _document((0.5, 0.1), first=6)  # iterations 6, 7 instead of 5, 6
    assert _message(keep_quietest, [a, b], 1) == (
        "traces trimmed together must have the same iteration numbers"
    )
    assert _message(keep_quietest, [a, copy.deepcopy(a), b], 1) == (
        "traces trimmed together must have the same iteration numbers"
    )
