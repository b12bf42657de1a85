"""What every browser-drawn widget does the same way, through the state its component sends.

A widget rewritten as a component (``widgets.common.component``) is picked up
here without a line changed. The page draws only what this state holds, so
these are the contracts of the page too; ``tests/ui`` checks the drawing.
"""

from __future__ import annotations

import html
import json
import math

import param
import pytest
from drive import FakeWall, another_value, edit_text

from widgets.common.component import WidgetComponent
from widgets.common.fields import field_names
from widgets.common.parsing import bounds_text
from widgets.model.settings import setting_names
from widgets.registry import WIDGETS

NAMES = [n for n, s in WIDGETS.items() if issubclass(s.view_class(), WidgetComponent)]


@pytest.fixture(params=NAMES)
def view(request) -> WidgetComponent:
    v = WIDGETS[request.param].create()
    v.clock._wall_clock = FakeWall()
    return v


def test_every_field_is_described_by_its_parameter(view: WidgetComponent) -> None:
    specs = {f["name"]: f for f in view.fields}
    assert list(specs) == field_names(view.settings)
    for name, spec in specs.items():
        p = view.settings.param[name]
        assert spec["label"] == p.label
        assert spec["unit"] == p.metadata["unit"]
        if spec["kind"] == "number":
            assert spec["hint"] == (p.metadata["hint"] or bounds_text(p))
        if isinstance(p, param.Selector):
            assert spec["kind"] == "choice" and spec["choices"] == [str(o) for o in p.objects]
        if isinstance(p, param.Boolean):
            assert spec["kind"] == "boolean"


def test_the_state_is_plain_json_of_numbers_and_small_records(view: WidgetComponent) -> None:
    for name in ("state", "steady", "values", "errors", "anchor", "fields", "notices"):
        text = json.dumps(getattr(view, name), allow_nan=False)  # raises on numpy or NaN
        assert json.loads(text) == getattr(view, name), name


def test_the_table_has_a_key_and_a_label_per_column_and_full_rows(view: WidgetComponent) -> None:
    table = view.model_state()["table"]
    keys = [c["key"] for c in table["columns"]]
    assert len(set(keys)) == len(keys) and all(c["label"] for c in table["columns"])
    assert table["rows"] and all(len(r) == len(keys) for r in table["rows"])


def test_every_edit_reaches_the_model_and_the_values(view: WidgetComponent) -> None:
    for name in setting_names(view.settings):
        value = another_value(view.settings, name)
        text = value if isinstance(value, str) else json.dumps(value)
        view.edit(name, text)
        assert getattr(view.settings, name) == value, name
        assert name not in view.errors, (name, view.errors)


def test_a_refused_edit_keeps_the_setting_and_the_state(view: WidgetComponent) -> None:
    numbers = [n for n in field_names(view.settings) if view.fields[0]]
    name = next(
        n
        for n in numbers
        if isinstance(view.settings.param[n], param.Number)
        and not isinstance(view.settings.param[n], param.Boolean)
    )
    before_value, before_state = getattr(view.settings, name), view.state
    view.edit(name, "not a number")
    assert "not a number" in view.errors[name]
    assert getattr(view.settings, name) == before_value
    assert view.state == before_state
    view.edit(name, json.dumps(another_value(view.settings, name)))
    assert name not in view.errors


def test_embed_without_a_share_bar_does_nothing(view: WidgetComponent) -> None:
    # No share bar (a class round's widget, a notebook): a hand-made Embed is no error.
    view._handle_msg({"action": "embed"})
    assert view.snippets == {}


def test_apply_loads_settings_as_a_new_run_from_time_zero_and_says_so(
    view: WidgetComponent,
) -> None:
    for _ in range(3):
        view.act("step")
    assert view.anchor["elapsed"] > 0
    name = setting_names(view.settings)[0]
    new = another_value(view.settings, name)
    view.apply(note="Loaded: a new experiment.", **{name: new})
    assert getattr(view.settings, name) == new
    assert view.anchor["elapsed"] == 0.0 and not view.anchor["playing"]
    assert view.message == {"text": "Loaded: a new experiment.", "n": 1}
    view.apply(note="Loaded: a new experiment.", **{name: new})
    assert view.message["n"] == 2  # the same experiment again still brings it into view
    view.act("reset")
    assert view.message == {}


