"""A widget without Panel: its settings' rules, and what its page draws at any moment.

Each widget's ``state`` module defines a ``WidgetState`` (how its settings are
made, loaded, edited and linked) and a ``Run`` (the model's result for one
settings object, with the clock's fit: horizon, speed and Step). The page's
state at a moment is a function of the run and the clock's anchor
(:func:`drawn`): the Panel component, the static export, the class-round files
and the notebook widgets all call it, so there is one copy of the logic.

The end of a run is a property of the state, never a timer: while the clock
plays, the anchor carries ``end``, what the page shows once the run reaches
its horizon (the description, and the parts of the state that follow the
clock), and a clock read after the end reads the end (``Clock.time_at`` is
clamped to the horizon).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import param

from ..model.settings import setting_names
from ..model.timeline import Clock
from .fields import field_names, field_specs, value_text
from .parsing import parse_setting


class Run:
    """The model's result for one settings object: what the page draws at model time ``t``."""

    #: Model time at which a run ends.
    horizon: float
    #: Model time per wall-clock second while playing.
    speed: float
    #: Model time one Step adds.
    step: float
    #: Keys of ``state(t)`` that follow the clock (most widgets: none).
    MOMENT_KEYS: ClassVar[tuple[str, ...]] = ()

    def state(self, t: float) -> dict:
        """The model's result as the page draws it at model time ``t`` (with ``table``)."""
        raise NotImplementedError

    def description(self, t: float) -> str:
        """What the chart shows at model time ``t``, in plain sentences."""
        raise NotImplementedError

    def end(self) -> dict:
        """What the page shows once a played run reaches its horizon."""
        moment = self.state(self.horizon) if self.MOMENT_KEYS else {}
        return {
            "description": self.description(self.horizon),
            "state": {k: moment[k] for k in self.MOMENT_KEYS},
        }


class WidgetState:
    """One widget's settings rules, without Panel (a widget's ``state`` module subclasses it)."""

    settings_class: ClassVar[type[param.Parameterized]]
    #: Keys of the state that most edits leave as they were: the page receives them apart.
    STEADY_KEYS: ClassVar[tuple[str, ...]] = ()
    #: The setting that names a configuration (``preset``): choosing it always loads it.
    NAMED_KEY: ClassVar[str | None] = None

    def make(self, **settings: Any) -> tuple[param.Parameterized, list[str]]:
        """The settings object for these values, and notices for values it could not take."""
        return self.settings_class(**settings), []

    def loaded(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """What loading ``settings`` as an experiment sets (a named configuration expanded)."""
        return dict(settings)

    def choose(self, settings: param.Parameterized, name: str, value: Any) -> dict | None:
        """Set one parsed value as an edit does; or return the values it loads as a new
        experiment (a named configuration), for ``apply``, without setting anything."""
        settings.param.update({name: value})
        return None

    def reset(self, settings: param.Parameterized) -> None:
        """What Reset does to the settings (by default nothing: the clock is apart)."""

    def link_values(self, settings: param.Parameterized) -> dict[str, object]:
        """The settings a link reproduces, by URL key."""
        return {name: getattr(settings, name) for name in setting_names(settings)}

    def run(self, settings: param.Parameterized, origin: str | None = None) -> Run:
        """The model's result for these settings (``origin``: the server's, for links)."""
        raise NotImplementedError

    def extra(self, settings: param.Parameterized) -> dict[str, Any]:
        """Synced values besides the common ones, as a fresh page has them (none by default)."""
        return {}

    # -- what every widget does the same way ---------------------------------------------

    def edit(self, settings: param.Parameterized, name: str, text: str) -> None:
        """A typed ``text`` for ``name``, as a page's edit does (a named configuration is
        loaded as a new experiment). Raises ValueError, with the control's message, for a
        text the setting refuses."""
        value = parse_setting(text, settings.param[name])
        if value == getattr(settings, name) and name != self.NAMED_KEY:
            return
        loads = self.choose(settings, name, value)
        if loads is not None:
            self.apply(settings, **loads)

    def apply(self, settings: param.Parameterized, **values: Any) -> None:
        """Load ``values`` as a new experiment: set them, then Reset."""
        settings.param.update(self.loaded(values))
        self.reset(settings)

    def fields(self, settings: param.Parameterized) -> list[dict]:
        """Every control, as the page draws it."""
        return field_specs(settings)

    def values(self, settings: param.Parameterized) -> dict[str, str]:
        """Each control's value as its text."""
        return {n: value_text(getattr(settings, n)) for n in field_names(settings)}

    def split(self, state: dict) -> tuple[dict, dict]:
        """The state as sent: (``state`` without the steady keys, ``steady``)."""
        sent = dict(state)
        steady = {k: sent.pop(k) for k in self.STEADY_KEYS if k in sent}
        return sent, steady


def fitted_clock(clock: Clock, run: Run) -> None:
    """Make ``clock`` time ``run``: its horizon, speed and Step (elapsed kept, clipped)."""
    clock.reanchor()
    with param.parameterized.batch_call_watchers(clock):
        clock.param.update(
            horizon=run.horizon,
            speed=run.speed,
            step_size=run.step,
            elapsed=min(clock.elapsed, run.horizon),
        )


def on_run(clock: Clock, run: Run) -> Clock:
    """``clock`` timing ``run``: itself when it has the run's horizon, speed and Step, else
    a copy that does (the same anchor: elapsed, playing, wall time), so that only the
    anchor is taken from a clock and the run's length from the settings."""
    if (clock.horizon, clock.speed, clock.step_size) == (run.horizon, run.speed, run.step):
        return clock
    return Clock(
        wall_clock=clock._wall_clock,
        elapsed=min(clock.elapsed, run.horizon),
        playing=clock.playing,
        anchor_wall=clock.anchor_wall,
        horizon=run.horizon,
        speed=run.speed,
        step_size=run.step,
    )


def anchor(clock: Clock, run: Run | None = None) -> dict[str, Any]:
    """The clock as the page animates it, read now (so no wall times cross).

    A playing clock's anchor carries ``end`` (``run.end()``): what the page shows at
    the horizon, so no message is needed when the run ends. Read after the end, the
    anchor is the end's: elapsed at the horizon, not playing.
    """
    if run is not None:
        clock = on_run(clock, run)
    t = clock.now()
    playing = bool(clock.playing and t < clock.horizon)
    out: dict[str, Any] = {
        "elapsed": t,
        "playing": playing,
        "speed": clock.speed,
        "horizon": clock.horizon,
        "step": clock.step_size,
    }
    if playing and run is not None:
        out["end"] = run.end()
    return out


def drawn(run: Run, clock: Clock) -> dict[str, Any]:
    """What the page draws now: the state at the clock's time, its description, the anchor.

    The run gives the horizon, speed and Step; the clock only its anchor (``on_run``).
    """
    clock = on_run(clock, run)
    t = clock.now()
    return {"state": run.state(t), "description": run.description(t), "anchor": anchor(clock, run)}


def nice_step(x: float) -> float:
    """The 1-2-5 number nearest below ``x`` (0.5 ms, 1 ms, 2 ms...)."""
    exp = math.floor(math.log10(x))
    base = x / 10**exp
    nice = 5 if base >= 5 else 2 if base >= 2 else 1
    return float(nice * 10**exp)
