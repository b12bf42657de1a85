"""BucketTimeline driven in Python as its page drives it: the state it sends after each edit.

Everything the page draws comes from ``lab.state`` (and ``anchor``, ``values``,
``errors``, ``description``), so these tests read exactly what the page is sent.

Defaults: 12 layers of 2 ms backward and 25 MB, 25 GB/s, 0.05 ms per ring step,
8 ranks, 3 layers per bucket, forward 12 ms, optimizer 2 ms. Units are MB, GB/s
and ms (MB / (GB/s) = ms). A ring all-reduce of S MB over p ranks takes
T = 2(p-1)·latency + 2(p-1)/p · S / bandwidth; with the defaults that is
0.7 ms of latency plus 1.75 ms per 25 MB, so a bucket of 3 layers (75 MB)
takes 0.7 + 5.25 = 5.95 ms.
"""

from __future__ import annotations

import json

import numpy as np
import param
import pytest
from drive import FakeWall

from widgets.bucket_timeline.component import BucketTimeline
from widgets.bucket_timeline.model import PRESET_DESCRIPTIONS, PRESETS
from widgets.bucket_timeline.text import readout_values
from widgets.common.formatting import MILLISECONDS
from widgets.model.buckets import (
    BucketConfig,
    average_rates,
    step_schedule,
)
from widgets.model.settings import setting_names
from widgets.model.timeline import revealed_spans
from widgets.registry import WIDGETS
from widgets.url_state import settings_from_query

#: The settings typed as numbers (the others are checkboxes).
FIELDS = [n for n in setting_names(BucketConfig) if isinstance(BucketConfig.param[n], param.Number)]
SPEC = WIDGETS["bucket-timeline"]

READOUTS = (
    "elapsed",
    "backward_end",
    "comm_end",
    "tail",
    "step",
    "buckets",
    "overhead",
    "overlap",
    "regime",
)


@pytest.fixture
def lab() -> BucketTimeline:
    return BucketTimeline()


def type_into(lab: BucketTimeline, name: str, text: str) -> None:
    """Type into a field and press Enter, as the page sends it."""
    lab._handle_msg({"edit": name, "text": text})


def choose_preset(lab: BucketTimeline, name: str) -> None:
    """Choose a preset in the Preset menu (or press "Load the preset again")."""
    lab._handle_msg({"edit": "preset", "text": name})


def press(lab: BucketTimeline, action: str, times: int = 1) -> None:
    """Press a button of the page: reset, play, pause, step, or best."""
    for _ in range(times):
        lab._handle_msg({"action": action})


def step(lab: BucketTimeline, times: int = 1) -> None:
    press(lab, "step", times)


def play(lab: BucketTimeline) -> None:
    """Press Play, or Pause while playing (one button on the page)."""
    press(lab, "pause" if lab.anchor["playing"] else "play")


def value_of(lab: BucketTimeline, key: str) -> str:
    """A readout's value as the page shows it when paused (Elapsed time: the anchor's)."""
    if key == "elapsed":
        return MILLISECONDS(lab.anchor["elapsed"])
    return lab.drawn_state["readouts"][key][0]


def note_of(lab: BucketTimeline, key: str) -> str:
    return lab.drawn_state["readouts"][key][1]


def values(lab: BucketTimeline) -> dict[str, str]:
    return {key: value_of(lab, key) for key in READOUTS}


def revision(lab: BucketTimeline) -> int:
    return lab.anchor["revision"]


def rows(lab: BucketTimeline, kind: str) -> list[tuple[float, float, str, str]]:
    """(start, end, lane, label) of every bar of one kind, in the order the page draws them.

    The lane is the name the page writes beside it; the label is the bar's row in the
    data table (the table lists the bars in the same order, then the exposed tail).
    """
    bars, lanes = lab.drawn_state["bars"], lab.drawn_state["lanes"]
    labels = [r[0] for r in lab.model_state()["table"]["rows"] if r[1] != "Every lane"]
    return [
        (a, b, lanes[lane], label)
        for a, b, lane, k, label in zip(
            bars["start"], bars["end"], bars["lane"], bar_kinds(lab), labels, strict=True
        )
        if k == kind
    ]


def bar_kinds(lab: BucketTimeline) -> list[str]:
    """Each bar's kind by name (the state sends an index into its list of kinds)."""
    state = lab.drawn_state
    return [state["bar_kinds"][k] for k in state["bars"]["kind"]]


def alert(lab: BucketTimeline, name: str) -> bool:
    return name in lab.errors


def preset_of(lab: BucketTimeline) -> tuple[str, list[str]]:
    """The preset's name and what differs from it, as the page writes under the menu."""
    return lab.drawn_state["preset"]["name"], lab.drawn_state["preset"]["changed"]


def sweep(lab: BucketTimeline) -> dict:
    """The sweep as the page draws it: its curve (steady) and where this setting sits."""
    return {**lab.drawn_state["curve"], **lab.drawn_state["sweep"]}


# --- the default step --------------------------------------------------------------------


def test_defaults_readouts(lab: BucketTimeline) -> None:
    # Buckets (12-10), (9-7), (6-4), (3-1) are ready at 6, 12, 18, 24 ms and each
    # takes 5.95 ms < 6 ms, so no transfer waits: they run 6-11.95, 12-17.95,
    # 18-23.95 and 24-29.95. E = 24, C = 29.95, tail 5.95 = the last transfer.
    # Step = 12 + max(24, 29.95) + 2 = 43.95. Overhead 2(8-1)·0.05 = 0.70 per transfer.
    # Overlap: 3 of the 4 equal transfers run during backward -> 75 %.
    assert values(lab) == {
        "elapsed": "0.00 ms",
        "backward_end": "24.00 ms",
        "comm_end": "29.95 ms",
        "tail": "5.95 ms",
        "step": "43.95 ms",
        "buckets": "4",
        "overhead": "0.70 ms",
        "overlap": "75 %",
        "regime": "5.95 ms tail = last transfer: overlap-limited",
    }
    assert note_of(lab, "backward_end") == "layer 1's gradient is ready"
    assert note_of(lab, "tail") == "last transfer alone: 5.95 ms"
    assert note_of(lab, "overhead") == "× 4 transfers = 2.80 ms"
    assert note_of(lab, "buckets") == "layers 12–10; 9–7; 6–4; 3–1"
    assert note_of(lab, "step") == "forward 12.00 ms + 29.95 ms + optimizer 2.00 ms"
    assert lab.drawn_state["regime"]["kind"] == "overlap-limited"
    assert lab.drawn_state["regime"]["lead"] == "Overlap is doing its job."
    assert "its whole transfer (5.95 ms here) comes after" in lab.drawn_state["regime"]["text"]
    assert lab.settings.preset == "Overlap works"
    assert lab.values["preset"] == "Overlap works"
    assert preset_of(lab) == ("Overlap works", [])
    assert lab.drawn_state["preset"]["description"] == PRESET_DESCRIPTIONS["Overlap works"]


def test_readouts_are_labelled_and_start_with_their_number(lab: BucketTimeline) -> None:
    labels = {
        "backward_end": "Backward end",
        "comm_end": "Communication end",
        "tail": "Exposed tail",
        "step": "Step time",
        "buckets": "Buckets",
        "overhead": "Per-transfer overhead",
        "overlap": "Overlap",
        "regime": "Regime",
    }
    assert {k: label for k, (label, _, _) in readout_values(lab.schedule).items()} == labels
    assert list(lab.drawn_state["readouts"]) == list(labels)
    for key in READOUTS:
        assert value_of(lab, key)[0].isdigit(), key
    # Every readout's text, as the CSV download writes it, is plain JSON text.
    json.dumps(lab.drawn_state["readouts"], allow_nan=False)


