"""The base every widget stands on: settings, clock, controls, playhead, page and sharing.

A concrete widget declares its settings class (a ``param.Parameterized`` whose
user-facing parameters carry ``setting(...)`` metadata), builds its figures and
readouts in ``build``, places them with ``controls`` and ``main``, and turns the
model's current result into data sources and readout values in ``update``.
Everything else is here, once:

- the settings object and one labelled control per declared setting or entry;
- the clock, the Reset / Play / Step control and the playhead;
- the paused-state redraw (``refresh``: update, describe, re-anchor the browser);
- ``apply``: load settings as a new experiment, the same in every widget;
- notices, a live text description of the chart, CSV and PNG export,
  the share bar (when a page knows its origin) and the page layout.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from typing import ClassVar

import panel as pn
import param
from bokeh.models import Div
from bokeh.plotting import figure as Figure

from .model.settings import setting_names
from .model.timeline import Clock
from .parts import layout, theme
from .parts.controls import control_for
from .parts.export import csv_button, csv_text, png_button
from .parts.formatting import new_id, readout_html
from .parts.notices import notices_html, notices_pane
from .parts.playhead import Playhead
from .parts.time_control import TimeControl


def _field_names(settings: param.Parameterized) -> list[str]:
    """Parameters a learner types into: declared settings and entries (they have a unit)."""
    return [
        name
        for name, p in settings.param.objects("existing").items()
        if p.metadata and "unit" in p.metadata
    ]


class Widget(pn.viewable.Viewer):
    """One widget: a model's settings and result, drawn, played and shared."""

    settings_class: ClassVar[type[param.Parameterized]]
    #: The registry name (route) of the widget; set by each subclass.
    widget_name: ClassVar[str]

    def __init__(self, **settings):
        super().__init__(**self._view_params(settings))
        self.settings = self.make_settings(**settings)
        self.clock = self.make_clock()
        self.playhead = Playhead(self.clock)
        self.time_control = TimeControl(
            self.clock, on_change=self.refresh, on_reset=self.reset_model, on_time=self.refresh_time
        )
        self.readout_sheet = theme.readout_stylesheet()
        self.fields = {
            name: control_for(self.settings, name) for name in _field_names(self.settings)
        }
        self.notices = notices_pane()
        self.description = pn.pane.HTML(
            "", sizing_mode="stretch_width", margin=(4, 10), stylesheets=[theme.PAGE_CSS]
        )
        self._description_id = new_id("chart-description")
        self.share_bar = None
        self.build()
        self.playhead.attach()
        self.settings.param.watch(self.settings_changed, _field_names(self.settings))
        self.refresh()

    # -- what a concrete widget provides ---------------------------------------------

    def _view_params(self, settings: dict) -> dict:
        """Pop keyword arguments that are parameters of the view itself (a preset)."""
        return {k: settings.pop(k) for k in list(settings) if k in self.param and k != "name"}

    def make_settings(self, **settings) -> param.Parameterized:
        """The settings object; by default the settings class with these values."""
        return self.settings_class(**settings)

    def make_clock(self) -> Clock:
        """The widget's clock; by default a fresh one."""
        return Clock()

    def build(self) -> None:
        """Create figures, sources and readouts, and register reveals with the playhead."""
        raise NotImplementedError

    def controls(self) -> Sequence[pn.viewable.Viewable]:
        """What the controls card holds, in order."""
        raise NotImplementedError

    def main(self) -> Sequence[pn.viewable.Viewable]:
        """What the main column holds, in order; ``chart_panel`` places the main chart."""
        raise NotImplementedError

    def update(self) -> None:
        """Turn the model's current result into data sources and readout values."""
        raise NotImplementedError

    def describe(self) -> str:
        """A short plain-text description of what the chart shows now (from the model)."""
        raise NotImplementedError

    def export_columns(self) -> dict[str, list]:
        """The table the CSV download holds (column name -> values)."""
        raise NotImplementedError

    def export_readouts(self) -> list[tuple[str, str]]:
        """Readouts (label, value) written above the table in the CSV download."""
        return []

    @property
    def chart(self) -> Figure:
        """The figure the PNG download saves: ``self.figure`` unless a widget says otherwise."""
        return self.figure

    def reset_model(self) -> None:
        """What Reset does besides the clock (by default, only the clock)."""
        self.clock.reset()

    def settings_changed(self, *events: param.parameterized.Event) -> None:
        """A setting or entry changed: redraw."""
        self.refresh()

    # -- shared behaviour --------------------------------------------------------------

    def settings_values(self) -> dict[str, object]:
        """The current settings by parameter name (what a link reproduces)."""
        return {name: getattr(self.settings, name) for name in setting_names(self.settings)}

    def apply(self, **settings) -> None:
        """Load these settings as a new experiment: set them, then Reset.

        Every widget does the same: the run starts again from time zero with the
        new settings (and the queue lab's initial items take effect).
        """
        self.settings.param.update(settings)
        self.time_control.reset()

    def refresh(self) -> None:
        """Redraw every source, readout and the description, then re-anchor the browser."""
        # Panel runs some callbacks outside the document lock; raw Bokeh models
        # must then be edited through unlocked() so the changes are sent.
        with pn.io.unlocked():
            self.update()
            self.description.object = self._description_html(self.describe())
            self.time_control.sync()
            self.playhead.push()

    def refresh_time(self) -> None:
        """After Play, Pause or Step: only the time moved, so re-anchor and re-describe.

        The model's result does not depend on the clock, so its sources are not
        sent again; the browser redraws the reveal from the new anchor.
        """
        with pn.io.unlocked():
            self.description.object = self._description_html(self.describe())
            self.time_control.sync()
            self.playhead.push()

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

    def readout(self) -> Div:
        """An empty readout box; fill it with ``readout_html``."""
        return Div(text="", stylesheets=[self.readout_sheet], sizing_mode="stretch_width", margin=0)

    def show_notices(self, notices: Sequence[str]) -> None:
        """Show what the page ignored (bad URL keys, for example) above the widget."""
        self.notices.object = notices_html(list(notices))
        self.notices.visible = bool(notices)

    def enable_share(self, origin: str, on_query: Callable[[str], None] | None = None) -> None:
        """Add Copy link and Embed for a server reached at ``origin``."""
        from .parts.share import ShareBar
        from .registry import WIDGETS

        self.share_bar = ShareBar(WIDGETS[self.widget_name], self, origin, on_query)

    def csv(self) -> str:
        """The CSV download's text: readouts, then the widget's table."""
        return csv_text(self.export_readouts(), self.export_columns())

    def chart_panel(self, *below: pn.viewable.Viewable) -> pn.Column:
        """The main chart, what goes under it (its key), its description and its downloads."""
        name = self.widget_name
        export = pn.FlexBox(
            csv_button(f"{name}.csv", self.csv),
            png_button(self.chart, f"{name}.png"),
            flex_direction="row",
            sizing_mode="stretch_width",
            margin=(4, 0),
            css_classes=["ol-export"],
        )
        return pn.Column(
            pn.pane.Bokeh(self.chart, sizing_mode="stretch_width"),
            *below,
            self.description,
            export,
            sizing_mode="stretch_width",
            margin=0,
        )

    def _description_html(self, text: str) -> str:
        i = self._description_id
        return (
            f'<section class="ol-description" aria-labelledby="{i}">'
            f'<h3 id="{i}" class="ol-title">What the chart shows</h3>'
            f'<p aria-live="polite">{html.escape(text)}</p></section>'
        )

    def __panel__(self) -> pn.viewable.Viewable:
        body = layout.widget_layout(
            layout.controls_card(*self.controls()), layout.main_column(*self.main())
        )
        items = [self.notices, body]
        if self.share_bar is not None:
            items.append(self.share_bar)
        return pn.Column(*items, sizing_mode="stretch_width", margin=0)


def nice_step(x: float) -> float:
    """The 1-2-5 number nearest below ``x`` (0.5 ms, 1 ms, 2 ms...)."""
    exp = math.floor(math.log10(x))
    base = x / 10**exp
    nice = 5 if base >= 5 else 2 if base >= 2 else 1
    return float(nice * 10**exp)


def readout_text(div: Div, label: str, value: str, element_id: str, note: str = "") -> None:
    """Fill a readout box with a labelled value."""
    div.text = readout_html(label, value, element_id, note=note)
