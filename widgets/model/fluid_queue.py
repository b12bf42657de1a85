"""The fluid queue: an average-pressure picture of traffic meeting a link.

Items arrive at ``arrival`` per second and are served at ``service`` per second;
the queue length is continuous and never negative. Each edit of a rate ends the
running segment and starts a new one from the current state, so elapsed time
never jumps and the formula always restarts from where the queue is now.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import param

from .settings import entry, setting
from .timeline import Clock, PiecewiseLinearSeries

RATE_BOUNDS = (0.0, 1000.0)
#: The longest run when the learner sets no run length (s).
LONGEST_RUN = 20.0


@dataclass(frozen=True)
class Segment:
    """The running segment: ``q(t) = max(0, length + (arrival - service) * (t - start))``."""

    start: float
    length: float
    arrival: float
    service: float

    @property
    def net_rate(self) -> float:
        """Growth per second (negative while draining)."""
        return self.arrival - self.service

    @property
    def drain_time(self) -> float | None:
        """When this segment empties the queue, or None if it never does."""
        if self.length <= 0 and self.net_rate <= 0:
            return self.start
        if self.net_rate < 0:
            return self.start + self.length / -self.net_rate
        return None

    @property
    def trend(self) -> str:
        """``"drains"``, ``"grows"`` or ``"constant"``."""
        if self.net_rate < 0:
            return "drains"
        if self.net_rate > 0:
            return "grows"
        return "constant"


class DrainStatus(StrEnum):
    """Whether and how the run's queue drains, as the rates now stand."""

    DRAINS = "drains"  # it empties at ``Drain.time``, within the run
    AFTER_THE_RUN = "drains after the run"  # it is draining, but empties after the horizon
    GROWS_FROM_EMPTY = "grows from empty"  # it starts empty and grows: it never drains
    NEVER = "never drains"  # it grows or holds steady above empty


@dataclass(frozen=True)
class Drain:
    """When the run's queue drains (``time``), or why it does not.

    ``time`` is the drain time for ``DRAINS``, the time it would drain for
    ``AFTER_THE_RUN``, and None otherwise.
    """

    status: DrainStatus
    time: float | None


@dataclass(frozen=True)
class PredictionCheck:
    """A prediction beside what the run does, and the model time it is checked at."""

    predicted: float
    actual: float | None
    check_at: float

    @property
    def error(self) -> float | None:
        """Actual minus predicted, or None when the event did not happen."""
        return None if self.actual is None else self.actual - self.predicted

    def close(self, tolerance: float = 0.05) -> bool:
        """Whether the prediction is within ``tolerance`` (relative, at least 0.05 absolute)."""
        if self.actual is None:
            return False
        return abs(self.actual - self.predicted) <= max(0.05, tolerance * abs(self.actual))


