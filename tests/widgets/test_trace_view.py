"""The trace viewer driven in Python as its page drives it: uploads, the shipped-trace
selector, the iteration's range and the what-if, read from the state the page is sent.

The hand-made trace (``hand_document``) repeats one iteration three times, 100 ms
apart, so the median iteration is that iteration. Rank 1 starts backward last
(at 11 ms on the trace clock), so times are ms from 11 on that clock:

=========  ======  =====================  ===========  ==========  ======  =========
rank       bwd     gradient b, a          issue b0,b1  done b0,b1  return  optimizer
=========  ======  =====================  ===========  ==========  ======  =========
0          -1      1, 3                   1.5, 3.5     5, 7        7.5     8 to 10
1          0       2, 5                   2.5, 5.5     5, 7        7.5     8 to 10
=========  ======  =====================  ===========  ==========  ======  =========

Parameter b is bucket 0, a is bucket 1. So b's backward runs from backward start
to its gradient and a's from b's gradient to its own; rank 1 issues both buckets
last, in all three iterations; the last gradient is ready at 5 (rank 1's a), the
communication ends at 7, the exposed tail is 7 - 5 = 2, backward returns at 7.5,
and the step runs from rank 1's forward start (1, that is 10 ms before t0) to the
last optimizer end (10): 20 ms.
"""

from __future__ import annotations

import base64
import gzip
import importlib.util
import json
import sys
import threading
from pathlib import Path

import pytest
from drive import FakeWall

from traces import MAX_TRACE_BYTES, TERMS
from traces.shipped import shipped
from traces.upload import MAX_UNPACKED_BYTES, MAX_UPLOAD_BYTES
from widgets.registry import WIDGETS
from widgets.trace_viewer.component import TraceView
from widgets.trace_viewer.model import shipped_traces
from widgets.trace_viewer.state import STEP_ORDER
from widgets.trace_viewer.upload_message import MAX_UPLOAD_MESSAGE_BYTES


