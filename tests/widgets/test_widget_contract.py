"""What every server-built widget does the same way, checked on each of them.

Browser-drawn widgets keep the same contract through their component's state
(``test_component_contract.py``); a widget moves from here to there when it is
rewritten as a component.
"""

from __future__ import annotations

import csv
import html
import io

import panel as pn
import param
import pytest
from drive import FakeWall, reset, step

from widgets.base import Widget
from widgets.common.component import WidgetComponent
from widgets.model.settings import setting_names
from widgets.registry import WIDGETS

pn.extension()

NAMES = [n for n, s in WIDGETS.items() if not issubclass(s.view_class(), WidgetComponent)]


@pytest.fixture(params=NAMES)
def view(request) -> Widget:
    v = WIDGETS[request.param].create()
    v.clock._wall_clock = FakeWall()
    return v


def test_every_setting_has_a_labelled_control_with_its_unit(view: Widget) -> None:
    for name in setting_names(view.settings):
        p = view.settings.param[name]
        control = view.fields[name]
        if isinstance(p, param.Boolean):
            assert isinstance(control.input, pn.widgets.CheckBoxGroup)
            assert control.input.options == [p.label]
            assert control.checked == getattr(view.settings, name)
            control.input.value = [p.label] if not control.checked else []
            assert getattr(view.settings, name) == control.checked
        else:
            assert control.input.label == p.label
            assert control.input.description == p.doc
        assert p.metadata["unit"] in control.hint or p.metadata["hint"] == control.hint


def test_apply_loads_settings_as_a_new_run_from_time_zero(view: Widget) -> None:
    step(view, 3)
    assert view.clock.elapsed > 0
    name = setting_names(view.settings)[0]
    p = view.settings.param[name]
    new = p.bounds[0] + 1 if p.bounds[0] is not None else p.default + 1
    view.apply(**{name: new})
    assert getattr(view.settings, name) == new
    assert view.clock.elapsed == 0.0
    assert not view.clock.playing


def test_description_is_text_that_follows_the_run(view: Widget) -> None:
    first = view.description.object
    assert "What the chart shows" in first
    assert 'aria-live="polite"' in first
    step(view, 2)
    reset(view)
    assert view.description.object == first  # the same state is described the same way


def test_csv_has_readouts_then_a_table(view: Widget) -> None:
    text = view.csv()
    lines = text.splitlines()
    comments = [line for line in lines if line.startswith("# ")]
    assert comments == lines[: len(comments)]
    table = list(csv.reader(io.StringIO("\n".join(lines[len(comments) :]))))
    header, rows = table[0], table[1:]
    assert header == list(view.export_columns())
    assert rows and all(len(row) == len(header) for row in rows)


def test_notices_are_shown_and_cleared(view: Widget) -> None:
    assert not view.notices.visible
    view.show_notices(["Ignored unknown setting “x”."])
    assert view.notices.visible
    assert "Ignored unknown setting “x”." in view.notices.object
    view.show_notices([])
    assert not view.notices.visible


def _another_value(settings: param.Parameterized, name: str) -> object:
    """A valid value of setting ``name`` other than its default."""
    p = settings.param[name]
    if isinstance(p, param.Boolean):
        return not p.default
    if isinstance(p, param.Selector):
        return next(o for o in p.objects if o != getattr(settings, name))
    value = p.bounds[1] if p.bounds[1] is not None else p.default * 2
    return min(value, p.default + 1)


def test_share_bar_link_follows_every_setting(view: Widget) -> None:
    seen: list[str] = []
    view.enable_share("http://example.test:5006", seen.append)
    spec = WIDGETS[view.widget_name]
    for name in setting_names(view.settings):
        if view.settings.param[name].allow_None:
            continue
        setattr(view.settings, name, _another_value(view.settings, name))
        assert f"{name}=" in seen[-1]
    assert view.share_bar.link.value.startswith(f"http://example.test:5006/{spec.name}?")
    assert view.share_bar.link.value.endswith(seen[-1])


def test_embed_snippets_are_written_when_shown_and_follow_edits_while_shown(view: Widget) -> None:
    view.enable_share("http://example.test:5006")
    bar = view.share_bar
    names = [n for n in setting_names(view.settings) if not view.settings.param[n].allow_None]
    first, second = names[:2]
    hidden = (bar.iframe_code.value, bar.script_code.value)
    setattr(view.settings, first, _another_value(view.settings, first))
    # Hidden, the snippets are not rewritten: an edit does not send them.
    assert (bar.iframe_code.value, bar.script_code.value) == hidden
    bar.embed_toggle.value = True
    query = bar.link.value.split("?", 1)[1]
    assert f"{first}=" in query
    assert html.escape(query) in bar.iframe_code.value
    assert f"{first}=" in bar.script_code.value and "autoload.js" in bar.script_code.value
    setattr(view.settings, second, _another_value(view.settings, second))
    query = bar.link.value.split("?", 1)[1]
    assert f"{second}=" in query
    assert html.escape(query) in bar.iframe_code.value
    assert f"{second}=" in bar.script_code.value


def test_layout_holds_every_control_the_description_and_the_notices(view: Widget) -> None:
    layout = view.__panel__()
    buttons = set(layout.select(pn.widgets.Button))
    tc = view.time_control
    assert {tc.reset_button, tc.play_button, tc.step_button} <= buttons
    inputs = set(layout.select(pn.widgets.Widget))  # text fields, checkboxes and menus
    for name, control in view.fields.items():
        assert control.input in inputs, name
    panes = set(layout.select(pn.pane.HTML))
    assert view.description in panes
    assert view.notices in set(layout.select(type(view.notices)))