def test_controls_are_described_from_the_parameters(lab: BucketTimeline) -> None:
    specs = {f["name"]: f for f in lab.fields}
    for name in FIELDS:
        assert specs[name]["label"] == BucketConfig.param[name].label
        assert specs[name]["kind"] == "number"
    assert specs["ddp_bucketing"]["kind"] == specs["find_unused_parameters"]["kind"] == "boolean"
    assert specs["preset"]["kind"] == "choice"
    assert specs["preset"]["label"] == "Preset"
    assert specs["preset"]["choices"] == list(PRESETS)
    assert lab.values["layers_per_bucket"] == "3"
    assert lab.values["bandwidth"] == "25"
    assert lab.values["latency_ms"] == "0.05"
    assert lab.values["bucket_cap_mb"] == ""
    # The preset is a field, not a setting: it is not a URL key of its own beside "preset".
    assert "preset" not in setting_names(lab.settings)


def test_default_intervals(lab: BucketTimeline) -> None:
    assert lab.drawn_state["lanes"] == [
        "All-reduce",
        "Link wait",
        "Order wait",
        "Bucket fill",
        "Backward",
    ]
    backward = rows(lab, "backward")
    # Backward runs from layer 12 (0-2 ms) down to layer 1 (22-24 ms).
    assert backward[0] == (0.0, 2.0, "Backward", "Layer 12")
    assert backward[-1] == (22.0, 24.0, "Backward", "Layer 1")
    assert len(backward) == 12
    bars = lab.drawn_state["bars"]
    # Each layer's bar carries its bucket (12-10 in bucket 0, ..., 3-1 in bucket 3).
    kinds = np.array(bar_kinds(lab))
    assert [b for b, k in zip(bars["bucket"], kinds, strict=True) if k == "backward"] == [
        0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3
    ]  # fmt: skip
    assert [n for n, k in zip(bars["layer"], kinds, strict=True) if k == "backward"] == list(
        range(12, 0, -1)
    )
    transfers = rows(lab, "transfer")
    assert [t[2] for t in transfers] == ["All-reduce"] * 4
    assert [t[3] for t in transfers] == ["Bucket 0", "Bucket 1", "Bucket 2", "Bucket 3"]
    np.testing.assert_allclose([t[0] for t in transfers], [6.0, 12.0, 18.0, 24.0])
    np.testing.assert_allclose([t[1] for t in transfers], [11.95, 17.95, 23.95, 29.95])
    filling = rows(lab, "filling")
    # Bucket b fills from its first layer's backward start to its ready time.
    np.testing.assert_allclose([f[0] for f in filling], [0.0, 6.0, 12.0, 18.0])
    np.testing.assert_allclose([f[1] for f in filling], [6.0, 12.0, 18.0, 24.0])
    assert {f[2] for f in filling} == {"Bucket fill"}
    assert rows(lab, "waiting") == []
    # The optimizer runs after max(E, C) = 29.95 for 2 ms, drawn in the Backward lane.
    ((left, right, lane, _),) = rows(lab, "optimizer")
    assert (lane, left) == ("Backward", pytest.approx(29.95))
    assert right == pytest.approx(31.95)


def test_tail_box_and_markers(lab: BucketTimeline) -> None:
    marks = lab.drawn_state["marks"]
    assert marks["tail"] == pytest.approx(5.95)  # the box from backward end to comm end
    assert marks["backward_end"] == 24.0
    assert marks["comm_end"] == pytest.approx(29.95)
    assert marks["optimizer_start"] == pytest.approx(29.95)
    # The tail is also a row of the data table, across every lane.
    ((tail,),) = [[r] for r in lab.model_state()["table"]["rows"] if r[1] == "Every lane"]
    assert tail[0] == "Exposed tail"
    assert (tail[2], tail[3]) == (24.0, pytest.approx(29.95))


def test_the_table_gives_each_buckets_numbers(lab: BucketTimeline) -> None:
    type_into(lab, "bandwidth", "5")
    # T = 26.95 per 75 MB bucket; bucket b is ready at 6(b+1) and starts when b-1 ends:
    # 6, 32.95, 59.9, 86.85, so the waits are 0, 20.95, 41.9, 62.85.
    table = lab.model_state()["table"]
    keys = [c["key"] for c in table["columns"]]
    transfers = [dict(zip(keys, r, strict=True)) for r in table["rows"] if r[1] == "All-reduce"]
    assert [r["bucket"] for r in transfers] == [0, 1, 2, 3]
    np.testing.assert_allclose([r["size_mb"] for r in transfers], [75.0] * 4)
    np.testing.assert_allclose([r["ready_ms"] for r in transfers], [6.0, 12.0, 18.0, 24.0])
    np.testing.assert_allclose(
        [r["link_wait_ms"] for r in transfers], [0.0, 20.95, 41.9, 62.85], atol=1e-9
    )
    np.testing.assert_allclose([r["order_wait_ms"] for r in transfers], [0.0] * 4)
    backward = [dict(zip(keys, r, strict=True)) for r in table["rows"] if r[1] == "Backward"]
    assert backward[0]["bar"] == "Layer 12" and backward[0]["size_mb"] == 25.0


# --- hand-computed cases through the controls --------------------------------------------


def test_one_bucket_of_all_twelve_layers(lab: BucketTimeline) -> None:
    type_into(lab, "layers_per_bucket", "12")
    # One 300 MB bucket, ready only when backward ends at 24 ms:
    # T = 0.7 + 1.75 · 300/25 = 0.7 + 21 = 21.7, so 24 - 45.7; nothing overlaps.
    # Step = 12 + 45.7 + 2 = 59.7.
    assert value_of(lab, "buckets") == "1"
    assert value_of(lab, "comm_end") == "45.70 ms"
    assert value_of(lab, "tail") == "21.70 ms"
    assert note_of(lab, "tail") == "last transfer alone: 21.70 ms"
    assert value_of(lab, "step") == "59.70 ms"
    assert value_of(lab, "overlap") == "0 %"
    assert value_of(lab, "overhead") == "0.70 ms"
    assert note_of(lab, "buckets") == "layers 12–1"
    assert rows(lab, "transfer") == [(24.0, pytest.approx(45.7), "All-reduce", "Bucket 0")]
    assert lab.drawn_state["n_buckets"] == 1


def test_one_layer_per_bucket_on_a_fast_link_leaves_the_last_transfer(
    lab: BucketTimeline,
) -> None:
    type_into(lab, "layers_per_bucket", "1")
    type_into(lab, "bandwidth", "875")
    # Each 25 MB layer: T = 0.7 + 1.75 · 25/875 = 0.7 + 0.05 = 0.75 ms < 2 ms of
    # backward per layer, so nothing queues. Layer 1 is ready at 24 and its transfer
    # ends at 24.75: the tail is exactly that last transfer.
    # Step = 12 + 24.75 + 2 = 38.75.
    assert value_of(lab, "buckets") == "12"
    assert value_of(lab, "comm_end") == "24.75 ms"
    assert value_of(lab, "tail") == "0.75 ms"
    assert note_of(lab, "tail") == "last transfer alone: 0.75 ms"
    assert value_of(lab, "step") == "38.75 ms"
    assert rows(lab, "waiting") == []
    expected = step_schedule(BucketConfig(layers_per_bucket=1, bandwidth=875.0))
    assert lab.schedule.exposed_tail == pytest.approx(expected.bucket_transfer_ms[-1])
    assert value_of(lab, "regime").endswith(expected.regime.kind)