def _synthetic():
    """The hand-made trace documents' builder that tests/trace uses."""
    if "synthetic" in sys.modules:
        return sys.modules["synthetic"]
    path = Path(__file__).resolve().parents[1] / "trace" / "synthetic.py"
    spec = importlib.util.spec_from_file_location("synthetic", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["synthetic"] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _iteration(number: int, o: float, load: float = 0.0) -> dict:
    rank = _synthetic().two_parameter_rank
    return {
        "iteration": number,
        "other_load": load,
        "ranks": [
            rank(0, o, o + 10, o + 14, o + 12, (o + 12.5, o + 14.5), (o + 16, o + 18), o + 18.5,
                 (o + 19, o + 21)),
            rank(1, o + 1, o + 11, o + 16, o + 13, (o + 13.5, o + 16.5), (o + 16, o + 18),
                 o + 18.5, (o + 19, o + 21)),
        ],
    }  # fmt: skip


def hand_document() -> dict:
    return _synthetic().two_parameter_document(
        [_iteration(7, 0), _iteration(8, 100), _iteration(9, 200)]
    )


@pytest.fixture
def view() -> TraceView:
    v = WIDGETS["trace"].create()
    v.clock._wall_clock = FakeWall()
    return v


def upload(view: TraceView, data: bytes | str, name: str) -> None:
    """The page's upload message for one file."""
    send_files(view, (name, data.encode("utf-8") if isinstance(data, str) else data))


def drawn(view: TraceView) -> str:
    """Everything the chart, readouts and description are drawn from."""
    return json.dumps([view.state, view.description, view.anchor, view.values], sort_keys=True)


# --- the default: a shipped trace fitted on the other three --------------------------------------


def test_default_shows_a_shipped_trace_fitted_on_the_others(view) -> None:
    s = view.state
    assert view.result.trace.name == "three-layers-per-bucket.json"
    assert s["source"].startswith("Bucket cap 12 MiB: four buckets of three layers")
    assert s["title"] == "Median of 10 iterations" and s["median"] is True
    fit = s["fit"]
    assert set(fit["sources"]) == set(shipped_traces()) - {"three-layers-per-bucket.json"}
    assert not fit["includes_shown"] and not fit["fitted_on_self"]
    assert "2 CPU cores" in s["machine"]["summary"] and s["machine"]["shares_cores"] is True
    assert s["uploaded"] is False and view.upload["shown"] is None
    # Two ranks, each drawn with its 12 layers and 4 buckets, measured and modelled.
    assert [lane["rank"] for lane in s["ranks"]] == [0, 1]
    for lane in s["ranks"]:
        assert len(lane["layers"]["start"]) == 12 and len(lane["comm"]["start"]) == 4
        model = lane["model"]
        assert len(model["layers"]["start"]) == 12 and len(model["comm"]["end"]) == 4
    # The clock runs over everything drawn, starting at the last rank's backward start.
    assert view.anchor["horizon"] == pytest.approx(view.result.end_ms)
    assert view.anchor["elapsed"] == 0.0


def test_the_step_is_told_in_the_order_it_happens() -> None:
    assert STEP_ORDER == (
        "compute_end_ms",
        "communication_end_ms",
        "exposed_tail_ms",
        "backward_return_ms",
        "step_ms",
    )


# --- a hand-made trace, uploaded: every number by hand --------------------------------------------


def test_a_hand_made_upload_is_drawn_as_worked_out_above(view) -> None:
    upload(view, json.dumps(hand_document()), "hand.json")
    s = view.state
    assert s["uploaded"] is True and s["title"] == "Median of 3 iterations"
    r0, r1 = s["ranks"]
    # Parameters in trace order (a, b): a is bucket 1, b bucket 0.
    assert r0["layers"] == {"start": [1.0, -1.0], "end": [3.0, 1.0], "bucket": [1, 0]}
    assert r1["layers"] == {"start": [2.0, 0.0], "end": [5.0, 2.0], "bucket": [1, 0]}
    # No bucket starts in the file: each bar starts at its issue.
    assert r0["comm"] == {
        "start": [1.5, 3.5], "issue": [1.5, 3.5], "end": [5.0, 7.0], "ready": [1.0, 3.0],
        "defines": [False, False],
    }  # fmt: skip
    assert r1["comm"] == {
        "start": [2.5, 5.5], "issue": [2.5, 5.5], "end": [5.0, 7.0], "ready": [2.0, 5.0],
        "defines": [True, True],
    }  # fmt: skip
    assert r0["optimizer"] == r1["optimizer"] == [8.0, 10.0]
    assert r0["backward_return"] == r1["backward_return"] == 7.5
    measured = {q: v["measured"] for q, v in s["quantities"].items()}
    assert measured == {
        "compute_end_ms": 5.0,
        "communication_end_ms": 7.0,
        "exposed_tail_ms": 2.0,
        "backward_return_ms": 7.5,
        "step_ms": 20.0,
    }
    assert s["order"] == list(STEP_ORDER)
    assert s["defining"] == [
        {"bucket": 0, "parameters": 1, "mib": 8 / 2**20, "rank": 1, "counts": [0, 3]},
        {"bucket": 1, "parameters": 1, "mib": 8 / 2**20, "rank": 1, "counts": [0, 3]},
    ]
    # Its parameters are not the shipped traces': the model is fitted on it, and says so.
    assert s["fit"]["fitted_on_self"] is True and s["fit"]["iterations_used"] == 3
    # The machine: two cores for two ranks, nothing else running.
    assert s["machine"]["shares_cores"] is True
    assert (s["machine"]["load_low"], s["machine"]["load_high"]) == (0.0, 0.0)
    # The description tells the step in the same order, with the same numbers.
    assert (
        "Measured: the last gradient is ready at 5.00 ms, the last all-reduce ends at 7.00 ms, "
        "exposed tail 2.00 ms, backward returns at 7.50 ms, step 20.00 ms." in view.description
    )
    assert "Readiness of buckets 0 to 1 is defined by rank 1, 1." in view.description


def test_the_largest_model_error_is_the_one_stated_first(view) -> None:
    states = [view.state]
    upload(view, json.dumps(hand_document()), "hand.json")
    states.append(view.state)
    for state in states:
        errors = {q: abs(v["error_pct"]) for q, v in state["quantities"].items()}
        assert errors[state["largest_error"]] == max(errors.values())
        worst = state["quantities"][state["largest_error"]]
        assert worst["error_pct"] == pytest.approx(
            100 * (worst["model"] - worst["measured"]) / worst["measured"]
        )


def test_one_iteration_of_the_hand_made_trace_is_drawn_from_its_own_t0(view) -> None:
    upload(view, json.dumps(hand_document()), "hand.json")
    view.edit("iteration", "2")
    s = view.state
    assert s["title"] == "Iteration 8 (2 of 3)" and s["median"] is False
    # The same numbers: every iteration is the same, 100 ms on.
    assert s["ranks"][1]["comm"]["start"] == [2.5, 5.5]
    assert s["quantities"]["exposed_tail_ms"]["measured"] == 2.0
    assert "hand.json, iteration 8 (2 of 3)" in view.description


# --- uploads --------------------------------------------------------------------------------------


def test_a_good_upload_is_shown_and_the_selector_brings_a_shipped_trace_back(view) -> None:
    view.act("step")
    upload(view, shipped()["one-bucket.json"].read_bytes(), "mine.json")
    assert view.result.trace.name == "mine.json" and view.result.trace.n_buckets == 1
    assert view.upload["shown"] == "mine.json" and view.upload["error"] == ""
    assert view.upload["status"].startswith("Showing your upload, mine.json.")
    assert view.state["source"].startswith("Your upload mine.json: 1 bucket: 12 parameters")
    assert view.anchor["elapsed"] == 0.0  # a new trace starts a new run
    # An upload is fitted on every shipped trace.
    assert set(view.result.fit.sources) == set(shipped_traces())
    assert view.state["fit"]["includes_shown"] is False
    view.settings.trace = "mixed-5-5-2.json"
    assert view.uploaded is None and view.result.trace.name == "mixed-5-5-2.json"
    assert view.upload["shown"] is None and view.upload["status"] == ""


def test_show_the_shipped_trace_again_leaves_the_upload(view) -> None:
    upload(view, shipped()["one-bucket.json"].read_bytes(), "mine.json")
    view._handle_msg({"action": "shipped"})
    assert view.uploaded is None and view.result.trace.name == "three-layers-per-bucket.json"
    assert view.upload["shown"] is None and view.upload["status"] == ""
    assert view.state["uploaded"] is False


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"{not json", "not valid JSON"),
        (b'{"format": "overlap-lab-trace"}', "trace"),
        (b"\xff\xfe", "not UTF-8"),
        (b" " * (9 * 1024 * 1024), "limit"),
        (b"", "bad.json is empty (0 bytes)"),
    ],
)
def test_a_bad_upload_says_why_and_keeps_the_previous_trace(view, data, words) -> None:
    view.act("step")
    view.act("step")
    before = (view.result, drawn(view), view.clock.elapsed)
    assert not view.load_upload(data, "bad.json")
    message = view.upload["error"]
    assert message.startswith("Not loaded: ") and words in message
    assert message.endswith("The trace shown is unchanged.")
    assert view.upload["status"] == "" and view.upload["shown"] is None
    assert view.result is before[0]
    assert drawn(view) == before[1]
    assert view.clock.elapsed == before[2]
    assert view.uploaded is None


def test_a_bad_upload_after_a_good_one_keeps_the_good_one(view) -> None:
    upload(view, shipped()["one-bucket.json"].read_bytes(), "mine.json")
    before = drawn(view)
    upload(view, "print('hello')", "notes.json")
    assert "not valid JSON" in view.upload["error"]
    assert view.uploaded is not None and view.uploaded.name == "mine.json"
    assert view.upload["shown"] == "mine.json"  # its button stays: the upload is still shown
    assert drawn(view) == before


def test_a_schema_error_names_the_field(view) -> None:
    doc = json.loads(shipped()["one-bucket.json"].read_text())
    del doc["iterations"][0]["ranks"][1]["backward_start"]
    upload(view, json.dumps(doc), "broken.json")
    assert "backward_start" in view.upload["error"]


