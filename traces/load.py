"""Read a trace file into arrays: size-limited, parsed as JSON data only, validated.

A trace is data, never code: it is parsed with ``json`` (no ``NaN`` or
``Infinity``, no object hooks), refused above ``MAX_TRACE_BYTES`` before it is
read, and checked against the schema before anything uses it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .schema import TraceError, validate_trace

MAX_TRACE_BYTES = 8 * 1024 * 1024  # uploads and files; a shipped trace is ~50 kB


@dataclass(frozen=True, eq=False)
class Trace:
    """A validated trace as arrays: ``I`` iterations, ``R`` ranks, ``P`` parameters, ``B`` buckets.

    Times are ms on the trace's clock. Every kept iteration and rank used the
    same buckets (DDP rebuilds them only after iteration 0).
    """

    document: dict[str, Any]
    name: str
    parameter_names: tuple[str, ...]
    parameter_bytes: np.ndarray  # (P,) float; nan where the size is unknown
    iteration: np.ndarray  # (I,)
    other_load: np.ndarray  # (I,) share of cores used by other processes; nan if unknown
    forward_start: np.ndarray  # (I, R)
    backward_start: np.ndarray  # (I, R)
    backward_return: np.ndarray  # (I, R)
    optimizer_start: np.ndarray  # (I, R)
    optimizer_end: np.ndarray  # (I, R)
    grad_ready: np.ndarray  # (I, R, P)
    bucket_parameters: tuple[np.ndarray, ...]  # parameter indices of each bucket
    bucket_bytes: np.ndarray  # (B,) float; nan where the size is unknown
    issue: np.ndarray  # (I, R, B)
    enqueued: np.ndarray  # (I, R, B)
    complete: np.ndarray  # (I, R, B)
    # When each collective began running (version 2's bucket ``start``: a profile's kernel
    # start), where every bucket of the trace has one; None otherwise.
    start: np.ndarray | None = None  # (I, R, B)
    # How long each rank's collective waited for the last peer to start (an imported
    # profile of every rank: ``profiler_ranks``), where every bucket has one; None otherwise.
    peer_wait: np.ndarray | None = None  # (I, R, B) ms
    # The optional isolated block (None when the trace has none): all-reduces alone...
    isolated_bytes: np.ndarray | None = None  # (S,) sizes, ascending
    isolated_ms: tuple[np.ndarray, ...] | None = None  # per size, each repetition's ms
    # ...and backward alone, ms from each rank's backward start
    alone_grad_ready: np.ndarray | None = None  # (I', R, P)
    alone_backward_ms: np.ndarray | None = None  # (I', R)

    @property
    def has_isolated(self) -> bool:
        """Whether the trace holds all-reduces alone and backward alone (``isolated``)."""
        return (
            self.isolated_bytes is not None
            and self.isolated_bytes.size > 0
            and self.alone_grad_ready is not None
            and self.alone_grad_ready.shape[0] > 0
        )

    @property
    def sizes_known(self) -> bool:
        """Whether every bucket's size is known (a profile without sizes has ``null`` bytes)."""
        return bool(np.isfinite(self.bucket_bytes).all())

    @property
    def metadata(self) -> dict[str, Any]:
        """The trace's metadata block."""
        return self.document["metadata"]

    @property
    def version(self) -> int:
        """The file's format version (1 or 2)."""
        return self.document["version"]

    @property
    def source(self) -> str:
        """``"recorder"`` or ``"torch.profiler"``.

        A version-1 file says so only by the ``profile`` block early imports wrote.
        """
        if "source" in self.metadata:
            return self.metadata["source"]
        return "torch.profiler" if "profile" in self.document else "recorder"

    @property
    def device_times(self) -> bool:
        """Whether the times are the device's (CUDA events or profiler kernels), not the host's."""
        if "times" in self.metadata:
            return self.metadata["times"] == "device"
        return self.document.get("profile", {}).get("times") == "device"

    @property
    def approximate_readiness(self) -> bool:
        """Whether ``grad_ready`` is per bucket and approximate (a profile), not per parameter."""
        if "readiness" in self.metadata:
            return self.metadata["readiness"] != "per-parameter"
        return self.source == "torch.profiler"

    @property
    def n_iterations(self) -> int:
        """Number of recorded iterations."""
        return self.iteration.size

    @property
    def n_ranks(self) -> int:
        """Number of ranks."""
        return self.forward_start.shape[1]

    @property
    def n_buckets(self) -> int:
        """Number of buckets."""
        return self.bucket_bytes.size

    @property
    def parameter_bucket(self) -> np.ndarray:
        """(P,) the bucket of each parameter."""
        out = np.empty(len(self.parameter_names), int)
        for b, members in enumerate(self.bucket_parameters):
            out[members] = b
        return out

    @property
    def layout(self) -> str:
        """The bucket layout in words, e.g. ``"4 buckets: 3+3+3+3 parameters"``."""
        counts = "+".join(str(len(m)) for m in self.bucket_parameters)
        return f"{self.n_buckets} bucket{'s' * (self.n_buckets != 1)}: {counts} parameters"


def _reject_constant(trace_name: str, constant: str) -> None:
    raise TraceError(f"{trace_name}: {constant} is not a number JSON allows")


