"""The base of every widget: one component that the browser draws from one compact state.

Python holds the widget's ``param`` settings and its clock, validates every
edit, runs the model and sends the result as typed numbers and small records;
the page (the widget's bundle, see :mod:`widgets.common.bundles`) draws the
chart, controls, readouts, description, data table, downloads and share bar.
The browser sends one message per action or edit and nothing while playing:
it animates the playhead itself from the anchor the server sent.

A concrete widget sets ``widget_name``, ``settings_class`` and its bundle, and
implements ``model_state`` and ``describe``.
"""

from __future__ import annotations

import contextlib
import html
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import param
from panel.custom import JSComponent
from panel.io.state import set_curdoc, state

from ..common.parsing import parse_setting
from ..model.settings import setting_names
from ..model.timeline import Clock
from .fields import field_names, field_specs, value_text

#: The longest text an edit message may carry (a number is a few characters).
MAX_TEXT = 200
ACTIONS = ("reset", "play", "pause", "step", "embed", "unembed", "table")


class WidgetComponent(JSComponent):
    """One widget: its settings, clock and model result, drawn by the page."""

    fields = param.List(default=[], doc="Every control, as the page draws it (sent once).")
    values = param.Dict(default={}, doc="Each control's value, as the text it shows.")
    errors = param.Dict(default={}, doc="A message for each control whose last text was refused.")
    anchor = param.Dict(default={}, doc="The clock's anchor: elapsed, playing, speed, horizon.")
    state = param.Dict(default={}, doc="The model's result, as the page draws it.")
    steady = param.Dict(
        default={}, doc="The parts of the result that few settings change (``STEADY_KEYS``)."
    )
    description = param.String(default="", doc="The chart's text description (when paused).")
    notices = param.List(default=[], doc="What the page ignored, shown above the widget.")
    share = param.Dict(default={}, doc="The link to these settings; empty when not shared.")
    snippets = param.Dict(default={}, doc="Iframe and script-tag snippets while Embed is open.")
    message = param.Dict(
        default={}, doc="What an experiment just loaded: its text, and a count of loads."
    )
    lock = param.String(
        default="", doc="Why the settings are locked (a class round); empty: they are not."
    )

    widget_name: ClassVar[str]
    #: Set on an instance that a class round locks: True for a page message it refuses.
    message_lock: Callable[[Mapping], bool] | None = None
    #: Keys of ``model_state`` that most edits leave as they were (lanes, a sweep's
    #: curve): sent apart, in ``steady``, so an edit that does not change them sends
    #: none of their bytes (an equal dict is not sent again).
    STEADY_KEYS: ClassVar[tuple[str, ...]] = ()
    settings_class: ClassVar[type[param.Parameterized]]
    entry: ClassVar[Path]

    def __init__(self, **settings: Any):
        super().__init__(sizing_mode="stretch_width", margin=0)
        self.settings = self.make_settings(**settings)
        self.clock = self.make_clock()
        self._revision = 0
        self._origin: str | None = None
        self._own_page = False
        self._embed_open = False
        self._end_timer: _Timeout | None = None
        self._errors: dict[str, str] = {}
        # The chart's data table is sent once the page asks for it (the table opened,
        # or CSV downloaded): most learners never do, and an edit is then smaller.
        self._table_wanted = False
        self._full_state: dict = {}
        self.fields = field_specs(self.settings)
        self._watcher = self.settings.param.watch(
            self._settings_changed, field_names(self.settings)
        )
        self.refresh()

    # -- what a concrete widget provides ---------------------------------------------

    def make_settings(self, **settings: Any) -> param.Parameterized:
        """The settings object; by default the settings class with these values."""
        return self.settings_class(**settings)

    def make_clock(self) -> Clock:
        """The widget's clock; by default a fresh one."""
        return Clock()

    def model_state(self) -> dict:
        """The model's result for the page: numbers, lists of numbers, small records.

        It must hold ``table``: ``{"columns": [{"key", "label", "digits"?}], "rows": [...]}``,
        the chart's data as the accessible table and the CSV download show it; it is
        sent once the page asks for it (``act("table")``).
        """
        raise NotImplementedError

    def describe(self) -> str:
        """A plain-text description of what the chart shows now (from the model)."""
        raise NotImplementedError

    def reset_model(self) -> None:
        """What Reset does besides the clock (by default, only the clock)."""
        self.clock.reset()

    def fit_to_model(self) -> None:
        """Set the clock's horizon and speed for the model's result (called before drawing)."""

    # -- the messages the page sends ---------------------------------------------------

    def _handle_msg(self, msg: Any) -> None:
        """One message from the page: ``{"action": name}`` or ``{"edit": name, "text": text}``.

        Anything else, or a name that is not this widget's, is ignored: a page
        can do only what its own controls do.
        """
        if not isinstance(msg, Mapping):
            return
        if self.message_lock is not None and self.message_lock(msg):
            return  # locked by a class round (app.classroom.widget_page)
        action, name, text = msg.get("action"), msg.get("edit"), msg.get("text")
        if action in ACTIONS:
            self.act(action)
        elif (
            isinstance(name, str)
            and name in field_names(self.settings)
            and isinstance(text, str)
            and len(text) <= MAX_TEXT
        ):
            self.edit(name, text)

    def edit(self, name: str, text: str) -> None:
        """A learner typed ``text`` into the control of ``name`` (and pressed Enter).

        A refused text leaves the setting and the drawn state as they were and
        puts the message under the field.
        """
        p = self.settings.param[name]
        try:
            value = parse_setting(text, p)
        except ValueError as exc:
            self._errors[name] = str(exc)
            self.errors = dict(self._errors)
            return
        self._errors.pop(name, None)
        if value == getattr(self.settings, name):
            self.errors = dict(self._errors)
            return
        self.settings.param.update({name: value})  # redraws, errors included, in one message

    def act(self, action: str) -> None:
        """Reset, Play, Pause, Step, or open or close Embed."""
        if action == "table":
            self._table_wanted = True
            self.param.update(self._sendable(self._full_state))
            return
        if action == "embed" or action == "unembed":
            self._embed_open = action == "embed"
            self.snippets = self._snippets() if self._embed_open else {}
            return
        clock = self.clock
        if action == "reset":
            self.reset_model()
            self._errors.clear()
            self.message = {}
            self.refresh()
            return
        if action == "play":
            if clock.at_end:
                # Play at the end of a run replays it from the start.
                clock.reset()
            clock.play()
        elif action == "pause":
            clock.pause()
        elif action == "step":
            clock.step()
        self.refresh_time()

    # -- redrawing ---------------------------------------------------------------------

    def _settings_changed(self, *events: param.parameterized.Event) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Run the model and send everything that follows from it in one message."""
        self.fit_to_model()
        self._revision += 1
        changes: dict[str, Any] = {
            **self._sendable(self.model_state()),
            "values": self.field_values(),
            "errors": dict(self._errors),
            "description": self.describe(),
            "anchor": self.anchor_state(),
        }
        if self._origin is not None:
            changes["share"] = self._share()
            if self._embed_open:
                changes["snippets"] = self._snippets()
        self.param.update(changes)
        self._schedule_end()

    def refresh_time(self) -> None:
        """After Play, Pause or Step: only the clock moved, so send the anchor and the words.

        The model's result does not depend on the clock and is not sent again (a
        widget whose state does holds that part in ``time_state``): the reply to
        Play is small and arrives before the page starts animating.
        """
        self._revision += 1
        changes: dict[str, Any] = {"description": self.describe(), "anchor": self.anchor_state()}
        moment = self.time_state()
        if moment:
            changes.update(self._sendable({**self._full_state, **moment}))
        self.param.update(changes)
        self._schedule_end()

    def _sendable(self, state: dict) -> dict[str, dict]:
        """The state as sent, ``state`` and ``steady``: the data table only once asked for."""
        self._full_state = state
        sent = {k: v for k, v in state.items() if self._table_wanted or k != "table"}
        steady = {k: sent.pop(k) for k in self.STEADY_KEYS if k in sent}
        return {"state": sent, "steady": steady}

    @property
    def drawn_state(self) -> dict:
        """Everything the page draws from: ``steady`` and ``state`` together."""
        return {**self.steady, **self.state}

    def time_state(self) -> dict:
        """The part of ``model_state`` that follows the clock (none by default)."""
        return {}

    def anchor_state(self) -> dict:
        """The clock as the page animates it (elapsed at this instant, so no wall times cross)."""
        c = self.clock
        return {
            "elapsed": c.now(),
            "playing": bool(c.playing and not c.at_end),
            "speed": c.speed,
            "horizon": c.horizon,
            "step": c.step_size,
            "revision": self._revision,
        }

    def fit_clock(self, horizon: float, play_seconds: float) -> None:
        """Make one run last ``horizon`` of model time and ``play_seconds`` of wall time.

        Elapsed time is kept (clipped to the new horizon); Step moves a 1-2-5
        sixteenth of the run.
        """
        self.clock.reanchor()
        with param.parameterized.batch_call_watchers(self.clock):
            self.clock.param.update(
                horizon=horizon,
                speed=horizon / play_seconds,
                step_size=nice_step(horizon / 16),
                elapsed=min(self.clock.elapsed, horizon),
            )

    def field_values(self) -> dict[str, str]:
        """Each control's value as its text."""
        return {n: value_text(getattr(self.settings, n)) for n in field_names(self.settings)}

    # -- the end of a run: the one server-side timer -----------------------------------

    def _schedule_end(self) -> None:
        if self._end_timer is not None:
            self._end_timer.stop()
            self._end_timer = None
        doc = state.curdoc
        if not self.clock.playing or doc is None or doc.session_context is None:
            return
        ms = math.ceil(self.clock.wall_seconds_to_end() * 1000) + 20
        self._end_timer = _Timeout(doc, self._run_ended, ms)

    def _run_ended(self) -> None:
        self._end_timer = None
        self.clock.reanchor()
        self.refresh_time()

    # -- sharing -----------------------------------------------------------------------

    def settings_values(self) -> dict[str, object]:
        """The settings a link reproduces, by URL key."""
        return {name: getattr(self.settings, name) for name in setting_names(self.settings)}

    def enable_share(self, origin: str, own_page: bool = False) -> None:
        """Show Copy link and Embed for a server reached at ``origin``.

        On the widget's own page (``own_page``) the address bar follows the settings.
        """
        self._origin, self._own_page = origin, own_page
        self.share = self._share()

    def query(self) -> str:
        """The settings as a URL query (``arrival=4&service=3``)."""
        from ..registry import WIDGETS

        return WIDGETS[self.widget_name].query_string(self.settings_values())

    def link(self) -> str:
        """A link to this widget with these settings."""
        query = self.query()
        return f"{self._origin}/{self.widget_name}" + (f"?{query}" if query else "")

    def _share(self) -> dict:
        return {"link": self.link(), "query": self.query(), "own_page": self._own_page}

    def _snippets(self) -> dict:
        from bokeh.embed import server_document

        from ..registry import WIDGETS

        spec = WIDGETS[self.widget_name]
        values = spec.query_values(self.settings_values())
        url = self.link()
        host_origin = self._origin.split("/", 3)
        origin = "/".join(host_origin[:3])
        iframe = (
            f'<iframe src="{html.escape(url)}" title="{html.escape(spec.title)}" '
            'data-overlap-lab style="width:100%;height:900px;border:0" loading="lazy"></iframe>\n'
            "<script>/* overlap-lab: the frame takes the height its page reports */\n"
            'addEventListener("message", function (e) {\n'
            f'  if (e.origin !== "{origin}" || !e.data || e.data.type !== "overlap-lab:height") '
            "return;\n"
            '  document.querySelectorAll("iframe[data-overlap-lab]").forEach(function (f) {\n'
            '    if (f.contentWindow === e.source) f.style.height = e.data.height + "px";\n'
            "  });\n"
            "});\n</script>"
        )
        script = server_document(f"{self._origin}/{self.widget_name}", arguments=values).strip()
        return {"iframe": iframe, "script": script}

    def show_notices(self, notices: list[str]) -> None:
        """Show what the page ignored (bad URL keys, for example) above the widget."""
        self.notices = list(notices)

    # -- loading an experiment ---------------------------------------------------------

    def apply(self, note: str = "", **settings: Any) -> None:
        """Load these settings as a new experiment: set them, then Reset.

        ``note`` (what was loaded) is shown at the top of the widget.
        """
        # Not redrawn per setting: the Reset below redraws once, in one message.
        self.settings.param.unwatch(self._watcher)
        try:
            self.settings.param.update(settings)
        finally:
            self._watcher = self.settings.param.watch(
                self._settings_changed, field_names(self.settings)
            )
        self.reset_model()
        self._errors.clear()
        self.message = {"text": note, "n": self.message.get("n", 0) + 1} if note else {}
        self.refresh()


class _Timeout:
    """A one-shot timeout on a served document that ``stop()`` cancels outright."""

    def __init__(self, doc, callback: Callable[[], None], ms: int):
        self._doc, self._callback = doc, callback
        self._handle = doc.add_timeout_callback(self._fire, ms)

    def _fire(self) -> None:
        self._handle = None
        with set_curdoc(self._doc):
            self._callback()

    def stop(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(ValueError):  # already fired or gone with the session
                self._doc.remove_timeout_callback(self._handle)
            self._handle = None


def nice_step(x: float) -> float:
    """The 1-2-5 number nearest below ``x`` (0.5 ms, 1 ms, 2 ms...)."""
    exp = math.floor(math.log10(x))
    base = x / 10**exp
    nice = 5 if base >= 5 else 2 if base >= 2 else 1
    return float(nice * 10**exp)
