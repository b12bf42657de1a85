"""Bad profiler files get a ProfileError that says what is wrong; the streamed reader is exact."""

from __future__ import annotations

import gzip
import json
import tracemalloc
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traces import TraceError, profiler_read
from traces.intervals import intersection, merge, subtract
from traces.profiler import ProfileError, read_profile
from traces.profiler_read import read_events

GOOD = Path(__file__).parent / "profiles" / "nccl_rank0.json"


def refused(data: bytes, match: str, **limits) -> str:
    with pytest.raises(ProfileError, match=match) as info:
        read_profile(data, name="up.json", **limits)
    message = str(info.value)
    assert message.startswith("up.json: ") and "Traceback" not in message
    return message


def test_the_error_is_a_trace_error() -> None:
    assert issubclass(ProfileError, TraceError) and issubclass(ProfileError, ValueError)


@pytest.mark.parametrize("cut", [1, 100, 20_000, -3])
def test_truncated_json(cut: int) -> None:
    data = GOOD.read_bytes()
    refused(data[:cut], "cut short|not valid JSON|not a profiler trace")


def test_truncated_gzip() -> None:
    packed = gzip.compress(GOOD.read_bytes())
    refused(packed[: len(packed) // 2], "gzip data is cut short")


def test_damaged_gzip() -> None:
    packed = bytearray(gzip.compress(GOOD.read_bytes()))
    packed[40:60] = b"\xff" * 20
    refused(bytes(packed), "damaged gzip|cut short|not")


def test_two_gzip_members() -> None:
    one = gzip.compress(GOOD.read_bytes())
    refused(one + one, "more than one gzip member")


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b"hello, world", "expected a JSON object"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "not UTF-8|expected a JSON object"),
        (b'{"traceEvents": [}', "not valid JSON"),
        (b'{"traceEvents": []} extra', "text after the end"),
    ],
)
def test_not_json(data: bytes, match: str) -> None:
    refused(data, match)


@pytest.mark.parametrize(
    ("document", "match"),
    [
        (
            [{"ph": "X"}],
            "a bare list of events, the legacy trace torch.autograd.profiler writes without "
            "Kineto; this import reads Kineto's traces",
        ),
        (42, "expected a JSON object"),
        ("a string", "expected a JSON object"),
        ({"schemaVersion": 1}, "no 'traceEvents'"),
        ({"traceEvents": {"a": 1}}, "'traceEvents' is not a list"),
        ({"traceEvents": [1, 2]}, r"traceEvents\[0\] is not an object"),
        ({"format": "overlap-lab-trace", "version": 1}, "an overlap-lab trace is opened"),
    ],
)
def test_json_of_the_wrong_kind(document, match: str) -> None:
    refused(json.dumps(document).encode(), match)


def _profile(keep=lambda e: True, change=lambda e: e) -> bytes:
    doc = json.loads(GOOD.read_text())
    doc["traceEvents"] = [change(dict(e)) for e in doc["traceEvents"] if keep(e)]
    return json.dumps(doc).encode()


def test_no_profiler_steps() -> None:
    data = _profile(keep=lambda e: not str(e.get("name", "")).startswith("ProfilerStep#"))
    refused(data, r"no ProfilerStep#N ranges; profile with a schedule")


def test_no_collectives() -> None:
    def plain(e):
        name = str(e.get("name", ""))
        args = e.get("args", {})
        return not name.startswith("nccl") and "Collective name" not in args

    refused(_profile(keep=plain), "no collectives")


def test_collectives_but_none_in_backward() -> None:
    def early(e):
        if e.get("name") == "DistributedDataParallel.forward":
            e["dur"] = 9000  # forward "ends" after every launch
        return e

    refused(_profile(change=early), "no step has an all-reduce launched during backward")


def test_an_unknown_dtype() -> None:
    def odd(e):
        if "dtype" in e.get("args", {}):
            e["args"] = {**e["args"], "dtype": "Quaternion"}
        return e

    refused(_profile(change=odd), "dtype 'Quaternion'")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("NaN", "NaN is not a number JSON allows"),
        ("-Infinity", "-Infinity is not a number JSON allows"),
        ("1e400", "not a plausible time"),
        ("1e20", "not a plausible time"),
        ("-5", "not a plausible time"),
        ('"12"', "not a number"),
        ("true", "not a number"),
        ("9" * 5000, "digits|integer"),
    ],
)
def test_nan_and_huge_numbers(text: str, match: str) -> None:
    data = GOOD.read_text().replace('"dur": 9900', f'"dur": {text}', 1)
    assert data != GOOD.read_text()
    refused(data.encode(), match)