def test_large_latency_makes_twelve_buckets_slower_than_three(lab: BucketTimeline) -> None:
    type_into(lab, "latency_ms", "0.2")
    # Overhead per transfer 2(8-1)·0.2 = 2.8 ms.
    type_into(lab, "layers_per_bucket", "4")
    # 3 buckets of 100 MB: T = 2.8 + 7 = 9.8, ready at 8, 16, 24:
    # 8-17.8, 17.8-27.6, 27.6-37.4. Step = 12 + 37.4 + 2 = 51.4.
    assert value_of(lab, "buckets") == "3"
    assert value_of(lab, "step") == "51.40 ms"
    three = lab.schedule.step_time
    type_into(lab, "layers_per_bucket", "1")
    # 12 buckets of 25 MB: T = 2.8 + 1.75 = 4.55 > 2 ms between layers, so every
    # transfer queues behind the previous: C = 2 + 12 · 4.55 = 56.6.
    # Step = 12 + 56.6 + 2 = 70.6 > 51.4. Overhead 12 · 2.8 = 33.6 ≥ traffic
    # 1.75 · 300/25 = 21: latency-bound.
    assert value_of(lab, "buckets") == "12"
    assert value_of(lab, "overhead") == "2.80 ms"
    assert value_of(lab, "step") == "70.60 ms"
    assert lab.schedule.step_time > three
    assert value_of(lab, "regime") == "33.60 ms overhead ≥ 21.00 ms traffic: latency-bound"
    assert lab.drawn_state["regime"]["lead"] == "Per-transfer overhead dominates."


def test_slow_link_makes_transfers_queue(lab: BucketTimeline) -> None:
    type_into(lab, "bandwidth", "5")
    # T = 0.7 + 1.75 · 75/5 = 26.95 per bucket, ready at 6, 12, 18, 24:
    # 6-32.95, 32.95-59.9, 59.9-86.85, 86.85-113.8; buckets 1-3 wait from their
    # ready time until the previous transfer ends. Tail 113.8 - 24 = 89.8.
    # Traffic 1.75 · 300/5 = 105 ≥ 24 of backward: communication-bound.
    assert value_of(lab, "comm_end") == "113.80 ms"
    assert value_of(lab, "tail") == "89.80 ms"
    assert value_of(lab, "step") == "127.80 ms"
    waiting = rows(lab, "waiting")
    assert [w[2] for w in waiting] == ["Link wait"] * 3
    assert [w[3] for w in waiting] == ["Bucket 1 waits", "Bucket 2 waits", "Bucket 3 waits"]
    np.testing.assert_allclose([w[0] for w in waiting], [12.0, 18.0, 24.0])
    np.testing.assert_allclose([w[1] for w in waiting], [32.95, 59.9, 86.85])
    expected = step_schedule(BucketConfig(bandwidth=5.0)).regime.kind
    assert expected == "communication-bound"
    assert value_of(lab, "regime") == "105.00 ms traffic ≥ 24.00 ms backward: communication-bound"
    # The description names the worst wait: bucket 3's 86.85 - 24 = 62.85 ms.
    assert "Bucket 3 (layers 3–1) waits 62.85 ms for the link." in lab.description


def test_link_saturated_has_waits_and_says_so(lab: BucketTimeline) -> None:
    type_into(lab, "backward_ms", "1.8")
    # Buckets ready every 5.4 ms (5.4, 10.8, 16.2, 21.6), each taking 5.95:
    # waits 0.55, 1.1, 1.65; the last one (1.65) > 10 % of 5.95: link-saturated.
    # C = 5.4 + 4 · 5.95 = 29.2.
    assert value_of(lab, "backward_end") == "21.60 ms"
    assert value_of(lab, "comm_end") == "29.20 ms"
    assert value_of(lab, "regime") == "1.65 ms queued before the last bucket: link-saturated"
    assert [w[2] for w in rows(lab, "waiting")] == ["Link wait"] * 3
    assert "the last bucket waited 1.65 ms for the link" in lab.drawn_state["regime"]["text"]


def test_straggler_stretches_backward(lab: BucketTimeline) -> None:
    type_into(lab, "straggler_pct", "50")
    # Every layer takes 2 · 1.5 = 3 ms on the slowest rank: E = 12 · 3 = 36.
    # Buckets ready at 9, 18, 27, 36; each 5.95 ms transfer fits: C = 41.95.
    assert value_of(lab, "backward_end") == "36.00 ms"
    assert value_of(lab, "comm_end") == "41.95 ms"
    assert value_of(lab, "tail") == "5.95 ms"
    assert value_of(lab, "step") == "55.95 ms"


def test_ranks_and_forward_and_optimizer_fields(lab: BucketTimeline) -> None:
    type_into(lab, "ranks", "2")
    # p = 2: overhead 2·1·0.05 = 0.1; traffic 2·1/2 · 75/25 = 3; T = 3.1.
    assert value_of(lab, "overhead") == "0.10 ms"
    assert value_of(lab, "comm_end") == "27.10 ms"
    type_into(lab, "forward_ms", "0")
    type_into(lab, "optimizer_ms", "5")
    # Step = 0 + 27.1 + 5 = 32.1.
    assert value_of(lab, "step") == "32.10 ms"
    type_into(lab, "grad_mb", "50")
    # 150 MB per bucket: T = 0.1 + 6 = 6.1 > 6, so buckets queue a little:
    # 6-12.1, 12.1-18.2, 18.2-24.3, 24.3-30.4. Step = 30.4 + 5.
    assert value_of(lab, "comm_end") == "30.40 ms"
    assert value_of(lab, "step") == "35.40 ms"


# --- presets -----------------------------------------------------------------------------
#
# Every preset worked out independently of the model: DESIGN.md's alpha-beta ring cost and
# bucket-order link recurrence, written out again here on whole layers.


def _hand_bias_mb(layer_mb: float) -> float:
    """Bias of a square fp32 linear layer of ``layer_mb`` MB: 4(d^2 + d) bytes in all, 4d bias."""
    d = (-1.0 + (1.0 + 4.0 * (layer_mb * 1e6 / 4.0)) ** 0.5) / 2.0
    return 4.0 * d / 1e6


def _hand_step(s: dict, per_bucket: int) -> tuple[float, float, float]:
    """(step, backward end, exposed tail) of settings ``s`` with ``per_bucket`` layers a bucket."""
    n = s["n_layers"]
    slow = 1.0 + s["straggler_pct"] / 100.0
    back, size = s["layer_backward_ms"], s["layer_grad_mb"]
    back = [s["backward_ms"]] * n if back is None else list(back)
    size = [s["grad_mb"]] * n if size is None else list(size)
    if s["tied_embeddings"]:  # the head keeps only its bias; the shared weight counts in layer 1
        size[n - 1] = _hand_bias_mb(size[n - 1])
    # Layer i (1-based) is ready once backward has run layers n..i, on the slowest rank.
    ready = {i: slow * sum(back[i - 1 :]) for i in range(1, n + 1)}
    if s["find_unused_parameters"]:  # reverse registration order
        reg = s["layer_registration"]
        position = {i: i if reg is None else int(reg[i - 1]) for i in range(1, n + 1)}
        sequence = sorted(ready, key=lambda i: -position[i])
    else:  # iteration >= 1: rebuilt in the order layers became ready
        sequence = sorted(ready, key=lambda i: ready[i])
    p, alpha, bw = s["ranks"], s["latency_ms"], s["bandwidth"]
    end = launched = -1.0
    for b in range(0, n, per_bucket):
        layers = sequence[b : b + per_bucket]
        transfer = 2 * (p - 1) * alpha + 2 * (p - 1) / p * sum(size[i - 1] for i in layers) / bw
        launched = max(launched, max(ready[i] for i in layers)) + s["enqueue_ms"]
        end = max(launched, end) + transfer
    backward_end = max(ready.values())
    return (
        s["forward_ms"] + max(backward_end, end) + s["optimizer_ms"],
        backward_end,
        max(0.0, end - backward_end),
    )


def _hand_best(s: dict) -> int:
    """Best layers per bucket: the shortest step, the largest setting among equal ones."""
    steps = [_hand_step(s, k)[0] for k in range(1, s["n_layers"] + 1)]
    return max(k for k in range(1, len(steps) + 1) if steps[k - 1] <= min(steps) + 1e-9)


