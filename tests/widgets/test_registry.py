"""The registry and URL settings: keys, parsing with notices, and query strings, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from widgets.bucket_timeline.model import TimelineSettings
from widgets.model.buckets import BucketConfig
from widgets.model.fluid_queue import FluidQueue
from widgets.registry import WIDGETS, WidgetSpec
from widgets.url_state import settings_from_query

QUEUE = WIDGETS["queue-lab"]
BUCKETS = WIDGETS["bucket-timeline"]
KNOWN_PRESETS = (
    "“Overlap works”, “Latency-bound”, “Link saturated”, “Fast compute: transfers queue”, "
    "“Traffic exceeds compute”, “Embedding layer”, “Straggler”, “Tied embeddings”, "
    "“Reordered module”, “8×A100, NVLink”, “8×H100, NVLink”, “64 nodes, 400 Gb/s fabric”, "
    "“64 nodes, 100 GbE”, “64 nodes, 25 GbE”, “8 GPUs, PCIe only”"
)


def test_the_table() -> None:
    assert list(WIDGETS)[:2] == ["bucket-timeline", "queue-lab"]
    assert [spec.name for spec in WIDGETS.values()] == list(WIDGETS)
    assert QUEUE.title == "Fluid queue lab"
    assert BUCKETS.title == "Bucket timeline"
    assert QUEUE.settings is FluidQueue and BUCKETS.settings is TimelineSettings
    assert QUEUE.presets == {} and next(iter(BUCKETS.presets)) == "Overlap works"


def test_keys_are_preset_then_the_settings_in_declaration_order() -> None:
    assert QUEUE.keys == ["arrival", "service", "initial", "duration"]
    assert BUCKETS.keys[:4] == ["preset", "layers_per_bucket", "backward_ms", "grad_mb"]
    assert BUCKETS.keys[-4:] == ["enqueue_ms", "accumulation_steps", "forward_ms", "optimizer_ms"]
    assert "n_layers" not in BUCKETS.keys  # declared, but not a user-facing setting


def test_named_configurations_are_registered_with_their_widget() -> None:
    ranks = WIDGETS["ranks"]
    assert BUCKETS.named.key == "preset" and BUCKETS.named.settings_class is TimelineSettings
    assert ranks.named.key == "scenario" and ranks.named.settings_class is ranks.settings
    assert list(ranks.named)[:2] == ["One slow rank", "Two partial stragglers"]
    # The scenario is a setting, so its key is listed once, where it is declared; the
    # class page's preset list (``presets``) holds only names a ``preset`` key loads.
    assert ranks.keys.count("scenario") == 1 and "preset" not in ranks.keys
    assert ranks.presets == {} and QUEUE.named is None


def test_settings_from_query_values_and_notices() -> None:
    values, notices = settings_from_query(
        FluidQueue,
        {"arrival": [b"4"], "bogus": ["x"], "service": ["-1"], "initial": ["1", "2,5"]},
    )
    assert values == {"arrival": 4.0, "initial": 2.5}  # the last of repeated values wins
    assert notices == [
        "Ignored unknown setting “bogus” (known: arrival, duration, initial, service).",
        "Ignored service=-1: Service rate must be 0 to 1000 items/s.",
    ]


def test_settings_from_query_bytes_are_utf8_and_long_keys_are_cut() -> None:
    values, notices = settings_from_query(FluidQueue, {"k" * 50: [b"1"], "arrival": [b"3"]})
    assert values == {"arrival": 3.0}
    assert notices == [
        f"Ignored unknown setting “{'k' * 40}” (known: arrival, duration, initial, service)."
    ]
    values, notices = settings_from_query(FluidQueue, {"service": [b"\xff"]})
    assert values == {}
    assert notices == ["Ignored service=\ufffd: “\ufffd” is not a number. Enter 0 to 1000 items/s."]


def test_an_empty_value_for_an_optional_setting_is_no_value_and_no_notice() -> None:
    values, notices = settings_from_query(BucketConfig, {"bucket_cap_mb": [""], "ranks": ["4"]})
    assert values == {"ranks": 4}
    assert notices == []


def test_parse_applies_a_known_preset_and_names_the_known_ones_otherwise() -> None:
    assert BUCKETS.parse({"preset": ["Straggler", "Latency-bound"]}) == (
        {"preset": "Latency-bound"},
        [],
    )
    assert BUCKETS.parse({"preset": [b"Straggler"], "ranks": [b"16"]}) == (
        {"preset": "Straggler", "ranks": 16},
        [],
    )
    kwargs, notices = BUCKETS.parse({"preset": [b"N" * 50], "ddp_bucketing": ["yes"]})
    assert kwargs == {"ddp_bucketing": True}
    assert notices == [f"Ignored unknown preset “{'N' * 40}” (known: {KNOWN_PRESETS})."]


def test_parse_without_presets_treats_preset_as_an_unknown_setting() -> None:
    query = {"preset": ["Straggler"], "arrival": ["1"]}
    assert QUEUE.parse(query) == (
        {"arrival": 1.0},
        ["Ignored unknown setting “preset” (known: arrival, duration, initial, service)."],
    )
    assert query == {"preset": ["Straggler"], "arrival": ["1"]}  # the caller's dict is kept


def test_preset_notice_comes_before_the_settings_notices() -> None:
    _, notices = BUCKETS.parse({"ranks": ["1"], "preset": ["x"]})
    assert notices[0].startswith("Ignored unknown preset “x”")
    assert notices[1] == "Ignored ranks=1: Ranks must be 2 to 4096 ranks."
    assert len(notices) == 2


def test_query_values_and_string() -> None:
    values = {
        "preset": "Straggler",
        "ranks": 16,
        "backward_ms": 1.5,
        "bucket_cap_mb": None,
        "ddp_bucketing": True,
        "find_unused_parameters": False,
        "n_layers": 12,
        "latency_ms": np.float64(0.05),
    }
    assert BUCKETS.query_values(values) == {
        "preset": "Straggler",
        "ranks": "16",
        "backward_ms": "1.5",
        "ddp_bucketing": "true",
        "find_unused_parameters": "false",
        "latency_ms": "0.05",
    }
    assert (
        QUEUE.query_string({"arrival": 4.0, "service": 3, "preset": "x"}) == "arrival=4&service=3"
    )
    assert (
        BUCKETS.query_string({"preset": "Fast compute: transfers queue"})
        == "preset=Fast+compute%3A+transfers+queue"
    )


def test_views_are_found_by_module_and_class() -> None:
    assert QUEUE.view.split(":") == ["queue_lab.component", "QueueLab"]
    cls = QUEUE.view_class()
    assert (cls.__module__, cls.__name__) == ("widgets.queue_lab.component", "QueueLab")
    view = QUEUE.create(arrival=5.0)
    assert isinstance(view, cls)
    assert view.settings.arrival == 5.0


def test_a_spec_without_presets_has_no_preset_key() -> None:
    spec = WidgetSpec("x", "X", "", FluidQueue, "queue_lab:QueueLab")
    assert spec.keys == ["arrival", "service", "initial", "duration"]
    with pytest.raises(AttributeError):
        spec.name = "y"  # frozen


def test_a_long_invalid_value_is_shown_cut_to_40_characters() -> None:
    values, notices = settings_from_query(FluidQueue, {"service": ["9" * 50]})
    assert values == {}
    assert notices == [f"Ignored service={'9' * 40}: Service rate must be 0 to 1000 items/s."]


def test_a_preset_that_is_not_utf8_is_named_with_replacement_characters() -> None:
    kwargs, notices = BUCKETS.parse({"preset": [b"\xffx"]})
    assert kwargs == {}
    assert notices == [f"Ignored unknown preset “\ufffdx” (known: {KNOWN_PRESETS})."]
