"""The trace schema's rules to the letter: whole error messages, bounds, type names, truncation.

Each expected message is written out from the contract in ``schema_v1.json`` and the
validator's documented format ``<field path>: <what is wrong>[, found <value>]``, on a small
hand-made document whose every time is known.
"""

from __future__ import annotations

import copy
import inspect

import pytest
from synthetic import edited

from traces import TraceError, check_schema, validate_trace


def _document() -> dict:
    """A valid one-rank, one-parameter, one-bucket trace with round, hand-picked times."""
    rank = {
        "rank": 0,
        "forward_start": 0.0,
        "backward_start": 10.0,
        "backward_return": 20.0,
        "optimizer_start": 21.0,
        "optimizer_end": 25.0,
        "grad_ready": [12.0],
        "buckets": [
            {
                "index": 0,
                "bytes": 4,
                "parameters": ["w"],
                "issue": 12.5,
                "enqueued": 13.0,
                "complete": 18.0,
            }
        ],
    }
    return {
        "format": "overlap-lab-trace",
        "version": 1,
        "time_unit": "ms",
        "metadata": {
            "torch_version": "2.4.0",
            "backend": "gloo",
            "device": "cpu",
            "world_size": 1,
            "bucket_cap_mb": 25.0,
            "cpu_count": 2,
            "threads_per_rank": 1,
            "origin_ns": 0,
        },
        "parameters": [{"name": "w", "bytes": 4}],
        "iterations": [{"iteration": 0, "other_load": 0.0, "ranks": [rank]}],
    }


DOC = _document()
RANK = "trace.iterations[0].ranks[0]"


def _refused(document: dict, message: str) -> None:
    """``validate_trace`` refuses ``document`` with exactly ``message``."""
    with pytest.raises(TraceError) as caught:
        validate_trace(document)
    assert str(caught.value) == message


def test_the_hand_made_document_is_valid() -> None:
    validate_trace(DOC)


# --- messages of the schema checks ----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        # const: the expected value as JSON, then the value found as JSON.
        ("format", "chrome", 'trace.format: expected "overlap-lab-trace", found "chrome"'),
        # type names: "string" reads "a string".
        ("parameters[0].name", 5, "trace.parameters[0].name: expected a string, found 5"),
        # A list of types is joined with " or ", "null" reads "null".
        (
            "metadata.bucket_cap_mb",
            "big",
            'trace.metadata.bucket_cap_mb: expected a finite number or null, found "big"',
        ),
        ("metadata.world_size", 0, "trace.metadata.world_size: must be at least 1, found 0"),
        ("metadata.world_size", 65, "trace.metadata.world_size: must be at most 64, found 65"),
        # exclusiveMinimum 0: 0 itself is refused.
        ("metadata.bucket_cap_mb", 0, "trace.metadata.bucket_cap_mb: must be above 0, found 0"),
        (
            "metadata.torch_version",
            "x" * 101,
            "trace.metadata.torch_version: longer than 100 characters",
        ),
    ],
)
def test_schema_messages_name_the_field_the_rule_and_the_value(path, value, message) -> None:
    _refused(edited(DOC, path, value), message)


def test_too_many_entries_are_counted_in_the_message() -> None:
    # ranks has maxItems 64; the count is checked before the entries themselves.
    rank = DOC["iterations"][0]["ranks"][0]
    doc = edited(DOC, "iterations[0].ranks", [rank] * 65)
    with pytest.raises(TraceError) as caught:
        check_schema(doc)
    assert str(caught.value) == "trace.iterations[0].ranks: at most 64 entries, found 65"


# --- bounds: a value exactly at the bound is accepted -----------------------------------------


def test_values_exactly_at_a_bound_pass_the_schema() -> None:
    """maximum, maxLength and maxItems are inclusive (only the schema is checked here:
    64 ranks with one world_size would break the consistency rules)."""
    check_schema(edited(DOC, "metadata.world_size", 64))
    check_schema(edited(DOC, "metadata.torch_version", "x" * 100))
    rank = DOC["iterations"][0]["ranks"][0]
    check_schema(edited(DOC, "iterations[0].ranks", [copy.deepcopy(rank) for _ in range(64)]))