def test_hand_model_matches_steps_worked_on_paper() -> None:
    """The formula above against sums done by hand, so it is itself checked."""
    defaults = PRESETS["Overlap works"]
    # 4 buckets of 75 MB: T = 14 x 0.05 + 1.75 x 3 = 5.95 < 6 ms between readies;
    # C = 24 + 5.95, step 12 + 29.95 + 2. Best: 2 a bucket, T = 4.2, C = 4 + 6 x 4.2 = 29.2.
    assert _hand_step(defaults, 3) == pytest.approx((43.95, 24.0, 5.95))
    assert _hand_step(defaults, 2) == pytest.approx((43.2, 24.0, 5.2))
    assert _hand_best(defaults) == 2
    # Backward 1 ms a layer: T = 5.95 > 3 ms, all queue: C = 3 + 4 x 5.95 = 26.8;
    # 2 a bucket: 2 + 6 x 4.2 = 27.2; 4: 4 + 3 x 7.7 = 27.1; 1: 1 + 12 x 2.45 = 30.4.
    traffic = PRESETS["Traffic exceeds compute"]
    assert _hand_step(traffic, 3) == pytest.approx((40.8, 12.0, 14.8))
    assert _hand_step(traffic, 4) == pytest.approx((41.1, 12.0, 15.1))
    assert _hand_best(traffic) == 3
    # 50 GB/s: T = 0.7 + 1.75 x 1.5 = 3.325 > 3: C = 3 + 4 x 3.325 = 16.3, step 6 + 16.3 + 1;
    # 2 a bucket: 2 + 6 x 2.45 = 16.7; 4: 4 + 3 x 4.2 = 16.6.
    fast = PRESETS["Fast compute: transfers queue"]
    assert _hand_step(fast, 3) == pytest.approx((23.3, 12.0, 4.3))
    assert _hand_step(fast, 4) == pytest.approx((23.6, 12.0, 4.6))
    assert _hand_best(fast) == 3
    # Layer 6 registered last: bucket 0 = layers 6, 12, 11, ready at 7 x 2 = 14; it ends
    # 19.95; bucket 1 (10, 9, 8, ready 10) waits: 25.9; 7, 5, 4 ready 18: 31.85; 3, 2, 1: 37.8.
    reordered = PRESETS["Reordered module"]
    assert _hand_step(reordered, 3) == pytest.approx((51.8, 24.0, 13.8))
    # Straggler: backward 1.8 x 1.5 = 2.7 a layer, E = 32.4; T = 5.95 < 8.1: C = 32.4 + 5.95.
    assert _hand_step(PRESETS["Straggler"], 3) == pytest.approx((52.35, 32.4, 5.95))
    assert _hand_bias_mb(25.0) == pytest.approx(0.01, rel=1e-3)  # 0.01 MB of a 25 MB layer


#: Each preset by hand: (layers per bucket, step, backward end, tail, best setting, its step).
#: Latency-bound: T = 14 x 0.2 + 1.75 x 5 / 25 = 3.15 > 2, all queue: C = 2 + 12 x 3.15;
#: best 2 a bucket, T = 3.5 < 4: C = 24 + 3.5. Link saturated: ready every 5.4, T = 5.95:
#: C = 5.4 + 4 x 5.95; 2 a bucket: 3.6 + 6 x 4.2. Embedding layer: the last bucket holds
#: 250 MB, ready at 23: T = 0.7 + 1.75 x 5 = 9.45; 1 a bucket: layer 2's 1.575 ms transfer
#: ends 23.575, then layer 1's 200 MB, T = 0.7 + 1.75 x 4 = 7.7: C = 31.275.
#: Tied embeddings: the head's 0.028 MB bias instead of 25 MB changes no readout here.
#: Straggler: ready every 2.7 > 2.45 (1 a bucket): C = 32.4 + 2.45. Reordered, 7 a bucket:
#: layers 6, 12..7 (175 MB, ready 14, T = 12.95) then 5..1 (125 MB, T = 9.45): C = 36.4.
PRESETS_BY_HAND = {
    "Overlap works": (3, 43.95, 24.0, 5.95, 2, 43.2),
    "Latency-bound": (1, 53.8, 24.0, 15.8, 2, 41.5),
    "Link saturated": (3, 43.2, 21.6, 7.6, 2, 42.8),
    "Fast compute: transfers queue": (3, 23.3, 12.0, 4.3, 3, 23.3),
    "Traffic exceeds compute": (3, 40.8, 12.0, 14.8, 3, 40.8),
    "Embedding layer": (3, 46.45, 23.0, 9.45, 1, 45.275),
    "Straggler": (3, 52.35, 32.4, 5.95, 1, 48.85),
    "Tied embeddings": (3, 46.45, 23.0, 9.45, 1, 45.275),
    "Reordered module": (3, 51.8, 24.0, 13.8, 7, 50.4),
}


@pytest.mark.parametrize("name", list(PRESETS_BY_HAND))
def test_presets_worked_by_hand(name: str) -> None:
    k, step_ms, backward_end, tail, best, best_step = PRESETS_BY_HAND[name]
    assert PRESETS[name]["layers_per_bucket"] == k
    assert _hand_step(PRESETS[name], k) == pytest.approx((step_ms, backward_end, tail))
    assert _hand_best(PRESETS[name]) == best
    assert _hand_step(PRESETS[name], best)[0] == pytest.approx(best_step)
    # The teaching presets come first; the hardware presets (DDP's byte cap) after them
    # are worked by hand in tests/model/test_hardware_presets.py.
    assert list(PRESETS)[: len(PRESETS_BY_HAND)] == list(PRESETS_BY_HAND)


@pytest.mark.parametrize("name", list(PRESETS))
def test_each_preset_shows_its_regime(lab: BucketTimeline, name: str) -> None:
    type_into(lab, "forward_ms", "13")  # choosing a preset replaces every setting
    choose_preset(lab, name)
    step_ms, backward_end, tail = _hand_step(PRESETS[name], PRESETS[name]["layers_per_bucket"])
    assert lab.settings.preset == name
    assert preset_of(lab) == (name, [])
    assert value_of(lab, "regime").endswith(lab.schedule.regime.kind)
    assert lab.drawn_state["regime"]["kind"] == lab.schedule.regime.kind
    assert value_of(lab, "step") == f"{step_ms:.2f} ms"
    assert value_of(lab, "backward_end") == f"{backward_end:.2f} ms"
    assert value_of(lab, "tail") == f"{tail:.2f} ms"
    best = _hand_best(PRESETS[name])
    assert sweep(lab)["best"] == best
    assert sweep(lab)["best_step"] == pytest.approx(_hand_step(PRESETS[name], best)[0])
    assert lab.drawn_state["preset"]["description"] == PRESET_DESCRIPTIONS[name]
    for field in ("layers_per_bucket", "backward_ms", "bandwidth", "latency_ms", "forward_ms"):
        assert float(lab.values[field]) == PRESETS[name][field], field
    assert lab.values["preset"] == name
    assert not any(alert(lab, field) for field in FIELDS)


@pytest.mark.parametrize("name", list(PRESETS))
def test_editing_after_a_preset_keeps_its_name_and_says_what_changed(
    lab: BucketTimeline, name: str
) -> None:
    choose_preset(lab, name)
    type_into(lab, "forward_ms", "13")
    assert lab.settings.preset == name
    assert lab.values["preset"] == name
    assert preset_of(lab) == (name, ["forward time"])
    settings = {**PRESETS[name], "forward_ms": 13.0}
    step_ms = _hand_step(settings, settings["layers_per_bucket"])[0]
    assert value_of(lab, "step") == f"{step_ms:.2f} ms"
    # Typed back to the preset's own value: nothing differs any more.
    type_into(lab, "forward_ms", str(PRESETS[name]["forward_ms"]))
    assert preset_of(lab) == (name, [])


