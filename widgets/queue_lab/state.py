"""The fluid queue lab without Panel: the queue and its clock to what its page draws.

The queue lab's settings object is the queue itself (``FluidQueue``): it keeps
the run's history (each edit starts a segment) on its own clock, so its state
follows that clock: the readouts ``now`` are the queue at the clock's time.
"""

from __future__ import annotations

from typing import Any

import param

from ..common.state_numbers import state_numbers
from ..common.widget_state import Run, WidgetState, drawn
from ..model.fluid_queue import FluidQueue, PredictionCheck
from ..model.timeline import Clock
from . import text

#: Wall-clock seconds per model second while playing.
SPEED = 1.0


class QueueState(WidgetState):
    """The queue lab's settings rules: Reset also clears the run and the checked prediction."""

    settings_class = FluidQueue

    def reset(self, settings: param.Parameterized) -> None:
        settings.reset()

    def run(self, settings: param.Parameterized, origin: str | None = None) -> QueueRun:
        """A fresh run's result (its clock fitted to the run's length, nothing reached yet)."""
        fit_queue_clock(settings)
        return QueueRun(settings)


def fit_queue_clock(model: FluidQueue, reached: float = 0.0) -> None:
    """Give the queue's clock the run's length: ``run_horizon(reached)``, at ``SPEED``.

    Elapsed time is kept (clipped); ``reached`` is the furthest the run has been, so
    a replay from the start keeps the run's length.
    """
    clock = model.clock
    horizon = model.run_horizon(reached)
    if horizon != clock.horizon:
        clock.reanchor()
        clock.param.update(horizon=horizon, speed=SPEED, elapsed=min(clock.elapsed, horizon))


class QueueRun(Run):
    """The queue's run as it stands, drawn at any time of its clock."""

    MOMENT_KEYS = ("now",)

    def __init__(self, model: FluidQueue):
        self.model = model
        self.horizon = model.clock.horizon
        self.speed = model.clock.speed
        self.step = model.clock.step_size

    def state(self, t: float) -> dict:
        model = self.model
        xs, ys = model.series.vertices(self.horizon)
        starts = model.segment_starts[1:]
        seg = model.segment
        drain = model.drain()
        return {
            "horizon": self.horizon,
            "run": {"x": state_numbers(xs), "y": state_numbers(ys)},
            "edits": {"x": state_numbers(starts), "y": state_numbers(model.length_at(starts))},
            "now": {"t": t, "length": float(model.length_at(t))},
            "segment": {
                "start": seg.start,
                "length": seg.length,
                "arrival": seg.arrival,
                "service": seg.service,
                "net": seg.net_rate,
                "trend": seg.trend,
            },
            "drain_check": _check(model.drain_check(), text.never_drains(drain)),
            "length_check": _check(model.length_check(), text.NOT_REACHED),
            "initial_pending": model.initial if model.initial_pending else None,
            # The length question is asked while the queue grows, and kept while it holds one.
            "ask_length": seg.trend == "grows"
            or model.prediction_time is not None
            or model.predicted_length is not None,
            "table": self._table(),
        }

    def _table(self) -> dict:
        s = self.model.series
        ends = [*s.start[1:].tolist(), self.horizon]
        return {
            "caption": "Each segment of the run: where it starts, its length then, its net rate.",
            "columns": [
                {"key": "segment_start_s", "label": "Segment start (s)", "digits": 2},
                {"key": "segment_end_s", "label": "Segment end (s)", "digits": 2},
                {"key": "length_at_start_items", "label": "Length at start (items)", "digits": 2},
                {"key": "net_rate_items_per_s", "label": "Net rate (items/s)", "digits": 2},
            ],
            "rows": [
                [float(a), float(b), float(v), float(m)]
                for a, b, v, m in zip(s.start, ends, s.value, s.slope, strict=True)
            ],
        }

    def description(self, t: float) -> str:
        return text.description(self.model, t, self.horizon)


def _check(check: PredictionCheck | None, missing: str) -> dict | None:
    """A prediction and its outcome as the page shows it (checked once the run reaches ``at``)."""
    if check is None:
        return None
    return {
        "predicted": check.predicted,
        "actual": check.actual,
        "at": check.check_at,
        "error": check.error,
        "close": check.close(),
        "missing": missing,
    }


def queue_lab_state(model: FluidQueue, clock: Clock | None = None) -> dict[str, Any]:
    """What the queue lab's page draws for the queue at its clock's time.

    ``{"state", "description", "anchor"}``. The queue's history follows its own clock
    (``clock``, if given, must be it), which is first given the run's length as it
    stands at that time (``fit_queue_clock``), as the component does on every redraw.
    """
    if clock is not None and clock is not model.clock:
        raise ValueError("the queue lab's state follows the queue's own clock")
    fit_queue_clock(model, model.clock.now())
    return drawn(QueueRun(model), model.clock)
