"""The many-ranks component driven in Python as its page drives it: the state it sends.

One slow rank (the default): 12 layers of 1.8 ms, rank 0 50 % slower (2.7 ms a
layer), 3 layers of 25 MB per bucket, 8 ranks on 25 GB/s, 0.05 ms per ring step,
0.05 ms to enqueue a collective. Each 75 MB transfer takes
2 x 7 x 0.05 + 2 x 7/8 x 75/25 = 0.7 + 5.25 = 5.95 ms. Rank 0 has bucket b ready
at 8.1 (b + 1) ms and launches it 0.05 ms later: 8.15, 16.25, 24.35, 32.45 ms,
each later than the previous transfer's end, so the last one ends at
32.45 + 5.95 = 38.40 ms, where the optimizer starts (and runs 2 ms).
"""

from __future__ import annotations

import numpy as np
import pytest
from drive import FakeWall

from widgets.many_ranks.component import RanksView
from widgets.many_ranks.model import (
    CONTENTION,
    DISAGREE,
    SCENARIOS,
    TWO_PARTIAL,
)
from widgets.registry import WIDGETS


@pytest.fixture
def view() -> RanksView:
    v = RanksView()
    v.clock._wall_clock = FakeWall()
    return v


def readout(v: RanksView, key: str) -> dict:
    return next(r for r in v.state["readouts"] if r["key"] == key)


def value_of(v: RanksView, key: str) -> str:
    return readout(v, key)["text"]


def label_of(v: RanksView, key: str) -> str:
    return readout(v, key)["label"]


def note_of(v: RanksView, key: str) -> str:
    return readout(v, key)["note"]


def rows(v: RanksView, **where) -> list[dict]:
    """The data table's rows as records, those matching ``where``."""
    table = v.model_state()["table"]
    keys = [c["key"] for c in table["columns"]]
    records = [dict(zip(keys, row, strict=True)) for row in table["rows"]]
    return [r for r in records if all(r[k] == x for k, x in where.items())]


def step(v: RanksView, times: int = 1) -> None:
    for _ in range(times):
        v.act("step")


# --- readouts -----------------------------------------------------------------------------


def test_default_readouts_are_labelled_and_start_with_their_number(view: RanksView) -> None:
    assert label_of(view, "latest") == "Latest rank per bucket"
    assert label_of(view, "idle") == "Idle time of the fastest rank"
    assert label_of(view, "timer") == "What a timer around the all-reduce call measures"
    assert [r["key"] for r in view.state["readouts"]] == [
        "latest",
        "idle",
        "timer",
        "peer_wait",
        "backward_nccl",
        "backward_gloo",
        "bucket_source",
        "step",
        "tail",
        "overlap",
    ]
    assert value_of(view, "latest") == "0, 0, 0, 0"
    assert readout(view, "latest")["values"] == [0, 0, 0, 0]
    # Rank 1 ends backward at 12 x 1.8 = 21.60; the optimizer starts at 38.40.
    assert value_of(view, "idle") == "16.80 ms"
    assert readout(view, "idle")["value"] == pytest.approx(16.8)
    assert readout(view, "idle")["format"] == {"digits": 2, "unit": "ms"}
    assert value_of(view, "timer") == "0.05 ms"
    # Bucket 3: rank 0 launches at 32.45 (5.95 ms before 38.40), rank 1 at 21.65 (16.75 ms).
    assert "5.95 ms (rank 0) to 16.75 ms (rank 1)" in note_of(view, "timer")
    assert value_of(view, "step") == "52.40 ms"  # forward 12 + 38.40 + optimizer 2
    # Rank 0 launches at 8.15, 16.25, 24.35, 32.45; ranks 1-3 at 5.45, 10.85, 16.25, 21.65:
    # each on-time rank waits 2.7 + 5.4 + 8.1 + 10.8 = 27.00 ms for rank 0's launches.
    assert label_of(view, "peer_wait") == "Longest wait for peers"
    assert value_of(view, "peer_wait") == "27.00 ms"
    assert "rank 0 0.00 ms, rank 1 27.00 ms" in note_of(view, "peer_wait")
    # NCCL: rank 0's host returns at its last enqueue, 32.45; gloo: at the completion, 38.40.
    assert label_of(view, "backward_nccl") == "A timer around backward() with NCCL"
    assert value_of(view, "backward_nccl") == "32.45 ms"
    assert "WorkNCCL::synchronizeStream" in note_of(view, "backward_nccl")
    assert label_of(view, "backward_gloo") == "A timer around backward() with gloo"
    assert value_of(view, "backward_gloo") == "38.40 ms"
    assert "finalize_backward" in note_of(view, "backward_gloo")
    assert label_of(view, "bucket_source") == "Buckets every rank launches"
    assert value_of(view, "bucket_source") == "4"
    assert "layers 12–10; 9–7; 6–4; 3–1" in note_of(view, "bucket_source")
    assert value_of(view, "tail") == "6.00 ms"  # 38.40 - 32.40
    # Transfers 8.15-14.10, 16.25-22.20, 24.35-30.30 are hidden, 32.45-38.40 not: 3 / 4.
    assert value_of(view, "overlap") == "75 %"