def test_a_preset_with_overrides_reads_its_name_and_the_changes() -> None:
    lab = BucketTimeline(preset="Latency-bound", ranks=16)
    assert preset_of(lab) == ("Latency-bound", ["ranks"])
    lab.enable_share("http://example.test:5006")
    # The link keeps the preset's name and carries only what differs from it.
    assert lab.share["query"] == "preset=Latency-bound&ranks=16"
    type_into(lab, "ddp_bucketing", "true")
    assert preset_of(lab) == ("Latency-bound", ["ranks", "DDP bucketing"])
    assert lab.share["query"] == "preset=Latency-bound&ranks=16&ddp_bucketing=true"
    # The link reproduces what is shown.
    kwargs, notices = SPEC.parse({k: [v] for k, v in _pairs(lab.share["query"])})
    assert notices == []
    again = BucketTimeline(**kwargs)
    assert again.drawn_state["readouts"] == lab.drawn_state["readouts"]
    assert preset_of(again) == preset_of(lab)


def _pairs(query: str) -> list[tuple[str, str]]:
    from urllib.parse import parse_qsl

    return parse_qsl(query)


def test_loading_the_preset_again_undoes_the_changes(lab: BucketTimeline) -> None:
    choose_preset(lab, "Straggler")
    type_into(lab, "straggler_pct", "10")
    type_into(lab, "bandwidth", "50")
    assert preset_of(lab) == ("Straggler", ["link bandwidth", "straggler slowdown"])
    step(lab, 3)
    before = revision(lab)
    choose_preset(lab, "Straggler")  # the page's "Load the preset again"
    assert preset_of(lab) == ("Straggler", [])
    assert lab.values["straggler_pct"] == "50"
    assert lab.values["bandwidth"] == "25"
    assert lab.anchor["elapsed"] == 0.0  # a new experiment
    assert revision(lab) > before


def test_an_unknown_preset_is_refused_at_the_field(lab: BucketTimeline) -> None:
    shown = values(lab)
    type_into(lab, "preset", "Nope")
    assert alert(lab, "preset")
    assert lab.settings.preset == "Overlap works"
    assert values(lab) == shown


def test_latency_bound_preset_numbers(lab: BucketTimeline) -> None:
    choose_preset(lab, "Latency-bound")
    # 12 buckets of 5 MB with 0.2 ms per ring step: overhead 12 · 2.8 = 33.6
    # against traffic 1.75 · 60/25 = 4.2.
    assert value_of(lab, "regime") == "33.60 ms overhead ≥ 4.20 ms traffic: latency-bound"
    assert lab.values["grad_mb"] == "5"
    assert lab.values["layers_per_bucket"] == "1"


def test_a_preset_after_the_embedding_layer_drops_its_profile(lab: BucketTimeline) -> None:
    defaults = values(lab)
    choose_preset(lab, "Embedding layer")
    # Layer 1: 1 ms backward, 200 MB; the rest 2 ms, 25 MB; 50 GB/s.
    # E = 11 · 2 + 1 = 23. The last bucket (layers 3-1, 250 MB) is ready at 23:
    # T = 0.7 + 1.75 · 250/50 = 9.45, tail 9.45.
    assert value_of(lab, "backward_end") == "23.00 ms"
    assert value_of(lab, "tail") == "9.45 ms"
    choose_preset(lab, "Overlap works")
    assert values(lab) == defaults


def test_editing_backward_time_after_the_embedding_preset_has_an_effect(
    lab: BucketTimeline,
) -> None:
    choose_preset(lab, "Embedding layer")
    assert value_of(lab, "backward_end") == "23.00 ms"
    type_into(lab, "backward_ms", "3")
    assert preset_of(lab) == ("Embedding layer", ["backward time per layer"])
    # The typed value now applies to every layer: 12 · 3 = 36 ms.
    assert value_of(lab, "backward_end") == "36.00 ms"
    assert lab.settings.layer_backward_ms is None
    # Typed back to 2 ms, the preset's uniform value, the profile stays replaced, and
    # the page still says so: 12 · 2 = 24 ms, not the preset's 23 ms.
    type_into(lab, "backward_ms", "2")
    assert value_of(lab, "backward_end") == "24.00 ms"
    assert preset_of(lab) == ("Embedding layer", ["backward time per layer"])


def test_editing_gradient_size_after_the_embedding_preset_has_an_effect(
    lab: BucketTimeline,
) -> None:
    choose_preset(lab, "Embedding layer")
    before = value_of(lab, "comm_end")
    type_into(lab, "grad_mb", "50")
    assert value_of(lab, "comm_end") != before
    assert lab.settings.layer_grad_mb is None
    assert lab.settings.layer_backward_ms is not None  # the other profile is untouched


def test_a_link_with_a_uniform_value_replaces_the_presets_profile() -> None:
    # ?preset=Embedding layer&backward_ms=3 shows what the edit above showed.
    lab = BucketTimeline(preset="Embedding layer", backward_ms=3.0)
    assert lab.settings.layer_backward_ms is None
    assert value_of(lab, "backward_end") == "36.00 ms"
    assert lab.settings.layer_grad_mb is not None


def test_constructor_settings_and_preset() -> None:
    assert BucketTimeline(preset="Straggler").settings.preset == "Straggler"
    assert preset_of(BucketTimeline(preset="Straggler", backward_ms=1.8)) == ("Straggler", [])
    custom = BucketTimeline(bandwidth=5.0)
    assert preset_of(custom) == ("Overlap works", ["link bandwidth"])
    assert value_of(custom, "comm_end") == "113.80 ms"


def test_apply_loads_a_preset_and_settings_as_an_experiment(lab: BucketTimeline) -> None:
    # What a lesson's experiment button does.
    step(lab, 2)
    lab.apply(note="Loaded: Latency-bound, 3 layers per bucket.", preset="Latency-bound",
              layers_per_bucket=3)  # fmt: skip
    assert preset_of(lab) == ("Latency-bound", ["layers per bucket"])
    assert lab.anchor["elapsed"] == 0.0
    assert lab.message["text"] == "Loaded: Latency-bound, 3 layers per bucket."
    assert lab.settings_values()["preset"] == "Latency-bound"
    assert lab.settings_values()["layers_per_bucket"] == 3
    # Without a preset, the settings go on top of the current ones.
    lab.apply(ranks=4)
    assert preset_of(lab) == ("Latency-bound", ["layers per bucket", "ranks"])


# --- DDP-style byte cap --------------------------------------------------------------------


def test_bucket_cap_overrides_layers_per_bucket_until_cleared(lab: BucketTimeline) -> None:
    type_into(lab, "layers_per_bucket", "2")
    assert value_of(lab, "buckets") == "6"
    assert sweep(lab)["current"] == 2
    type_into(lab, "bucket_cap_mb", "60")
    # The cap is in MiB: 60 MiB = 62.91 MB. Layers 12, 11 make 50 MB < 62.91; layer
    # 10 brings 75 ≥ 62.91 and closes the bucket: buckets of 3 layers, the default
    # schedule again.
    assert value_of(lab, "buckets") == "4"
    assert note_of(lab, "buckets") == "layers 12–10; 9–7; 6–4; 3–1"
    assert value_of(lab, "step") == "43.95 ms"
    assert sweep(lab)["current"] is None  # no layers-per-bucket point
    assert sweep(lab)["current_step"] is None
    assert sweep(lab)["best_in_use"] is False
    type_into(lab, "bucket_cap_mb", "25")
    # 25 MiB = 26.21 MB: one 25 MB layer does not reach it, two do: 6 buckets.
    assert value_of(lab, "buckets") == "6"
    type_into(lab, "bucket_cap_mb", "23")
    # 23 MiB = 24.12 MB: every 25 MB layer reaches it by itself: 12 buckets.
    assert value_of(lab, "buckets") == "12"
    type_into(lab, "bucket_cap_mb", "")
    assert lab.settings.bucket_cap_mb is None
    assert not alert(lab, "bucket_cap_mb")
    assert value_of(lab, "buckets") == "6"
    # Two layers per bucket: T = 0.7 + 3.5 = 4.2, C = 29.2 (see the sweep test).
    assert value_of(lab, "step") == "43.20 ms"
    assert sweep(lab)["current"] == 2


