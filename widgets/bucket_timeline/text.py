"""What the bucket timeline says: readout values, the regime's explanation, the description.

Every sentence here is built from the schedule's own numbers; nothing is
worked out here that the model did not decide.
"""

from __future__ import annotations

import numpy as np

from ..common.formatting import COUNT, MILLISECONDS, PERCENT, layer_span, layers_phrase
from ..model.buckets import RegimeKind, Schedule, Suggestion, SweepResult

#: Each regime's explanation: a lead sentence, then the rest (``{...}`` from the regime).
EXPLANATIONS = {
    RegimeKind.OVERLAP_LIMITED: (
        "Overlap is doing its job.",
        "Each bucket's all-reduce starts as soon as its last layer's gradient is ready and "
        "runs while earlier layers are still in backward. What is left exposed is the last "
        "bucket: it can go only once every gradient is ready, when backward ends, so its "
        "whole transfer ({last} here) comes after. The tail can never be shorter than that "
        "last transfer; smaller buckets shrink it, until per-transfer overhead takes over.",
    ),
    RegimeKind.NO_OVERLAP: (
        "Nothing overlaps.",
        "No all-reduce runs while backward does: the first transfer starts only when "
        "backward ends, so all {link} of link work is exposed. With one bucket this is "
        "unavoidable; split the gradients into more buckets so the first can go while "
        "earlier layers are still in backward.",
    ),
    RegimeKind.LATENCY_BOUND: (
        "Per-transfer overhead dominates.",
        "Every bucket pays {steps} of latency whatever its size: {overhead} of "
        "overhead against {traffic} of actual traffic. More, smaller buckets make the step "
        "slower, not faster. Try larger buckets: the sweep below marks the best setting.",
    ),
    RegimeKind.LINK_SATURATED: (
        "Transfers queue behind each other.",
        "The link serves buckets one at a time in bucket order, and gradients become ready "
        "faster than the link drains them: the last bucket waited {wait} for the link before "
        "its own {last} transfer, and that backlog is part of the tail. Only a faster link or "
        "less traffic removes the queue; re-cutting the buckets moves it around.",
    ),
    RegimeKind.COMMUNICATION_BOUND: (
        "Traffic exceeds compute.",
        "The link needs {traffic} just to move the gradients, but backward lasts only "
        "{backward}. No bucketing can hide more communication than there is computation to "
        "hide it behind: overlap hides traffic, it does not reduce it. Compress, shard, or "
        "accumulate gradients over more steps instead.",
    ),
}
SUGGESTIONS = {
    Suggestion.LARGER_BUCKETS: " Larger buckets are faster here: the best setting saves {gain}.",
    Suggestion.SMALLER_BUCKETS: " Smaller buckets are faster here: the best setting saves {gain}.",
    Suggestion.NONE: " No other bucket size is faster.",
}


def readout_values(s: Schedule) -> dict[str, tuple[str, str, str]]:
    """Label, value and note of each readout (the elapsed time is live, so not here)."""
    ms = MILLISECONDS
    r = s.regime
    regime_value = {
        RegimeKind.COMMUNICATION_BOUND: f"{ms(r.traffic_ms)} traffic ≥ "
        f"{ms(r.backward_end_ms)} backward: communication-bound",
        RegimeKind.NO_OVERLAP: f"{PERCENT(100 * r.overlap_share)} of transfer time during "
        "backward: no overlap",
        RegimeKind.LATENCY_BOUND: f"{ms(r.overhead_ms)} overhead ≥ {ms(r.traffic_ms)} "
        "traffic: latency-bound",
        RegimeKind.LINK_SATURATED: f"{ms(r.last_link_wait_ms)} queued before the last "
        "bucket: link-saturated",
        RegimeKind.OVERLAP_LIMITED: f"{ms(r.tail_ms)} tail = last transfer: overlap-limited",
    }[r.kind]
    sizes = "; ".join(layer_span(b) for b in s.bucket_layers)
    return {
        "backward_end": (
            "Backward end",
            ms(s.backward_end),
            "layer 1's gradient is ready"
            + (" in the last micro-batch" if s.accumulation_steps > 1 else ""),
        ),
        "comm_end": ("Communication end", ms(s.comm_end), "the last all-reduce finishes"),
        "tail": (
            "Exposed tail",
            ms(s.exposed_tail),
            f"last transfer alone: {ms(s.bucket_transfer_ms[-1])}",
        ),
        "step": ("Step time", ms(s.step_time), step_note(s)),
        "buckets": ("Buckets", COUNT(s.n_buckets), f"layers {sizes}"),
        "overhead": (
            "Per-transfer overhead",
            ms(s.overhead_ms / s.n_buckets),
            f"× {s.n_buckets} transfers = {ms(s.overhead_ms)}"
            + ("" if s.algorithm == "ring" else f"; {algorithm_note(s)}"),
        ),
        "overlap": (
            "Overlap",
            PERCENT(100 * s.overlap_fraction),
            "of transfer time runs during backward",
        ),
        "regime": ("Regime", regime_value, ""),
    }


