"""What each widget's model gives a ``numbers`` block: how settings load, and the names.

One entry per widget: how an experiment's settings load into the widget's
state (a preset or scenario first resetting the rest, as its button does), the
state a widget directive starts from, and the names an expression may read
for one state. ``lessons.numbers`` documents the names for lesson authors.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from traces import error_pct, measure, summarize
from widgets.bucket_timeline.model import TimelineSettings
from widgets.many_ranks.model import RanksConfig, sweep_layers_per_bucket
from widgets.model import buckets
from widgets.model.fluid_queue import FluidQueue, Segment
from widgets.registry import WIDGETS
from widgets.trace_viewer.model import TraceViewConfig

BUCKETS, QUEUE, RANKS, TRACE = "bucket-timeline", "queue-lab", "ranks", "trace"


def apply_settings(widget: str, state: dict[str, object], settings: dict) -> dict[str, object]:
    """``state`` after loading ``settings`` as an experiment button does.

    A widget's named configuration (a bucket timeline ``preset``, a ranks
    ``scenario``) replaces every setting first; a uniform backward time or
    gradient size drops a preset's per-layer profile, as typing one does.
    """
    named = WIDGETS[widget].named
    if named is None:
        return {**state, **settings}
    return named.loaded(state, settings)


def start_state(widget: str, settings: dict[str, object]) -> dict[str, object]:
    """The model settings a widget directive with these settings starts from."""
    named = WIDGETS[widget].named
    if named is None:
        return dict(settings)
    return apply_settings(widget, {}, {named.key: named.default, **settings})


def names(widget: str, settings: dict[str, object]) -> dict[str, object]:
    """The names one state of ``widget`` offers to expressions."""
    table = {BUCKETS: _bucket_names, QUEUE: _queue_names, RANKS: _ranks_names, TRACE: _trace_names}
    return table[widget](settings)


def _bucket_names(settings: dict[str, object]) -> dict[str, object]:
    config = TimelineSettings(**settings)
    schedule = buckets.step_schedule(config)
    sweep = (
        buckets.sweep_byte_caps(config)
        if config.uses_byte_cap()
        else buckets.sweep_layers_per_bucket(config)
    )
    arrival, service = buckets.average_rates(config)
    values = {name: getattr(config, name) for name in config.param if name != "name"}
    values.update({f.name: getattr(schedule, f.name) for f in fields(schedule)})
    values.update(
        n_buckets=schedule.n_buckets,
        n_layers=schedule.n_layers,
        config=config,
        sweep=sweep,
        arrival_rate=arrival,
        service_rate=service,
        DDP_DEFAULT_CAP_MIB=buckets.DDP_DEFAULT_CAP_MIB,
        DDP_FIRST_BUCKET_MIB=buckets.DDP_FIRST_BUCKET_MIB,
        MB_PER_MIB=buckets.MB_PER_MIB,
        LATENCY_SHARE=buckets.LATENCY_SHARE,
    )
    return values


def _queue_names(settings: dict[str, object]) -> dict[str, object]:
    queue = FluidQueue(**settings)
    segment = Segment(0.0, queue.initial, queue.arrival, queue.service)
    return {
        "arrival": queue.arrival,
        "service": queue.service,
        "initial": queue.initial,
        "prediction_time": queue.prediction_time,
        "segment_start": segment.start,
        "net_rate": segment.net_rate,
        "drain_time": segment.drain_time,
        "trend": segment.trend,
        "length_at": lambda t: float(queue.length_at(t)),
        "edited": lambda t, **rates: _queue_names_after_edit(settings, t, rates),
    }


def _queue_names_after_edit(
    settings: dict[str, object], t: float, rates: dict[str, float]
) -> dict[str, object]:
    """The queue's names once a run has reached ``t`` and a rate was edited there, as a
    learner's edit does it: elapsed time kept, a new segment from the length at ``t``."""
    queue = FluidQueue(**settings)
    queue.clock.elapsed = float(t)
    queue.param.update(**rates)
    segment = queue.segment
    return _Names(
        arrival=queue.arrival,
        service=queue.service,
        segment_start=segment.start,
        segment_length=segment.length,
        net_rate=segment.net_rate,
        drain_time=segment.drain_time,
        trend=segment.trend,
        length_at=lambda u: float(queue.length_at(u)),
    )