# --- bad input ---------------------------------------------------------------------------

BAD = ["-1", "abc", "nan", "", "1e99", "inf", "  "]
BAD_CASES = [
    (name, bad)
    for name in FIELDS
    for bad in BAD + (["0.5"] if name in ("layers_per_bucket", "ranks") else [])
    # An empty cap is valid: it means "use layers per bucket".
    if not (name == "bucket_cap_mb" and bad.strip() == "")
]


@pytest.mark.parametrize(("name", "bad"), BAD_CASES)
def test_bad_input_shows_an_alert_and_keeps_the_last_valid_readouts(
    lab: BucketTimeline, name: str, bad: str
) -> None:
    shown = values(lab)
    state = json.dumps(lab.drawn_state, sort_keys=True)
    kept = getattr(lab.settings, name)
    before = revision(lab)
    type_into(lab, name, bad)
    assert alert(lab, name)
    assert getattr(lab.settings, name) == kept
    assert values(lab) == shown
    assert json.dumps(lab.drawn_state, sort_keys=True) == state
    assert revision(lab) == before  # nothing changed, nothing but the message sent
    assert preset_of(lab) == ("Overlap works", [])
    good = "2" if name != "straggler_pct" else "10"
    type_into(lab, name, good)
    assert not alert(lab, name)
    assert getattr(lab.settings, name) == float(good)


def test_a_decimal_comma_is_accepted(lab: BucketTimeline) -> None:
    type_into(lab, "backward_ms", "abc")
    type_into(lab, "backward_ms", "1,8")
    assert not alert(lab, "backward_ms")
    assert value_of(lab, "backward_end") == "21.60 ms"


# --- the sweep and the best setting ------------------------------------------------------


def test_sweep_marks_current_and_best(lab: BucketTimeline) -> None:
    data = sweep(lab)
    assert data["x"] == list(range(1, 13))
    assert len(data["step"]) == len(data["tail"]) == len(data["buckets"]) == 12
    assert data["buckets"] == [12, 6, 4, 3, 3, 2, 2, 2, 2, 2, 2, 1]
    # 1 per bucket: T = 2.45 > 2, all queue: C = 2 + 12 · 2.45 = 31.4, step 45.4.
    # 2 per bucket: T = 4.2, ready every 4 ms: 4-8.2, 8.2-12.4, ..., 25-29.2, step 43.2.
    # 3 per bucket: the default, 43.95.  12 per bucket: 59.7 (see above).
    np.testing.assert_allclose(np.asarray(data["step"])[[0, 1, 2, 11]], [45.4, 43.2, 43.95, 59.7])
    np.testing.assert_allclose(np.asarray(data["tail"])[[0, 1, 2, 11]], [7.4, 5.2, 5.95, 21.7])
    assert data["current"] == 3
    assert data["current_step"] == pytest.approx(43.95)
    assert data["best"] == 2
    assert data["best_step"] == pytest.approx(43.2)  # "Best: 2 layers per bucket (43.20 ms)"
    assert min(data["step"]) == pytest.approx(43.2)
    assert data["best_in_use"] is False
    # The regime's suggestion says as much: 43.95 - 43.20 = 0.75 ms.
    assert (
        "Smaller buckets are faster here: the best setting saves 0.75 ms."
        in (lab.drawn_state["regime"]["text"])
    )
    assert "the shortest step is 43.20 ms, at 2 layers per bucket." in lab.description


def test_use_the_best_setting(lab: BucketTimeline) -> None:
    before = revision(lab)
    press(lab, "best")
    assert lab.settings.layers_per_bucket == 2
    assert lab.values["layers_per_bucket"] == "2"
    assert value_of(lab, "step") == "43.20 ms"
    assert value_of(lab, "buckets") == "6"
    assert sweep(lab)["current"] == 2
    assert sweep(lab)["current_step"] == pytest.approx(43.2)
    assert sweep(lab)["best_in_use"] is True
    assert preset_of(lab) == ("Overlap works", ["layers per bucket"])
    assert revision(lab) != before
    type_into(lab, "layers_per_bucket", "5")
    assert sweep(lab)["best_in_use"] is False


def test_use_the_best_setting_clears_the_cap(lab: BucketTimeline) -> None:
    type_into(lab, "layers_per_bucket", "2")
    type_into(lab, "bucket_cap_mb", "100")
    assert sweep(lab)["best_in_use"] is False  # the cap, not 2 per bucket, is in force
    press(lab, "best")
    assert lab.settings.bucket_cap_mb is None
    assert lab.values["bucket_cap_mb"] == ""
    assert sweep(lab)["best_in_use"] is True
    assert value_of(lab, "step") == "43.20 ms"


def test_best_moves_with_the_latency(lab: BucketTimeline) -> None:
    type_into(lab, "latency_ms", "0.2")
    best = sweep(lab)["best"]
    steps = np.asarray(sweep(lab)["step"])
    assert sweep(lab)["best_step"] == pytest.approx(steps.min())
    assert steps[best - 1] == pytest.approx(steps.min())
    press(lab, "best")
    assert lab.settings.layers_per_bucket == best
    assert lab.schedule.step_time == pytest.approx(steps.min())


# --- Step / Play / Pause / Reset -----------------------------------------------------------


def test_step_advances_by_the_step_size(lab: BucketTimeline) -> None:
    # Horizon = optimizer start + optimizer = 29.95 + 2 = 31.95; step 1-2-5 below 31.95/16.
    assert lab.clock.horizon == pytest.approx(31.95)
    assert lab.anchor["horizon"] == pytest.approx(31.95)
    assert lab.drawn_state["horizon"] == pytest.approx(31.95)
    assert lab.anchor["step"] == 1.0
    step(lab)
    assert value_of(lab, "elapsed") == "1.00 ms"
    step(lab, 2)
    assert value_of(lab, "elapsed") == "3.00 ms"
    assert lab.anchor["elapsed"] == 3.0
    press(lab, "reset")
    assert value_of(lab, "elapsed") == "0.00 ms"
    assert lab.anchor["elapsed"] == 0.0


def test_step_size_follows_the_horizon(lab: BucketTimeline) -> None:
    type_into(lab, "bandwidth", "5")
    # Horizon 113.8 + 2 = 115.8; 115.8/16 = 7.24 -> 5 ms steps.
    assert lab.clock.horizon == pytest.approx(115.8)
    assert lab.anchor["step"] == 5.0
    step(lab)
    assert value_of(lab, "elapsed") == "5.00 ms"


def test_step_reveals_the_timeline_up_to_the_playhead(lab: BucketTimeline) -> None:
    bars = lab.drawn_state["bars"]
    # The page reveals the bars begun by the playhead (the rule it shares with Python).
    keep, _ = revealed_spans(bars["start"], bars["end"], lab.anchor["elapsed"])
    assert not keep.any()  # nothing has started before t = 0
    step(lab, 7)
    t = lab.anchor["elapsed"]
    assert t == 7.0
    assert lab.drawn_state["bars"] == bars  # Step sends no new schedule: the page reveals it
    keep, ends = revealed_spans(bars["start"], bars["end"], t)
    assert all(s < 7.0 for s in np.asarray(bars["start"])[keep])
    assert ends.max() == 7.0
    shown = {
        (k, b) for k, b, kept in zip(bar_kinds(lab), bars["bucket"], keep, strict=True) if kept
    }
    assert ("transfer", 0) in shown and ("transfer", 1) not in shown
    assert "At 7.00 ms of 31.95 ms: layer 9's backward is running and bucket 0 is on the link" in (
        lab.description
    )


