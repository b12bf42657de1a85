"""Validate a trace document against its version's schema and the rules a schema can't say.

Two versions are read: ``schema_v1.json`` (what the recorder wrote first) and
``schema_v2.json`` (written now: version 1 plus where the times come from, how
exact readiness is, the GPUs and rank numbers, kernel starts and the
collectives that are not buckets). The schema files are the one description of
the format: this module reads them and
checks a document against it with a small interpreter of the JSON Schema
keywords it uses (``type``, ``const``, ``required``, ``properties``, ``items``,
``minItems``/``maxItems``, ``minimum``/``maximum``/``exclusiveMinimum``,
``minLength``/``maxLength``, ``enum``, ``$ref`` to ``#/$defs/...``), so no ``jsonschema``
dependency is needed and the file stays usable by any JSON Schema tool. Then
``check_consistency`` checks what ties fields together (one entry per rank,
every parameter in one bucket, events in order). Every error names the field by
its path, e.g. ``iterations[2].ranks[1].buckets[0].complete``.
"""

from __future__ import annotations

import itertools
import json
import math
from functools import cache
from importlib import resources
from typing import Any

FORMAT = "overlap-lab-trace"
VERSION = 2  # what the recorder and the profile import write
SCHEMA_FILES = {1: "schema_v1.json", 2: "schema_v2.json"}  # every version this build reads
MIB = 1024 * 1024  # bytes: a trace counts bytes, its readers speak of MiB
# Why a bucket's ``bytes`` is null, and how to get them: said wherever sizes are missing.
UNKNOWN_SIZES = (
    "bucket sizes unknown (no 'In msg nelems' on the kernels, no shapes on the collective "
    "ops): record with record_shapes=True or a newer Kineto"
)


class TraceError(ValueError):
    """A trace that can't be read; the message names the field and what is wrong."""


@cache
def schema(version: int = VERSION) -> dict[str, Any]:
    """The JSON Schema of trace format ``version`` (by default the one written, ``VERSION``)."""
    text = resources.files(__package__).joinpath(SCHEMA_FILES[version]).read_text(encoding="utf-8")
    return json.loads(text)


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}

_TYPE_NAMES = {
    "object": "an object",
    "array": "a list",
    "string": "a string",
    "integer": "a whole number",
    "number": "a finite number",
    "boolean": "true or false",
    "null": "null",
}


def _describe(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, dict | list) else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _check(value: Any, rule: dict[str, Any], path: str, root: dict[str, Any]) -> None:
    if "$ref" in rule:
        name = rule["$ref"].removeprefix("#/$defs/")
        _check(value, root["$defs"][name], path, root)
    if "const" in rule and value != rule["const"]:
        raise TraceError(f"{path}: expected {json.dumps(rule['const'])}, found {_describe(value)}")
    if "enum" in rule and value not in rule["enum"]:
        wanted = ", ".join(json.dumps(v) for v in rule["enum"])
        raise TraceError(f"{path}: expected one of {wanted}, found {_describe(value)}")
    if "type" in rule:
        types = rule["type"] if isinstance(rule["type"], list) else [rule["type"]]
        if not any(_TYPES[t](value) for t in types):
            wanted = " or ".join(_TYPE_NAMES[t] for t in types)
            raise TraceError(f"{path}: expected {wanted}, found {_describe(value)}")
    if _TYPES["number"](value):
        if "minimum" in rule and value < rule["minimum"]:
            raise TraceError(f"{path}: must be at least {rule['minimum']}, found {value}")
        if "maximum" in rule and value > rule["maximum"]:
            raise TraceError(f"{path}: must be at most {rule['maximum']}, found {value}")
        if "exclusiveMinimum" in rule and value <= rule["exclusiveMinimum"]:
            raise TraceError(f"{path}: must be above {rule['exclusiveMinimum']}, found {value}")
    if isinstance(value, str):
        if len(value) < rule.get("minLength", 0):
            raise TraceError(f"{path}: must not be empty")
        if "maxLength" in rule and len(value) > rule["maxLength"]:
            raise TraceError(f"{path}: longer than {rule['maxLength']} characters")
    if isinstance(value, dict):
        for key in rule.get("required", ()):
            if key not in value:
                raise TraceError(f"{path}: missing required field {key!r}")
        for key, sub in rule.get("properties", {}).items():
            if key in value:
                _check(value[key], sub, f"{path}.{key}", root)
    if isinstance(value, list):
        if len(value) < rule.get("minItems", 0):
            raise TraceError(f"{path}: needs at least {rule['minItems']} entries")
        if "maxItems" in rule and len(value) > rule["maxItems"]:
            raise TraceError(f"{path}: at most {rule['maxItems']} entries, found {len(value)}")
        if "items" in rule:
            for i, item in enumerate(value):
                _check(item, rule["items"], f"{path}[{i}]", root)


def check_schema(document: Any) -> None:
    """Raise ``TraceError`` naming the first field that breaks its version's schema."""
    version = VERSION
    if isinstance(document, dict) and document.get("format") == FORMAT:
        version = document.get("version")
        if version not in SCHEMA_FILES or isinstance(version, bool):
            known = " and ".join(str(v) for v in SCHEMA_FILES)
            raise TraceError(
                f"version: this build reads trace format versions {known}, "
                f"the file is version {_describe(version)}"
            )
    root = schema(version)
    _check(document, root, "trace", root)


def _ordered(pairs: list[tuple[str, float]], path: str) -> None:
    for (a, ta), (b, tb) in itertools.pairwise(pairs):
        if tb < ta:
            raise TraceError(f"{path}.{b}: {tb} is before {a} ({ta})")


