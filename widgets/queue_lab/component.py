"""The fluid queue lab: predict, then run, a queue fed at one rate and drained at another."""

from __future__ import annotations

from pathlib import Path

from ..common.component import WidgetComponent
from ..common.state_numbers import state_numbers
from ..model.fluid_queue import FluidQueue, PredictionCheck
from ..model.timeline import Clock
from . import text

HERE = Path(__file__).resolve().parent

#: Wall-clock seconds per model second while playing.
SPEED = 1.0


class QueueLab(WidgetComponent):
    """The fluid queue lab: rates and initial items, Reset / Play / Step, predictions checked."""

    widget_name = "queue-lab"
    settings_class = FluidQueue
    entry = HERE / "queue_lab.js"
    #: The furthest model time this run has reached (a replay keeps the run's length).
    _reached = 0.0

    def make_clock(self) -> Clock:
        return self.settings.clock

    def reset_model(self) -> None:
        self.settings.reset()
        self._reached = 0.0

    def fit_to_model(self) -> None:
        clock = self.clock
        # The furthest this run has been: a replay from the start keeps its length.
        self._reached = max(self._reached, clock.now())
        horizon = self.settings.run_horizon(self._reached)
        if horizon != clock.horizon:
            clock.reanchor()
            clock.param.update(horizon=horizon, speed=SPEED, elapsed=min(clock.elapsed, horizon))

    def refresh_time(self) -> None:
        self.fit_to_model()  # a replay from the start keeps the run's length
        super().refresh_time()

    def time_state(self) -> dict:
        # The server's readouts at the paused time, and the run as long as it now is.
        return self.model_state()

    def model_state(self) -> dict:
        model, clock = self.settings, self.clock
        xs, ys = model.series.vertices(clock.horizon)
        starts = model.segment_starts[1:]
        seg = model.segment
        drain = model.drain()
        return {
            "horizon": clock.horizon,
            "run": {"x": state_numbers(xs), "y": state_numbers(ys)},
            "edits": {"x": state_numbers(starts), "y": state_numbers(model.length_at(starts))},
            "now": {"t": clock.now(), "length": model.length()},
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
        s = self.settings.series
        ends = [*s.start[1:].tolist(), self.clock.horizon]
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

    def describe(self) -> str:
        return text.description(self.settings, self.clock.now(), self.clock.horizon)


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