def test_stepping_to_the_end_stops_there_and_play_replays(
    lab: BucketTimeline, wall: FakeWall
) -> None:
    step(lab, 40)
    assert value_of(lab, "elapsed") == "31.95 ms"
    # At the end the page disables Step (elapsed = horizon) and says Play replays.
    assert lab.anchor["elapsed"] == lab.anchor["horizon"]
    assert lab.anchor["playing"] is False
    assert "the step is over" in lab.description
    press(lab, "play")
    assert lab.anchor["elapsed"] == 0.0
    assert lab.anchor["playing"] is True
    press(lab, "reset")
    assert lab.anchor["elapsed"] == 0.0 and lab.anchor["playing"] is False


def test_play_label_turns_to_pause_and_back(lab: BucketTimeline, wall: FakeWall) -> None:
    play(lab)
    assert lab.anchor["playing"] is True  # the page's button reads Pause
    # A whole step plays in 8 s of wall time.
    assert lab.anchor["speed"] == pytest.approx(31.95 / 8)
    assert lab.anchor["horizon"] == pytest.approx(31.95)
    wall.t += 2.0
    play(lab)
    assert lab.anchor["playing"] is False
    # 2 s · 31.95/8 ms/s = 7.9875 ms.
    assert lab.clock.elapsed == pytest.approx(7.9875)
    assert value_of(lab, "elapsed") == "7.99 ms"


def test_reset_while_playing(lab: BucketTimeline, wall: FakeWall) -> None:
    play(lab)
    wall.t += 3.0
    press(lab, "reset")
    assert lab.clock.playing is False
    assert lab.anchor["playing"] is False
    assert value_of(lab, "elapsed") == "0.00 ms"


def test_revision_changes_on_every_action(lab: BucketTimeline, wall: FakeWall) -> None:
    seen = [revision(lab)]

    def changed() -> None:
        seen.append(revision(lab))
        assert seen[-1] not in seen[:-1]

    step(lab)
    changed()
    play(lab)
    changed()
    wall.t += 1.0
    play(lab)
    changed()
    type_into(lab, "bandwidth", "50")
    changed()
    choose_preset(lab, "Straggler")
    changed()
    press(lab, "best")
    changed()
    press(lab, "reset")
    changed()
    press(lab, "reset")  # even when nothing else changes
    changed()
    step(lab)
    changed()


def test_edit_sets_the_horizon_and_clamps_elapsed(lab: BucketTimeline) -> None:
    step(lab, 40)
    assert value_of(lab, "elapsed") == "31.95 ms"
    type_into(lab, "bandwidth", "5")
    s = lab.schedule
    assert lab.clock.horizon == pytest.approx(s.optimizer_start + s.optimizer_ms)
    assert lab.clock.horizon == pytest.approx(115.8)
    assert value_of(lab, "elapsed") == "31.95 ms"  # still inside the longer step
    assert lab.anchor["elapsed"] < lab.anchor["horizon"]  # Step is enabled again
    assert lab.anchor["horizon"] == pytest.approx(115.8)
    type_into(lab, "bandwidth", "875")
    # T = 0.7 + 1.75 · 75/875 = 0.85: C = 24.85, horizon 26.85 < 31.95.
    s = lab.schedule
    assert lab.clock.horizon == pytest.approx(s.optimizer_start + s.optimizer_ms)
    assert lab.clock.horizon == pytest.approx(26.85)
    assert lab.clock.elapsed == pytest.approx(26.85)
    assert value_of(lab, "elapsed") == "26.85 ms"
    assert lab.drawn_state["horizon"] == pytest.approx(26.85)  # the page's x axis ends 2 % later


def test_edit_while_playing_keeps_time(lab: BucketTimeline, wall: FakeWall) -> None:
    play(lab)
    wall.t += 2.0  # 7.9875 ms played
    type_into(lab, "bandwidth", "5")
    assert lab.clock.playing is True
    assert lab.clock.elapsed == pytest.approx(7.9875)
    assert lab.anchor["elapsed"] == pytest.approx(7.9875)
    assert lab.anchor["playing"] is True


def test_edit_while_playing_past_the_new_end_stops(lab: BucketTimeline, wall: FakeWall) -> None:
    type_into(lab, "bandwidth", "5")  # horizon 115.8, 14.475 ms per wall second
    play(lab)
    wall.t += 4.0  # 57.9 ms played
    type_into(lab, "bandwidth", "875")  # horizon 26.85
    assert lab.anchor["playing"] is False  # the page shows Play
    assert lab.clock.now() == pytest.approx(26.85)
    assert lab.anchor["elapsed"] == pytest.approx(26.85) == lab.anchor["horizon"]


# --- the bridge to the queue lab -----------------------------------------------------------


def test_bridge_link_carries_the_average_rates_on_this_server(lab: BucketTimeline) -> None:
    # Arrival 300 MB / 24 ms = 12.5; service 25 · 8 / (2 · 7) = 14.2857 -> 14.29.
    bridge = lab.drawn_state["bridge"]
    assert (bridge["arrival"], bridge["service"], bridge["capped"]) == (12.5, 14.29, [])
    assert bridge["href"] is None  # no server (a notebook): the rates, but no link
    lab.enable_share("http://example.test:5006/course")
    # The server's --prefix (/course) is kept: the link is built from its origin.
    assert lab.drawn_state["bridge"]["href"] == (
        "http://example.test:5006/course/queue-lab?arrival=12.5&service=14.29&initial=0"
    )
    arrival, service = average_rates(lab.settings)
    assert (round(arrival, 2), round(service, 2)) == (12.5, 14.29)
    type_into(lab, "straggler_pct", "50")
    type_into(lab, "bandwidth", "50")
    # Arrival 300/36 = 8.333 -> 8.33; service 50 · 8/14 = 28.571 -> 28.57.
    assert lab.drawn_state["bridge"]["href"] == (
        "http://example.test:5006/course/queue-lab?arrival=8.33&service=28.57&initial=0"
    )


def test_bridge_caps_rates_at_the_queue_labs_bounds(lab: BucketTimeline) -> None:
    lab.enable_share("http://example.test:5006")
    type_into(lab, "bandwidth", "10000")
    # 10000 · 8/14 = 5714 > the queue lab's 1000 items/s.
    assert "service=1000&" in lab.drawn_state["bridge"]["href"]
    assert lab.drawn_state["bridge"]["service"] == 1000
    assert lab.drawn_state["bridge"]["capped"] == ["service capped at 1000"]


# --- URL state ---------------------------------------------------------------------------


def test_settings_from_query_good_keys() -> None:
    values_, notices = settings_from_query(
        BucketConfig,
        {
            "layers_per_bucket": [b"4"],
            "bandwidth": ["50"],
            "latency_ms": [b"0,2"],
            "bucket_cap_mb": [b"60"],
            "ranks": [b"2", b"16"],
        },
    )
    assert values_ == {
        "layers_per_bucket": 4,
        "bandwidth": 50.0,
        "latency_ms": 0.2,
        "bucket_cap_mb": 60.0,
        "ranks": 16,
    }
    assert isinstance(values_["layers_per_bucket"], int)
    assert notices == []
    lab = BucketTimeline(**values_)
    assert preset_of(lab) == (
        "Overlap works",
        [
            "layers per bucket",
            "link bandwidth",
            "latency per ring step",
            "ranks",
            "bucket size cap",
        ],
    )
    assert lab.values["layers_per_bucket"] == "4"


def test_settings_from_query_empty_cap_means_none() -> None:
    values_, notices = settings_from_query(BucketConfig, {"bucket_cap_mb": [b""]})
    assert values_ == {}
    assert notices == []


def test_settings_from_query_ignores_unknown_keys() -> None:
    values_, notices = settings_from_query(BucketConfig, {"n_layers": [b"6"], "bandwidth": [b"5"]})
    assert values_ == {"bandwidth": 5.0}
    assert len(notices) == 1
    assert notices[0].startswith("Ignored unknown setting “n_layers” (known: ")
    assert "layers_per_bucket" in notices[0]


