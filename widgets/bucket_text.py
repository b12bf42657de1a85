"""What the bucket timeline says: readout values, the regime's explanation, the description.

Every sentence here is built from the schedule's own numbers; nothing is
worked out here that the model did not decide.
"""

from __future__ import annotations

from urllib.parse import urlencode

import numpy as np

from .model.buckets import BucketConfig, RegimeKind, Schedule, Suggestion, average_rates
from .model.fluid_queue import FluidQueue
from .parts.formatting import COUNT, MILLISECONDS, PERCENT

EXPLANATIONS = {
    RegimeKind.OVERLAP_LIMITED: (
        "**Overlap is doing its job.** Each bucket's all-reduce starts as soon as its last "
        "layer's gradient is ready and runs while earlier layers are still in backward. What "
        "is left exposed is the last bucket: it can go only once every gradient is ready, when "
        "backward ends, so its whole transfer ({last} here) comes after. The tail can never "
        "be shorter than that last transfer; smaller buckets shrink it, until per-transfer "
        "overhead takes over."
    ),
    RegimeKind.NO_OVERLAP: (
        "**Nothing overlaps.** No all-reduce runs while backward does: the first transfer "
        "starts only when backward ends, so all {link} of link work is exposed. With one "
        "bucket this is unavoidable; split the gradients into more buckets so the first can "
        "go while earlier layers are still in backward."
    ),
    RegimeKind.LATENCY_BOUND: (
        "**Per-transfer overhead dominates.** Every bucket pays 2(p−1) ring steps of latency "
        "whatever its size: {overhead} of overhead against {traffic} of actual traffic. More, "
        "smaller buckets make the step slower, not faster. Try larger buckets: the sweep below "
        "marks the best setting."
    ),
    RegimeKind.LINK_SATURATED: (
        "**Transfers queue behind each other.** The link serves buckets one at a time in "
        "bucket order, and gradients become ready faster than the link drains them: the "
        "last bucket waited {wait} for the link before its own {last} transfer, and that "
        "backlog is part of the tail. Only a faster link or less traffic removes the queue; "
        "re-cutting the buckets moves it around."
    ),
    RegimeKind.COMMUNICATION_BOUND: (
        "**Traffic exceeds compute.** The link needs {traffic} just to move the gradients, "
        "but backward lasts only {backward}. No bucketing can hide more communication than "
        "there is computation to hide it behind: overlap hides traffic, it does not reduce "
        "it. Compress, shard, or accumulate gradients over more steps instead."
    ),
}
SUGGESTIONS = {
    Suggestion.LARGER_BUCKETS: " Larger buckets are faster here: the best setting saves {gain}.",
    Suggestion.SMALLER_BUCKETS: " Smaller buckets are faster here: the best setting saves {gain}.",
    Suggestion.NONE: " No other bucket size is faster.",
}


def layer_span(layers: np.ndarray) -> str:
    """A bucket's layers, highest first: ``"12–10"``, ``"4"``, or ``"12, 11, 6"`` when not a run."""
    layers = np.unique(np.asarray(layers))[::-1]
    if len(layers) == 1:
        return f"{layers[0]}"
    if layers[0] - layers[-1] == len(layers) - 1:
        return f"{layers[0]}–{layers[-1]}"
    return ", ".join(str(n) for n in layers)


def layers_phrase(layers: np.ndarray) -> str:
    """``"layers 12–10"`` or ``"layer 4"``."""
    return f"layer{'s' if len(layers) > 1 else ''} {layer_span(layers)}"


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
        "backward_end": ("Backward end", ms(s.backward_end), "layer 1's gradient is ready"),
        "comm_end": ("Communication end", ms(s.comm_end), "the last all-reduce finishes"),
        "tail": (
            "Exposed tail",
            ms(s.exposed_tail),
            f"last transfer alone: {ms(s.bucket_transfer_ms[-1])}",
        ),
        "step": (
            "Step time",
            ms(s.step_time),
            f"forward {ms(s.forward_ms)} + {ms(s.optimizer_start)} + optimizer "
            f"{ms(s.optimizer_ms)}",
        ),
        "buckets": ("Buckets", COUNT(s.n_buckets), f"layers {sizes}"),
        "overhead": (
            "Per-transfer overhead",
            ms(s.overhead_ms / s.n_buckets),
            f"× {s.n_buckets} transfers = {ms(s.overhead_ms)}",
        ),
        "overlap": (
            "Overlap",
            PERCENT(100 * s.overlap_fraction),
            "of transfer time runs during backward",
        ),
        "regime": ("Regime", regime_value, ""),
    }


def explanation(s: Schedule) -> str:
    """The regime's explanation (Markdown), with this schedule's numbers."""
    ms = MILLISECONDS
    r = s.regime
    text = EXPLANATIONS[r.kind].format(
        last=ms(r.last_transfer_ms),
        overhead=ms(r.overhead_ms),
        traffic=ms(r.traffic_ms),
        wait=ms(r.last_link_wait_ms),
        backward=ms(r.backward_end_ms),
        link=ms(r.link_work_ms),
    )
    if r.suggestion is not None:
        text += SUGGESTIONS[r.suggestion].format(gain=ms(r.gain_ms))
    order = order_wait_sentence(s)
    return f"{text} {order}" if order else text


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


def description(s: Schedule) -> str:
    """A text alternative of the timeline: the link's worst wait and what makes the tail."""
    ms = MILLISECONDS
    parts = [
        f"Backward runs for {ms(s.backward_end)} over {s.n_layers} layers, "
        f"in {s.n_buckets} bucket{'s' if s.n_buckets > 1 else ''}."
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
    return " ".join(parts)


def bridge_html(config: BucketConfig) -> str:
    """A link to the queue lab with this step's average rates, and what it leaves out."""
    arrival, service = average_rates(config)
    spec = FluidQueue.param
    notes = []
    values = {}
    for key, value in (("arrival", arrival), ("service", service)):
        hi = spec[key].bounds[1]
        if value > hi:
            notes.append(f"{key} capped at {hi:g}")
            value = hi
        values[key] = round(value, 2)
    query = urlencode({**values, "initial": 0})
    cap = f" ({'; '.join(notes)})" if notes else ""
    return (
        f'<p style="font:14px/1.5 system-ui,sans-serif;margin:0">Compare with the fluid '
        f'picture: <a href="/queue-lab?{query}">open the queue lab with these average '
        f"rates</a>: gradients arrive at {values['arrival']:g} MB/ms during backward and the "
        f"link reduces {values['service']:g} MB/ms{cap} (read items as MB and seconds as "
        "ms). The fluid queue ignores buckets and their order, so it shows pressure, "
        "not the tail.</p>"
    )
