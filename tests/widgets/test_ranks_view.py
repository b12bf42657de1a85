"""RanksView driven in Python through its controls: readouts, scenarios, bad input, sources.

One slow rank (the default): 12 layers of 1.8 ms, rank 0 50 % slower (2.7 ms a
layer), 3 layers of 25 MB per bucket, 8 ranks on 25 GB/s, 0.05 ms per ring step,
0.05 ms to enqueue a collective. Each 75 MB transfer takes 0.7 + 5.25 = 5.95 ms.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import pytest
from drive import FakeWall, play, reset, step

from widgets.model.ranks_view import (
    CONTENTION,
    DISAGREE,
    SCENARIO_SETTINGS,
    TWO_PARTIAL,
    RanksConfig,
)
from widgets.ranks_view import RanksView
from widgets.registry import WIDGETS

pn.extension()


@pytest.fixture
def view() -> RanksView:
    v = RanksView()
    v.clock._wall_clock = FakeWall()
    return v


def value_of(v: RanksView, key: str) -> str:
    text = v.readouts[key].text
    return text.split('class="ol-value"', 1)[1].split(">", 1)[1].split("</output>", 1)[0]


def label_of(v: RanksView, key: str) -> str:
    return v.readouts[key].text.split('class="ol-label"', 1)[1].split(">", 1)[1].split("<", 1)[0]


def type_into(v: RanksView, name: str, text: str) -> None:
    v.fields[name].input.value = text


def test_default_readouts_are_labelled_and_start_with_their_number(view: RanksView) -> None:
    assert label_of(view, "slowest") == "Slowest rank per bucket"
    assert label_of(view, "idle") == "Idle time of the fastest rank"
    assert label_of(view, "timer") == "What a timer around the all-reduce call measures"
    assert value_of(view, "slowest") == "0, 0, 0, 0"
    # Rank 1 ends backward at 21.60; the last transfer starts at 32.40 + 0.05.
    assert value_of(view, "idle") == "16.80 ms"
    assert value_of(view, "timer") == "0.05 ms"
    note = view.readouts["timer"].text
    assert "5.95 ms (rank 0) to 16.75 ms (rank 1)" in note
    assert value_of(view, "step") == "52.40 ms"
    assert value_of(view, "tail") == "6.00 ms"
    assert value_of(view, "overlap") == "75 %"


def test_without_enqueue_cost_the_wait_is_the_bucket_timelines_straggler(view: RanksView) -> None:
    type_into(view, "enqueue_ms", "0")
    assert value_of(view, "idle") == "16.75 ms"
    assert value_of(view, "step") == "52.35 ms"


def test_bars_markers_and_lanes(view: RanksView) -> None:
    bars = view.bars.data
    lanes = set(bars["lane"])
    assert lanes == {"Rank 0", "Rank 1", "Rank 2", "Rank 3", "Link"}
    kinds = [k for k in bars["kind"]]
    assert kinds.count("backward") == 4 * 12
    assert kinds.count("transfer") == 4
    assert kinds.count("idle") == 4  # rank 0 waits for the last transfer too
    idle = [
        (left, right)
        for left, right, lane, kind in zip(
            bars["left"], bars["right"], bars["lane"], bars["kind"], strict=True
        )
        if kind == "idle" and lane == "Rank 1"
    ]
    np.testing.assert_allclose(idle, [(21.6, 38.4)])
    marks = view.marks.data
    events = set(marks["event"])
    assert events == {
        "gradient",
        "ready",
        "launch",
        "start",
        "end",
        "backward_end",
        "optimizer",
        "defines",
    }
    # Each event has its own marker shape.
    shape = {}
    for event, marker in zip(marks["event"], marks["marker"], strict=True):
        shape.setdefault(event, set()).add(marker)
    shapes = [next(iter(v)) for k, v in shape.items() if k != "defines"]
    assert all(len(v) == 1 for v in shape.values())
    assert len(set(shapes)) == len(shapes)
    # Rank 0 defines every bucket: four rings, all on rank 0.
    rings = [lane for lane, e in zip(marks["lane"], marks["event"], strict=True) if e == "defines"]
    assert rings == ["Rank 0"] * 4


def test_markers_and_bars_are_revealed_by_the_playhead(view: RanksView) -> None:
    shown = view.playhead._reveals
    assert {r.kind for r in shown} == {"intervals", "points"}
    assert all(len(r.shown.data["x" if r.kind == "points" else "left"]) == 0 for r in shown)
    step(view, 4)
    t = view.clock.elapsed
    assert t > 0
    for r in shown:
        column = "x" if r.kind == "points" else "left"
        assert r.shown.data[column]
        assert max(r.shown.data[column]) <= t + 1e-9
    reset(view)
    assert all(len(r.shown.data["x" if r.kind == "points" else "left"]) == 0 for r in shown)


def test_play_sends_one_anchor_and_no_server_ticks(view: RanksView) -> None:
    before = view.playhead.driver.data["revision"][0]
    play(view)
    after = view.playhead.driver.data["revision"][0]
    assert after == before + 1  # one message with the anchor; the browser animates
    assert view.clock.playing


def test_two_partial_stragglers_define_different_buckets(view: RanksView) -> None:
    view.settings.scenario = TWO_PARTIAL
    assert view.settings.layers_per_bucket == 2  # the scenario loads its settings
    assert value_of(view, "slowest") == "0, 0, 0, 0, 1, 1"
    assert "rank 0 for buckets 0–3, rank 1 for buckets 4–5" in view.readouts["slowest"].text
    rings = [
        lane
        for lane, e in zip(view.marks.data["lane"], view.marks.data["event"], strict=True)
        if e == "defines"
    ]
    assert sorted(set(rings)) == ["Rank 0", "Rank 1"]


def test_equal_ranks_are_marked_as_ties(view: RanksView) -> None:
    view.settings.scenario = CONTENTION
    assert "every bucket is a tie" in view.readouts["slowest"].text
    rings = [e for e in view.marks.data["event"] if e == "defines"]
    assert len(rings) == 4 * 12


def test_contention_sweep_shows_busier_but_slower(view: RanksView) -> None:
    view.settings.scenario = CONTENTION
    data = view.sweep_source.data
    step_ms, overlap = np.asarray(data["step"]), np.asarray(data["overlap"])
    assert overlap[0] > overlap[4] and step_ms[0] > step_ms[4]
    assert view.best_source.data["x"] == [5]
    assert view.current_source.data["x"] == [1]
    assert "5 layers per bucket" in view.sweep_figure.title.text


def test_ranks_disagree_shows_sequences_instead_of_a_timeline(view: RanksView) -> None:
    view.settings.scenario = DISAGREE
    assert not view.bars.data["left"] and not view.marks.data["x"]
    assert view.sequences.visible and not view.sweep_pane.visible
    assert view.empty_note.visible and not view.key.visible
    assert all(not view._cells[k].visible for k in ("slowest", "idle", "timer"))
    assert view._cells["matched"].visible
    assert value_of(view, "matched") == "1"
    assert value_of(view, "waiting") == "3"
    panel = view.sequences.object
    assert "Collective 1<br>✗ stops matching here" in panel
    assert "never launched<br>(waits for layer 7)" in panel
    assert "bucket 1: 9–7" in panel
    assert "TORCH_DISTRIBUTED_DEBUG=DETAIL" in panel
    assert "find_unused_parameters=True" in panel
    assert "No timeline" in view.description.object
    table = view.export_columns()
    assert table["rank"].count(1) == 1 and table["rank"].count(0) == 4
    # Back to a timed scenario: the timeline returns.
    view.settings.scenario = TWO_PARTIAL
    assert view.bars.data["left"] and not view.sequences.visible


def test_scenario_from_a_url_keeps_explicit_overrides() -> None:
    spec = WIDGETS["ranks"]
    kwargs, notices = spec.parse({"scenario": [b"Two partial stragglers"], "slowdown_pct": [b"20"]})
    assert not notices
    v = spec.create(**kwargs)
    assert v.settings.scenario == TWO_PARTIAL
    assert v.settings.slowdown_pct == 20
    assert v.settings.layers_per_bucket == SCENARIO_SETTINGS[TWO_PARTIAL]["layers_per_bucket"]
    _, notices = spec.parse({"scenario": [b"Everything fine"]})
    assert notices and "Scenario is one of" in notices[0]


def test_apply_loads_the_scenario_then_the_given_settings(view: RanksView) -> None:
    step(view, 3)
    view.apply(scenario=CONTENTION, layers_per_bucket=5)
    assert view.settings.contention == 1.0
    assert view.settings.layers_per_bucket == 5
    assert view.clock.elapsed == 0.0
    view.apply(drawn_ranks=2)  # no scenario: the others stay
    assert view.settings.scenario == CONTENTION and view.settings.layers_per_bucket == 5


def test_share_link_reproduces_the_view(view: RanksView) -> None:
    view.settings.scenario = TWO_PARTIAL
    type_into(view, "slowdown_pct", "80")
    spec = WIDGETS["ranks"]
    kwargs, notices = spec.parse(
        {k: [v] for k, v in spec.query_values(view.settings_values()).items()}
    )
    assert not notices
    again = spec.create(**kwargs)
    assert value_of(again, "slowest") == value_of(view, "slowest")
    assert value_of(again, "step") == value_of(view, "step")


@pytest.mark.parametrize(
    ("field", "text", "message"),
    [
        ("drawn_ranks", "9", "Drawn ranks must be 1 to 8 ranks."),
        ("drawn_ranks", "2.5", "Drawn ranks must be a whole number"),
        ("contention", "-1", "Contention factor must be 0 to 10"),
        ("n_layers", "abc", "“abc” is not a number"),
        ("enqueue_ms", "", "Host enqueue cost needs a number"),
    ],
)
def test_bad_input_is_refused_with_a_message_and_keeps_the_readouts(
    view: RanksView, field: str, text: str, message: str
) -> None:
    before = {k: value_of(view, k) for k in ("slowest", "idle", "step")}
    old = getattr(view.settings, field)
    type_into(view, field, text)
    assert message in view.fields[field].message.object
    assert 'role="alert"' in view.fields[field].message.object
    assert getattr(view.settings, field) == old
    assert {k: value_of(view, k) for k in ("slowest", "idle", "step")} == before


def test_ring_ranks_below_the_drawn_ranks_use_the_drawn_ranks(view: RanksView) -> None:
    type_into(view, "drawn_ranks", "6")
    type_into(view, "ranks", "2")
    assert view.result.ring_ranks == 6
    np.testing.assert_allclose(
        view.result.transfer_ms, RanksConfig(drawn_ranks=6, ranks=6).transfer_ms()
    )


def test_lanes_follow_the_drawn_ranks(view: RanksView) -> None:
    type_into(view, "drawn_ranks", "8")
    assert set(view.bars.data["lane"]) == {f"Rank {r}" for r in range(8)} | {"Link"}
    assert view.figure.yaxis.major_label_overrides[0] == "Link"
    assert view.figure.yaxis.major_label_overrides[8] == "Rank 0"
    type_into(view, "drawn_ranks", "1")
    assert set(view.bars.data["lane"]) == {"Rank 0", "Link"}


def test_description_names_the_defining_ranks_and_the_idle_time(view: RanksView) -> None:
    text = view.description.object
    assert "rank 0 for buckets 0–3" in text
    assert "Rank 1 is idle for 16.80 ms" in text
