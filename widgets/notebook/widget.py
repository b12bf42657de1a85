"""A widget as a notebook output: an ``anywidget.AnyWidget`` over one widget's state.

Every host that renders anywidget (JupyterLab, Notebook 7, VS Code, Colab, marimo)
draws it with no server extension and nothing fetched: the page's script is the
committed bundle ``notebook.bundle.js`` (every widget and the shared library),
sent with the widget. The page draws from the same synced properties a served
page does and sends the same messages; Python answers them through
:class:`~widgets.notebook.state_source.NotebookState`.

Each setting (and prediction) is a trait of the same name, in both directions:
``w.arrival = 5`` redraws the page, and an edit in the page sets ``w.arrival``. A
value the page would refuse raises ``traitlets.TraitError`` with the page's message,
which the widget also shows under its control; the setting keeps its value.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any, ClassVar

import anywidget
import traitlets

from ..common.fields import field_names, value_text
from ..registry import WIDGETS
from .saved_copy import with_saved_copy_note
from .state_source import PROPERTIES, NotebookState

#: The page's script: the anywidget module drawing every widget (built by
#: ``python -m widgets.common.bundles --build``).
BUNDLE = Path(__file__).resolve().parent / "notebook.bundle.js"
#: Slack after a run's end before its end is drawn, as the served page's timer.
END_SLACK_S = 0.02


class SettingTrait(traitlets.Any):
    """A widget setting as a trait: a value the page would refuse raises its message."""

    def validate(self, obj: Any, value: Any) -> Any:
        if isinstance(obj, NotebookWidget):
            return obj.checked(self.name, value)
        return value


class NotebookWidget(anywidget.AnyWidget):
    """One widget in a notebook; subclasses name it (``widget_name``)."""

    _esm = BUNDLE
    widget = traitlets.Unicode("").tag(sync=True)
    fields = traitlets.List([]).tag(sync=True)
    values = traitlets.Dict({}).tag(sync=True)
    errors = traitlets.Dict({}).tag(sync=True)
    anchor = traitlets.Dict({}).tag(sync=True)
    state = traitlets.Dict({}).tag(sync=True)
    steady = traitlets.Dict({}).tag(sync=True)
    description = traitlets.Unicode("").tag(sync=True)
    notices = traitlets.List([]).tag(sync=True)
    share = traitlets.Dict({}).tag(sync=True)
    snippets = traitlets.Dict({}).tag(sync=True)
    message = traitlets.Dict({}).tag(sync=True)
    lock = traitlets.Unicode("").tag(sync=True)
    upload = traitlets.Dict({}).tag(sync=True)
    #: Counts the kernel's answers to the page's "is a kernel running?" (a saved copy
    #: gets none, and says so).
    kernel = traitlets.Int(0).tag(sync=True)
    #: A live lab's address for a saved copy's note (``overlap-lab serve``), or "".
    live_lab = traitlets.Unicode("").tag(sync=True)

    widget_name: ClassVar[str]
    #: Its state source; None while the traits are first set, before there is one.
    _source: NotebookState | None = None

    def __init__(self, live_lab: str = "", **settings: Any):
        self._source = NotebookState(self.widget_name, settings)
        self._checking = False
        self._timer: asyncio.TimerHandle | None = None
        values = {n: self._source.setting(n) for n in self._source.field_names}
        super().__init__(widget=self.widget_name, live_lab=live_lab, **values)
        self._pull()
        self.on_msg(self._from_page)
        self.observe(self._setting_set, names=self._source.field_names)

    # -- Python to the page --------------------------------------------------------------

    def checked(self, name: str, value: Any) -> Any:
        """A setting set in Python: the value it takes, or TraitError with the page's message."""
        source = self._source
        if source is None or self._checking:
            return value
        if value == source.setting(name):
            return value
        refused = source.edit(name, value_text(value))
        if refused is not None:
            self._pull()
            raise traitlets.TraitError(refused)
        return source.setting(name)

    def _setting_set(self, change: dict) -> None:
        self._pull()

    def load(self, note: str = "", **settings: Any) -> None:
        """Load settings as a lesson's experiment button does: set them, then Reset."""
        self._source.load(note, **settings)
        self._pull()

    # -- the page to Python --------------------------------------------------------------

    def _from_page(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and set(content) == {"hello"}:
            self.kernel += 1  # a kernel runs: the page stops waiting for one
            return
        self._source.request(content)
        self._pull()

    def _pull(self) -> None:
        """Send what changed in the state, set the setting traits to the values in use,
        and time the end of a played run."""
        props = self._source.properties()
        with self.hold_sync():
            for name in PROPERTIES:
                if name in props and getattr(self, name) != props[name]:
                    setattr(self, name, props[name])
            self._checking = True
            try:
                for name in self._source.field_names:
                    value = self._source.setting(name)
                    if getattr(self, name) != value:
                        setattr(self, name, value)
            finally:
                self._checking = False
        self._time_the_end()

    def _time_the_end(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        seconds = self._source.seconds_to_end()
        if seconds is None:
            return
        with contextlib.suppress(RuntimeError):  # no event loop: the next read ends it
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(seconds + END_SLACK_S, self._pull)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return with_saved_copy_note(super()._repr_mimebundle_(**kwargs))

    def __repr__(self) -> str:
        values = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._source.field_names)
        return f"{type(self).__name__}({values})"


def _notebook_widget(class_name: str, name: str) -> type[NotebookWidget]:
    """The notebook widget class of registry widget ``name``, one trait per setting."""
    spec = WIDGETS[name]
    traits = {n: SettingTrait(allow_none=True).tag(sync=True) for n in field_names(spec.settings)}
    doc = f"{spec.title}: {spec.summary}\n\nSettings are its URL keys: {', '.join(spec.keys)}."
    return type(
        class_name,
        (NotebookWidget,),
        {"widget_name": name, "__doc__": doc, "__module__": "widgets.notebook", **traits},
    )
