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
from ..common.parsing import parse_setting
from ..model.timeline import Clock
from .model import RanksConfig
from .result import RanksResult, RanksSweep
from .state import RanksState

HERE = Path(__file__).resolve().parent


class RanksView(WidgetComponent):
    """One step on every drawn rank: readiness, events, idle waits, contention, disagreement."""

    widget_name = "ranks"
    settings_class = RanksConfig
    rules = RanksState()
    entry = HERE / "many_ranks.js"

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

    # -- the model's result ------------------------------------------------------------

    @property
    def result(self) -> RanksResult:
        """Every rank's step (or their disagreement) for the current settings."""
        return self.run.result

    @property
    def sweep(self) -> RanksSweep | None:
        """The sweep over layers per bucket (None when ranks disagree)."""
        return self.run.sweep