def parse_trace(data: bytes | str, name: str = "trace", max_bytes: int = MAX_TRACE_BYTES) -> Trace:
    """Parse and validate trace text; raise ``TraceError`` with a message a person can act on."""
    size = len(data.encode() if isinstance(data, str) else data)
    if size > max_bytes:
        raise TraceError(f"{name}: {size} bytes is more than the {max_bytes}-byte limit")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TraceError(f"{name}: not UTF-8 text (byte {exc.start})") from None
    try:
        document = json.loads(data, parse_constant=lambda c: _reject_constant(name, c))
    except json.JSONDecodeError as exc:
        raise TraceError(
            f"{name}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise TraceError(f"{name}: nested too deeply to be a trace") from None
    validate_trace(document)
    return from_document(document, name)


def load_trace(path: str | Path, max_bytes: int = MAX_TRACE_BYTES) -> Trace:
    """Read, parse and validate a trace file (its size is checked before it is read)."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise TraceError(f"{path}: cannot read ({exc.strerror})") from None
    if size > max_bytes:
        raise TraceError(f"{path.name}: {size} bytes is more than the {max_bytes}-byte limit")
    return parse_trace(path.read_bytes(), name=path.name, max_bytes=max_bytes)


def write_trace(document: dict[str, Any], path: str | Path) -> None:
    """Validate a trace document and write it as compact JSON."""
    validate_trace(document)
    Path(path).write_text(json.dumps(document, separators=(",", ":")) + "\n", encoding="utf-8")


def from_document(document: dict[str, Any], name: str = "trace") -> Trace:
    """Arrays from a document that passed ``validate_trace``."""
    names = tuple(p["name"] for p in document["parameters"])
    index = {n: i for i, n in enumerate(names)}
    its = document["iterations"]
    first = [[index[n] for n in b["parameters"]] for b in its[0]["ranks"][0]["buckets"]]
    for i, it in enumerate(its):
        for r, rank in enumerate(it["ranks"]):
            layout = [[index[n] for n in b["parameters"]] for b in rank["buckets"]]
            if layout != first:
                raise TraceError(
                    f"trace.iterations[{i}].ranks[{r}].buckets: the parameters are bucketed "
                    "differently from iterations[0].ranks[0] (DDP rebuilds its buckets after "
                    "iteration 0: leave the first iterations out as warm-up)"
                )

    def per_rank(key: str) -> np.ndarray:
        return np.array([[rank[key] for rank in it["ranks"]] for it in its], float)

    def per_bucket(key: str) -> np.ndarray:
        return np.array(
            [[[b[key] for b in rank["buckets"]] for rank in it["ranks"]] for it in its], float
        )

    def every(key: str) -> bool:
        return all(key in b for it in its for rank in it["ranks"] for b in rank["buckets"])

    bucket_bytes = _sizes(b["bytes"] for b in its[0]["ranks"][0]["buckets"])
    isolated = _isolated_arrays(document.get("isolated"), len(names), len(its[0]["ranks"]))
    return Trace(
        document=document,
        name=name,
        parameter_names=names,
        parameter_bytes=_sizes(p["bytes"] for p in document["parameters"]),
        iteration=np.array([it["iteration"] for it in its], int),
        other_load=np.array(
            [np.nan if it["other_load"] is None else it["other_load"] for it in its], float
        ),
        forward_start=per_rank("forward_start"),
        backward_start=per_rank("backward_start"),
        backward_return=per_rank("backward_return"),
        optimizer_start=per_rank("optimizer_start"),
        optimizer_end=per_rank("optimizer_end"),
        grad_ready=np.array([[rank["grad_ready"] for rank in it["ranks"]] for it in its], float),
        bucket_parameters=tuple(np.array(m, int) for m in first),
        bucket_bytes=bucket_bytes,
        issue=per_bucket("issue"),
        enqueued=per_bucket("enqueued"),
        complete=per_bucket("complete"),
        start=per_bucket("start") if every("start") else None,
        peer_wait=per_bucket("peer_wait") if every("peer_wait") else None,
        **isolated,
    )


def _sizes(values: Iterable[int | None]) -> np.ndarray:
    """Byte counts as floats (exact below 2**53), nan for a ``null`` (unknown) size."""
    return np.array([np.nan if v is None else v for v in values], float)


def _isolated_arrays(block: dict[str, Any] | None, n_params: int, n_ranks: int) -> dict:
    """The ``Trace`` fields of an ``isolated`` block (empty when there is none)."""
    if block is None:
        return {}
    entries = sorted(block["allreduce"], key=lambda e: e["bytes"])
    iterations = block["backward"]
    return {
        "isolated_bytes": np.array([e["bytes"] for e in entries], np.int64),
        "isolated_ms": tuple(np.array(e["ms"], float) for e in entries),
        "alone_grad_ready": np.array(
            [[r["grad_ready"] for r in it["ranks"]] for it in iterations], float
        ).reshape(len(iterations), n_ranks, n_params),
        "alone_backward_ms": np.array(
            [[r["backward_ms"] for r in it["ranks"]] for it in iterations], float
        ).reshape(len(iterations), n_ranks),
    }
