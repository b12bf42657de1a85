"""The trace format: good files load, every kind of bad file is refused naming the field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from synthetic import MIB, NAMES, edited, synthetic_document

from traces import (
    FORMAT,
    MAX_TRACE_BYTES,
    VERSION,
    TraceError,
    from_document,
    load_trace,
    parse_trace,
    schema,
    validate_trace,
)

GOOD = synthetic_document([3, 3, 3, 3], iterations=3)


def _refused(document, match: str) -> None:
    with pytest.raises(TraceError, match=match):
        parse_trace(json.dumps(document))


def test_a_good_trace_loads_into_arrays() -> None:
    t = parse_trace(json.dumps(GOOD), name="good.json")
    assert t.name == "good.json"
    assert t.n_iterations == 3 and t.n_ranks == 2 and t.n_buckets == 4
    assert t.parameter_names == tuple(NAMES)
    assert t.grad_ready.shape == (3, 2, 12)
    assert t.issue.shape == t.complete.shape == (3, 2, 4)
    assert t.bucket_bytes.tolist() == [12 * MIB] * 4
    assert t.bucket_parameters[0].tolist() == [11, 10, 9]
    assert t.parameter_bucket.tolist() == [3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0]
    assert t.layout == "4 buckets: 3+3+3+3 parameters"
    assert t.metadata["backend"] == "gloo"


def test_the_schema_file_is_the_one_description() -> None:
    s = schema()
    assert s["properties"]["format"]["const"] == FORMAT
    assert s["properties"]["version"]["const"] == VERSION
    assert set(s["required"]) == {
        "format",
        "version",
        "time_unit",
        "metadata",
        "parameters",
        "iterations",
    }
    # Every field of a rank entry is documented.
    rank = s["$defs"]["rank"]
    assert all("description" in v for k, v in rank["properties"].items() if k != "rank")


def test_load_trace_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(GOOD))
    assert load_trace(path).n_buckets == 4


@pytest.mark.parametrize(
    ("path", "value", "match"),
    [
        ("format", "chrome", r"trace\.format: expected \"overlap-lab-trace\""),
        (
            "version",
            3,
            r"version: this build reads trace format versions 1 and 2, the file is version 3",
        ),
        ("time_unit", "s", r"trace\.time_unit: expected \"ms\""),
        ("metadata.world_size", "two", r"trace\.metadata\.world_size: expected a whole number"),
        ("metadata.world_size", 0, r"trace\.metadata\.world_size: must be at least 1"),
        ("metadata.bucket_cap_mb", -1, r"trace\.metadata\.bucket_cap_mb: must be above 0"),
        ("parameters[2].bytes", 0, r"trace\.parameters\[2\]\.bytes: must be at least 1"),
        ("parameters[2].name", "", r"trace\.parameters\[2\]\.name: must not be empty"),
        ("parameters", [], r"trace\.parameters: needs at least 1 entries"),
        ("iterations[1].other_load", "low", r"iterations\[1\]\.other_load: expected a finite"),
        (
            "iterations[0].ranks[1].buckets[2].complete",
            None,
            r"iterations\[0\]\.ranks\[1\]\.buckets\[2\]\.complete: expected a finite number",
        ),
        (
            "iterations[0].ranks[0].grad_ready[3]",
            True,
            r"iterations\[0\]\.ranks\[0\]\.grad_ready\[3\]: expected a finite number",
        ),
        (
            "iterations[0].ranks[0].buckets[0].parameters",
            "11.weight",
            r"buckets\[0\]\.parameters: expected a list",
        ),
    ],
)
def test_a_field_of_the_wrong_kind_is_named(path: str, value, match: str) -> None:
    _refused(edited(GOOD, path, value), match)


@pytest.mark.parametrize(
    "path",
    [
        "format",
        "metadata",
        "metadata.origin_ns",
        "iterations[0].ranks[1].backward_return",
        "iterations[2].ranks[0].buckets[1].issue",
    ],
)
def test_a_missing_field_is_named(path: str) -> None:
    parent, _, key = path.rpartition(".")
    where = f"trace.{parent}" if parent else "trace"
    where = where.replace("[", r"\[").replace("]", r"\]")
    _refused(edited(GOOD, path, delete=True), rf"{where}: missing required field '{key}'")


@pytest.mark.parametrize(
    ("path", "value", "match"),
    [
        ("metadata.world_size", 3, r"iterations\[0\]\.ranks: 2 entries for metadata\.world_size 3"),
        ("iterations[1].ranks[1].rank", 0, r"iterations\[1\]\.ranks\[1\]\.rank: expected 1"),
        ("parameters[1].name", "0.weight", r"parameters\[1\]\.name: '0\.weight' is listed twice"),
        (
            "iterations[0].ranks[0].optimizer_start",
            0.0,
            r"ranks\[0\]\.optimizer_start: 0\.0 is before backward_return",
        ),
        (
            "iterations[0].ranks[0].grad_ready[4]",
            1e6,
            r"ranks\[0\]\.grad_ready\[4\]: 1000000\.0 is outside backward",
        ),
        (
            "iterations[0].ranks[0].buckets[1].index",
            5,
            r"ranks\[0\]\.buckets\[1\]\.index: expected 1 \(buckets in index order\), found 5",
        ),
        (
            "iterations[0].ranks[0].buckets[1].parameters",
            ["8.weight", "nope"],
            r"buckets\[1\]\.parameters\[1\]: unknown parameter 'nope'",
        ),
        (
            "iterations[0].ranks[0].buckets[1].parameters",
            ["8.weight", "11.weight", "6.weight"],
            r"buckets\[1\]\.parameters\[1\]: '11\.weight' is also in bucket 0",
        ),
        (
            "iterations[0].ranks[0].buckets[1].parameters",
            ["8.weight"],
            r"ranks\[0\]\.buckets: parameter '6\.weight' is in no bucket",
        ),
        (
            "iterations[0].ranks[1].buckets[0].complete",
            0.0,
            r"ranks\[1\]\.buckets\[0\]\.complete: 0\.0 is before enqueued",
        ),
        (
            "iterations[0].ranks[1].grad_ready",
            [150.0] * 11,
            r"ranks\[1\]\.grad_ready: 11 times for 12 parameters",
        ),
    ],
)
def test_inconsistent_fields_are_named(path: str, value, match: str) -> None:
    _refused(edited(GOOD, path, value), match)


def test_buckets_must_not_change_between_iterations() -> None:
    doc = edited(
        GOOD,
        "iterations[2].ranks[1].buckets",
        [
            {**GOOD["iterations"][2]["ranks"][1]["buckets"][0], "parameters": NAMES[::-1]},
        ],
    )
    validate_trace(doc)  # a valid document on its own...
    with pytest.raises(TraceError, match=r"iterations\[2\]\.ranks\[1\]\.buckets: .*warm-up"):
        from_document(doc)  # ...but not one layout to fit


def test_not_json_not_utf8_not_numbers_too_big_too_deep() -> None:
    with pytest.raises(TraceError, match=r"not valid JSON \(line 1, column 2"):
        parse_trace("{oops}")
    with pytest.raises(TraceError, match="not UTF-8"):
        parse_trace(b"\xff\xfe{}")
    with pytest.raises(TraceError, match="NaN is not a number JSON allows"):
        parse_trace(json.dumps(GOOD).replace('"other_load": 0.0', '"other_load": NaN', 1))
    with pytest.raises(TraceError, match="more than the 100-byte limit"):
        parse_trace(json.dumps(GOOD), max_bytes=100)
    with pytest.raises(TraceError, match=r"nested too deeply"):
        parse_trace("[" * 100_000 + "]" * 100_000, max_bytes=10**6)
    with pytest.raises(TraceError, match=r"trace: expected an object, found list"):
        parse_trace("[]")


def test_a_large_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with path.open("wb") as f:
        f.seek(MAX_TRACE_BYTES)
        f.write(b"x")
    with pytest.raises(TraceError, match=f"big.json: {MAX_TRACE_BYTES + 1} bytes is more"):
        load_trace(path)
    with pytest.raises(TraceError, match="cannot read"):
        load_trace(tmp_path / "missing.json")


def test_the_trace_model_imports_without_torch() -> None:
    code = (
        "import sys, traces, widgets.model.ranks, traces.commands.recorded\n"
        "loaded = {'torch', 'panel', 'bokeh'} & set(sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_values_survive_a_round_trip() -> None:
    t = parse_trace(json.dumps(GOOD))
    r0 = GOOD["iterations"][1]["ranks"][0]
    assert t.backward_start[1, 0] == r0["backward_start"]
    np.testing.assert_array_equal(t.grad_ready[1, 0], r0["grad_ready"])
    assert t.complete[1, 0, 3] == r0["buckets"][3]["complete"]
