"""The notebook widgets (anywidget) in Python: settings as the page checks them, edits
both ways, the end of a played run, and a page script that fetches nothing."""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
import time

import pytest
import traitlets

from widgets.common import bundles
from widgets.notebook import BucketTimeline, Column, ManyRanks, QueueLab, RealTrace, Row
from widgets.notebook.state_source import PROPERTIES
from widgets.notebook.widget import BUNDLE, NotebookWidget
from widgets.registry import WIDGETS

CLASSES = {
    "bucket-timeline": BucketTimeline,
    "queue-lab": QueueLab,
    "ranks": ManyRanks,
    "trace": RealTrace,
}


def from_page(widget: NotebookWidget, message: dict) -> None:
    """A message the page sends (``model.send``), as the kernel's comm delivers it."""
    widget._handle_custom_msg(message, [])


def test_every_registered_widget_has_a_notebook_class() -> None:
    assert set(CLASSES) == set(WIDGETS)
    for name, cls in CLASSES.items():
        assert cls.widget_name == name
        widget = cls()
        assert widget.widget == name
        assert widget.fields and widget.state and widget.values, name


def test_the_page_script_is_the_committed_bundle_and_fetches_nothing() -> None:
    widget = QueueLab()
    esm = widget._esm
    assert esm == BUNDLE.read_text(encoding="utf-8")
    assert bundles.bundled_digest(BUNDLE) == bundles.source_digest(BUNDLE.with_name("notebook.js"))
    # The only addresses in it are the SVG namespace, never a host to load from.
    assert set(re.findall(r"https?://[^\"'`\s)]+", esm)) == {"http://www.w3.org/2000/svg"}
    assert "import(" not in esm and "fetch(" not in esm


def test_settings_are_checked_as_the_page_checks_its_address() -> None:
    widget = QueueLab(arrival=2, bogus=3, service="abc")
    assert widget.arrival == 2
    assert widget.service == 3  # the default, kept
    assert widget.notices == [
        "Ignored unknown setting “bogus” (known: arrival, duration, initial, service).",
        "Ignored service=abc: “abc” is not a number. Enter 0 to 1000 items/s.",
    ]


def test_a_value_the_page_would_refuse_raises_its_message_and_keeps_the_setting() -> None:
    widget = QueueLab(arrival=2)
    with pytest.raises(traitlets.TraitError, match=r"Arrival rate must be 0 to 1000 items/s\."):
        widget.arrival = -1
    assert widget.arrival == 2
    assert widget.values["arrival"] == "2"
    assert widget.errors == {"arrival": "Arrival rate must be 0 to 1000 items/s."}
    widget.arrival = 3  # a good value clears the message
    assert widget.errors == {}


def test_a_setting_set_in_python_redraws_the_page() -> None:
    widget = QueueLab(arrival=2, service=3, initial=4)
    assert widget.state["segment"]["net"] == -1.0
    widget.arrival = 5
    assert widget.values["arrival"] == "5"
    assert widget.state["segment"]["net"] == 2.0  # 5 - 3
    assert widget.state["segment"]["trend"] == "grows"


def test_an_edit_in_the_page_reaches_python() -> None:
    widget = QueueLab(arrival=2)
    seen = []
    widget.observe(lambda change: seen.append(change["new"]), names="arrival")
    from_page(widget, {"edit": "arrival", "text": "4,5"})  # a decimal comma, as typed
    assert widget.arrival == 4.5
    assert seen == [4.5]
    assert widget.values["arrival"] == "4.5"
    from_page(widget, {"edit": "arrival", "text": "lots"})
    assert widget.arrival == 4.5
    assert widget.errors["arrival"] == "“lots” is not a number. Enter 0 to 1000 items/s."


def test_a_choice_loads_its_preset() -> None:
    widget = BucketTimeline()
    widget.preset = "Latency-bound"
    # 12 buckets of 5 MB with 0.2 ms per ring step over 8 ranks: overhead 12 x 2.8 ms.
    assert widget.state["readouts"]["regime"][0].startswith("33.60 ms overhead")
    assert widget.values["preset"] == "Latency-bound"


def test_the_state_round_trips_through_the_settings_it_shows() -> None:
    first = ManyRanks(scenario="Jitter", layers_per_bucket=3)
    again = ManyRanks(**{k: v for k, v in first.values.items() if v != ""})
    for name in ("values", "state", "steady", "description", "fields"):
        assert getattr(again, name) == getattr(first, name), name


def test_the_kernel_answers_the_page_asking_whether_it_runs() -> None:
    widget = QueueLab()
    from_page(widget, {"hello": 1})
    assert widget.kernel == 1


def step_to(widget: NotebookWidget, steps: int) -> None:
    for _ in range(steps):
        from_page(widget, {"action": "step"})


def ended_readouts(widget: QueueLab) -> tuple:
    return (
        widget.anchor["playing"],
        widget.anchor["elapsed"],
        widget.state["now"],
        widget.description.split(" the queue")[0],
    )


