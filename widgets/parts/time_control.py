"""Reset, Play/Pause and Step for a clock: the one time control every widget uses."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import panel as pn
from panel.io.state import set_curdoc

from ..model.timeline import Clock

# ``source`` is the button's own model: passing the button in ``args`` would make
# Panel's class-level callback registry (weak keys, strong values) keep it alive.
_REFOCUS_JS = """
const btn = source;
if (!btn.__pressed) return;
// The redraw may land some frames later on a busy machine: keep trying for about a second.
let frames = 0;
const refocus = () => {
  const active = document.activeElement;
  if (active !== null && active !== document.body) return;
  const view = Bokeh.index.find_one(btn);
  if (view && view.button_el && view.button_el.isConnected) view.button_el.focus();
  if (++frames < 60) requestAnimationFrame(refocus);
};
requestAnimationFrame(refocus);
"""


class _Timeout:
    """A one-shot timeout on a served document that ``stop()`` cancels outright.

    A stopped periodic callback keeps its pending sleep, and through it the
    whole session, alive until its period ends; a cancelled timeout does not.
    """

    def __init__(self, doc, callback: Callable[[], None], ms: int):
        self._doc, self._callback = doc, callback
        self._handle = doc.add_timeout_callback(self._fire, ms)

    def _fire(self) -> None:
        self._handle = None
        with set_curdoc(self._doc):
            self._callback()

    def stop(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(ValueError):  # already fired or removed with the session
                self._doc.remove_timeout_callback(self._handle)
            self._handle = None


class TimeControl(pn.viewable.Viewer):
    """Three buttons driving a :class:`Clock`.

    ``on_reset`` resets whatever the widget's model holds besides the clock;
    ``on_change`` runs after every action so the widget can redraw once. The
    only server-side timer is one timeout at the horizon, so that Play turns
    back into Play when the run ends by itself.
    """

    def __init__(
        self,
        clock: Clock,
        on_change: Callable[[], None],
        on_reset: Callable[[], None] | None = None,
        on_time: Callable[[], None] | None = None,
    ):
        super().__init__()
        self.clock = clock
        self._on_change = on_change
        self._on_reset = on_reset or clock.reset
        # Play, Pause, Step and the end of a run move only the clock: a widget may
        # answer them without redrawing its model (``on_time``).
        self._on_time = on_time or on_change
        self._end_timer = None
        self.reset_button = pn.widgets.Button(label="Reset", color="default", width=90)
        self.play_button = pn.widgets.Button(label="Play", color="primary", width=90)
        self.step_button = pn.widgets.Button(label="Step", color="default", width=90)
        # Bokeh redraws a button whose label changes, which drops keyboard focus;
        # give it back when nothing else took it, so Space toggles Play/Pause.
        self.play_button.js_on_click(code="source.__pressed = true;")
        self.play_button.jscallback(label=_REFOCUS_JS)
        self.reset_button.on_click(lambda _: self.reset())
        self.play_button.on_click(lambda _: self.toggle())
        self.step_button.on_click(lambda _: self.step())
        self.sync()

    def toggle(self) -> None:
        """Play if paused, pause if playing."""
        if self.clock.playing:
            self.clock.pause()
        else:
            self.clock.play()
        self._after(self._on_time)

    def step(self) -> None:
        """Advance by one step of model time."""
        self.clock.step()
        self._after(self._on_time)

    def reset(self) -> None:
        """Back to time zero."""
        self._on_reset()
        self._after(self._on_change)

    def _after(self, redraw: Callable[[], None]) -> None:
        self.sync()
        redraw()

    def sync(self) -> None:
        """Match the buttons and the end-of-run timer to the clock."""
        if self.clock.playing and self.clock.at_end:
            self.clock.pause()
        playing = self.clock.playing
        self.play_button.label = "Pause" if playing else "Play"
        self.play_button.color = "warning" if playing else "primary"
        at_end = self.clock.elapsed >= self.clock.horizon and not playing
        self.play_button.disabled = at_end
        self.step_button.disabled = at_end
        self._schedule_end()

    def _schedule_end(self) -> None:
        if self._end_timer is not None:
            self._end_timer.stop()
            self._end_timer = None
        if not self.clock.playing:
            return
        ms = max(1, int(self.clock.wall_seconds_to_end() * 1000) + 1)
        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            self._end_timer = _Timeout(doc, self._reached_end, ms)
            return
        try:
            self._end_timer = pn.state.add_periodic_callback(self._reached_end, period=ms, count=1)
        except RuntimeError:
            self._end_timer = None  # no event loop (plain Python): nothing to stop

    def _reached_end(self) -> None:
        self._end_timer = None
        self.clock.pause()
        self._after(self._on_time)

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Row(
            self.reset_button,
            self.play_button,
            self.step_button,
            margin=(5, 0),
            css_classes=["ol-time-control"],
        )