def test_only_files_with_a_name_a_size_and_base64_make_an_upload(view) -> None:
    before = (drawn(view), dict(view.upload))
    text = shipped()["one-bucket.json"].read_text()
    good = {"name": "x.json", "size": len(text), "base64": base64.b64encode(text.encode()).decode()}
    for msg in (
        {"upload_files": []},
        {"upload_files": good},
        {"upload_files": [{**good, "name": ["x.json"]}]},
        {"upload_files": [{**good, "base64": text.encode()}]},
        {"upload_files": [{**good, "size": str(len(text))}]},
        {"upload_files": [{**good, "size": True}]},
        {"upload_files": [good, "x.json"]},
        {"upload": "x.json", "text": text},  # the text message no page sends any more
    ):
        view._handle_msg(msg)
    assert (drawn(view), view.upload) == before
    # A long name is cut before it is shown.
    upload(view, "{", "n" * 500 + ".json")
    assert "n" * 80 in view.upload["error"] and "n" * 81 not in view.upload["error"]


def test_the_page_is_told_the_limits_it_checks_before_sending(view) -> None:
    mib = 1024 * 1024
    assert view.upload["max_bytes"] == MAX_UPLOAD_BYTES == 12 * mib
    assert view.upload["max_unpacked_bytes"] == MAX_UNPACKED_BYTES == 64 * mib
    assert view.upload["max_trace_bytes"] == MAX_TRACE_BYTES == 8 * mib
    assert view.upload["max_files"] == 32
    # 12 MiB in base64 is 4 characters for every 3 bytes, 16 MiB, and each of 32 files'
    # last one or two bytes take 4 characters more.
    assert view.upload["max_message_bytes"] == MAX_UPLOAD_MESSAGE_BYTES == 16 * mib + 4 * 32