def test_fields_without_a_minimum_size_may_be_empty() -> None:
    # No minLength on metadata.device, no minItems on grad_ready: empty is fine for the schema.
    check_schema(edited(DOC, "metadata.device", ""))
    check_schema(edited(DOC, "iterations[0].ranks[0].grad_ready", []))


def test_bucket_cap_just_above_zero_is_accepted() -> None:
    validate_trace(edited(DOC, "metadata.bucket_cap_mb", 0.001))


# --- long values are shortened in messages ----------------------------------------------------

DIGITS = "0123456789" * 4


def test_a_value_of_40_characters_is_shown_whole() -> None:
    # 38 characters plus the two JSON quotes: exactly 40, shown as is.
    value = DIGITS[:38]
    _refused(
        edited(DOC, "format", value),
        f'trace.format: expected "overlap-lab-trace", found "{value}"',
    )


def test_a_value_of_41_characters_is_cut_to_37_and_an_ellipsis() -> None:
    # 39 characters plus quotes is 41 > 40: the first 37 characters of the JSON text
    # (the opening quote and 36 digits), then "...".
    value = DIGITS[:39]
    _refused(
        edited(DOC, "format", value),
        f'trace.format: expected "overlap-lab-trace", found "{DIGITS[:36]}...',
    )


# --- consistency rules: messages and boundaries -----------------------------------------------


def test_events_out_of_order_name_both_times() -> None:
    doc = edited(DOC, "iterations[0].ranks[0].forward_start", 10.5)
    _refused(doc, f"{RANK}.backward_start: 10.0 is before forward_start (10.5)")


def test_events_at_the_same_time_are_in_order() -> None:
    validate_trace(edited(DOC, "iterations[0].ranks[0].optimizer_start", 20.0))


def test_ranks_out_of_order_are_named() -> None:
    _refused(
        edited(DOC, "iterations[0].ranks[0].rank", 3),
        f"{RANK}.rank: expected 0 (ranks in order), found 3",
    )


def test_a_gradient_outside_backward_shows_backward_s_span() -> None:
    _refused(
        edited(DOC, "iterations[0].ranks[0].grad_ready[0]", 20.5),
        f"{RANK}.grad_ready[0]: 20.5 is outside backward (10.0 to 20.0)",
    )


@pytest.mark.parametrize("t", [10.0, 20.0])
def test_a_gradient_at_either_end_of_backward_is_inside(t: float) -> None:
    validate_trace(edited(DOC, "iterations[0].ranks[0].grad_ready[0]", t))


def test_a_bucket_issued_before_backward_is_named() -> None:
    _refused(
        edited(DOC, "iterations[0].ranks[0].buckets[0].issue", 9.5),
        f"{RANK}.buckets[0].issue: 9.5 is before backward_start",
    )


def test_a_bucket_issued_as_backward_starts_is_accepted() -> None:
    validate_trace(edited(DOC, "iterations[0].ranks[0].buckets[0].issue", 10.0))


# --- the interpreter knows every JSON Schema type ---------------------------------------------


@pytest.fixture
def boolean_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Validate against a tiny schema using the "boolean" type the trace format may adopt."""
    module = inspect.getmodule(check_schema)
    rule = {"type": "object", "properties": {"flag": {"type": "boolean"}}}
    monkeypatch.setattr(module, "schema", lambda version=2: rule)


@pytest.mark.usefixtures("boolean_schema")
def test_a_boolean_field_takes_true_or_false() -> None:
    check_schema({"flag": True})
    check_schema({"flag": False})
    with pytest.raises(TraceError) as caught:
        check_schema({"flag": 1})
    assert str(caught.value) == "trace.flag: expected true or false, found 1"