def explanation(s: Schedule) -> tuple[str, str]:
    """The regime's explanation with this schedule's numbers: (lead sentence, the rest)."""
    ms = MILLISECONDS
    r = s.regime
    lead, body = EXPLANATIONS[r.kind]
    text = body.format(
        last=ms(r.last_transfer_ms),
        overhead=ms(r.overhead_ms),
        traffic=ms(r.traffic_ms),
        wait=ms(r.last_link_wait_ms),
        backward=ms(r.backward_end_ms),
        link=ms(r.link_work_ms),
        steps=latency_steps(s),
    )
    if r.suggestion is not None:
        text += SUGGESTIONS[r.suggestion].format(gain=ms(r.gain_ms))
    order = order_wait_sentence(s)
    return lead, f"{text} {order}" if order else text


def step_note(s: Schedule) -> str:
    """How the step time adds up (with the micro-batches under no_sync(), if any)."""
    ms = MILLISECONDS
    if s.accumulation_steps == 1:
        return (
            f"forward {ms(s.forward_ms)} + {ms(s.optimizer_start)} + optimizer {ms(s.optimizer_ms)}"
        )
    k = s.accumulation_steps
    return (
        f"{k} micro-batches, reduced once: forward {ms(s.forward_ms)} + {k - 1} under "
        f"no_sync() {ms(s.no_sync_ms)} + the last {ms(s.optimizer_start - s.no_sync_ms)} "
        f"+ optimizer {ms(s.optimizer_ms)}"
    )


def latency_steps(s: Schedule) -> str:
    """Which steps of latency each bucket pays, by the algorithm in use (``cost``)."""
    if not s.bucket_tree.any():
        return "2(p−1) ring steps"
    if s.bucket_tree.all():
        return "2⌊log2 p⌋ tree steps"
    return "2(p−1) ring steps or 2⌊log2 p⌋ tree steps"


def algorithm_note(s: Schedule) -> str:
    """Which algorithm each bucket uses: ``"ring"``, ``"tree"`` or the buckets of each."""
    tree = s.bucket_tree
    if not tree.any():
        return "ring all-reduce"
    if tree.all():
        return "tree all-reduce"
    ids = np.arange(s.n_buckets)
    return (
        f"auto: tree for bucket{'s' if tree.sum() > 1 else ''} "
        f"{', '.join(map(str, ids[tree]))}, ring for {', '.join(map(str, ids[~tree]))}"
    )


def order_wait_sentence(s: Schedule) -> str:
    """The longest wait of a ready bucket for an earlier one, or "" when none waited."""
    waited = np.flatnonzero(s.bucket_waits_for >= 0)
    if not waited.size:
        return ""
    b = int(waited[np.argmax(s.bucket_order_wait[waited])])
    return (
        f"Buckets launch in index order: bucket {b} was ready but waited "
        f"{MILLISECONDS(s.bucket_order_wait[b])} for bucket {int(s.bucket_waits_for[b])}."
    )


def moment(s: Schedule, t: float, horizon: float) -> str:
    """What is happening at model time ``t``, in one sentence."""
    ms = MILLISECONDS
    if t <= 0:
        return f"At {ms(0.0)}, before backward starts; the step's timeline runs to {ms(horizon)}."
    if t >= horizon:
        return f"At {ms(t)}, the end: the step is over."
    parts = []
    running = np.flatnonzero((s.layer_backward_start < t) & (t <= s.layer_ready))
    if running.size:
        parts.append(f"layer {int(running[0]) + 1}'s backward is running")
    on_link = np.flatnonzero((s.bucket_start < t) & (t <= s.bucket_end))
    if on_link.size:
        parts.append(f"bucket {int(on_link[0])} is on the link")
    if s.optimizer_start < t <= s.optimizer_start + s.optimizer_ms:
        parts.append("the optimizer is running")
    done = int(np.sum(s.bucket_end <= t))
    if not parts:
        parts.append("nothing runs")
    return (
        f"At {ms(t)} of {ms(horizon)}: {' and '.join(parts)}; "
        f"{done} of {s.n_buckets} all-reduce{'s' if s.n_buckets > 1 else ''} done."
    )


def description(s: Schedule, sweep: SweepResult, t: float, horizon: float) -> str:
    """A text alternative of the timeline: the moment, the link's worst wait, what makes
    the tail, the step and the sweep's best."""
    ms = MILLISECONDS
    parts = [
        moment(s, t, horizon),
        f"Backward runs for {ms(s.backward_end)} over {s.n_layers} layers, "
        f"in {s.n_buckets} bucket{'s' if s.n_buckets > 1 else ''}.",
    ]
    waits = s.bucket_link_wait
    worst = int(np.argmax(waits))
    if waits[worst] > 1e-9 * max(1.0, s.comm_end):
        parts.append(
            f"Bucket {worst} ({layers_phrase(s.bucket_layers[worst])}) waits "
            f"{ms(waits[worst])} for the link."
        )
    else:
        parts.append("No bucket waits for the link.")
    order = order_wait_sentence(s)
    if order:
        parts.append(order)
    last = s.bucket_transfer_ms[-1]
    if s.exposed_tail > 0:
        parts.append(
            f"The tail is {ms(s.exposed_tail)}, {ms(min(last, s.exposed_tail))} of it "
            "the last transfer."
        )
    else:
        parts.append("Every transfer ends before backward does: no tail.")
    parts.append(f"The step takes {ms(s.step_time)}.")
    parts.append(
        f"Over 1 to {s.n_layers} layers per bucket the shortest step is "
        f"{ms(sweep.best_step)}, at {sweep.best_setting} layers per bucket."
    )
    return " ".join(parts)