def test_preset_profiles_are_read_only() -> None:
    for name in ("Embedding layer", "Tied embeddings", "Reordered module"):
        for key in ("layer_backward_ms", "layer_grad_mb", "layer_registration"):
            if PRESETS[name][key] is not None:
                with pytest.raises(ValueError, match="read-only"):
                    PRESETS[name][key][0] = 99.0


def test_preset_descriptions_are_sentences_and_their_numbers_hold() -> None:
    assert list(PRESET_DESCRIPTIONS) == list(PRESETS)
    for name, text in PRESET_DESCRIPTIONS.items():
        assert text[0].isupper() and text.endswith(".") and "  " not in text, name
    # "at least 4.30 ms is exposed whatever the bucket size": the smallest tail over 1..12.
    fast = PRESETS["Fast compute: transfers queue"]
    least = min(_hand_step(fast, k)[2] for k in range(1, 13))
    assert least == pytest.approx(4.3)
    assert (
        f"at least {least:.2f} ms is exposed"
        in PRESET_DESCRIPTIONS["Fast compute: transfers queue"]
    )


def test_the_tied_head_is_the_embeddings_size() -> None:
    grad = PRESETS["Tied embeddings"]["layer_grad_mb"]
    assert grad[-1] == grad[0] == 200.0
    assert "the embedding's 200 MB weight" in PRESET_DESCRIPTIONS["Tied embeddings"]
    np.testing.assert_array_equal(grad[1:-1], 25.0)


def test_a_bucket_of_layers_out_of_order_lists_them() -> None:
    # Layer 6 is registered last, so bucket 0 (the last-registered layers) holds 12, 11 and 6.
    lab = BucketTimeline(preset="Reordered module")
    assert note_of(lab, "buckets") == "layers 12, 11, 6; 10–8; 7, 5, 4; 3–1"
    # Bucket 1 (ready at 10) waits for bucket 0 (ready at 14): an order wait, 10-14.
    ((start, end, lane, label),) = rows(lab, "waiting for bucket")
    assert (start, end, lane, label) == (10.0, 14.0, "Order wait", "Bucket 1 waits for bucket 0")
    assert (
        "bucket 1 was ready but waited 4.00 ms for bucket 0." in lab.drawn_state["regime"]["text"]
    )


def test_an_edit_redraws_once(lab: BucketTimeline, monkeypatch) -> None:
    # One edit is one message: the state, values and description together.
    calls = []
    original = lab.refresh
    monkeypatch.setattr(lab, "refresh", lambda: (calls.append(1), original())[1])
    type_into(lab, "layers_per_bucket", "2")
    assert len(calls) == 1
    assert preset_of(lab) == ("Overlap works", ["layers per bucket"])
    # A typed backward time after the embedding preset replaces its profile in the same
    # update: one redraw, and that one already uses the new value.
    choose_preset(lab, "Embedding layer")
    calls.clear()
    type_into(lab, "backward_ms", "3")
    assert len(calls) == 1
    assert value_of(lab, "backward_end") == "36.00 ms"
    # A refused edit redraws nothing.
    calls.clear()
    type_into(lab, "backward_ms", "abc")
    assert calls == []


def test_the_description_says_what_the_chart_shows(lab: BucketTimeline) -> None:
    assert lab.description == (
        "At 0.00 ms, before backward starts; the step's timeline runs to 31.95 ms. "
        "Backward runs for 24.00 ms over 12 layers, in 4 buckets. No bucket waits for the "
        "link. The tail is 5.95 ms, 5.95 ms of it the last transfer. The step takes 43.95 ms. "
        "Over 1 to 12 layers per bucket the shortest step is 43.20 ms, at 2 layers per bucket."
    )
    step(lab, 30)  # 30 ms: past backward (24) and bucket 3's end (29.95), in the optimizer
    assert lab.description.startswith(
        "At 30.00 ms of 31.95 ms: the optimizer is running; 4 of 4 all-reduces done."
    )


def test_the_state_is_small_and_play_and_step_do_not_resend_it(
    lab: BucketTimeline, wall: FakeWall
) -> None:
    # Every edit sends the whole state: keep it to a few kilobytes.
    assert len(json.dumps(lab.drawn_state, ensure_ascii=False)) < 6_000
    sent = []
    lab.param.watch(lambda *events: sent.extend(e.name for e in events), ["state", "anchor"])
    step(lab)
    play(lab)
    wall.t += 1.0
    play(lab)
    press(lab, "reset")
    # Step, Play, Pause and Reset move only the clock: the same schedule is not sent again.
    assert sent == ["anchor"] * 4
    type_into(lab, "ranks", "4")
    assert sent[-2:] == ["state", "anchor"]


def test_an_edit_that_leaves_the_lanes_and_curve_sends_no_steady_part() -> None:
    lab = BucketTimeline()
    sent: list[str] = []
    lab.param.watch(lambda *events: sent.extend(e.name for e in events), ["state", "steady"])
    lab.edit("layers_per_bucket", "2")
    assert sent == ["state"]  # the lanes, kinds of bar, the sweep's curve, the link: as they were
    assert sweep(lab)["current"] == 2
    sent.clear()
    lab.edit("bandwidth", "10")  # a slower link changes the curve: it is sent
    assert sorted(sent) == ["state", "steady"]


# --- real scale: algorithm, hardware presets, accumulation (issue 35) --------------------


def test_typed_algorithm_prices_each_bucket_and_says_which(lab: BucketTimeline) -> None:
    # Defaults, 512 ranks: ring 2 x 511 x 0.05 = 51.10 ms of latency a transfer.
    type_into(lab, "ranks", "512")
    assert note_of(lab, "overhead").startswith("× 4 transfers = 204.40 ms")
    # Tree: 2 x 9 x 0.05 = 0.90 ms a transfer, x 4 = 3.60 ms; said in the note.
    type_into(lab, "algorithm", "tree")
    assert value_of(lab, "overhead") == "0.90 ms"
    assert note_of(lab, "overhead") == "× 4 transfers = 3.60 ms; tree all-reduce"
    type_into(lab, "algorithm", "auto")
    assert note_of(lab, "overhead") == "× 4 transfers = 3.60 ms; tree all-reduce"
    assert lab.settings_values()["algorithm"] == "auto"
    type_into(lab, "algorithm", "butterfly")
    assert lab.settings.algorithm == "auto"  # the last valid value is kept


def test_each_preset_says_where_its_numbers_come_from(lab: BucketTimeline) -> None:
    assert lab.drawn_state["preset"]["source"].startswith("Illustrative")
    choose_preset(lab, "8×A100, NVLink")
    source = lab.drawn_state["preset"]["source"]
    assert source.startswith("Measured: nccl-tests issue #149")
    assert "hwLat, NVLink, Ring, Simple" in source
    choose_preset(lab, "64 nodes, 25 GbE")
    assert lab.drawn_state["preset"]["source"].startswith("Line rate, not a measurement")


def test_accumulation_draws_the_no_sync_micro_batches(lab: BucketTimeline) -> None:
    type_into(lab, "accumulation_steps", "4")
    kinds = [lab.drawn_state["bar_kinds"][k] for k in lab.drawn_state["bars"]["kind"]]
    assert kinds.count("backward (no_sync)") == 3
    assert kinds.count("forward") == 3
    assert kinds.count("transfer") == 4  # reduced once per step, not per micro-batch
    # 3 x (12 + 24) = 108 ms before the last micro-batch; step 12 + 108 + 29.95 + 2.
    assert value_of(lab, "step") == "151.95 ms"
    assert note_of(lab, "step") == (
        "4 micro-batches, reduced once: forward 12.00 ms + 3 under no_sync() 108.00 ms "
        "+ the last 29.95 ms + optimizer 2.00 ms"
    )
    assert value_of(lab, "tail") == "5.95 ms"
    assert lab.drawn_state["micro_batches"] == 4