def test_without_enqueue_cost_the_wait_is_the_bucket_timelines_straggler(view: RanksView) -> None:
    view.edit("enqueue_ms", "0")
    assert value_of(view, "idle") == "16.75 ms"  # 32.40 + 5.95 - 21.60
    assert value_of(view, "step") == "52.35 ms"


# --- what the chart draws -------------------------------------------------------------------


def test_lanes_bars_and_events(view: RanksView) -> None:
    tl = view.state["timeline"]
    assert (tl["n_ranks"], tl["n_buckets"]) == (4, 4)
    assert tl["layers"] == list(range(12, 0, -1))  # backward runs from layer 12 down
    assert tl["layer_bucket"] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    np.testing.assert_allclose(tl["layer_end"][0][:3], [2.7, 5.4, 8.1])
    np.testing.assert_allclose(tl["layer_end"][1][:3], [1.8, 3.6, 5.4])
    np.testing.assert_allclose(tl["bucket_ready"][0], [8.1, 16.2, 24.3, 32.4])
    np.testing.assert_allclose(tl["bucket_launch"][0], [8.15, 16.25, 24.35, 32.45])
    np.testing.assert_allclose(tl["bucket_start"], [8.15, 16.25, 24.35, 32.45])
    np.testing.assert_allclose(tl["bucket_end"], [14.1, 22.2, 30.3, 38.4])
    assert tl["optimizer_start"] == pytest.approx(38.4)
    assert tl["optimizer_end"] == pytest.approx(40.4)
    np.testing.assert_allclose(tl["backward_end"], [32.4, 21.6, 21.6, 21.6])
    # Rank 0 defines every bucket: its launches are the latest.
    assert tl["defines"] == [[True] * 4, [False] * 4, [False] * 4, [False] * 4]
    assert tl["defining_rank"] == [0, 0, 0, 0]
    assert tl["tied"] == [False] * 4


def test_the_data_table_holds_every_bar_and_every_bucket(view: RanksView) -> None:
    lanes = {r["lane"] for r in rows(view)}
    assert lanes == {"Rank 0", "Rank 1", "Rank 2", "Rank 3", "Link"}
    kinds = [r["kind"] for r in rows(view)]
    assert kinds.count("backward") == 4 * 12
    assert kinds.count("bucket") == 4 * 4  # each bucket on each rank: ready, then launched
    assert kinds.count("transfer") == 4
    assert kinds.count("idle") == 4  # rank 0 waits for the last transfer too
    assert kinds.count("optimizer") == 4
    idle = [(r["start_ms"], r["end_ms"]) for r in rows(view, kind="idle", lane="Rank 1")]
    np.testing.assert_allclose(idle, [(21.6, 38.4)])
    np.testing.assert_allclose(
        [(r["start_ms"], r["end_ms"]) for r in rows(view, kind="idle", lane="Rank 0")],
        [(32.4, 38.4)],
    )
    first = rows(view, kind="backward", lane="Rank 0")[0]
    assert (first["layer"], first["bucket"]) == (12, 0)
    assert (first["start_ms"], first["end_ms"]) == pytest.approx((0.0, 2.7))
    defining = rows(view, kind="bucket", defines=True)
    assert [r["lane"] for r in defining] == ["Rank 0"] * 4


