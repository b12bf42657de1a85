"""The shared numeric timeline model: one clock and the arrays a timeline is drawn from.

The clock never ticks. While playing, elapsed time is a closed-form function of
wall time from an anchor, so a browser can animate it at display rate from the
same three numbers (anchor, speed, horizon) the server holds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import param


class Clock(param.Parameterized):
    """Model time for one widget: play, pause, step and reset, nothing ticking.

    ``elapsed`` is model time at the anchor. While ``playing`` the current time is
    ``elapsed + speed * (wall - anchor_wall)``, clipped to ``horizon``.
    """

    elapsed = param.Number(default=0.0, bounds=(0, None), doc="Model time at the anchor.")
    playing = param.Boolean(default=False, doc="Whether model time advances with wall time.")
    speed = param.Number(
        default=1.0, bounds=(1e-6, None), doc="Model time units per wall-clock second."
    )
    step_size = param.Number(default=0.5, bounds=(1e-12, None), doc="Model time one Step adds.")
    horizon = param.Number(
        default=10.0, bounds=(1e-12, None), doc="Model time at which a run ends."
    )
    anchor_wall = param.Number(
        default=0.0, doc="Wall-clock seconds at which ``elapsed`` was last anchored."
    )

    def __init__(self, wall_clock: Callable[[], float] = time.monotonic, **params):
        super().__init__(**params)
        self._wall_clock = wall_clock

    def time_at(self, wall: float) -> float:
        """Model time at a given wall-clock reading."""
        if not self.playing:
            return self.elapsed
        return min(self.horizon, self.elapsed + self.speed * max(0.0, wall - self.anchor_wall))

    def now(self) -> float:
        """Model time now."""
        return self.time_at(self._wall_clock())

    @property
    def at_end(self) -> bool:
        """Whether the run has reached the horizon."""
        return self.now() >= self.horizon

    def wall_seconds_to_end(self) -> float:
        """Wall-clock seconds until a playing clock reaches the horizon."""
        return max(0.0, (self.horizon - self.now()) / self.speed)

    def retimed(self, horizon: float, speed: float, step_size: float) -> Clock:
        """A clock with this one's anchor (elapsed, playing, wall time and wall clock) that
        times another run: its horizon, speed and Step (elapsed clipped to the horizon)."""
        return Clock(
            wall_clock=self._wall_clock,
            elapsed=min(self.elapsed, horizon),
            playing=self.playing,
            anchor_wall=self.anchor_wall,
            horizon=horizon,
            speed=speed,
            step_size=step_size,
        )

    def reanchor(self) -> None:
        """Fold the time played so far into ``elapsed`` and anchor at this instant.

        Done before anything that changes what the timeline means (an edit while
        playing), so that elapsed time never jumps.
        """
        wall = self._wall_clock()
        with param.parameterized.batch_call_watchers(self):
            self.elapsed = self.time_at(wall)
            self.anchor_wall = wall
            if self.elapsed >= self.horizon:
                self.playing = False

    def play(self) -> None:
        """Start advancing with wall time; does nothing at the horizon."""
        if self.playing or self.elapsed >= self.horizon:
            return
        with param.parameterized.batch_call_watchers(self):
            self.anchor_wall = self._wall_clock()
            self.playing = True

    def pause(self) -> None:
        """Stop at the current model time."""
        if not self.playing:
            return
        with param.parameterized.batch_call_watchers(self):
            self.elapsed = self.now()
            self.playing = False

    def step(self) -> None:
        """Pause if playing, then advance by exactly ``step_size`` (up to the horizon)."""
        with param.parameterized.batch_call_watchers(self):
            self.pause()
            self.elapsed = min(self.horizon, self.elapsed + self.step_size)

    def reset(self) -> None:
        """Pause and return to time zero."""
        with param.parameterized.batch_call_watchers(self):
            self.playing = False
            self.elapsed = 0.0
            self.anchor_wall = self._wall_clock()


@dataclass(frozen=True)
class PiecewiseLinearSeries:
    """A continuous series of linear segments, each held at or above a floor.

    Segment k starts at ``start[k]`` with value ``value[k]`` and changes at
    ``slope[k]``; the value is ``max(floor[k], value[k] + slope[k] * (t - start[k]))``
    until the next segment starts.
    """

    start: np.ndarray
    value: np.ndarray
    slope: np.ndarray
    floor: np.ndarray

    @classmethod
    def single(
        cls, start: float, value: float, slope: float, floor: float = -np.inf
    ) -> PiecewiseLinearSeries:
        """A series of one segment."""
        return cls(
            np.array([start], float),
            np.array([value], float),
            np.array([slope], float),
            np.array([floor], float),
        )

    def __len__(self) -> int:
        return len(self.start)

    def at(self, t: np.typing.ArrayLike) -> np.ndarray:
        """Values at times ``t`` (any shape); before the first segment it is the first."""
        t = np.asarray(t, dtype=float)
        k = np.clip(np.searchsorted(self.start, t, side="right") - 1, 0, len(self) - 1)
        raw = self.value[k] + self.slope[k] * (t - self.start[k])
        return np.maximum(self.floor[k], raw)

    def split_at(self, t: float, slope: float) -> PiecewiseLinearSeries:
        """End the segment running at ``t`` there and start one with ``slope``.

        Segments starting after ``t`` are dropped: a new segment replaces the
        future. The new segment starts from the series' own value at ``t``, so
        the series stays continuous.
        """
        keep = self.start < t
        value_at_t = float(self.at(t))
        floor = self.floor[-1]
        return PiecewiseLinearSeries(
            np.append(self.start[keep], t),
            np.append(self.value[keep], value_at_t),
            np.append(self.slope[keep], slope),
            np.append(self.floor[keep], floor),
        )

    def vertices(self, until: float) -> tuple[np.ndarray, np.ndarray]:
        """The exact polyline of the series from its first start to ``until``.

        Includes each segment start, each point where a segment reaches its
        floor, and the end, so linear interpolation between vertices is exact.
        """
        if until <= self.start[0]:
            return np.array([self.start[0]]), np.array([self.value[0]])
        ends = np.append(self.start[1:], np.inf)
        live = self.start < until
        s, v, m, f = self.start[live], self.value[live], self.slope[live], self.floor[live]
        e = np.minimum(ends[live], until)
        # A falling segment reaches its floor, a rising one held below it leaves it:
        # either way the kink is at s + (f - v) / m.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            hit = np.where(((m < 0) & (v > f)) | ((m > 0) & (v < f)), s + (f - v) / m, np.inf)
        has_hit = (hit > s) & (hit < e)
        # For each segment: its start, its floor hit (if strictly inside), its end.
        ts = np.stack([s, np.where(has_hit, hit, np.nan), e], axis=1).ravel()
        ts = np.unique(ts[~np.isnan(ts)])
        return ts, self.at(ts)


@dataclass(frozen=True)
class Intervals:
    """Labelled intervals on named lanes, as parallel numpy arrays."""

    start: np.ndarray
    end: np.ndarray
    lane: np.ndarray
    label: np.ndarray
    kind: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.start)
        if not all(len(a) == n for a in (self.end, self.lane, self.label, self.kind)):
            raise ValueError("all interval arrays must have the same length")
        if np.any(np.asarray(self.end) < np.asarray(self.start)):
            raise ValueError("an interval ends before it starts")

    def __len__(self) -> int:
        return len(self.start)

    def revealed(self, t: float) -> Intervals:
        """The intervals as far as they have happened by time ``t`` (see ``revealed_spans``)."""
        keep, end = revealed_spans(self.start, self.end, t)
        return Intervals(self.start[keep], end, self.lane[keep], self.label[keep], self.kind[keep])


# ---------------------------------------------------------------------------
# The reveal rule: what a playhead at time t shows. The browser's copy of these
# three rules (parts/playhead_rules.js) is checked against them in Chromium.
# ---------------------------------------------------------------------------


def revealed_polyline(
    x: np.typing.ArrayLike, y: np.typing.ArrayLike, t: float
) -> tuple[np.ndarray, np.ndarray]:
    """The part of a polyline up to time ``t``, ending exactly at ``t``.

    Vertices strictly before ``t`` are kept and one vertex is added at ``t``
    (interpolated, held at the ends); before the first vertex nothing shows.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) == 0 or t < x[0]:
        return np.array([]), np.array([])
    keep = x < t
    return np.append(x[keep], t), np.append(y[keep], np.interp(t, x, y))


def revealed_points(x: np.typing.ArrayLike, t: float) -> np.ndarray:
    """Which points have been reached by time ``t`` (``x <= t``)."""
    return np.asarray(x, float) <= t


def revealed_spans(
    start: np.typing.ArrayLike, end: np.typing.ArrayLike, t: float
) -> tuple[np.ndarray, np.ndarray]:
    """Which spans have begun by ``t`` (``start < t``) and their ends cut at ``t``."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    keep = start < t
    return keep, np.minimum(end[keep], t)
