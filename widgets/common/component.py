"""The base of every widget: one component that the browser draws from one compact state.

Python holds the widget's ``param`` settings and its clock, validates every
edit, runs the model and sends the result as typed numbers and small records;
the page (the widget's bundle, see :mod:`widgets.common.bundles`) draws the
chart, controls, readouts, description, data table, downloads and share bar.
The browser sends one message per action or edit and nothing while playing:
it animates the playhead itself from the anchor the server sent.

A concrete widget sets ``widget_name``, ``settings_class``, its ``rules`` (a
``WidgetState``: its settings' rules and its run, in its Panel-free ``state``
module) and its ``entry`` script (the bundle built beside it is served), and
declares the messages of its own controls (``own_actions``, ``data_messages``).
What the page draws is computed by the rules' run (``widgets.common.widget_state``),
never here: the export, the class-round files and the notebook widgets compute it
the same way. Every message from the page takes one path: ``_handle_msg`` reads it
as one request, asks the round lock, then does it.

The end of a run needs no timer: a playing clock's anchor carries the end's state
(``widget_state.anchor``) and the page shows it at the horizon, with or without a
server session (a notebook has none).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import param
from panel.custom import JSComponent

from ..common.parsing import parse_setting
from ..model.timeline import Clock
from .bundles import bundle_of
from .embed import embed_snippets
from .fields import field_names, field_specs
from .widget_state import Run, WidgetState, anchor, fitted_clock

#: The longest text an edit message may carry (a number is a few characters).
MAX_TEXT = 200
#: What every widget's page may ask for, ``{"action": name}``, and the method doing it;
#: a widget adds its own buttons' actions in ``own_actions``.
ACTIONS: dict[str, str] = {
    "reset": "_reset",
    "play": "_play",
    "pause": "_pause",
    "step": "_step",
    "embed": "_open_embed",
    "unembed": "_close_embed",
    "table": "_send_table",
}
#: The name a round lock knows every edit by (``{"edit": name, "text": text}``).
EDIT = "edit"
#: The synced properties a widget's page draws (``widgets/common/js/frame.js``), the
#: trace's upload status included: what a page without a Bokeh session is sent (a
#: notebook's widget, a served page's live session).
PAGE_PROPERTIES = (
    "fields",
    "values",
    "errors",
    "anchor",
    "state",
    "steady",
    "description",
    "notices",
    "share",
    "snippets",
    "message",
    "lock",
    "upload",
)


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
    #: This widget's own actions besides ``ACTIONS``: name -> the method doing it.
    own_actions: ClassVar[Mapping[str, str]] = {}
    #: Every action the page may ask for: ``ACTIONS`` and ``own_actions``.
    actions: ClassVar[Mapping[str, str]] = ACTIONS
    #: Messages that carry data, ``{key: value}``: key -> the method taking the value.
    data_messages: ClassVar[Mapping[str, str]] = {}
    #: Set on an instance that a class round locks: whether the round still allows a
    #: request (an action's name, ``EDIT``, or a data message's key).
    allowed_by_round: Callable[[str], bool] | None = None
    #: Keys of ``model_state`` that most edits leave as they were (lanes, a sweep's
    #: curve): sent apart, in ``steady``, so an edit that does not change them sends
    #: none of their bytes (an equal dict is not sent again).
    STEADY_KEYS: ClassVar[tuple[str, ...]] = ()
    settings_class: ClassVar[type[param.Parameterized]]
    #: The widget's settings rules and its run, without Panel (its ``state`` module).
    rules: ClassVar[WidgetState]
    #: The model's result for the current settings (set by ``fit_to_model``).
    run: Run
    #: The widget's entry script; Panel serves the bundle built beside it.
    entry: ClassVar[Path]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.actions = {**ACTIONS, **cls.own_actions}
        if "entry" in cls.__dict__:
            cls._bundle = bundle_of(cls.entry)

    def __init__(self, **settings: Any):
        super().__init__(sizing_mode="stretch_width", margin=0)
        self.settings = self.make_settings(**settings)
        self.clock = self.make_clock()
        self._revision = 0
        self._origin: str | None = None
        self._own_page = False
        self._embed_open = False
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
        """The settings object for these values (``rules.make``)."""
        made, self._url_notices = self.rules.make(**settings)
        return made

    def make_clock(self) -> Clock:
        """The widget's clock; by default a fresh one."""
        return Clock()

    def model_state(self) -> dict:
        """The model's result for the page now (``run.state``): numbers and small records.

        It holds ``table``: ``{"columns": [{"key", "label", "digits"?}], "rows": [...]}``,
        the chart's data as the accessible table and the CSV download show it; it is
        sent once the page asks for it (``act("table")``).
        """
        return self.run.state(self.clock.now())

    def describe(self) -> str:
        """A plain-text description of what the chart shows now (``run.description``)."""
        return self.run.description(self.clock.now())

    def reset_model(self) -> None:
        """What Reset does: the rules' reset of the settings, and the clock to zero."""
        self.rules.reset(self.settings)
        self.clock.reset()

    def fit_to_model(self) -> None:
        """Run the model for the settings and fit the clock to it (called before drawing)."""
        self.run = self.rules.run(self.settings, self._origin)
        fitted_clock(self.clock, self.run)

    # -- the messages the page sends ---------------------------------------------------

    def _handle_msg(self, msg: Any) -> None:
        """Panel's hook for a message from the page: :meth:`receive` does it."""
        self.receive(msg)

    def receive(self, msg: Any) -> None:
        """One message from the page, done if this widget knows it and the round allows it.

        A message is one request: ``{"action": name}`` for a name in ``actions``,
        ``{"edit": name, "text": text}`` for a control, or ``{key: value}`` for a
        key in ``data_messages``. Anything else is ignored: a page can do only what
        its own controls do.
        """
        request = self._request(msg)
        if request is None:
            return
        name, do = request
        if self.allowed_by_round is not None and not self.allowed_by_round(name):
            return  # kept by a class round (app.classroom.widget_page)
        do()

    def _request(self, msg: Any) -> tuple[str, Callable[[], None]] | None:
        """The request a message makes (its name for the lock, and what does it), or None."""
        if not isinstance(msg, Mapping):
            return None
        kinds = [k for k in ("action", "edit", *self.data_messages) if k in msg]
        if len(kinds) != 1:
            return None
        kind, value = kinds[0], msg[kinds[0]]
        if kind == "action":
            known = isinstance(value, str) and value in self.actions
            return (value, functools.partial(self.act, value)) if known else None
        if kind == "edit":
            text = msg.get("text")
            known = isinstance(value, str) and value in field_names(self.settings)
            if not (known and isinstance(text, str) and len(text) <= MAX_TEXT):
                return None
            return EDIT, functools.partial(self.edit, value, text)
        return kind, functools.partial(getattr(self, self.data_messages[kind]), value)

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
        loads = self.rules.choose(self.settings, name, value)  # redraws, errors included
        if loads is not None:
            self.apply(**loads)

    def act(self, action: str) -> None:
        """Do one of ``actions``: Reset, Play, Pause, Step, Embed and the widget's own."""
        getattr(self, self.actions[action])()

    def _send_table(self) -> None:
        self._table_wanted = True
        self.param.update(self._sendable(self._full_state))

    def _open_embed(self) -> None:
        if self._origin is None:
            return  # no share bar, so no Embed: nothing to write the snippets for
        self._embed_open = True
        self.snippets = self._snippets()

    def _close_embed(self) -> None:
        self._embed_open = False
        self.snippets = {}

    def _reset(self) -> None:
        self.reset_model()
        self._errors.clear()
        self.message = {}
        self.refresh()

    def _play(self) -> None:
        if self.clock.at_end:
            self.clock.reset()  # Play at the end of a run replays it from the start.
        self.clock.play()
        self.refresh_time()

    def _pause(self) -> None:
        self.clock.pause()
        self.refresh_time()

    def _step(self) -> None:
        self.clock.step()
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

    def _sendable(self, state: dict) -> dict[str, dict]:
        """The state as sent, ``state`` and ``steady``: the data table only once asked for."""
        self._full_state = state
        sent, steady = self.rules.split(
            {k: v for k, v in state.items() if self._table_wanted or k != "table"}
        )
        return {"state": sent, "steady": steady}

    @property
    def drawn_state(self) -> dict:
        """Everything the page draws from: ``steady`` and ``state`` together."""
        return {**self.steady, **self.state}

    def time_state(self) -> dict:
        """The part of ``model_state`` that follows the clock (none by default)."""
        return {}

    def anchor_state(self) -> dict:
        """The clock as the page animates it, read now (``widget_state.anchor``): while
        playing it carries the end's state; read after the end, it is the end's."""
        return {**anchor(self.clock, self.run), "revision": self._revision}

    def field_values(self) -> dict[str, str]:
        """Each control's value as its text."""
        return self.rules.values(self.settings)

    def state_now(self) -> dict[str, Any]:
        """What the page shows at this wall time, computed afresh from the settings and the
        clock (``state``, ``description``, ``anchor``): after the end of a played run,
        the end's, whether or not a server session ever said so."""
        t = self.clock.now()
        return {
            "state": self.run.state(t),
            "description": self.run.description(t),
            "anchor": anchor(self.clock, self.run),
        }

    # -- sharing -----------------------------------------------------------------------

    def settings_values(self) -> dict[str, object]:
        """The settings a link reproduces, by URL key (``rules.link_values``)."""
        return self.rules.link_values(self.settings)

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
        from ..registry import WIDGETS

        spec = WIDGETS[self.widget_name]
        values = spec.query_values(self.settings_values())
        return embed_snippets(self._origin, self.widget_name, spec.title, self.link(), values)

    def show_notices(self, notices: list[str]) -> None:
        """Show what the page ignored (bad URL keys, for example) above the widget, and the
        values the settings could not take (``rules.make``)."""
        self.notices = [*notices, *self._url_notices]

    # -- loading an experiment ---------------------------------------------------------

    def apply(self, note: str = "", **settings: Any) -> None:
        """Load these settings as a new experiment: set them, then Reset.

        ``note`` (what was loaded) is shown at the top of the widget.
        """
        # Not redrawn per setting: the Reset below redraws once, in one message.
        self.settings.param.unwatch(self._watcher)
        try:
            self.settings.param.update(self.rules.loaded(settings))
        finally:
            self._watcher = self.settings.param.watch(
                self._settings_changed, field_names(self.settings)
            )
        self.reset_model()
        self._errors.clear()
        self.message = {"text": note, "n": self.message.get("n", 0) + 1} if note else {}
        self.refresh()
