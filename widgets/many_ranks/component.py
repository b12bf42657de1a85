"""Many ranks: every drawn rank's backward, the link, and each bucket's events.

The bucket timeline draws one merged rank; this view draws each rank with its
own readiness, marks which rank defined each bucket's readiness, shows each
fast rank's idle wait, what a timer around the all-reduce call measures, and
how contention can make a busier overlap slower (a sweep over bucket sizes).
When ranks disagree on which collectives run there is no timeline: the page
shows each rank's sequence of collectives instead.

A scenario is a named configuration: choosing one loads its settings as a new
experiment. The scenario's name stays in view with what was changed since
(``"Jitter, changed: seed"``), and a link carries the scenario and only the
settings that differ from it.
"""

from __future__ import annotations

from pathlib import Path

from ..common.component import WidgetComponent
from ..common.formatting import layer_span
from ..common.parsing import parse_setting
from ..common.state_numbers import state_number, state_numbers, state_rows
from ..model.timeline import Clock
from . import text
from .model import SCENARIOS, RanksConfig, sweep_layers_per_bucket
from .result import RanksResult

HERE = Path(__file__).resolve().parent

#: Wall-clock seconds one played step takes, whatever its length in ms.
PLAY_SECONDS = 10.0
#: The clock's run when ranks disagree (there is no step to play).
NO_TIMELINE_MS = 1.0


class RanksView(WidgetComponent):
    """One step on every drawn rank: readiness, events, idle waits, contention, disagreement."""

    widget_name = "ranks"
    settings_class = RanksConfig
    entry = HERE / "many_ranks.js"

    def make_settings(self, scenario: str | None = None, **settings) -> RanksConfig:
        return SCENARIOS.load(scenario, **settings)

    def make_clock(self) -> Clock:
        return Clock(horizon=1.0, step_size=1.0)

    # -- scenarios -------------------------------------------------------------------

    def edit(self, name: str, text: str) -> None:
        """A typed value; choosing a scenario loads its settings as a new experiment."""
        if name != "scenario":
            super().edit(name, text)
            return
        try:
            value = parse_setting(text, self.settings.param.scenario)
        except ValueError as exc:
            self._errors[name] = str(exc)
            self.errors = dict(self._errors)
            return
        self._errors.pop(name, None)
        self.apply(scenario=value)

    def apply(self, note: str = "", **settings) -> None:
        """Load a scenario's settings (if one is given), then these, as a new experiment."""
        super().apply(note=note, **SCENARIOS.loaded({}, settings))

    def settings_values(self) -> dict[str, object]:
        """What a link carries: the scenario and only the settings changed from it."""
        return SCENARIOS.link_values(self.settings)

    # -- the model's result ------------------------------------------------------------

    def fit_to_model(self) -> None:
        r = self.result = self.settings.result()
        if r.schedule is None:
            self.sweep = None
            self.fit_clock(NO_TIMELINE_MS, PLAY_SECONDS)
        else:
            self.sweep = sweep_layers_per_bucket(self.settings)
            self.fit_clock(r.schedule.optimizer_start + r.optimizer_ms, PLAY_SECONDS)
        self._state = self._build_state()

    def model_state(self) -> dict:
        return self._state

    def describe(self) -> str:
        return text.description(self.result, self.clock.now())

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
            "horizon": float(self.clock.horizon),
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
