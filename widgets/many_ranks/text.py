"""What the many-ranks view says: its readouts, its description, the scenario's name.

Every sentence is built from the model's numbers; nothing is decided here. A
readout is sent as its number (or list of ranks) with its format, and as the
text Python formats from it: that text is what the page shows, so a readout
reads exactly as the description and the lessons do (``readout_values``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common.formatting import COUNT, MILLISECONDS, PERCENT, Quantity, layer_span
from .result import Disagreement, RanksResult

MB = Quantity("MB", digits=1)


@dataclass(frozen=True)
class Readout:
    """One readout: a number in its format (or a list of ranks), its label and a note."""

    key: str
    label: str
    value: float | tuple[int, ...]
    quantity: Quantity | None
    note: str

    @property
    def text(self) -> str:
        """The value as the page shows it (``"16.80 ms"``, ``"0, 0, 1"``)."""
        if self.quantity is None:
            return ", ".join(str(int(x)) for x in self.value)
        return self.quantity(self.value)

    def record(self) -> dict:
        """The readout as the page is sent it: plain numbers and its format."""
        # The text too: Python's rounding of an exact half (1.625 -> "1.62") is not the
        # browser's toFixed (-> "1.63"), and a readout must read as the description does.
        out = {"key": self.key, "label": self.label, "text": self.text, "note": self.note}
        if self.quantity is None:
            out["values"] = [int(x) for x in self.value]
        else:
            out["value"] = float(self.value)
            out["format"] = self.quantity.js_spec()
        return out


def runs(ranks: np.ndarray) -> str:
    """``"rank 0 for buckets 0–3, rank 1 for buckets 4–5"``."""
    parts = []
    start = 0
    for b in range(1, len(ranks) + 1):
        if b == len(ranks) or ranks[b] != ranks[start]:
            span = f"bucket {start}" if b - 1 == start else f"buckets {start}–{b - 1}"
            parts.append(f"rank {ranks[start]} for {span}")
            start = b
    return ", ".join(parts)


def ties(tied: np.ndarray) -> str:
    """``"; ties (lowest rank listed) on buckets 0, 3"`` when launches tie, else ``""``."""
    where = np.flatnonzero(tied)
    if where.size == 0:
        return ""
    if where.size == tied.size:
        return "; every bucket is a tie: several ranks launch it at once (lowest listed)"
    return "; ties (lowest rank listed) on bucket" + (
        f"s {', '.join(map(str, where))}" if where.size > 1 else f" {where[0]}"
    )


def timeline_readouts(r: RanksResult) -> list[Readout]:
    """Each readout of a timeline (the elapsed time is live, so not here)."""
    ms = MILLISECONDS
    s = r.schedule
    defining = r.defining_ranks
    fast = r.fastest_rank
    last = r.n_buckets - 1
    issued = s.bucket_end[last] - s.bucket_launch[:, last]
    short, long = int(np.argmin(issued)), int(np.argmax(issued))
    waits = r.peer_wait_ms
    waiter = int(np.argmax(waits))
    # Rank 0's backward() (its own clock starts at its backward start).
    start0 = float(s.backward_start[0])
    nccl_return = max(float(s.backward_end[0]), float(s.bucket_launch[0, last])) - start0
    grads_ready = max(float(s.backward_end[0]), s.comm_end)
    return [
        Readout(
            "latest",
            "Latest rank per bucket",
            tuple(int(x) for x in defining),
            None,
            f"bucket 0 first: {runs(defining)}{ties(r.tied)}",
        ),
        Readout(
            "idle",
            "Idle time of the fastest rank",
            r.fastest_idle_ms,
            ms,
            f"rank {fast}: backward ends at {ms(s.backward_end[fast])}, the optimizer "
            f"starts at {ms(s.optimizer_start)}",
        ),
        Readout(
            "timer",
            "What a timer around the all-reduce call measures",
            s.enqueue_ms,
            ms,
            f"the enqueue only: bucket {last} really takes {ms(issued[short])} (rank {short}) "
            f"to {ms(issued[long])} (rank {long}) from issue to completion, and "
            f"{ms(s.exposed_tail)} of it is exposed after backward",
        ),
        Readout(
            "peer_wait",
            "Longest wait for peers",
            float(waits[waiter]),
            ms,
            f"rank {waiter}; per rank, its launched all-reduces waiting for a later peer's "
            f"launch: {', '.join(f'rank {i} {ms(w)}' for i, w in enumerate(waits))}",
        ),
        Readout(
            "backward_nccl",
            "A timer around backward() with NCCL",
            nccl_return,
            ms,
            "rank 0's host returns once the last bucket's all-reduce is enqueued; the wait "
            "for the all-reduces is put on the GPU stream (WorkNCCL::synchronizeStream), not "
            f"the host. .grad holds the averaged values at {ms(grads_ready)} in stream "
            "order: synchronize before reading a host timer",
        ),
        Readout(
            "backward_gloo",
            "A timer around backward() with gloo",
            grads_ready - start0,
            ms,
            "the host blocks in Reducer::finalize_backward until every bucket's all-reduce "
            "has completed and the averaged gradients are written back: .grad holds them "
            "when backward() returns",
        ),
        buckets_readout(r),
        Readout(
            "step",
            "Step time",
            r.step_time,
            ms,
            f"forward {ms(r.forward_ms)} + {ms(s.optimizer_start)} + optimizer "
            f"{ms(r.optimizer_ms)}",
        ),
        Readout(
            "tail",
            "Exposed tail",
            s.exposed_tail,
            ms,
            f"after the slowest rank's backward ends at {ms(s.last_backward_end)}",
        ),
        Readout(
            "overlap",
            "Overlap",
            100 * s.overlap_fraction,
            PERCENT,
            f"of transfer time runs before the last backward ends; {COUNT(r.n_buckets)} "
            f"bucket{'s' if r.n_buckets > 1 else ''}",
        ),
    ]


def buckets_readout(r: RanksResult) -> Readout:
    """Whose buckets every rank launches: one in iteration 0, then rank 0's."""
    spans = "; ".join(layer_span(b) for b in r.bucket_layers)
    if r.iteration == 0:
        note = (
            "iteration 0: one bucket, reduced after backward (DDP's default flags); the "
            "buckets are then rebuilt from rank 0's readiness order"
        )
    else:
        note = (
            f"rank 0's, broadcast to every rank after iteration 0 (Reducer::rebuild_buckets, "
            f"sync_bucket_indices): layers {spans}"
        )
        others = r.ranks_cutting_otherwise
        if others:
            own = r.own_buckets[others[0]]
            cut = "; ".join(
                layer_span(np.flatnonzero(own == b)[::-1] + 1) for b in range(int(own.max()) + 1)
            )
            note += f". Rank {others[0]}'s own order would have cut {cut}"
    return Readout("bucket_source", "Buckets every rank launches", r.n_buckets, COUNT, note)