class _Names(dict):
    """Names read as attributes (``edited(4, arrival=1).drain_time``)."""

    __getattr__ = dict.__getitem__


#: Properties of ``RankSchedule`` and of ``RanksResult`` (with a timeline) offered by name.
_SCHEDULE_PROPERTIES = (
    "n_ranks",
    "exposed_tail",
    "overlap_fraction",
    "last_backward_end",
    "bucket_link_wait",
    "bucket_duration_ms",
    "slowdown_ms",
)
_TIMELINE_PROPERTIES = (
    "fastest_rank",
    "fastest_idle_ms",
    "defining_ranks",
    "global_ready",
    "tied",
    "issue_to_completion",
    "peer_wait_ms",
    "ranks_cutting_otherwise",
)
_DISAGREEMENT_NAMES = ("matched", "waiting_ranks", "mismatch_index", "skipping_rank")


def _ranks_names(settings: dict[str, object]) -> dict[str, object]:
    config = RanksConfig(**settings)
    result = config.result()
    values = {name: getattr(config, name) for name in config.param if name != "name"}
    values.update(config=config, result=result, skipped_layer=config.skipped_layer())
    schedule, disagreement = result.schedule, result.disagreement
    if schedule is not None:
        # A setting keeps its name (the schedule holds contention per rank, for one).
        values.update(
            {f.name: getattr(schedule, f.name) for f in fields(schedule) if f.name not in values}
        )
        values.update({name: getattr(schedule, name) for name in _SCHEDULE_PROPERTIES})
        values.update({name: getattr(result, name) for name in _TIMELINE_PROPERTIES})
        values.update(schedule=schedule, sweep=sweep_layers_per_bucket(config))
    else:
        values.update({name: getattr(disagreement, name) for name in _DISAGREEMENT_NAMES})
        values.update(disagreement=disagreement)
    # The result's fields last: the buckets as drawn (the step time is the result's).
    values.update({f.name: getattr(result, f.name) for f in fields(result)})
    values.update(n_buckets=result.n_buckets, step_time=result.step_time)
    return values


def _trace_names(settings: dict[str, object]) -> dict[str, object]:
    config = TraceViewConfig(**settings)
    result = config.result()
    m = measure(result.trace)
    pick = result.iteration

    def shown(values) -> float:
        return summarize(values).median if pick is None else float(values[pick])

    values = {name: getattr(config, name) for name in config.param if name != "name"}
    predicted = result.prediction.quantities
    values.update(
        config=config,
        result=result,
        measured=result.measured,
        predicted=predicted,
        error_pct={q: error_pct(predicted[q], result.measured[q]) for q in predicted},
        compute_end=shown(m.compute_end_ms),
        predicted_compute_end=result.prediction.compute_end_ms,
        fit=result.fit,
        backward_total=float(sum(result.fit.backward_ms)),
        what_if=result.what_if,
        defining_rank=result.defining_rank,
        defining_counts=result.defining_counts,
        late_rank=result.late_rank,
        late_counts=np.bincount(m.late_rank, minlength=result.n_ranks),
        late_defines=(m.bucket_defining_rank == m.late_rank[:, None]).sum(axis=0),
        start_skew=-m.backward_start.min(axis=1),
        n_buckets=result.n_buckets,
        n_ranks=result.n_ranks,
        n_iterations=result.trace.n_iterations,
        other_load=result.trace.other_load,
        metadata=result.trace.metadata,
    )
    return values