def test_a_huge_element_count() -> None:
    data = GOOD.read_text().replace('"In msg nelems": 262144', f'"In msg nelems": {10**30}', 1)
    refused(data.encode(), "not a plausible element count")


def test_deeply_nested_input() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    refused(('{"traceEvents": [{"args": ' + deep + "}]}").encode(), "nested too deeply")
    refused(('{"meta": ' + deep + ', "traceEvents": []}').encode(), "nested too deeply")


def test_too_big_before_reading(tmp_path) -> None:
    refused(GOOD.read_bytes(), "more than the 1000-byte limit", max_bytes=1000)
    path = tmp_path / "big.json"
    path.write_bytes(GOOD.read_bytes())
    with pytest.raises(ProfileError, match=r"big\.json: .* more than the 1000-byte limit"):
        read_profile(path, max_bytes=1000)


def test_a_missing_file(tmp_path) -> None:
    with pytest.raises(ProfileError, match=r"nope\.json: cannot read"):
        read_profile(tmp_path / "nope.json")


def test_a_gzip_bomb_stops_at_the_cap_without_unpacking_it() -> None:
    # 64 MiB of spaces packs into ~64 kB; the cap is 8 MiB.
    pack = zlib.compressobj(1, zlib.DEFLATED, 31)
    block = b" " * (1 << 20)
    bomb = b"".join(pack.compress(block) for _ in range(64)) + pack.flush()
    assert len(bomb) < 1 << 20
    tracemalloc.start()
    try:
        refused(bomb, "unpacks to more than the 8388608-byte limit", max_uncompressed=8 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40 << 20  # pieces of at most 4 MiB, never the whole


def test_a_plain_file_over_the_unpacked_cap() -> None:
    refused(GOOD.read_bytes(), "unpacks to more than", max_uncompressed=10_000)


# -- the streamed reader decodes exactly what json.loads does ------------------------

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)
_events = st.lists(st.dictionaries(st.text(max_size=5), _values, max_size=4), max_size=6)


@settings(max_examples=150, deadline=None)
@given(
    events=_events,
    extra=st.dictionaries(
        st.text(max_size=5).filter(lambda k: k != "traceEvents"), _values, max_size=3
    ),
    chunk=st.integers(1, 64),
    indent=st.sampled_from([None, 0, 2]),
    packed=st.booleans(),
)
def test_streamed_reading_equals_json_loads(events, extra, chunk, indent, packed) -> None:
    document = {**extra, "traceEvents": events}
    data = json.dumps(document, indent=indent, ensure_ascii=False).encode()
    if packed:
        data = gzip.compress(data)
    seen: list = []
    old = profiler_read.CHUNK_BYTES
    profiler_read.CHUNK_BYTES = chunk  # tiny chunks: every value crosses a boundary somewhere
    try:
        top = read_events(data, seen.append, name="x")
    finally:
        profiler_read.CHUNK_BYTES = old
    assert seen == events
    assert top == extra


# -- intervals, against counting unit cells -------------------------------------------

_spans = st.lists(
    st.tuples(st.integers(0, 40), st.integers(1, 10)).map(lambda t: (t[0], t[0] + t[1])), max_size=8
)


def _cells(spans) -> set[int]:
    return {c for a, b in spans for c in range(a, b)}


@settings(max_examples=200, deadline=None)
@given(a=_spans, b=_spans)
def test_intervals_match_counting_cells(a, b) -> None:
    import numpy as np

    ma, mb = merge(np.array(a, float).reshape(-1, 2)), merge(np.array(b, float).reshape(-1, 2))
    assert _cells(ma.astype(int).tolist()) == _cells(a)
    assert all(ma[i, 1] < ma[i + 1, 0] for i in range(len(ma) - 1))  # disjoint, in order
    assert intersection(ma, mb) == len(_cells(a) & _cells(b))
    assert _cells(subtract(a, b)) == _cells(a) - _cells(b)


def test_the_import_needs_no_torch() -> None:
    # The server will import profiles; it must not pull in torch (fresh interpreter).
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import traces.profiler, traces.profiler_convert\n"
        "import traces.summary\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