def disagreement_readouts(d: Disagreement) -> list[Readout]:
    """Each readout shown when ranks disagree."""
    k = d.mismatch_index
    return [
        Readout(
            "matched",
            "Collectives every rank launched",
            d.matched,
            COUNT,
            f"then the sequences stop matching at collective {k}",
        ),
        Readout(
            "waiting",
            "Ranks waiting forever",
            len(d.waiting_ranks),
            COUNT,
            f"ranks {', '.join(map(str, d.waiting_ranks))} wait in collective {k} for "
            f"rank {d.skipping_rank}",
        ),
    ]


def readouts(r: RanksResult) -> list[Readout]:
    """The readouts of this result: a timeline's, or a disagreement's."""
    if r.schedule is None:
        return disagreement_readouts(r.disagreement)
    return timeline_readouts(r)


def readout_values(r: RanksResult) -> dict[str, tuple[str, str, str]]:
    """Label, value text and note of each readout of a timeline, by key."""
    return {x.key: (x.label, x.text, x.note) for x in timeline_readouts(r)}


def disagreement_values(d: Disagreement) -> dict[str, tuple[str, str, str]]:
    """Label, value text and note of each readout shown when ranks disagree, by key."""
    return {x.key: (x.label, x.text, x.note) for x in disagreement_readouts(d)}


def moment(r: RanksResult, t: float) -> str:
    """What the step is doing at time ``t`` (the playhead), in one sentence."""
    ms = MILLISECONDS
    s = r.schedule
    n = s.n_ranks
    end = s.optimizer_start + r.optimizer_ms
    if t >= end:
        return f"At {ms(t)}, the step is over."
    if t >= s.optimizer_start:
        return f"At {ms(t)}, the optimizer runs on every rank."
    busy = int(np.sum((s.backward_start <= t) & (t < s.backward_end)))
    on_link = np.flatnonzero((s.bucket_start <= t) & (t < s.bucket_end))
    link = f"the link carries bucket {on_link[0]}" if on_link.size else "the link is idle"
    ranks = f"{busy} of {n} rank{'s are' if n > 1 else ' is'} in backward"
    return f"At {ms(t)}, {ranks} and {link}."


def description(r: RanksResult, t: float = 0.0) -> str:
    """A text alternative of the chart at time ``t`` (or of the sequences, when ranks disagree)."""
    ms = MILLISECONDS
    if r.disagreement is not None:
        d = r.disagreement
        return (
            f"No timeline: rank {d.skipping_rank} never computes layer {d.skipped_layer}, so "
            f"it launches {d.matched} collective{'s' if d.matched != 1 else ''} and the other "
            f"ranks launch {r.n_buckets}. The sequences stop matching at collective "
            f"{d.mismatch_index}, and the job hangs there."
        )
    s = r.schedule
    fast = r.fastest_rank
    slow = int(np.argmax(s.backward_end))
    return (
        f"{moment(r, t)} "
        f"{s.n_ranks} rank{'s' if s.n_ranks > 1 else ''}, {r.n_buckets} bucket"
        f"{'s' if r.n_buckets > 1 else ''}. Readiness is defined by {runs(r.defining_ranks)}. "
        f"Rank {slow}'s backward ends last, at {ms(s.last_backward_end)}; the last "
        f"all-reduce completes at {ms(s.comm_end)} and the optimizer starts at "
        f"{ms(s.optimizer_start)}. Rank {fast} is idle for {ms(r.fastest_idle_ms)}. "
        f"The step takes {ms(r.step_time)}."
    )


def scenario_name(scenario: str, changed: list[str]) -> str:
    """``"Two partial stragglers"`` or ``"Two partial stragglers, changed: slowdown, seed"``."""
    return f"{scenario}, changed: {', '.join(changed)}" if changed else scenario