def check_consistency(document: dict[str, Any]) -> None:
    """The rules that tie fields together; call after ``check_schema``."""
    params = document["parameters"]
    names = [p["name"] for p in params]
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise TraceError(f"trace.parameters[{i}].name: {name!r} is listed twice")
        seen.add(name)
    world = document["metadata"]["world_size"]
    for i, it in enumerate(document["iterations"]):
        ipath = f"trace.iterations[{i}]"
        if len(it["ranks"]) != world:
            raise TraceError(
                f"{ipath}.ranks: {len(it['ranks'])} entries for metadata.world_size {world}"
            )
        for r, rank in enumerate(it["ranks"]):
            rpath = f"{ipath}.ranks[{r}]"
            if rank["rank"] != r:
                raise TraceError(
                    f"{rpath}.rank: expected {r} (ranks in order), found {rank['rank']}"
                )
            _ordered(
                [
                    (k, rank[k])
                    for k in (
                        "forward_start",
                        "backward_start",
                        "backward_return",
                        "optimizer_start",
                        "optimizer_end",
                    )
                ],
                rpath,
            )
            ready = rank["grad_ready"]
            if len(ready) != len(params):
                raise TraceError(
                    f"{rpath}.grad_ready: {len(ready)} times for {len(params)} parameters"
                )
            for p, t in enumerate(ready):
                if not rank["backward_start"] <= t <= rank["backward_return"]:
                    raise TraceError(
                        f"{rpath}.grad_ready[{p}]: {t} is outside backward "
                        f"({rank['backward_start']} to {rank['backward_return']})"
                    )
            in_bucket: dict[str, int] = {}
            for b, bucket in enumerate(rank["buckets"]):
                bpath = f"{rpath}.buckets[{b}]"
                if bucket["index"] != b:
                    raise TraceError(
                        f"{bpath}.index: expected {b} (buckets in index order), "
                        f"found {bucket['index']}"
                    )
                for k, name in enumerate(bucket["parameters"]):
                    if name not in seen:
                        raise TraceError(f"{bpath}.parameters[{k}]: unknown parameter {name!r}")
                    if name in in_bucket:
                        raise TraceError(
                            f"{bpath}.parameters[{k}]: {name!r} is also in bucket {in_bucket[name]}"
                        )
                    in_bucket[name] = b
                _ordered([(k, bucket[k]) for k in ("issue", "enqueued", "complete")], bpath)
                if "start" in bucket:
                    _ordered([("start", bucket["start"]), ("complete", bucket["complete"])], bpath)
                if bucket["issue"] < rank["backward_start"]:
                    raise TraceError(f"{bpath}.issue: {bucket['issue']} is before backward_start")
            missing = [n for n in names if n not in in_bucket]
            if missing:
                raise TraceError(f"{rpath}.buckets: parameter {missing[0]!r} is in no bucket")
            for c, other in enumerate(rank.get("collectives", ())):
                _ordered(
                    [("start", other["start"]), ("complete", other["complete"])],
                    f"{rpath}.collectives[{c}]",
                )


def check_run_ranks(document: dict[str, Any]) -> None:
    """Version 2's run rank numbers: one per rank entry, distinct, inside the run's world size."""
    meta = document["metadata"]
    world = meta["world_size"]
    run_world = meta.get("run_world_size", world)
    if run_world < world:
        raise TraceError(
            f"trace.metadata.run_world_size: {run_world} is less than the {world} ranks in the file"
        )
    numbers = meta.get("ranks_in_run")
    if numbers is None:
        return
    if len(numbers) != world:
        raise TraceError(
            f"trace.metadata.ranks_in_run: {len(numbers)} numbers for metadata.world_size {world}"
        )
    for k, number in enumerate(numbers):
        if number >= run_world:
            raise TraceError(
                f"trace.metadata.ranks_in_run[{k}]: rank {number} is outside a run of {run_world}"
            )
        if number in numbers[:k]:
            raise TraceError(f"trace.metadata.ranks_in_run[{k}]: rank {number} is listed twice")


def check_isolated(document: dict[str, Any]) -> None:
    """The rules of the optional ``isolated`` block that tie it to the rest of the trace."""
    block = document.get("isolated")
    if block is None:
        return
    seen: set[int] = set()
    for k, entry in enumerate(block["allreduce"]):
        if entry["bytes"] in seen:
            raise TraceError(
                f"trace.isolated.allreduce[{k}].bytes: {entry['bytes']} is listed twice"
            )
        seen.add(entry["bytes"])
    world = document["metadata"]["world_size"]
    n_params = len(document["parameters"])
    for i, it in enumerate(block["backward"]):
        ipath = f"trace.isolated.backward[{i}].ranks"
        if len(it["ranks"]) != world:
            raise TraceError(f"{ipath}: {len(it['ranks'])} entries for metadata.world_size {world}")
        for r, rank in enumerate(it["ranks"]):
            ready = rank["grad_ready"]
            if len(ready) != n_params:
                raise TraceError(
                    f"{ipath}[{r}].grad_ready: {len(ready)} times for {n_params} parameters"
                )
            for p, t in enumerate(ready):
                if t > rank["backward_ms"]:
                    raise TraceError(
                        f"{ipath}[{r}].grad_ready[{p}]: {t} is after backward returned "
                        f"({rank['backward_ms']})"
                    )


def validate_trace(document: Any) -> None:
    """Check a parsed trace document; raise ``TraceError`` naming the offending field."""
    check_schema(document)
    check_consistency(document)
    check_isolated(document)
    check_run_ranks(document)