def test_a_played_run_ends_in_the_kernel_with_the_served_readouts() -> None:
    # Queue lab, arrival 2 (service 3, 4 items): the run lasts 5 s; the queue drains at
    # 4 s (4 items at -1 item/s), so at the end: 5.00 s and 0 items.
    async def run() -> QueueLab:
        widget = QueueLab(arrival=2)
        step_to(widget, 9)  # 9 x 0.5 s
        assert widget.anchor["elapsed"] == 4.5
        from_page(widget, {"action": "play"})
        assert widget.anchor["playing"] is True
        await asyncio.sleep(0.5 + 0.3)  # past the end; nothing reads the widget meanwhile
        return widget

    # A loop of its own, on a thread of its own: a browser test earlier in the same
    # process may have left one running on this thread.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        widget = pool.submit(asyncio.run, run()).result(timeout=60)
    assert widget.anchor["horizon"] == 5.0
    assert ended_readouts(widget) == (False, 5.0, {"t": 5.0, "length": 0.0}, "At 5.00 s")


def test_a_run_ends_without_an_event_loop_too() -> None:
    widget = QueueLab(arrival=2)
    step_to(widget, 9)
    from_page(widget, {"action": "play"})
    time.sleep(0.6)
    from_page(widget, {"action": "table"})  # any message: the state is read at the end
    assert ended_readouts(widget) == (False, 5.0, {"t": 5.0, "length": 0.0}, "At 5.00 s")
    # Play at the end replays from the start, as on the page.
    from_page(widget, {"action": "play"})
    assert widget.anchor["playing"] is True and widget.anchor["elapsed"] < 0.1


def test_every_synced_property_is_one_the_page_reads() -> None:
    script = (BUNDLE.with_name("notebook.js")).read_text(encoding="utf-8")
    listed = re.search(r"PROPERTIES = \[(.*?)\]", script, re.S).group(1)
    assert re.findall(r'"(\w+)"', listed) == list(PROPERTIES)
    widget = QueueLab()
    for name in PROPERTIES:
        assert widget.trait_metadata(name, "sync"), name


def test_several_widgets_in_one_cell() -> None:
    a, b = QueueLab(), BucketTimeline()
    assert list(Column(a, b).children) == [a, b]
    row = Row(a, b)
    assert list(row.children) == [a, b]
    assert row.layout.flex_flow == "row wrap"


def test_an_experiment_loads_its_settings_and_resets() -> None:
    widget = QueueLab()
    step_to(widget, 2)
    widget.load("Arrival 4: the queue grows.", arrival=4)
    assert widget.arrival == 4
    assert widget.anchor["elapsed"] == 0.0
    assert widget.message["text"] == "Arrival 4: the queue grows."


def test_the_notebook_bundle_is_stale_when_any_widget_script_changes() -> None:
    entry = BUNDLE.with_name("notebook.js")
    sources = {p.relative_to(bundles.WIDGETS).as_posix() for p in bundles.sources(entry)}
    for name in ("bucket_timeline", "queue_lab", "many_ranks", "trace_viewer"):
        assert f"{name}/{name}.js" in sources, name
    assert "common/js/frame.js" in sources and "notebook/notebook.js" in sources
    assert not any(s.endswith(".bundle.js") for s in sources)


def test_the_notebook_draws_what_the_widgets_state_function_gives() -> None:
    from widgets.model.fluid_queue import FluidQueue
    from widgets.queue_lab.state import queue_lab_state

    widget = QueueLab(arrival=4)
    drawn = queue_lab_state(FluidQueue(arrival=4))
    shown = {**widget.steady, **widget.state}
    # The page asks for the data table when it is opened: until then it is not sent.
    assert "table" not in shown
    assert shown == {k: v for k, v in drawn["state"].items() if k != "table"}
    assert widget.description == drawn["description"]


def test_the_real_trace_switches_shipped_traces_both_ways() -> None:
    widget = RealTrace()
    before = widget.state["source"]
    widget.trace = "one-bucket.json"
    assert widget.values["trace"] == "one-bucket.json"
    assert widget.state["source"] != before
    assert widget.state["n_buckets"] == 1
    from_page(widget, {"edit": "trace", "text": "mixed-5-5-2.json"})
    assert widget.trace == "mixed-5-5-2.json"
    with pytest.raises(traitlets.TraitError, match="one of"):
        widget.trace = "nothing.json"
    assert widget.trace == "mixed-5-5-2.json"


def test_a_trace_upload_fits_in_one_kernel_message() -> None:
    # A Jupyter server (Tornado) closes the kernel's websocket on a message over 10 MiB.
    upload = RealTrace().upload
    assert upload["max_bytes"] == 6 * 1024 * 1024
    base64_of_the_largest = upload["max_bytes"] * 4 / 3
    assert base64_of_the_largest <= upload["max_message_bytes"] < 10 * 1024 * 1024