def test_the_description_follows_the_run_and_is_the_same_for_the_same_state(
    view: WidgetComponent,
) -> None:
    first = view.description
    assert first and "<" not in first
    view.act("step")
    assert view.description != first
    view.act("reset")
    assert view.description == first


def test_every_action_moves_the_revision_and_play_pause_anchor(view: WidgetComponent) -> None:
    wall = view.clock._wall_clock
    seen = [view.anchor["revision"]]
    for action in ("step", "play", "pause", "reset"):
        if action == "pause":
            wall.t += view.clock.step_size / view.clock.speed
        view.act(action)
        seen.append(view.anchor["revision"])
        if action == "play":
            assert view.anchor["playing"] is True
    assert seen == sorted(set(seen)), seen
    assert view.anchor["elapsed"] == 0.0


def test_notices_are_shown_and_cleared(view: WidgetComponent) -> None:
    assert view.notices == []
    view.show_notices(["Ignored unknown setting “x”."])
    assert view.notices == ["Ignored unknown setting “x”."]
    view.show_notices([])
    assert view.notices == []


def test_the_share_link_follows_every_setting(view: WidgetComponent) -> None:
    view.enable_share("http://example.test:5006", own_page=True)
    spec = WIDGETS[view.widget_name]
    assert view.share["own_page"] is True
    for name in setting_names(view.settings):
        view.edit(name, edit_text(another_value(view.settings, name)))
        assert view.share["link"] == f"http://example.test:5006/{spec.name}?{view.share['query']}"
        assert f"{name}=" in view.share["query"], name


def test_embed_snippets_are_written_while_open_and_follow_edits(view: WidgetComponent) -> None:
    view.enable_share("http://example.test:5006")
    first, second = setting_names(view.settings)[:2]
    view.edit(first, json.dumps(another_value(view.settings, first)))
    assert view.snippets == {}  # closed: an edit sends no snippets
    view.act("embed")
    query = view.share["query"]
    assert html.escape(query) in view.snippets["iframe"]
    assert 'addEventListener("message"' in view.snippets["iframe"]
    # One listener for any server: a frame's message counts from its own src's origin.
    listener = view.snippets["iframe"].split("<script>", 1)[1]
    assert "example.test" not in listener and "new URL(f.src" in listener
    assert "autoload.js" in view.snippets["script"] and f"{first}=" in view.snippets["script"]
    view.edit(second, json.dumps(another_value(view.settings, second)))
    assert f"{second}=" in view.snippets["script"]
    assert html.escape(view.share["query"]) in view.snippets["iframe"]
    view.act("unembed")
    assert view.snippets == {}


def test_numbers_in_the_anchor_are_finite(view: WidgetComponent) -> None:
    for key in ("elapsed", "speed", "horizon", "step"):
        assert math.isfinite(view.anchor[key]) and view.anchor[key] >= 0, key


def test_the_data_table_is_sent_once_the_page_asks_for_it(view: WidgetComponent) -> None:
    assert "table" not in view.state  # an edit of a page whose table stays folded is smaller
    view._handle_msg({"action": "table"})
    assert view.state["table"] == view.model_state()["table"]
    view.act("step")
    view.act("reset")
    assert view.state["table"] == view.model_state()["table"]  # and it keeps coming


def test_state_and_steady_together_are_the_models_result(view: WidgetComponent) -> None:
    full = {k: v for k, v in view.model_state().items() if k != "table"}
    assert set(view.state).isdisjoint(view.steady)
    assert view.drawn_state == full
    assert set(view.steady) == set(type(view).STEADY_KEYS) & set(full)