def test_each_buckets_link_wait_and_defining_rank_are_in_the_table(view: RanksView) -> None:
    # Fast layers: rank 0's 0.75 ms layers make bucket b ready at 2.25 (b + 1), launched
    # 0.05 ms later: 2.30, 4.55, 6.80, 9.05. The 5.95 ms transfers queue on the link:
    # 2.30-8.25, 8.25-14.20 (waited 3.70), 14.20-20.15 (7.40), 20.15-26.10 (11.10).
    view.edit("backward_ms", "0.5")
    transfers = rows(view, kind="transfer")
    assert [r["bucket"] for r in transfers] == [0, 1, 2, 3]
    assert [r["lane"] for r in transfers] == ["Link"] * 4
    np.testing.assert_allclose([r["link_wait_ms"] for r in transfers], [0, 3.7, 7.4, 11.1])
    np.testing.assert_allclose(
        [r["launched_everywhere_ms"] for r in transfers], [2.3, 4.55, 6.8, 9.05]
    )
    np.testing.assert_allclose([r["start_ms"] for r in transfers], [2.3, 8.25, 14.2, 20.15])
    np.testing.assert_allclose([r["end_ms"] for r in transfers], [8.25, 14.2, 20.15, 26.1])
    assert [r["defining_rank"] for r in transfers] == [0, 0, 0, 0]
    assert [r["size_mb"] for r in transfers] == [75.0] * 4
    np.testing.assert_allclose(view.state["timeline"]["link_wait"], [0, 3.7, 7.4, 11.1])


# --- the clock ------------------------------------------------------------------------------


def test_a_run_is_the_step_and_step_moves_a_sixteenth(view: RanksView) -> None:
    # The run ends with the optimizer at 40.40 ms; 40.40 / 16 = 2.525: steps of 2 ms.
    assert view.anchor["horizon"] == pytest.approx(40.4)
    assert view.anchor["step"] == 2.0
    assert view.state["horizon"] == pytest.approx(40.4)
    step(view, 4)
    assert view.anchor["elapsed"] == pytest.approx(8.0)
    # At 8 ms bucket 0 is not launched yet (8.15 ms): every rank computes, the link waits.
    assert view.description.startswith(
        "At 8.00 ms, 4 of 4 ranks are in backward and the link is idle."
    )
    step(view)
    assert view.description.startswith(
        "At 10.00 ms, 4 of 4 ranks are in backward and the link carries bucket 0."
    )
    view.act("reset")
    assert view.anchor["elapsed"] == 0.0
    assert view.description.startswith("At 0.00 ms, 4 of 4 ranks are in backward")


def test_play_sends_one_anchor_and_no_server_ticks(view: RanksView) -> None:
    before = view.anchor["revision"]
    state = view.state
    view.act("play")
    assert view.anchor["revision"] == before + 1  # one message with the anchor
    assert view.anchor["playing"] is True and view.clock.playing
    assert view.state is state  # the step is not recomputed: the browser animates it


# --- scenarios ------------------------------------------------------------------------------


def test_two_partial_stragglers_define_different_buckets(view: RanksView) -> None:
    view.edit("scenario", TWO_PARTIAL)
    assert view.settings.layers_per_bucket == 2  # the scenario loads its settings
    assert view.values["layers_per_bucket"] == "2"
    assert value_of(view, "latest") == "0, 0, 0, 0, 1, 1"
    assert "rank 0 for buckets 0–3, rank 1 for buckets 4–5" in note_of(view, "latest")
    defines = np.array(view.state["timeline"]["defines"])
    assert sorted(set(np.nonzero(defines)[0].tolist())) == [0, 1]


def test_choosing_a_scenario_is_a_new_experiment(view: RanksView) -> None:
    view.edit("slowdown_pct", "80")
    step(view, 3)
    view.edit("scenario", "Jitter")
    assert view.anchor["elapsed"] == 0.0
    assert view.settings.slowdown_pct == SCENARIOS["Jitter"]["slowdown_pct"] == 40.0
    assert view.state["scenario"]["changed"] == []
    assert view.state["scenario"]["title"] == "Jitter"


def test_equal_ranks_are_marked_as_ties(view: RanksView) -> None:
    view.edit("scenario", CONTENTION)
    assert "every bucket is a tie" in note_of(view, "latest")
    defines = view.state["timeline"]["defines"]
    assert sum(sum(row) for row in defines) == 4 * 12  # every rank rings every bucket
    assert view.state["timeline"]["tied"] == [True] * 12


def test_contention_sweep_shows_busier_but_slower(view: RanksView) -> None:
    view.edit("scenario", CONTENTION)
    sw = view.state["sweep"]
    assert sw["layers_per_bucket"] == list(range(1, 13))
    step_ms, overlap = np.asarray(sw["step_ms"]), np.asarray(sw["overlap_pct"])
    assert overlap[0] > overlap[4] and step_ms[0] > step_ms[4]
    assert sw["best"] == 5
    assert sw["current"] == 1
    assert sw["current_step_ms"] == pytest.approx(step_ms[0])
    assert sw["best_step_ms"] == pytest.approx(step_ms[4])


