"""The one server-side timer of a widget: it redraws once when a played run reaches its end."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable

from panel.io.state import set_curdoc, state

from ..model.timeline import Clock


class RunEndTimer:
    """Calls ``on_end`` on the served page when the clock, playing, reaches its horizon."""

    def __init__(self, on_end: Callable[[], None]):
        self._on_end = on_end
        self._doc = None
        self._handle = None

    def schedule(self, clock: Clock) -> None:
        """Cancel the timer, and set it again if ``clock`` plays on a served page."""
        self.stop()
        doc = state.curdoc
        if not clock.playing or doc is None or doc.session_context is None:
            return
        ms = math.ceil(clock.wall_seconds_to_end() * 1000) + 20
        self._doc = doc
        self._handle = doc.add_timeout_callback(self._fire, ms)

    def _fire(self) -> None:
        self._handle = None
        with set_curdoc(self._doc):
            self._on_end()

    def stop(self) -> None:
        """Cancel the timer (nothing if it has fired or was never set)."""
        if self._handle is not None:
            with contextlib.suppress(ValueError):  # already fired or gone with the session
                self._doc.remove_timeout_callback(self._handle)
            self._handle = None