def test_the_largest_upload_message_fits_the_servers_websocket_limit() -> None:
    from bokeh.server.tornado import DEFAULT_WEBSOCKET_MAX_MESSAGE_SIZE_BYTES

    from app.server.serving import server_options

    options = server_options()  # as the CLI serves by default
    limit = options.get("websocket_max_message_size", DEFAULT_WEBSOCKET_MAX_MESSAGE_SIZE_BYTES)
    envelope = 64 * 1024  # Bokeh's message header, metadata and event around the files
    # The largest upload the page sends: 32 files of 80-character names, 12 MiB together.
    share = MAX_UPLOAD_BYTES // 32
    files = [{"name": "x" * 80, "size": share, "base64": "A" * (4 * -(-share // 3))}] * 32
    message = json.dumps({"upload_files": files}).encode()
    assert sum(len(f["base64"]) for f in files) <= MAX_UPLOAD_MESSAGE_BYTES
    assert len(message) + envelope <= limit


# --- the iteration: its range is the trace's ------------------------------------------------------


def test_an_iteration_past_the_trace_is_ignored_with_a_notice() -> None:
    spec = WIDGETS["trace"]
    kwargs, notices = spec.parse({"iteration": ["999"]})
    view = spec.create(**kwargs)
    view.show_notices(notices)
    assert view.notices == ["Ignored iteration=999: Iteration must be 0 to 10."]
    assert view.settings.iteration == 0 and view.values["iteration"] == "0"
    assert view.state["title"] == "Median of 10 iterations"
    view.enable_share("http://example.test:5006", own_page=True)
    assert "iteration=0" in view.share["query"] and "999" not in view.share["link"]


def test_the_iteration_help_and_edits_state_the_actual_range(view) -> None:
    hint = next(f["hint"] for f in view.fields if f["name"] == "iteration")
    assert hint == "0 to 10: 0 draws the median iteration, 1 to 10 one recorded iteration"
    view.edit("iteration", "11")
    assert view.errors["iteration"] == "Iteration must be 0 to 10."
    assert view.settings.iteration == 0
    view.edit("iteration", "10")
    assert view.state["title"].endswith("(10 of 10)")
    assert "iteration" not in view.errors


def test_an_upload_with_fewer_iterations_brings_its_own_range(view) -> None:
    view.edit("iteration", "5")
    upload(view, json.dumps(hand_document()), "hand.json")
    # Iteration 5 does not exist in a three-iteration trace: the median is shown, and said.
    assert view.settings.iteration == 0 and view.values["iteration"] == "0"
    assert "It has 3 iterations: the median is shown." in view.upload["status"]
    hint = next(f["hint"] for f in view.fields if f["name"] == "iteration")
    assert hint.startswith("0 to 3:")
    view.edit("iteration", "4")
    assert view.errors["iteration"] == "Iteration must be 0 to 3."
    view._handle_msg({"action": "shipped"})
    assert next(f["hint"] for f in view.fields if f["name"] == "iteration").startswith("0 to 10:")


def test_selector_changes_the_trace_and_the_fit(view) -> None:
    view.settings.trace = "one-layer-per-bucket.json"
    r = view.result
    assert r.trace.n_buckets == 12 and view.state["n_buckets"] == 12
    assert "one-layer-per-bucket.json" not in view.state["fit"]["sources"]
    assert "one-layer-per-bucket.json, median of 10 iterations" in view.describe()
    view.settings.iteration = 3
    assert view.result.iteration == 2
    assert "(3 of 10)" in view.describe() and view.state["title"].endswith("(3 of 10)")


# --- the what-if ---------------------------------------------------------------------------------


def test_what_if_shows_the_prediction_and_the_measured_trace_of_that_cap(view) -> None:
    view.edit("what_if_cap_mb", "48")
    w = view.state["what_if"]
    # 48 MiB holds all twelve 4 MiB layers: one bucket, the layout one-bucket.json recorded.
    assert w["cap_mb"] == 48.0 and w["layout"] == "1 bucket: 12 parameters"
    assert w["measured_name"] == "one-bucket.json"
    assert w["predicted"] == view.result.what_if.predicted
    assert w["measured"] == view.result.what_if.measured
    assert set(w["predicted"]) == set(w["measured"]) == {
        "backward_return_ms", "communication_end_ms", "exposed_tail_ms", "step_ms"
    }  # fmt: skip
    assert "at a 48 MiB cap (1 bucket: 12 parameters)" in view.description
    view.edit("what_if_cap_mb", "8")
    w = view.state["what_if"]
    # 8 MiB: two layers a bucket, six buckets; no shipped trace has that layout.
    assert w["measured"] is None and w["measured_name"] is None
    assert w["layout"] == "6 buckets: 2+2+2+2+2+2 parameters"
    assert "(no trace of that layout recorded)" in view.description


# --- the data table and the machine --------------------------------------------------------------


def test_the_table_holds_every_bar_measured_and_modelled(view) -> None:
    table = view.model_state()["table"]
    keys = [c["key"] for c in table["columns"]]
    source = [row[keys.index("source")] for row in table["rows"]]
    # Two ranks: 12 layers, 4 buckets and the optimizer each, measured and modelled.
    assert source.count("measured") == 2 * (12 + 4 + 1)
    assert source.count("model") == 2 * (12 + 4 + 1)
    kinds = [row[keys.index("kind")] for row in table["rows"]]
    assert kinds.count("all-reduce") == 2 * 2 * 4
    # Every measured all-reduce says whether its rank issued it last.
    for row in table["rows"]:
        if row[keys.index("kind")] == "all-reduce" and row[keys.index("source")] == "measured":
            assert isinstance(row[keys.index("issued_last")], bool)
            assert row[keys.index("bucket_mib")] == 12.0  # three 4 MiB layers


def test_the_hand_made_table_rows(view) -> None:
    upload(view, json.dumps(hand_document()), "hand.json")
    table = view.model_state()["table"]
    keys = [c["key"] for c in table["columns"]]
    rows = [dict(zip(keys, row, strict=True)) for row in table["rows"]]
    measured0 = [r for r in rows if r["rank"] == 0 and r["source"] == "measured"]
    assert [(r["name"], r["start_ms"], r["end_ms"]) for r in measured0] == [
        ("b", -1.0, 1.0),
        ("a", 1.0, 3.0),
        ("Bucket 0", 1.5, 5.0),
        ("Bucket 1", 3.5, 7.0),
        ("Optimizer", 8.0, 10.0),
    ]
    assert [r["bucket_ready_ms"] for r in measured0] == [None, None, 1.0, 3.0, None]
    assert [r["issued_last"] for r in measured0] == [None, None, False, False, None]
    rank1 = [r["issued_last"] for r in rows if r["rank"] == 1 and r["source"] == "measured"]
    assert rank1 == [None, None, True, True, None]


def test_the_machine_note_says_how_busy_other_processes_kept_it(view) -> None:
    # The shown shipped trace: the least and most other load of its iterations, as recorded.
    doc = json.loads(shipped()["three-layers-per-bucket.json"].read_bytes())
    loads = [it["other_load"] for it in doc["iterations"]]
    m = view.state["machine"]
    assert (m["load_low"], m["load_high"]) == (min(loads), max(loads))
    # An upload whose iterations saw 10 % and 30 % of other load gives the range.
    doc = json.loads(shipped()["one-bucket.json"].read_bytes())
    for i, it in enumerate(doc["iterations"]):
        it["other_load"] = 0.1 if i % 2 else 0.3
    upload(view, json.dumps(doc), "busy.json")
    m = view.state["machine"]
    assert (m["load_low"], m["load_high"]) == (0.1, 0.3)


# --- what the fit can vouch for, and how well the model predicts in general ----------------------


def test_the_fit_says_what_it_cannot_vouch_for_and_how_well_it_predicts(view) -> None:
    from widgets.trace_viewer.state import PREDICTION_QUALITY

    # Three layers per bucket (12 MiB) from the 4, 20 + 8 and 48 MiB runs: inside their sizes.
    caveat = view.state["fit"]["caveat"]
    assert "cannot vouch" not in caveat and caveat.endswith(PREDICTION_QUALITY)
    # The shipped traces hold all-reduces and backward timed alone: every term is identified.
    assert all(json.loads(p.read_bytes()).get("isolated") for p in shipped().values())
    assert "Not identified" not in caveat
    # One bucket (48 MiB = 12 layers of 4 MiB) from runs whose buckets hold at most 20 MiB,
    # but whose all-reduces timed alone reach the whole gradient: the fit vouches for it,
    # and so does the what-if for a cap that makes it. (A layout outside the sizes a fit
    # holds is refused: test_a_fit_on_one_layout_says_which_terms_it_could_fit below.)
    sizes = {e["bytes"] for e in json.loads(shipped()["one-bucket.json"].read_bytes())[
        "isolated"]["allreduce"]}  # fmt: skip
    assert max(sizes) == 12 * 4 * 1024 * 1024
    view.settings.trace = "one-bucket.json"
    assert "cannot vouch" not in view.state["fit"]["caveat"]
    view.settings.what_if_cap_mb = 100.0
    assert view.state["what_if"]["refusal"] is None
    view.settings.what_if_cap_mb = 12.0
    assert view.state["what_if"]["refusal"] is None


# --- torch.profiler files: one per rank, gzipped or not -------------------------------------------
#
# The hand-built GPU-shaped profiles of tests/trace/profiles (make_nccl_profiles.py: its
# docstring holds every time, in us from a step's base B on that rank; rank 1's B is 50 us
# after rank 0's). The view measures from the late rank's backward start, rank 1's end of
# DDP forward (B + 2000), so rank 1's times are (t - 2000) / 1000 ms and rank 0's 0.05 ms less:
#
# =====================  ==========================  ==============================
#                        rank 1                      rank 0
# =====================  ==========================  ==============================
# bucket issue           3300, 5600, 6050 -> 1.3,    1.25, 3.55, 4.0
#                        3.6, 4.05
# bucket complete        4800, 6600, 7400 + 200k ->  2.75, 4.55, 5.35 + 0.2k
#                        2.8, 4.6, 5.4 + 0.2k
# bucket ready (the      3200, 5500, 6400 -> 1.2,    1.15, 3.45, 3.95 (its last kernel
# last backward kernel   3.5, 4.4                    ends at 6000)
# end before its kernel)
# =====================  ==========================  ==============================
#
# So, medians over k = 0, 1, 2: the last gradient is ready at 4.4 (rank 1's bucket 2), the
# communication ends at 5.4 + 0.2k -> 5.6, the exposed tail is 1.2, backward returns at
# 5.6 (when the last bucket's kernel ends), and the step is forward (2000 - 100 = 1.9) plus
# the optimizer kernel's end (7700 + 200k -> 5.7 + 0.2k): 7.6 + 0.2k -> 7.8. Rank 1 issues
# every bucket last (50 us later), in all three steps. Its buckets are 1, 2 and 0.25 MiB and
# take 1.5, 1.0 and 0.8 + 0.2k ms (bucket 2 waits for bucket 1's end): the larger bucket is
# not the slower, so no positive bandwidth fits them, and the view draws the measurement
# alone and says why. ``fittable`` makes bucket 1 0.5 MiB (131072 floats): then it fits.

PROFILES = Path(__file__).resolve().parents[1] / "trace" / "profiles"


def _profiles():
    """The builder of the hand-made profiler files (tests/trace/profiles)."""
    if "make_nccl_profiles" in sys.modules:
        return sys.modules["make_nccl_profiles"]
    spec = importlib.util.spec_from_file_location(
        "make_nccl_profiles", PROFILES / "make_nccl_profiles.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_nccl_profiles"] = module
    spec.loader.exec_module(module)
    return module


def profile_bytes(rank: int, packed: bool = False, edit=None) -> bytes:
    """Rank ``rank``'s profile file as the builder writes it (gzipped if ``packed``)."""
    document = _profiles().profile(rank)
    if edit is not None:
        edit(document)
    data = json.dumps(document, indent=1).encode()
    return gzip.compress(data, mtime=0) if packed else data


def fittable(document: dict) -> None:
    """Bucket 1 of 0.5 MiB (131072 floats, not 524288): sizes 1, 0.5 and 0.25 MiB."""
    for event in document["traceEvents"]:
        args = event.get("args", {})
        if args.get("In msg nelems") == 524288:
            args["In msg nelems"] = args["Out msg nelems"] = 131072


def send_files(view: TraceView, *files: tuple[str, bytes]) -> None:
    """The page's one message for the chosen files: their names, sizes and base64 bytes."""
    view._handle_msg({
        "upload_files": [
            {"name": name, "size": len(data), "base64": base64.b64encode(data).decode("ascii")}
            for name, data in files
        ]
    })  # fmt: skip


@pytest.mark.parametrize(
    ("packed0", "packed1"), [(False, False), (True, True), (False, True), (True, False)]
)
def test_two_profile_files_gzipped_or_not_are_drawn_as_worked_out(view, packed0, packed1) -> None:
    names = [f"rank{r}.json{'.gz' * p}" for r, p in ((0, packed0), (1, packed1))]
    send_files(
        view,
        (names[0], profile_bytes(0, packed0)),
        (names[1], profile_bytes(1, packed1)),
    )
    assert view.upload["error"] == ""
    assert view.upload["status"].startswith(
        f"Showing your upload, {names[0]} and {names[1]}: torch.profiler files of 2 ranks, "
        "imported as a trace of 3 iterations."
    )
    assert view.upload["shown"] == f"{names[0]} + {names[1]}"
    s = view.state
    assert s["uploaded"] is True and s["title"] == "Median of 3 iterations"
    r0, r1 = s["ranks"]
    assert (r0["run_rank"], r1["run_rank"]) == (0, 1)
    # Bars run from each kernel's start (B+3300, 5600, 6600 us; t0 is rank 1's backward
    # start, B+2000 on rank 1, 50 us after rank 0's); the issue-last mark sits at the
    # nccl:all_reduce launch (B+3300, 5600, 6050).
    assert r1["comm"]["start"] == pytest.approx([1.3, 3.6, 4.6])
    assert r1["comm"]["issue"] == pytest.approx([1.3, 3.6, 4.05])
    assert r1["comm"]["end"] == pytest.approx([2.8, 4.6, 5.6])
    assert r0["comm"]["start"] == pytest.approx([1.25, 3.55, 4.55])
    assert r0["comm"]["issue"] == pytest.approx([1.25, 3.55, 4.0])
    assert r0["comm"]["end"] == pytest.approx([2.75, 4.55, 5.55])
    assert r1["comm"]["ready"] == pytest.approx([1.2, 3.5, 4.4])
    assert r0["comm"]["ready"] == pytest.approx([1.15, 3.45, 3.95])
    assert r1["comm"]["defines"] == [True, True, True] and not any(r0["comm"]["defines"])
    # Each pseudo-parameter's backward runs from the one before (or backward start) to its end.
    assert r1["layers"]["start"] == pytest.approx([0.0, 1.2, 3.5])
    assert r1["layers"]["end"] == pytest.approx([1.2, 3.5, 4.4])
    assert r1["layers"]["bucket"] == [0, 1, 2]
    measured = {q: v["measured"] for q, v in s["quantities"].items()}
    assert measured == pytest.approx({
        "compute_end_ms": 4.4,
        "communication_end_ms": 5.6,
        "exposed_tail_ms": 1.2,
        "backward_return_ms": 5.6,
        "step_ms": 7.8,
    })  # fmt: skip
    assert [d["counts"] for d in s["defining"]] == [[0, 3]] * 3
    assert [d["mib"] for d in s["defining"]] == [1.0, 2.0, 0.25]
    # Every rank's file, one clock: rank 0's kernels start 50 us before rank 1's and spin
    # until it joins, 3 x 50 us of its 1.5 + 1.0 + 1.0 ms of all-reduce kernels.
    assert s["defined_on_device"] is True
    assert s["peer_waits"] == [
        {"rank": 0, "wait_ms": pytest.approx(0.15), "allreduce_ms": pytest.approx(3.5)},
        {"rank": 1, "wait_ms": 0.0, "allreduce_ms": pytest.approx(3.5)},
    ]
    assert "Peer waits (all-reduce kernels spinning for the last rank): rank 0 0.15" in (
        view.describe()
    )
    assert s["source"] == (
        f"Your upload {names[0]} + {names[1]}: torch.profiler files imported as a trace, "
        "3 buckets of 1, 2 and 0.25 MiB, 2 ranks."
    )


def test_the_page_says_what_the_run_was_and_what_a_profile_cannot_show(view) -> None:
    send_files(view, ("rank0.json", profile_bytes(0)), ("rank1.json.gz", profile_bytes(1, True)))
    run = view.state["run"]
    assert run["source"] == "torch.profiler" and run["times"] == "device"
    assert run["readiness"] == "per-bucket, approximate"
    assert run["description"] == (
        "Imported from torch.profiler: 2 files (rank0.json and rank1.json.gz), ranks 0 and 1, "
        "the whole run; nccl backend, NCCL 2.21.5; GPU: NVIDIA A100-SXM4-80GB. Device times: "
        "when the GPU ran each kernel (the all-reduces and backward's compute), on the "
        "profiler's timeline."
    )
    cannot = run["cannot_know"]
    assert cannot.startswith(
        "What a profile cannot show: which parameter each gradient belongs to, and when each "
        "one was ready."
    )
    assert 'each of the 3 buckets is one pseudo-parameter ("bucket 0" to "bucket 2")' in cannot
    assert "approximate" in cannot
    assert "the per-layer backward terms are fitted per bucket, not per layer" in cannot
    # The machine: a GPU run, no cores or threads per rank in a profile (none invented).
    m = view.state["machine"]
    assert m["summary"] == "2 ranks, nccl backend, device cuda, GPU: NVIDIA A100-SXM4-80GB"
    assert m["effect"] == "device" and m["model"] == "model not stated"
    assert (m["load_low"], m["load_high"]) == (None, None)
    # A recorded trace says where it came from too, and has nothing a profile lacks.
    view._handle_msg({"action": "shipped"})
    run = view.state["run"]
    assert run["source"] == "recorder" and run["cannot_know"] is None
    assert run["description"].startswith("Recorded by overlap-lab's recorder, ranks 0 and 1")


def test_one_ranks_file_of_a_larger_run_says_which_rank_it_is(view) -> None:
    send_files(view, ("rank1.json.gz", profile_bytes(1, True)))
    s = view.state
    assert [lane["run_rank"] for lane in s["ranks"]] == [1]
    assert s["run"]["ranks_in_run"] == [1] and s["run"]["run_world_size"] == 2
    assert "rank 1 of a run of 2 (the other ranks are not in the file" in s["run"]["description"]
    assert [d["rank"] for d in s["defining"]] == [1, 1, 1]
    assert "defined by rank 1, 1, 1." in view.description


def test_a_profile_the_model_cannot_fit_is_drawn_as_measured_and_says_why(view) -> None:
    send_files(view, ("rank0.json", profile_bytes(0)), ("rank1.json", profile_bytes(1)))
    s = view.state
    assert s["has_model"] is False and s["largest_error"] is None
    assert all(lane["model"] is None for lane in s["ranks"])
    assert all(v["model"] is None and v["error_pct"] is None for v in s["quantities"].values())
    assert s["fit"]["error"] == "the transfers could not be fitted (no positive bandwidth)"
    assert s["fit"]["caveat"].startswith("The model could not be fitted to this trace: ")
    assert s["what_if"] is None
    assert (
        "No model is drawn: it could not be fitted to this trace (the transfers could not be "
        "fitted (no positive bandwidth))." in view.description
    )
    # Only the measured bars are in the table: 3 layers, 3 all-reduces, the optimizer a rank.
    table = view.model_state()["table"]
    assert [row[2] for row in table["rows"]] == ["measured"] * 2 * 7
    # The clock still runs over everything drawn: the last optimizer end, 5.9 ms (median).
    assert view.anchor["horizon"] == pytest.approx(5.9)


def unsized(document: dict) -> None:
    """No sizes anywhere (an older Kineto, record_shapes off): no ``In msg nelems``."""
    for event in document["traceEvents"]:
        for key in ("In msg nelems", "Out msg nelems", "Input Dims"):
            event.get("args", {}).pop(key, None)


def test_a_profile_without_sizes_is_drawn_as_measured_and_says_sizes_are_unknown(view) -> None:
    send_files(
        view,
        ("rank0.json", profile_bytes(0, edit=unsized)),
        ("rank1.json", profile_bytes(1, edit=unsized)),
    )
    assert view.upload["error"] == "" and view.upload["shown"] == "rank0.json + rank1.json"
    s = view.state
    # Drawn as measured: the same bars as with sizes (3 layers, 3 all-reduces, the optimizer).
    assert s["has_model"] is False and s["what_if"] is None
    assert [row[2] for row in view.model_state()["table"]["rows"]] == ["measured"] * 2 * 7
    assert [row[6] for row in view.model_state()["table"]["rows"] if row[3] == "all-reduce"] == [
        None
    ] * 6
    assert view.anchor["horizon"] == pytest.approx(5.9)
    assert [d["mib"] for d in s["defining"]] == [None, None, None]
    # The page says why there is no model, and what the file lacks.
    assert "bucket sizes unknown" in s["fit"]["error"]
    assert "record with record_shapes=True or a newer Kineto" in s["fit"]["error"]
    assert "Nor does this one give the buckets' sizes" in s["run"]["cannot_know"]
    assert "3 buckets, size unknown" in view.description
    assert "nan" not in drawn(view).lower()
    json.dumps([view.state, view.model_state()], allow_nan=False)


def test_a_fit_on_one_layout_says_which_terms_it_could_fit(view) -> None:
    send_files(
        view,
        ("rank0.json", profile_bytes(0, edit=fittable)),
        ("rank1.json", profile_bytes(1, edit=fittable)),
    )
    s = view.state
    assert s["has_model"] is True and s["fit"]["fitted_on_self"] is True
    w = s["what_if"]
    assert w["one_layout"] is True
    assert [t["term"] for t in w["terms"]] == list(TERMS)
    fitted = {t["term"]: t["fitted"] for t in w["terms"]}
    # Buckets of three sizes (1, 0.5, 0.25 MiB) separate overhead from bandwidth. Bucket 0's
    # backward ran free of transfers, buckets 1's and 2's under one (bucket 0's, 1.3 to 2.8;
    # bucket 1's, from 3.6): no pseudo-layer was seen both ways, so backward contention is
    # not identified. Six transfers ran while a rank computed and three after (bucket 2's,
    # from 4.6), fewer than five each way: nor is transfer contention. No backward alone:
    # no finalize per MiB and no copy-back.
    assert fitted == {
        "backward_total_ms": True,
        "overhead_ms": True,
        "bandwidth_gbps": True,
        "contention": False,
        "rank_contention": False,
        "transfer_contention": False,
        "enqueue_ms": True,
        "finalize_ms": True,
        "finalize_ms_per_mib": False,
        "copy_back_ms_per_mib": False,
    }
    why = {t["term"]: t["why"] for t in w["terms"]}
    assert why["contention"] == "no layer was seen both with and without a transfer in flight"
    assert "one term per bucket, not per layer" in why["backward_total_ms"]
    assert "0.25 to 1 MiB" in why["overhead_ms"]
    # 20 MiB holds all three measured buckets (1.75 MiB): outside the fitted sizes.
    assert w["layout"] == "1 bucket of 1.75 MiB (measured buckets 0+1+2)"
    assert w["refusal"].startswith(
        "buckets of 1.75 MiB lie outside the fitted buckets' sizes (0.25 MiB to 1 MiB)"
    )
    # 1 MiB closes a bucket after bucket 0: inside the sizes, but two buckets need both
    # contention terms, which one layout did not identify.
    view.edit("what_if_cap_mb", "1")
    w = view.state["what_if"]
    assert w["layout"] == "2 buckets of 1 and 0.75 MiB (measured buckets 0, 1+2)"
    assert w["refusal"] == (
        "its transfers run under backward, and no fitted layout identified how much they slow "
        "backward (backward contention); its transfers run under backward, and too few fitted "
        "transfers did to identify how much backward slows them (transfer contention)"
    )
    assert len(w["terms"]) == len(TERMS)
    # A shipped trace is fitted on three other layouts: no such list.
    view._handle_msg({"action": "shipped"})
    assert view.state["what_if"]["one_layout"] is False and view.state["what_if"]["terms"] == []


def test_an_overlap_lab_trace_still_uploads_plain_or_gzipped(view) -> None:
    data = shipped()["one-bucket.json"].read_bytes()
    send_files(view, ("mine.json", data))
    assert view.upload["status"].startswith("Showing your upload, mine.json.")
    assert view.result.trace.n_buckets == 1 and view.state["run"]["source"] == "recorder"
    send_files(view, ("mine.json.gz", gzip.compress(data)))
    assert view.upload["status"].startswith("Showing your upload, mine.json.gz.")
    assert set(view.result.fit.sources) == set(shipped_traces())


def _gzip_bomb() -> bytes:
    """Spaces (JSON whitespace) unpacking to one byte over an upload's limit (~65 kB packed)."""
    return gzip.compress(b" " * (MAX_UNPACKED_BYTES + 1), compresslevel=9, mtime=0)


def _damaged() -> bytes:
    """Rank 1's gzipped file with one byte of its compressed data flipped."""
    data = bytearray(profile_bytes(1, True))
    data[500] ^= 0xFF
    return bytes(data)


def _without(kinds) -> bytes:
    def edit(document: dict) -> None:
        document["traceEvents"] = [
            e for e in document["traceEvents"] if not str(e.get("name", "")).startswith(kinds)
        ]

    return profile_bytes(0, edit=edit)


@pytest.mark.parametrize(
    ("files", "words"),
    [
        # A gzip cut short: the first 1500 bytes of rank 1's file.
        (lambda: [("rank1.json.gz", profile_bytes(1, True)[:1500])], "the gzip data is cut short"),
        (lambda: [("bomb.json.gz", _gzip_bomb())], "unpacks to more than the 64 MiB limit"),
        (
            lambda: [("other.json", b'{"hello": "world", "events": [1, 2]}')],
            'other.json: JSON, but neither an overlap-lab trace (it has no "format": '
            '"overlap-lab-trace") nor a torch.profiler trace (no "traceEvents")',
        ),
        (lambda: [("rank0.json", profile_bytes(0)[:20000])], "cut short"),
        (lambda: [("steps.json", _without("ProfilerStep#"))], "no ProfilerStep#N ranges"),
        (lambda: [("comms.json", _without(("nccl", "ncclDev")))], "no collectives"),
        (lambda: [("rank1.json.gz", _damaged())], "rank1.json.gz: damaged gzip data"),
        (
            lambda: [
                ("rank0.json", profile_bytes(0)),
                ("mine.json", shipped()["one-bucket.json"].read_bytes()),
            ],
            "mine.json is an overlap-lab trace: upload it alone",
        ),
        (
            lambda: [("a.json", profile_bytes(0)), ("b.json", profile_bytes(0))],
            "both hold rank 0; give each rank once",
        ),
        (lambda: [("empty.json.gz", b"")], "empty.json.gz is empty (0 bytes)"),
    ],
)
def test_a_bad_profile_keeps_the_previous_trace_and_says_why(view, files, words) -> None:
    send_files(view, ("rank0.json", profile_bytes(0)), ("rank1.json.gz", profile_bytes(1, True)))
    view.act("step")
    shown = view.uploaded
    before = (drawn(view), view.clock.elapsed)
    send_files(view, *files())
    message = view.upload["error"]
    assert message.startswith("Not loaded: ") and message.endswith("The trace shown is unchanged.")
    assert words in message
    assert view.uploaded is shown and view.upload["shown"] == "rank0.json + rank1.json.gz"
    assert (drawn(view), view.clock.elapsed) == before


def test_an_oversize_or_damaged_message_is_refused_before_reading(view) -> None:
    upload(view, json.dumps(hand_document()), "hand.json")
    before = drawn(view)
    answers = []
    # More base64 than 12 MiB of files make (a page never sends it: it refuses first).
    big = {"name": "big.json.gz", "size": 3, "base64": "A" * (MAX_UPLOAD_MESSAGE_BYTES + 4)}
    view._handle_msg({"upload_files": [big]})
    answers.append(view.upload["error"])
    # 33 files: one more than an upload takes.
    view._handle_msg(
        {"upload_files": [{"name": f"r{k}.json", "size": 1, "base64": "e30="} for k in range(33)]}
    )
    answers.append(view.upload["error"])
    # Base64 that is not, and bytes that did not all arrive.
    view._handle_msg({"upload_files": [{"name": "x.json", "size": 2, "base64": "e3*="}]})
    answers.append(view.upload["error"])
    view._handle_msg({"upload_files": [{"name": "x.json", "size": 10, "base64": "e30="}]})
    answers.append(view.upload["error"])
    assert answers[0].startswith("Not loaded: big.json.gz: more than an upload here takes")
    assert "12,582,912 bytes together, 12 MiB" in answers[0]
    assert answers[1].startswith("Not loaded: 33 files: more than an upload here takes")
    assert answers[2] == (
        "Not loaded: x.json: its bytes did not arrive intact (damaged base64). "
        "The trace shown is unchanged."
    )
    assert answers[3].startswith("Not loaded: x.json: 2 bytes arrived of the 10 the page read")
    assert drawn(view) == before and view.uploaded.name == "hand.json"
    # Every answer is a new one, so the page hears each (the same words twice included).
    counts = set()
    for _ in range(2):
        view._handle_msg({"upload_files": [{"name": "x.json", "size": 10, "base64": "e30="}]})
        counts.add(view.upload["n"])
    assert len(counts) == 2


def test_the_files_of_one_upload_are_limited_together(view) -> None:
    # Two files of 6 MiB + 1 byte each: 12 MiB + 2 bytes together, one over per file.
    half = b" " * (MAX_UPLOAD_BYTES // 2 + 1)
    assert not view.load_files([("a.json", half), ("b.json", half)])
    assert view.upload["error"].startswith(
        "Not loaded: 2 files: 12,582,914 bytes is more than the 12,582,912-byte limit (12 MiB) "
        "of an upload here; import larger profiles with `overlap-lab import`"
    )
    # Unpacked, every file counts against the same 64 MiB: two of 40 MiB are too much.
    packed = gzip.compress(b" " * (40 * 1024 * 1024), mtime=0)
    assert not view.load_files([("a.json.gz", packed), ("b.json.gz", packed)])
    assert "b.json.gz: unpacks to more than the 64 MiB limit of one upload" in view.upload["error"]


def test_a_class_round_that_keeps_the_settings_refuses_uploads_too(view) -> None:
    view.allowed_by_round = lambda request: False
    before = (drawn(view), dict(view.upload))
    send_files(view, ("rank0.json", profile_bytes(0)))
    upload(view, shipped()["one-bucket.json"].read_bytes(), "mine.json")
    view._handle_msg({"action": "shipped"})
    assert (drawn(view), view.upload) == before and view.uploaded is None


def test_a_profile_imported_before_format_version_2_reads_the_same(view) -> None:
    # An import made before version 2 kept the run in a top-level "profile" block and wrote
    # 1 core and 1 thread per rank for want of a value: the page says none of those.
    send_files(view, ("rank0.json", profile_bytes(0)), ("rank1.json.gz", profile_bytes(1, True)))
    v2 = view.state["run"]["description"]
    document = json.loads(json.dumps(view.uploaded.document))
    md = document["metadata"]
    document["version"] = 1
    document["profile"] = {
        "source": md.pop("source"),
        "times": md.pop("times"),
        "files": md.pop("profile_files"),
        "ranks": [0, 1],
        "world_size": 2,
        "gpus": md.pop("gpus"),
        "nccl_version": md.pop("nccl_version"),
    }
    del md["readiness"]
    md["cpu_count"] = md["threads_per_rank"] = 1
    upload(view, json.dumps(document), "imported-before.json")
    s = view.state
    assert view.uploaded.name == "imported-before.json" and s["run"]["description"] == v2
    assert s["run"]["cannot_know"].startswith("What a profile cannot show")
    assert (
        s["machine"]["summary"] == "2 ranks, nccl backend, device cuda, GPU: NVIDIA A100-SXM4-80GB"
    )


class FakeServerDocument:
    """A served page's document: next-tick callbacks are kept until the test runs them."""

    def __init__(self) -> None:
        import types
        import uuid

        self.session_context = types.SimpleNamespace(id=uuid.uuid4().hex)
        self.callbacks: list = []
        self.called = threading.Event()

    def add_next_tick_callback(self, callback) -> None:
        self.callbacks.append(callback)
        self.called.set()

    def wait(self) -> None:
        """Until a reader has handed the page its outcome."""
        assert self.called.wait(timeout=60), "no reader answered the upload"


def test_on_a_server_the_files_are_read_off_the_event_loop(view, monkeypatch) -> None:
    from widgets.trace_viewer import component, upload_queue

    doc = FakeServerDocument()
    monkeypatch.setattr(component, "server_document", lambda: doc)
    readers: list[str] = []
    real = upload_queue.load_upload_files

    def watched(files):
        readers.append(threading.current_thread().name)
        return real(files)

    monkeypatch.setattr(upload_queue, "load_upload_files", watched)
    before = view.state["title"]
    send_files(view, ("rank0.json", profile_bytes(0)), ("rank1.json", profile_bytes(1)))
    # Until the page's loop runs the callback, the page says it is reading and shows the old trace.
    assert view.upload["status"] == "Reading 2 files…" and view.upload["error"] == ""
    assert view.uploaded is None and view.state["title"] == before
    doc.wait()
    assert readers and readers[0].startswith("trace-upload")
    assert len(doc.callbacks) == 1
    doc.callbacks.pop()()
    assert view.upload["status"].startswith("Showing your upload, rank0.json and rank1.json")
    assert view.uploaded is not None


def test_a_bad_file_read_off_the_loop_is_refused_on_the_page(view, monkeypatch) -> None:
    from widgets.trace_viewer import component

    doc = FakeServerDocument()
    monkeypatch.setattr(component, "server_document", lambda: doc)
    send_files(view, ("rank0.json.gz", b"\x1f\x8b not really gzip"))
    doc.wait()
    doc.callbacks.pop()()
    assert view.upload["error"].startswith("Not loaded: rank0.json.gz")
    assert view.uploaded is None


def test_one_bucket_is_named_as_one_in_the_description() -> None:
    view = WIDGETS["trace"].create(trace="one-bucket.json")
    assert view.result.n_buckets == 1
    assert "Readiness of bucket 0 is defined by rank " in view.description
    assert "buckets 0 to 0" not in view.description