def test_ranks_disagree_shows_sequences_instead_of_a_timeline(view: RanksView) -> None:
    view.edit("scenario", DISAGREE)
    s = view.state
    assert s["timed"] is False
    assert s["timeline"] is None and s["sweep"] is None
    assert [r["key"] for r in s["readouts"]] == ["matched", "waiting"]
    assert value_of(view, "matched") == "1"
    assert value_of(view, "waiting") == "3"
    assert note_of(view, "waiting") == "ranks 0, 2, 3 wait in collective 1 for rank 1"
    d = s["disagreement"]
    # 12 layers, 3 per bucket: layer 7 is in bucket 1 (layers 9-7), so rank 1 launches
    # only bucket 0 and the sequences stop matching at collective 1.
    assert d["sequences"] == [[0, 1, 2, 3], [0], [0, 1, 2, 3], [0, 1, 2, 3]]
    assert (d["mismatch"], d["skipping_rank"], d["skipped_layer"]) == (1, 1, 7)
    assert d["waiting_ranks"] == [0, 2, 3]
    assert s["buckets"]["layers"] == ["12–10", "9–7", "6–4", "3–1"]
    assert s["buckets"]["size_mb"] == [75.0] * 4
    assert "TORCH_DISTRIBUTED_DEBUG=DETAIL" in d["outcome"]
    assert "find_unused_parameters=True" in d["fix"]
    assert view.description.startswith("No timeline")
    launched = rows(view, launched=True)
    assert [r["rank"] for r in launched].count(1) == 1
    assert [r["rank"] for r in launched].count(0) == 4
    assert len(rows(view)) == 4 * 4  # every rank's place in every collective
    # Back to a timed scenario: the timeline returns.
    view.edit("scenario", TWO_PARTIAL)
    assert view.state["timeline"]["n_buckets"] == 6
    assert view.state["disagreement"] is None


def test_scenario_from_a_url_keeps_explicit_overrides() -> None:
    spec = WIDGETS["ranks"]
    kwargs, notices = spec.parse({"scenario": [b"Two partial stragglers"], "slowdown_pct": [b"20"]})
    assert not notices
    v = spec.create(**kwargs)
    assert v.settings.scenario == TWO_PARTIAL
    assert v.settings.slowdown_pct == 20
    assert v.settings.layers_per_bucket == SCENARIOS[TWO_PARTIAL]["layers_per_bucket"]
    assert v.state["scenario"]["title"] == "Two partial stragglers, changed: slowdown"
    _, notices = spec.parse({"scenario": [b"Everything fine"]})
    assert notices and "Scenario is one of" in notices[0]


def test_apply_loads_the_scenario_then_the_given_settings(view: RanksView) -> None:
    step(view, 3)
    view.apply(scenario=CONTENTION, layers_per_bucket=5)
    assert view.settings.contention == 1.0
    assert view.settings.layers_per_bucket == 5
    assert view.clock.elapsed == 0.0
    assert view.state["scenario"]["title"] == (
        "Contention: busier but slower, changed: layers per bucket"
    )
    view.apply(drawn_ranks=2)  # no scenario: the others stay
    assert view.settings.scenario == CONTENTION and view.settings.layers_per_bucket == 5
    assert view.state["scenario"]["changed"] == ["drawn_ranks", "layers_per_bucket"]


def test_an_edit_keeps_the_scenarios_name_with_what_changed(view: RanksView) -> None:
    view.edit("scenario", TWO_PARTIAL)
    assert view.state["scenario"]["title"] == "Two partial stragglers"
    view.edit("slowdown_pct", "80")
    view.edit("drawn_ranks", "6")
    sc = view.state["scenario"]
    assert sc["name"] == TWO_PARTIAL
    assert sc["changed"] == ["drawn_ranks", "slowdown_pct"]  # in the order of the settings
    assert sc["title"] == "Two partial stragglers, changed: drawn ranks, slowdown"
    assert sc["description"].startswith("Rank 0 is slow on the upper half")
    view.edit("slowdown_pct", "50")  # the scenario's own value again: no longer a change
    assert view.state["scenario"]["title"] == "Two partial stragglers, changed: drawn ranks"


