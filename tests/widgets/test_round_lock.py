"""Every widget under a class round's lock, in every mode: what a page's message may change.

Each registered widget is sent every request it knows (every action, an edit of
every control, a refused edit, every data message), then unknown and malformed
messages, in each mode of ``app.classroom.widget_page`` and with no round at
all. A request the mode does not allow, and any message the widget does not
know, changes nothing the page is sent; an allowed one changes something, and
only what its kind may change (Step never touches a setting, the data table
never the clock).
"""

from __future__ import annotations

import base64
import json

import param
import pytest
from drive import FakeWall, another_value, edit_text

from app.classroom.widget_page import ALLOWED, RoundWidget
from traces.shipped import shipped
from widgets.common.component import EDIT, WidgetComponent
from widgets.common.fields import field_names
from widgets.model.settings import setting_names
from widgets.registry import WIDGETS

NAMES = [n for n, s in WIDGETS.items() if issubclass(s.view_class(), WidgetComponent)]
#: The modes of a class round's widget, and None: no round (a widget's own page).
MODES = [None, *ALLOWED]
#: What the modes allow, written out here: voting shows only the data table; Reveal runs.
EXPECTED_ALLOWED = {
    "hidden": {"table"},
    "locked": {"table"},
    "revealed": {"reset", "play", "pause", "step", "table"},
}

#: The parts of what the page is sent that only the clock moves.
TIME = {"anchor", "clock", "state", "steady", "description"}
#: What each base action may change; an edit, a widget's own action and a data message
#: may change anything.
MAY_CHANGE = {
    "table": {"state"},
    "embed": {"snippets"},
    "unembed": {"snippets"},
    "play": TIME,
    "pause": TIME,
    "step": TIME,
    # Reset also clears refused texts and what was loaded, and a queue's predictions.
    "reset": TIME | {"errors", "message", "values"},
}


def one_shipped_trace() -> list[dict]:
    """An ``upload_files`` message's value: one shipped trace, as the page sends a file."""
    data = shipped()["one-bucket.json"].read_bytes()
    return [{"name": "mine.json", "size": len(data), "base64": base64.b64encode(data).decode()}]


#: A valid value of every data message a widget declares.
DATA_SAMPLES = {"upload_files": one_shipped_trace}


def snapshot(view: WidgetComponent) -> dict[str, str]:
    """Everything a message could change, by part, as comparable text."""
    parts = {
        "settings": {n: getattr(view.settings, n) for n in setting_names(view.settings)},
        "clock": [view.clock.elapsed, view.clock.playing, view.clock.horizon],
    }
    for name in ("values", "errors", "anchor", "state", "steady", "description", "snippets"):
        parts[name] = getattr(view, name)
    for name in ("message", "notices", "share", "fields", "lock"):
        parts[name] = getattr(view, name)
    if "upload" in view.param:
        parts["upload"] = view.upload
    return {k: json.dumps(v, sort_keys=True, default=repr) for k, v in parts.items()}


def known_requests(view: WidgetComponent) -> list[tuple[str, dict]]:
    """Every request the widget knows, as its page sends it, with the name the lock knows.

    In an order in which each one changes something when allowed: the upload before
    the way back from it, Embed before closing it, each edit to another value.
    """
    assert set(view.data_messages) <= set(DATA_SAMPLES), "a data message without a sample"
    requests = [(key, {key: DATA_SAMPLES[key]()}) for key in view.data_messages]
    requests += [(a, {"action": a}) for a in view.own_actions]
    requests += [
        (a, {"action": a}) for a in ("table", "embed", "unembed", "step", "play", "pause", "reset")
    ]
    assert {name for name, _ in requests} == set(view.actions) | set(view.data_messages)
    for name in field_names(view.settings):
        text = edit_text(another_value(view.settings, name))
        requests.append((EDIT, {"edit": name, "text": text}))
    number = next(
        n
        for n in field_names(view.settings)
        if isinstance(view.settings.param[n], param.Number)
        and not isinstance(view.settings.param[n], param.Boolean)
    )
    requests.append((EDIT, {"edit": number, "text": "not a number"}))  # refused at the control
    return requests


def unknown_messages(view: WidgetComponent) -> list[object]:
    """Messages no control of this widget sends: unknown, malformed, or another widget's."""
    field = field_names(view.settings)[0]
    others = {a for n in NAMES for a in WIDGETS[n].view_class().own_actions} - set(view.actions)
    return [
        None,
        "step",
        [1, 2],
        {},
        {"action": "delete"},
        {"action": ["play"]},
        {"action": None},
        {"action": "Step"},
        {"action": "_reset"},  # a method's name is not an action's
        {"action": "act"},
        {"edit": "name", "text": "x"},
        {"edit": "__class__", "text": "x"},
        {"edit": field, "text": 4},
        {"edit": field},
        {"edit": field, "text": "1" * 10_000},
        {"action": "step", "edit": field, "text": "1"},  # two requests in one message
        {"upload": "x.json", "text": "{}"},  # the text upload no page sends any more
        {"upload_files": "x.json"},
        {"upload_files": [{"name": "x.json"}]},
        *({"action": a} for a in sorted(others)),
    ]


@pytest.fixture(params=MODES, ids=lambda m: m or "no-round")
def mode(request) -> str | None:
    return request.param


@pytest.fixture(params=NAMES)
def view(request, mode) -> WidgetComponent:
    v = WIDGETS[request.param].create()
    v.clock._wall_clock = FakeWall()
    v.enable_share("http://example.test:5006")
    if mode is not None:
        RoundWidget(v, "ABCDEF", 1, mode)
    return v


def test_the_modes_allow_what_a_round_lets_a_learner_do() -> None:
    assert {m: set(a) for m, a in ALLOWED.items() if a is not None} == EXPECTED_ALLOWED
    assert ALLOWED["open"] is None  # unlocked: everything


def test_a_message_changes_only_what_the_mode_and_its_kind_allow(view, mode) -> None:
    allowed = None if mode is None else ALLOWED[mode]
    for name, msg in known_requests(view):
        before = snapshot(view)
        view._handle_msg(msg)
        after = snapshot(view)
        changed = {k for k in after if after[k] != before[k]}
        if allowed is not None and name not in allowed:
            assert not changed, (msg, changed)
            continue
        assert changed, msg  # an allowed request does what it asks
        may = MAY_CHANGE.get(name, set(after))
        assert changed <= may, (msg, changed - may)


def test_an_unknown_or_malformed_message_changes_nothing(view, mode) -> None:
    view.act("step")
    before = snapshot(view)
    for msg in unknown_messages(view):
        view._handle_msg(msg)
        assert snapshot(view) == before, msg
    view._handle_msg({"action": "step"})  # what its controls send still works where allowed
    steps = 2 if mode in (None, "revealed", "open") else 1
    assert view.anchor["elapsed"] == pytest.approx(steps * view.clock.step_size)


def test_a_locked_round_keeps_the_layers_a_hand_made_best_would_change() -> None:
    lab = WIDGETS["bucket-timeline"].create()
    best = int(lab.sweep.best_setting)
    assert lab.settings.layers_per_bucket != best  # so "best" would change it
    round_widget = RoundWidget(lab, "ABCDEF", 1, "locked")
    lab._handle_msg({"action": "best"})
    assert lab.settings.layers_per_bucket != best
    round_widget.apply("open")  # Unlock controls: now the page's button works
    lab._handle_msg({"action": "best"})
    assert lab.settings.layers_per_bucket == best
