"""Many ranks without Panel: settings and the clock to what its page draws.

``RanksState`` holds the settings' rules (a scenario loads as a new experiment);
``RanksRun`` runs every rank's schedule (or finds where ranks disagree) and the
sweep over bucket sizes once per settings object and draws any moment of it. The
settings object is passed through to the model as it is, so a setting the model
gains needs nothing here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import param

from ..common.formatting import layer_span
from ..common.state_numbers import state_number, state_numbers, state_rows
from ..common.widget_state import Run, WidgetState, drawn, nice_step
from ..model.timeline import Clock
from . import text
from .model import SCENARIOS, RanksConfig, sweep_layers_per_bucket
from .result import RanksResult

#: Wall-clock seconds one played step takes, whatever its length in ms.
PLAY_SECONDS = 10.0
#: The clock's run when ranks disagree (there is no step to play).
NO_TIMELINE_MS = 1.0


class RanksState(WidgetState):
    """Many ranks' settings rules: a scenario loads its settings as a new experiment."""

    settings_class = RanksConfig
    NAMED_KEY = "scenario"

    def make(self, scenario: str | None = None, **settings: Any) -> tuple[RanksConfig, list]:
        return SCENARIOS.load(scenario, **settings), []

    def loaded(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        return SCENARIOS.loaded({}, settings)

    def choose(self, settings: param.Parameterized, name: str, value: Any) -> dict | None:
        if name == "scenario":
            return {"scenario": value}
        settings.param.update({name: value})
        return None

    def link_values(self, settings: param.Parameterized) -> dict[str, object]:
        """What a link carries: the scenario and only the settings changed from it."""
        return SCENARIOS.link_values(settings)

    def run(self, settings: param.Parameterized, origin: str | None = None) -> RanksRun:
        return RanksRun(settings)


class RanksRun(Run):
    """Every drawn rank's step (or their disagreement) and the sweep, at any moment."""

    def __init__(self, settings: param.Parameterized):
        self.settings = settings
        r = self.result = settings.result()
        if r.schedule is None:
            self.sweep = None
            self.horizon = NO_TIMELINE_MS
        else:
            self.sweep = sweep_layers_per_bucket(settings)
            self.horizon = r.schedule.optimizer_start + r.optimizer_ms
        self.speed = self.horizon / PLAY_SECONDS
        self.step = nice_step(self.horizon / 16)
        self._state = self._build_state()

    def state(self, t: float = 0.0) -> dict:
        return self._state

    def description(self, t: float) -> str:
        return text.description(self.result, t)

    def _build_state(self) -> dict:
        r = self.result
        name = self.settings.scenario
        state = {
            "scenario": {
                "name": name,
                "description": SCENARIOS.description(name),
                "changed": SCENARIOS.changed(self.settings),
                "title": text.scenario_name(name, SCENARIOS.changed_labels(self.settings)),
            },
            "timed": r.schedule is not None,
            "horizon": float(self.horizon),
            "readouts": [x.record() for x in text.readouts(r)],
            "buckets": {
                "layers": [layer_span(x) for x in r.bucket_layers],
                "count": [len(x) for x in r.bucket_layers],
                "size_mb": state_numbers(r.bucket_size_mb),
            },
            "timeline": None,
            "sweep": None,
            "disagreement": None,
        }
        if r.schedule is None:
            state["disagreement"] = _disagreement(r)
        else:
            state["timeline"] = _timeline(r)
            state["sweep"] = self._sweep_state()
        state["table"] = _table(r)
        return state

    def _sweep_state(self) -> dict:
        sw = self.sweep
        best = sw.best_index
        return {
            "layers_per_bucket": [int(k) for k in sw.setting],
            "n_buckets": [int(n) for n in sw.n_buckets],
            "step_ms": state_numbers(sw.step_time),
            "overlap_pct": state_numbers(100 * sw.overlap_fraction),
            "current": min(self.settings.layers_per_bucket, self.settings.n_layers),
            "current_step_ms": state_number(self.result.step_time),
            "best": int(sw.setting[best]),
            "best_step_ms": state_number(sw.step_time[best]),
        }


def ranks_state(settings: param.Parameterized, clock: Clock) -> dict[str, Any]:
    """What the Many ranks page draws for ``settings`` at ``clock``'s time.

    ``{"state", "description", "anchor"}``; the clock is read as it is (a component
    fits its horizon, speed and Step to the run first).
    """
    return drawn(RanksRun(settings), clock)


def _timeline(r: RanksResult) -> dict:
    """Every bar and event of the step, as plain arrays (rank 0 first)."""
    s = r.schedule
    order = [int(x) for x in s.order]
    return {
        "n_ranks": int(s.n_ranks),
        "n_buckets": int(s.n_buckets),
        # Layers in the order backward computes them; per rank, when each starts and ends.
        "layers": [x + 1 for x in order],
        "layer_bucket": [int(s.layer_bucket[x]) for x in order],
        "layer_start": [state_numbers(s.layer_start[rank, order]) for rank in range(s.n_ranks)],
        "layer_end": [state_numbers(s.layer_ready[rank, order]) for rank in range(s.n_ranks)],
        "backward_start": state_numbers(s.backward_start),
        "backward_end": state_numbers(s.backward_end),
        "last_backward_end": state_number(s.last_backward_end),
        "bucket_ready": state_rows(s.bucket_ready),
        "bucket_launch": state_rows(s.bucket_launch),
        "defines": [[bool(x) for x in row] for row in r.defining_mask],
        "defining_rank": [int(x) for x in r.defining_ranks],
        "tied": [bool(x) for x in r.tied],
        "bucket_start": state_numbers(s.bucket_start),
        "bucket_end": state_numbers(s.bucket_end),
        "ready_everywhere": state_numbers(r.global_ready),
        "link_wait": state_numbers(s.bucket_link_wait),
        "comm_end": state_number(s.comm_end),
        "optimizer_start": state_number(s.optimizer_start),
        "optimizer_end": state_number(s.optimizer_start + r.optimizer_ms),
        "idle": state_numbers(s.idle_ms),
    }


def _disagreement(r: RanksResult) -> dict:
    """Each rank's launched collectives, where they stop matching, and why."""
    d = r.disagreement
    return {
        "sequences": [[c.bucket for c in seq] for seq in d.sequences],
        "mismatch": int(d.mismatch_index),
        "skipping_rank": int(d.skipping_rank),
        "skipped_layer": int(d.skipped_layer),
        "waiting_ranks": [int(x) for x in d.waiting_ranks],
        "outcome": d.outcome(),
        "fix": d.fix(),
    }


TIMELINE_COLUMNS = [
    {"key": "lane", "label": "Lane"},
    {"key": "kind", "label": "Mark"},
    {"key": "bucket", "label": "Bucket"},
    {"key": "layer", "label": "Layer"},
    {"key": "start_ms", "label": "Start (ms)", "digits": 2},
    {"key": "end_ms", "label": "End (ms)", "digits": 2},
    {"key": "slowed_ms", "label": "Slowed by transfers (ms)", "digits": 2},
    {"key": "defines", "label": "Defines the bucket"},
    {"key": "size_mb", "label": "Size (MB)", "digits": 1},
    {"key": "launched_everywhere_ms", "label": "Launched everywhere (ms)", "digits": 2},
    {"key": "defining_rank", "label": "Defining rank"},
    {"key": "tied", "label": "Tied"},
    {"key": "link_wait_ms", "label": "Link wait (ms)", "digits": 2},
]
SEQUENCE_COLUMNS = [
    {"key": "rank", "label": "Rank"},
    {"key": "collective", "label": "Collective (in launch order)"},
    {"key": "bucket", "label": "Bucket"},
    {"key": "size_mb", "label": "Size (MB)", "digits": 1},
    {"key": "launched", "label": "Launched"},
]


def _table(r: RanksResult) -> dict:
    """Every bar's and bucket's numbers: the chart's data as the page's table and CSV."""
    if r.schedule is None:
        d = r.disagreement
        rows = [
            [x, position, position, state_number(r.bucket_size_mb[position]), position < len(seq)]
            for x, seq in enumerate(d.sequences)
            for position in range(r.n_buckets)
        ]
        return {
            "caption": "Each rank's all-reduces in the order it launches them; they stop "
            f"matching at collective {d.mismatch_index}.",
            "columns": SEQUENCE_COLUMNS,
            "rows": rows,
        }
    s = r.schedule
    none = [None] * 5

    def rank_row(rank, kind, bucket, layer, start, end, slowed=None, defines=None):
        return [
            f"Rank {rank}",
            kind,
            bucket,
            layer,
            state_number(start),
            state_number(end),
            slowed,
            defines,
        ]

    rows = []
    for rank in range(s.n_ranks):
        for x in s.order:
            start, end = float(s.layer_start[rank, x]), float(s.layer_ready[rank, x])
            slowed = state_number(max(0.0, end - start - float(s.backward_ms[rank, x])))
            bucket = int(s.layer_bucket[x])
            rows.append(rank_row(rank, "backward", bucket, int(x) + 1, start, end, slowed) + none)
        for b in range(s.n_buckets):
            # A bucket on one rank: ready there, then launched (in bucket-index order).
            defines = bool(r.defining_mask[rank, b])
            rows.append(
                rank_row(
                    rank,
                    "bucket",
                    b,
                    None,
                    s.bucket_ready[rank, b],
                    s.bucket_launch[rank, b],
                    defines=defines,
                )
                + none
            )
        if s.idle_ms[rank] > 1e-9 * max(1.0, s.optimizer_start):
            idle = rank_row(rank, "idle", None, None, s.backward_end[rank], s.optimizer_start)
            rows.append(idle + none)
        end = s.optimizer_start + r.optimizer_ms
        rows.append(rank_row(rank, "optimizer", None, None, s.optimizer_start, end) + none)
    launched = s.bucket_launch.max(axis=0)
    for b in range(s.n_buckets):
        rows.append(
            [
                "Link",
                "transfer",
                b,
                None,
                state_number(s.bucket_start[b]),
                state_number(s.bucket_end[b]),
                None,
                None,
                state_number(r.bucket_size_mb[b]),
                state_number(launched[b]),
                int(r.defining_ranks[b]),
                bool(r.tied[b]),
                state_number(s.bucket_link_wait[b]),
            ]
        )
    return {
        "caption": "Every bar of the step: each rank's layers (backward), each bucket on each "
        "rank from ready to launched, idle waits and the optimizer; then each bucket's "
        "transfer on the link with its size, when every rank had launched it, the rank "
        "that launched it last, and how long it waited for the link. Times in ms from the "
        "start of backward.",
        "columns": TIMELINE_COLUMNS,
        "rows": rows,
    }