def test_share_link_keeps_the_scenario_and_only_what_changed(view: RanksView) -> None:
    view.enable_share("http://example.test:5006", own_page=True)
    assert view.share["query"] == "scenario=One+slow+rank"
    view.edit("scenario", TWO_PARTIAL)
    view.edit("slowdown_pct", "80")
    assert view.settings_values() == {"scenario": TWO_PARTIAL, "slowdown_pct": 80.0}
    assert view.share["query"] == "scenario=Two+partial+stragglers&slowdown_pct=80"
    spec = WIDGETS["ranks"]
    kwargs, notices = spec.parse(
        {k: [v] for k, v in spec.query_values(view.settings_values()).items()}
    )
    assert not notices
    again = spec.create(**kwargs)
    assert again.settings.param.values() | {"name": ""} == view.settings.param.values() | {
        "name": ""
    }
    assert value_of(again, "latest") == value_of(view, "latest")
    assert value_of(again, "step") == value_of(view, "step")
    assert again.state["scenario"] == view.state["scenario"]


def test_ring_ranks_below_the_drawn_ranks_use_the_drawn_ranks(view: RanksView) -> None:
    view.edit("drawn_ranks", "6")
    view.edit("ranks", "2")
    assert view.result.ring_ranks == 6
    # A ring of 6: 2 x 5 x 0.05 + 2 x 5/6 x 75/25 = 0.5 + 5.0 = 5.5 ms a transfer.
    tl = view.state["timeline"]
    durations = np.subtract(tl["bucket_end"], tl["bucket_start"])
    np.testing.assert_allclose(durations, [5.5] * 4)


def test_lanes_follow_the_drawn_ranks(view: RanksView) -> None:
    view.edit("drawn_ranks", "8")
    assert view.state["timeline"]["n_ranks"] == 8
    assert {r["lane"] for r in rows(view)} == {f"Rank {r}" for r in range(8)} | {"Link"}
    view.edit("drawn_ranks", "1")
    assert {r["lane"] for r in rows(view)} == {"Rank 0", "Link"}


def test_description_names_the_defining_ranks_and_the_idle_time(view: RanksView) -> None:
    text = view.description
    assert "rank 0 for buckets 0–3" in text
    assert "Rank 1 is idle for 16.80 ms" in text
    assert "The step takes 52.40 ms." in text


# --- ranks whose readiness order differs (issue 35) ---------------------------------------


def test_readiness_order_differs_launches_rank_0s_buckets(view: RanksView) -> None:
    view.edit("scenario", "Readiness order differs")
    assert view.settings.drawn_ranks == 2
    # Rank 1 (11, 12, 9, 10, ...) has buckets 0 and 2 ready 2 ms after rank 0; 1 and 3 tie.
    assert value_of(view, "latest") == "1, 0, 1, 0"
    assert value_of(view, "bucket_source") == "4"
    note = note_of(view, "bucket_source")
    assert "rank 0's, broadcast to every rank" in note and "sync_bucket_indices" in note
    assert "layers 12–10; 9–7; 6–4; 3–1" in note
    assert note.endswith("Rank 1's own order would have cut 12, 11, 9; 10, 8, 7; 6, 5, 3; 4, 2, 1")
    # Rank 0 waits 2 ms for rank 1 at buckets 0 and 2: 4.00 ms.
    assert value_of(view, "peer_wait") == "4.00 ms"
    assert note_of(view, "peer_wait").startswith("rank 0;")
    assert value_of(view, "backward_nccl") == "24.05 ms"
    assert value_of(view, "backward_gloo") == "31.95 ms"


def test_iteration_zero_is_one_bucket(view: RanksView) -> None:
    view.edit("scenario", "Readiness order differs")
    view.edit("iteration", "0")
    assert value_of(view, "bucket_source") == "1"
    assert note_of(view, "bucket_source").startswith("iteration 0: one bucket")
    # 300 MB over 8 ranks at 25 GB/s: 0.70 + 21.00 = 21.70 ms from 24.05: 45.75 + 12 + 2.
    assert value_of(view, "step") == "59.75 ms"


def test_algorithm_on_many_ranks(view: RanksView) -> None:
    view.edit("ranks", "512")
    view.edit("algorithm", "tree")
    # 2 x 9 x 0.05 + 2 x 75 / 25 = 6.90 ms per bucket.
    assert view.result.transfer_ms == pytest.approx([6.9] * 4)
