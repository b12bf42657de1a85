"""An export's states equal what the live components send for the same settings.

The export computes each state from the settings and the clock with no component
(``widgets/*/state.py``); the components here are the independent path: Panel
objects driven by their messages, as a live page drives them.

Every state of every widget page and lesson is rebuilt the way the live server
builds a page for a link: its URL query parsed by the registry, a new
component, the data table asked for (and a prediction, which links do not
carry, typed in); then each Step, comparing each moment, and Reset. Only the
anchor's message count and the last experiment's note may differ (they count
messages, not settings).
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import pytest
from panel.custom import JSComponent

from app.export.course import lesson_page_states, widget_page_states
from lessons import load_lessons
from widgets.bucket_timeline.model import PRESETS
from widgets.registry import WIDGETS

LESSONS = load_lessons()
NOT_SETTINGS = ("query", "moments", "experiments", "reset")


def live_params(view) -> dict:
    """What a live component syncs, without the message count and the experiment's note."""
    params = {n: getattr(view, n) for n in view.param if n not in JSComponent.param}
    params = json.loads(json.dumps(params))
    params.pop("message")
    params["anchor"].pop("revision")
    return params


def exported(widget: dict, record: dict, moment: dict | None = None) -> dict:
    params = {k: v for k, v in record.items() if k not in NOT_SETTINGS}
    params = {**params, **(moment or {}), "fields": widget["fields"]}
    params["anchor"] = {**record["anchor"], **(moment or {}).get("anchor", {})}
    # A copy counts its own messages: the export holds no count.
    assert "revision" not in params["anchor"], params["anchor"]
    params.pop("message", None)
    return params


def live_view(name: str, record: dict):
    """The page a link to the state opens, with what a link does not carry (a learner's
    prediction) typed into its control, as a learner would."""
    spec = WIDGETS[name]
    kwargs, notices = spec.parse(parse_qs(record["query"], keep_blank_values=True))
    assert not notices, notices
    view = spec.create(**kwargs)
    view.act("table")
    for field, text in record["values"].items():
        if view.values[field] != text:
            view.edit(field, text)
    return view


def assert_page_matches_live(page: dict) -> None:
    for widget in page["widgets"]:
        for number, record in enumerate(widget["records"]):
            view = live_view(widget["name"], record)
            where = f"{widget['name']} state {number} (?{record['query']})"
            assert exported(widget, record) == live_params(view), where
            for k, moment in enumerate(record["moments"]):
                view.act("step")
                step = f"{where} Step {k + 1}"
                assert exported(widget, record, moment) == live_params(view), step
            assert view.anchor["elapsed"] >= view.anchor["horizon"], f"{where} ends at its horizon"
            view.act("reset")
            after = widget["records"][record["reset"]]
            assert exported(widget, after) == live_params(view), f"{where} Reset"


@pytest.mark.parametrize("name", list(WIDGETS))
def test_every_widget_page_state_equals_the_live_component(name: str):
    assert_page_matches_live(widget_page_states(name, ""))


@pytest.mark.parametrize("name", list(LESSONS))
def test_every_lesson_state_equals_the_live_component(name: str):
    page = lesson_page_states(LESSONS[name], "")
    assert_page_matches_live(page)
    # Every experiment button is answered from the state its widget starts in.
    experiments = [b for b in LESSONS[name].blocks if type(b).__name__ == "Experiment"]
    assert sorted(page["experiments"], key=int) == [str(i) for i in range(len(experiments))]
    for number, slot in page["experiments"].items():
        assert number in page["widgets"][slot]["records"][0]["experiments"]
    # Every widget directive is held as written: its widget starts with the directive's
    # settings, without asking (no --state).
    blocks = [b for b in LESSONS[name].blocks if type(b).__name__ == "WidgetBlock"]
    for block, widget in zip(blocks, page["widgets"], strict=True):
        start = widget["records"][widget["start"]]["values"]
        for key, value in block.settings.items():
            assert as_text(start[key]) == as_text(value), (block.widget, key, value, start[key])


def as_text(value) -> str:
    """A setting's value as its control would read it: yes/no, a number, or text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    try:
        return repr(float(value))
    except (TypeError, ValueError):
        return str(value)


def test_an_authors_state_and_its_axes_equal_the_live_component():
    page = widget_page_states("queue-lab", "", more=[{"arrival": 5, "initial": 2}])
    assert_page_matches_live(page)
    (widget,) = page["widgets"]
    held = {r["query"] for r in widget["records"]}
    # The author's state, and the queue lab's axes (arrival 0 to 6, ...) from it.
    assert "arrival=5&service=3&initial=2" in held
    assert {f"arrival={a}&service=3&initial=2" for a in range(7)} <= held
    assert "address" in page and page["address"] is True


def test_the_bucket_timeline_holds_every_preset_at_every_layers_per_bucket():
    (widget,) = widget_page_states("bucket-timeline", "")["widgets"]
    held = {(r["values"]["preset"], r["values"]["layers_per_bucket"]) for r in widget["records"]}
    assert held == {(p, str(n)) for p in PRESETS for n in range(1, 13)}
    assert set(widget["configurations"]["preset"]) == set(PRESETS)


def test_the_trace_page_holds_every_iteration_of_every_shipped_trace():
    (widget,) = widget_page_states("trace", "")["widgets"]
    traces = widget["configurations"]["trace"]
    held = {(r["values"]["trace"], r["values"]["iteration"]) for r in widget["records"]}
    for trace in traces:
        iterations = {int(i) for t, i in held if t == trace}
        # 0 is the median iteration, then each recorded one (ten per shipped trace).
        assert iterations == set(range(11)), (trace, sorted(iterations))
