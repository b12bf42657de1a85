"""The trace view driven in Python: uploads, the shipped-trace selector and the what-if."""

from __future__ import annotations

import json

import panel as pn
import pytest
from drive import FakeWall, step

from widgets.model.trace_view import TraceViewConfig, shipped_traces
from widgets.registry import WIDGETS
from widgets.traces import shipped

pn.extension()


@pytest.fixture
def view():
    v = WIDGETS["trace"].create()
    v.clock._wall_clock = FakeWall()
    return v


def _readout(view, key: str) -> str:
    return view.readouts[key].text


def test_default_shows_a_shipped_trace_fitted_on_the_others(view) -> None:
    r = view.result
    assert r.trace.name == "three-layers-per-bucket.json"
    assert "three-layers-per-bucket.json" not in r.fit.sources
    assert "not on the trace shown" in view.fit_panel.object
    assert "2 CPU cores" in view.machine.object and "contention" in view.machine.object
    expected = TraceViewConfig().result()
    assert f"{expected.measured['step_ms']:.2f} ms" in _readout(view, "step_ms:measured")


def test_a_good_upload_is_shown_and_the_selector_brings_a_shipped_trace_back(view) -> None:
    data = shipped()["one-bucket.json"].read_bytes()
    assert view.load_upload(data, "mine.json")
    assert view.result.trace.name == "mine.json"
    assert view.result.trace.n_buckets == 1
    assert 'role="status"' in view.upload_message.object
    assert "mine.json" in view.source_note.object
    # An upload is fitted on every shipped trace.
    assert set(view.result.fit.sources) == set(shipped_traces())
    view.settings.trace = "mixed-5-5-2.json"
    assert view.uploaded is None and view.result.trace.name == "mixed-5-5-2.json"
    assert view.upload_message.object == ""


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"{not json", "not valid JSON"),
        (b'{"format": "overlap-lab-trace"}', "trace"),
        (b"\xff\xfe", "not UTF-8"),
        (b" " * (9 * 1024 * 1024), "limit"),
    ],
)
def test_a_bad_upload_says_why_and_keeps_the_previous_trace(view, data, words) -> None:
    step(view, 2)
    before = (view.result, dict(view.measured_source.data), view.clock.elapsed)
    assert not view.load_upload(data, "bad.json")
    message = view.upload_message.object
    assert 'role="alert"' in message and words in message and "unchanged" in message
    assert view.result is before[0]
    assert view.measured_source.data == before[1]
    assert view.clock.elapsed == before[2]
    assert view.uploaded is None


def test_a_schema_error_names_the_field(view) -> None:
    doc = json.loads(shipped()["one-bucket.json"].read_text())
    del doc["iterations"][0]["ranks"][1]["backward_start"]
    assert not view.load_upload(json.dumps(doc).encode(), "broken.json")
    assert "backward_start" in view.upload_message.object


def test_selector_changes_the_trace_and_the_fit(view) -> None:
    view.settings.trace = "one-layer-per-bucket.json"
    r = view.result
    assert r.trace.n_buckets == 12
    assert "one-layer-per-bucket.json" not in r.fit.sources
    assert "one-layer-per-bucket.json, median of 10 iterations" in view.describe()
    view.settings.iteration = 3
    assert view.result.iteration == 2
    assert "(3 of 10)" in view.describe()


def test_what_if_shows_the_prediction_and_the_measured_trace_of_that_cap(view) -> None:
    view.settings.what_if_cap_mb = 48.0
    w = view.result.what_if
    assert w.layout == "1 bucket: 12 parameters" and w.measured_name == "one-bucket.json"
    text = _readout(view, "exposed_tail_ms:what_if")
    assert f"{w.predicted['exposed_tail_ms']:.2f} ms" in text
    assert f"measured {w.measured['exposed_tail_ms']:.2f} ms (one-bucket.json" in text
    view.settings.what_if_cap_mb = 8.0
    assert "no trace of this cap recorded" in _readout(view, "step_ms:what_if")
    assert "6 buckets" in view.what_if_note.object


def test_csv_holds_measured_and_model_rows(view) -> None:
    cols = view.export_columns()
    assert set(cols["source"]) == {"measured", "model"}
    # Two ranks: 12 layers, 4 buckets and the optimizer each, measured and modelled.
    assert cols["source"].count("measured") == 2 * (12 + 4 + 1)
    assert cols["source"].count("model") == 2 * (12 + 4 + 1)


def test_the_machine_note_says_how_busy_other_processes_kept_it(view) -> None:
    # The shipped traces were recorded with nothing else running: one number, 0 %.
    assert "Other processes kept 0 % of the cores busy" in view.machine.object
    # An upload whose iterations saw 10 % and 30 % of other load gives the range.
    doc = json.loads(shipped()["one-bucket.json"].read_bytes())
    for i, it in enumerate(doc["iterations"]):
        it["other_load"] = 0.1 if i % 2 else 0.3
    assert view.load_upload(json.dumps(doc).encode(), "busy.json")
    assert "Other processes kept 10–30 % of the cores busy" in view.machine.object