class FluidQueue(param.Parameterized):
    """A fluid queue on a clock: segments, edits that keep time, Reset, predictions."""

    arrival = param.Number(
        default=2.0,
        bounds=RATE_BOUNDS,
        label="Arrival rate",
        doc="Items that arrive per second.",
        metadata=setting("items/s"),
    )
    service = param.Number(
        default=3.0,
        bounds=RATE_BOUNDS,
        label="Service rate",
        doc="Items the link can serve per second.",
        metadata=setting("items/s"),
    )
    initial = param.Number(
        default=4.0,
        bounds=(0.0, 100000.0),
        label="Initial items",
        doc="Queue length at time zero; a change after time zero applies at the next Reset.",
        metadata=setting("items"),
    )
    duration = param.Number(
        default=None,
        allow_None=True,
        bounds=(1.0, 1000.0),
        label="Run length",
        doc="How long a run lasts, in seconds; empty: until a little after the queue empties.",
        metadata=setting("s", hint="1 to 1000 s; empty: ends soon after the queue empties."),
    )
    predicted_drain_time = param.Number(
        default=None,
        allow_None=True,
        bounds=(0.0, 100000.0),
        label="Predicted drain time",
        doc="Your prediction of when the queue first empties, in seconds.",
        metadata=entry("s", hint="Seconds; checked when the queue empties."),
    )
    prediction_time = param.Number(
        default=None,
        allow_None=True,
        bounds=(0.0, 100000.0),
        label="Prediction time",
        doc="The time at which you predict the queue length, in seconds.",
        metadata=entry("s", hint="Seconds from 0."),
    )
    predicted_length = param.Number(
        default=None,
        allow_None=True,
        bounds=(0.0, 1e9),
        label="Predicted length",
        doc="Your prediction of the queue length at the prediction time, in items.",
        metadata=entry("items", hint="Items at that time."),
    )

    def __init__(self, clock: Clock | None = None, **params):
        super().__init__(**params)
        self.clock = clock if clock is not None else Clock(horizon=20.0, step_size=0.5)
        self.series = self._fresh_series()
        self.initial_pending = False

    def _fresh_series(self) -> PiecewiseLinearSeries:
        return PiecewiseLinearSeries.single(0.0, self.initial, self.arrival - self.service, 0.0)

    @param.depends("arrival", "service", watch=True)
    def _rates_changed(self) -> None:
        self.clock.reanchor()
        self.series = self.series.split_at(self.clock.elapsed, self.arrival - self.service)

    @param.depends("initial", watch=True)
    def _initial_changed(self) -> None:
        if self.clock.now() == 0.0:
            self.series = self._fresh_series()
            self.initial_pending = False
        else:
            self.initial_pending = True

    def reset(self) -> None:
        """Time zero, the queue at its initial items, history and checked prediction cleared."""
        self.clock.reset()
        self.series = self._fresh_series()
        self.initial_pending = False
        self.param.update(predicted_drain_time=None, prediction_time=None, predicted_length=None)

    def length_at(self, t: np.typing.ArrayLike) -> np.ndarray:
        """Queue length at times ``t`` (vectorised)."""
        return self.series.at(t)

    def length(self) -> float:
        """Queue length now."""
        return float(self.series.at(self.clock.now()))

    @property
    def segment(self) -> Segment:
        """The running segment (the last one)."""
        s = self.series
        return Segment(float(s.start[-1]), float(s.value[-1]), self.arrival, self.service)

    @property
    def segment_starts(self) -> np.ndarray:
        """Start time of every segment of this run."""
        return self.series.start.copy()

    def first_empty_time(self) -> float | None:
        """The first time in this run (as the rates now stand) the queue drains, if any.

        The queue drains at t when it is empty at t and either held items just
        before t (it emptied) or stays empty just after t (nothing is growing it).
        A queue that starts empty and grows at once is empty only at that instant:
        it has not drained, and it never will while it grows.
        """
        ts, qs = self.series.vertices(self.clock.horizon)
        # A floor hit computed as s + q / rate can come out a rounding error above 0.
        empty = qs <= 1e-12 * max(1.0, float(qs.max()))
        for i in np.flatnonzero(empty):
            emptied = i > 0 and not empty[i - 1]
            k = np.searchsorted(self.series.start, ts[i], side="right") - 1
            stays_empty = self.series.slope[max(k, 0)] <= 0.0
            if emptied or stays_empty:
                return float(ts[i])
        return None

    def drain(self) -> Drain:
        """Whether the run's queue drains, when, or why not (see ``DrainStatus``)."""
        t = self.first_empty_time()
        if t is not None:
            return Drain(DrainStatus.DRAINS, t)
        seg = self.segment
        if seg.net_rate < 0:
            return Drain(DrainStatus.AFTER_THE_RUN, seg.drain_time)
        if seg.net_rate > 0 and seg.length <= 0.0:
            return Drain(DrainStatus.GROWS_FROM_EMPTY, None)
        return Drain(DrainStatus.NEVER, None)

    def drain_check(self) -> PredictionCheck | None:
        """The drain-time prediction and the run's drain time (checked when it happens)."""
        if self.predicted_drain_time is None:
            return None
        actual = self.first_empty_time()
        check_at = self.clock.horizon if actual is None else actual
        return PredictionCheck(self.predicted_drain_time, actual, check_at)

    def length_check(self) -> PredictionCheck | None:
        """The queue-length prediction and the run's length at the prediction time."""
        if self.prediction_time is None or self.predicted_length is None:
            return None
        t = self.prediction_time
        actual = float(self.series.at(t)) if t <= self.clock.horizon else None
        return PredictionCheck(self.predicted_length, actual, min(t, self.clock.horizon))

    def run_horizon(self, reached: float = 0.0) -> float:
        """When the run ends: the run length the learner set, else a little after the queue
        empties for good (a quarter of that time, at least 1 s, in whole seconds) and after
        a predicted length's time, at most ``LONGEST_RUN``. Never before ``reached`` (the
        furthest the run has been): an edit or a replay does not cut a run short.
        """
        if self.duration is not None:
            return max(self.duration, reached)
        seg = self.segment
        empty = seg.drain_time
        if empty is None or empty >= LONGEST_RUN:
            return max(LONGEST_RUN, reached)
        end = float(np.ceil(empty + max(1.0, 0.25 * empty)))
        if self.prediction_time is not None:
            end = max(end, float(np.ceil(self.prediction_time)) + 1.0)
        return max(min(LONGEST_RUN, end), reached)

    def checked(self, check: PredictionCheck | None) -> bool:
        """Whether the run has reached the point where ``check`` is decided."""
        return check is not None and self.clock.now() >= check.check_at
