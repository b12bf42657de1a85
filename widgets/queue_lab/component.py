"""The fluid queue lab: predict, then run, a queue fed at one rate and drained at another.

What the page draws is computed in ``state`` (no Panel there); this component
holds the queue, its clock and the run's length so far.
"""

from __future__ import annotations

from pathlib import Path

from ..common.component import WidgetComponent
from ..model.fluid_queue import FluidQueue
from ..model.timeline import Clock
from .state import QueueRun, QueueState, fit_queue_clock

HERE = Path(__file__).resolve().parent


class QueueLab(WidgetComponent):
    """The fluid queue lab: rates and initial items, Reset / Play / Step, predictions checked."""

    widget_name = "queue-lab"
    settings_class = FluidQueue
    rules = QueueState()
    entry = HERE / "queue_lab.js"
    #: The furthest model time this run has reached (a replay keeps the run's length).
    _reached = 0.0

    def make_clock(self) -> Clock:
        return self.settings.clock

    def reset_model(self) -> None:
        super().reset_model()
        self._reached = 0.0

    def fit_to_model(self) -> None:
        # The furthest this run has been: a replay from the start keeps its length.
        self._reached = max(self._reached, self.clock.now())
        fit_queue_clock(self.settings, self._reached)
        self.run = QueueRun(self.settings)

    def refresh_time(self) -> None:
        self.fit_to_model()  # a replay from the start keeps the run's length
        super().refresh_time()

    def time_state(self) -> dict:
        # The server's readouts at the paused time, and the run as long as it now is.
        return self.model_state()
