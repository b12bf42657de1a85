"""QueueLab driven in Python as its page drives it: edits, actions and browser messages.

Everything the page draws comes from ``lab.state`` (and ``anchor``, ``values``,
``errors``, ``description``), so these tests read exactly what the page is sent.
Every expected number is worked out by hand from the formulas:

- the queue: ``q(t) = max(0, length + (arrival - service) * (t - start))``;
- the run's end without a run length: ``ceil(empty + max(1, 0.25 * empty))``,
  at most 20 s, never before the elapsed time (a queue that never empties: 20 s).
"""

from __future__ import annotations

import json
import math

import pytest
from drive import FakeWall

from widgets.model.fluid_queue import FluidQueue
from widgets.queue_lab.component import QueueLab
from widgets.registry import WIDGETS
from widgets.url_state import settings_from_query


@pytest.fixture
def lab() -> QueueLab:
    return QueueLab()


def step(lab: QueueLab, times: int = 1) -> None:
    """Press Step ``times`` times."""
    for _ in range(times):
        lab.act("step")


def now(lab: QueueLab) -> tuple[float, float]:
    """The paused time and queue length the server sent."""
    return lab.state["now"]["t"], lab.state["now"]["length"]


def run(lab: QueueLab) -> tuple[list[float], list[float]]:
    """The run's polyline vertices, to the horizon."""
    return lab.state["run"]["x"], lab.state["run"]["y"]


def revision(lab: QueueLab) -> int:
    return lab.anchor["revision"]


def snapshot(lab: QueueLab) -> tuple:
    """Everything the page is sent, and the settings behind it."""
    return (
        json.dumps(lab.state, sort_keys=True),
        dict(lab.values),
        dict(lab.errors),
        dict(lab.anchor),
        lab.description,
        dict(lab.settings.param.values()),
    )


DRAINS_AT_4 = "It did not happen by the end."


# --- starting state --------------------------------------------------------------------------


def test_starts_at_the_draining_experiment(lab: QueueLab) -> None:
    s = lab.state
    # 4 items at 2 - 3 = -1 item/s: empty at 4 s; the run ends at ceil(4 + max(1, 1)) = 5 s.
    assert s["horizon"] == 5.0
    assert s["run"] == {"x": [0.0, 4.0, 5.0], "y": [4.0, 0.0, 0.0]}
    assert s["edits"] == {"x": [], "y": []}
    assert s["now"] == {"t": 0.0, "length": 4.0}
    assert s["segment"] == {
        "start": 0.0,
        "length": 4.0,
        "arrival": 2.0,
        "service": 3.0,
        "net": -1.0,
        "trend": "drains",
    }
    assert s["drain_check"] is None
    assert s["length_check"] is None
    assert s["initial_pending"] is None
    assert s["ask_length"] is False  # asked while the queue grows
    assert [c["key"] for c in lab.model_state()["table"]["columns"]] == [
        "segment_start_s",
        "segment_end_s",
        "length_at_start_items",
        "net_rate_items_per_s",
    ]
    assert lab.model_state()["table"]["caption"]
    assert lab.model_state()["table"]["rows"] == [
        [0.0, 5.0, 4.0, -1.0]
    ]  # one segment, 0 to the 5 s end
    assert lab.values == {
        "arrival": "2",
        "service": "3",
        "initial": "4",
        "duration": "",
        "predicted_drain_time": "",
        "prediction_time": "",
        "predicted_length": "",
    }
    assert lab.errors == {}
    anchor = dict(lab.anchor)
    assert isinstance(anchor.pop("revision"), int)
    assert anchor == {"elapsed": 0.0, "playing": False, "speed": 1.0, "horizon": 5.0, "step": 0.5}
    assert lab.description == (
        "At 0.00 s the queue holds 4.00 items. Since 0.00 s it drains at 1.00 items/s "
        "(arrival 2.00 items/s, service 3.00 items/s). The run ends at 5.00 s."
    )
    assert lab.message == {}
    assert lab.notices == []
    assert lab.share == {} and lab.snippets == {}


def test_controls_are_described_from_the_parameters(lab: QueueLab) -> None:
    assert [(f["name"], f["kind"], f["label"], f["unit"]) for f in lab.fields] == [
        ("arrival", "number", "Arrival rate", "items/s"),
        ("service", "number", "Service rate", "items/s"),
        ("initial", "number", "Initial items", "items"),
        ("duration", "number", "Run length", "s"),
        ("predicted_drain_time", "number", "Predicted drain time", "s"),
        ("prediction_time", "number", "Prediction time", "s"),
        ("predicted_length", "number", "Predicted length", "items"),
    ]
    hints = {f["name"]: f["hint"] for f in lab.fields}
    assert hints["arrival"] == "0 to 1000 items/s"  # the bounds, when no hint is declared
    assert hints["initial"] == "0 to 100000 items"
    assert hints["duration"] == "1 to 1000 s; empty: ends soon after the queue empties."
    assert hints["predicted_drain_time"] == "Seconds; checked when the queue empties."


# --- canonical experiments by Step -----------------------------------------------------------


def test_draining_experiment_by_step(lab: QueueLab) -> None:
    step(lab, 4)  # 4 x 0.5 s = 2 s: 4 - 1 x 2 = 2 items
    assert now(lab) == (2.0, 2.0)
    step(lab, 4)  # 4 s: 4 - 4 = 0 items
    assert now(lab) == (4.0, 0.0)
    step(lab)  # 4.5 s: held at empty
    assert now(lab) == (4.5, 0.0)
    assert lab.anchor["elapsed"] == 4.5
    assert lab.anchor["playing"] is False
    assert "It was first empty at 4.00 s." in lab.description


def test_growing_experiment_from_a_fresh_reset(lab: QueueLab) -> None:
    lab.edit("arrival", "4")
    lab.act("reset")
    seg = lab.state["segment"]
    assert (seg["start"], seg["length"], seg["net"], seg["trend"]) == (0.0, 4.0, 1.0, "grows")
    # 4 - 3 = +1 item/s: never empties, so the run is the longest, 20 s; q(20) = 4 + 20 = 24.
    assert lab.state["horizon"] == 20.0
    assert run(lab) == ([0.0, 20.0], [4.0, 24.0])
    for n, expected in enumerate([(0.5, 4.5), (1.0, 5.0), (1.5, 5.5), (2.0, 6.0)]):
        step(lab)
        assert now(lab) == expected, n
    assert lab.state["ask_length"] is True
    assert "grows at 1.00 items/s" in lab.description


def test_step_until_the_end_of_the_run_stays_there(lab: QueueLab) -> None:
    step(lab, 10)  # 10 x 0.5 = 5 s: the end of the default run
    assert now(lab) == (5.0, 0.0)
    assert lab.anchor["elapsed"] == lab.anchor["horizon"] == 5.0  # the page disables Step here
    step(lab, 3)
    assert now(lab) == (5.0, 0.0)
    lab.act("reset")
    assert lab.anchor["elapsed"] == 0.0
    assert lab.anchor["horizon"] == 5.0


# --- how long a run lasts --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("initial", "arrival", "service", "horizon"),
    [
        (4, 2, 3, 5.0),  # empty at 4: ceil(4 + max(1, 1)) = 5
        (4, 4, 3, 20.0),  # grows: never empties, the longest run
        (4, 3, 3, 20.0),  # holds at 4 items: never empties
        (8, 2, 3, 10.0),  # empty at 8: ceil(8 + 2) = 10
        (10, 1, 3, 7.0),  # empty at 10 / 2 = 5: ceil(5 + 1.25) = ceil(6.25) = 7
        (3, 0, 2, 3.0),  # empty at 1.5: ceil(1.5 + max(1, 0.375)) = ceil(2.5) = 3
        (0, 2, 3, 1.0),  # empty from the start: ceil(0 + 1) = 1
        (17, 2, 3, 20.0),  # empty at 17: ceil(17 + 4.25) = 22, at most 20
        (30, 1, 2, 20.0),  # empty at 30, after 20: the longest run
    ],
)
def test_a_run_ends_a_little_after_the_queue_empties(
    initial: float, arrival: float, service: float, horizon: float
) -> None:
    lab = QueueLab(initial=initial, arrival=arrival, service=service)
    assert lab.state["horizon"] == horizon
    assert lab.anchor["horizon"] == horizon
    assert run(lab)[0][-1] == horizon
    assert lab.description.endswith(f"The run ends at {horizon:.2f} s.")


def test_the_default_run_ends_a_second_after_the_queue_empties(lab: QueueLab) -> None:
    # Empty at 4 s; a quarter of 4 is 1 s, and at least 1 s: ends at 5 s.
    assert lab.state["horizon"] == 5.0
    step(lab, 20)
    assert now(lab) == (5.0, 0.0)


def test_a_growing_queue_runs_twenty_seconds(lab: QueueLab) -> None:
    lab.edit("arrival", "4")  # at time zero: +1 item/s from 4 items, never empty
    assert lab.anchor["horizon"] == 20.0
    step(lab, 50)
    assert now(lab) == (20.0, 24.0)  # 40 steps reach 20 s: 4 + 20 = 24 items


def test_a_run_length_typed_in_is_used_as_is(lab: QueueLab) -> None:
    lab.edit("duration", "8")
    assert lab.values["duration"] == "8"
    assert lab.anchor["horizon"] == 8.0
    assert run(lab) == ([0.0, 4.0, 8.0], [4.0, 0.0, 0.0])  # empty at 4, held empty to 8
    assert lab.description.endswith("The run ends at 8.00 s.")
    lab.edit("duration", "2,5")  # shorter than the drain: still as typed
    assert lab.anchor["horizon"] == 2.5
    assert run(lab) == ([0.0, 2.5], [4.0, 1.5])  # 4 - 2.5 = 1.5
    lab.edit("arrival", "4")  # a growing queue too keeps the typed length
    assert run(lab) == ([0.0, 2.5], [4.0, 6.5])  # 4 + 2.5 = 6.5
    lab.edit("duration", "")  # empty: back to the rule (grows: 20 s)
    assert lab.values["duration"] == ""
    assert lab.anchor["horizon"] == 20.0


def test_an_edit_that_delays_the_drain_lengthens_the_run(lab: QueueLab) -> None:
    step(lab, 4)  # 2 s, 2 items
    lab.edit("arrival", "2.5")
    # Net 2.5 - 3 = -0.5: empty at 2 + 2 / 0.5 = 6 s; ends at ceil(6 + max(1, 1.5)) = 8 s.
    assert lab.anchor["horizon"] == 8.0
    assert lab.anchor["elapsed"] == 2.0
    assert run(lab) == ([0.0, 2.0, 6.0, 8.0], [4.0, 2.0, 0.0, 0.0])
    step(lab, 20)
    assert now(lab) == (8.0, 0.0)


def test_an_edit_that_speeds_the_drain_shortens_the_run_but_not_before_now(lab: QueueLab) -> None:
    step(lab, 2)  # 1 s, 3 items
    lab.edit("service", "4")
    # Net 2 - 4 = -2: empty at 1 + 3 / 2 = 2.5 s; ends at ceil(2.5 + max(1, 0.625)) =
    # ceil(3.5) = 4 s, sooner than 5 s but after the 1 s already run.
    assert lab.anchor["horizon"] == 4.0
    assert lab.anchor["elapsed"] == 1.0
    assert run(lab) == ([0.0, 1.0, 2.5, 4.0], [4.0, 3.0, 0.0, 0.0])


def test_an_edit_never_cuts_the_run_before_the_elapsed_time(lab: QueueLab) -> None:
    lab.edit("arrival", "4")  # grows: a 20 s run
    step(lab, 20)  # 10 s, 4 + 10 = 14 items
    lab.edit("duration", "3")  # 3 s is already past: the run ends now, at 10 s
    assert lab.anchor["horizon"] == 10.0
    assert lab.anchor["elapsed"] == 10.0
    assert now(lab) == (10.0, 14.0)
    assert run(lab) == ([0.0, 10.0], [4.0, 14.0])


def test_clearing_a_long_run_length_keeps_the_time_already_run(lab: QueueLab) -> None:
    lab.edit("duration", "50")
    step(lab, 60)  # 60 x 0.5 = 30 s
    assert now(lab) == (30.0, 0.0)
    lab.edit("duration", "")  # the rule says 5 s (empty at 4), but 30 s have run
    assert lab.anchor["horizon"] == 30.0
    assert lab.anchor["elapsed"] == 30.0
    lab.act("reset")  # a fresh run: the rule again, ceil(4 + 1) = 5 s
    assert lab.anchor["horizon"] == 5.0
    assert lab.anchor["elapsed"] == 0.0


def test_an_edit_after_the_queue_emptied_gives_it_a_little_more_time(lab: QueueLab) -> None:
    step(lab, 9)  # 4.5 s: empty since 4 s
    lab.edit("service", "4")
    # Empty from 4.5 s on (net -2): ends at ceil(4.5 + max(1, 1.125)) = ceil(5.625) = 6 s.
    assert lab.anchor["horizon"] == 6.0
    assert run(lab) == ([0.0, 4.0, 4.5, 6.0], [4.0, 0.0, 0.0, 0.0])


def test_an_edit_at_the_end_that_makes_the_queue_grow_extends_the_run(lab: QueueLab) -> None:
    step(lab, 10)  # the end, 5 s
    lab.edit("arrival", "4")  # +1 item/s from empty at 5 s: never empties again, 20 s
    assert lab.anchor["horizon"] == 20.0
    assert lab.anchor["elapsed"] == 5.0
    assert run(lab) == ([0.0, 4.0, 5.0, 20.0], [4.0, 0.0, 0.0, 15.0])  # 0 + 1 x 15 = 15


# --- edits keep time -------------------------------------------------------------------------


def test_mid_run_edit_at_t2(lab: QueueLab) -> None:
    step(lab, 4)  # 2 s, 2 items
    lab.edit("arrival", "4")
    assert lab.settings.arrival == 4.0
    assert lab.clock.elapsed == 2.0
    assert now(lab) == (2.0, 2.0)
    assert lab.state["segment"] == {
        "start": 2.0,
        "length": 2.0,
        "arrival": 4.0,
        "service": 3.0,
        "net": 1.0,
        "trend": "grows",
    }
    # Grows from here: a 20 s run; q(20) = 2 + 1 x (20 - 2) = 20.
    assert run(lab) == ([0.0, 2.0, 20.0], [4.0, 2.0, 20.0])
    assert lab.state["edits"] == {"x": [2.0], "y": [2.0]}
    assert lab.model_state()["table"]["rows"] == [[0.0, 2.0, 4.0, -1.0], [2.0, 20.0, 2.0, 1.0]]
    assert lab.anchor["elapsed"] == 2.0
    assert "The rates changed 1 time in this run." in lab.description
    step(lab, 2)  # 3 s: 2 + 1 = 3 items
    assert now(lab) == (3.0, 3.0)


def test_mid_run_edit_of_service(lab: QueueLab) -> None:
    step(lab, 4)  # 2 s, 2 items
    lab.edit("service", "4")
    seg = lab.state["segment"]
    assert (seg["start"], seg["length"], seg["net"]) == (2.0, 2.0, -2.0)
    # Empty at 2 + 2 / 2 = 3 s; ends at ceil(3 + max(1, 0.75)) = 4 s.
    assert run(lab) == ([0.0, 2.0, 3.0, 4.0], [4.0, 2.0, 0.0, 0.0])
    step(lab)  # 2.5 s: 2 - 2 x 0.5 = 1 item
    assert now(lab) == (2.5, 1.0)


def test_two_edits_count_as_two_changes(lab: QueueLab) -> None:
    step(lab, 2)
    lab.edit("arrival", "4")
    step(lab, 2)
    lab.edit("service", "5")
    assert lab.state["edits"]["x"] == [1.0, 2.0]
    assert "The rates changed 2 times in this run." in lab.description


def test_reset_clears_history_and_predictions_and_keeps_controls(lab: QueueLab) -> None:
    step(lab, 4)
    lab.edit("arrival", "4")
    lab.edit("predicted_drain_time", "4")
    lab.edit("prediction_time", "3")
    lab.edit("predicted_length", "5")
    lab.act("reset")
    assert now(lab) == (0.0, 4.0)
    seg = lab.state["segment"]
    assert (seg["start"], seg["length"], seg["net"]) == (0.0, 4.0, 1.0)
    assert lab.state["edits"] == {"x": [], "y": []}
    assert lab.values == {
        "arrival": "4",
        "service": "3",
        "initial": "4",
        "duration": "",
        "predicted_drain_time": "",
        "prediction_time": "",
        "predicted_length": "",
    }
    assert lab.state["drain_check"] is None
    assert lab.state["length_check"] is None
    assert lab.anchor["horizon"] == 20.0  # a fresh run of a growing queue


# --- initial items ---------------------------------------------------------------------------


def test_initial_items_at_zero_apply_at_once(lab: QueueLab) -> None:
    lab.edit("initial", "6")
    assert now(lab) == (0.0, 6.0)
    # Empty at 6 s; ends at ceil(6 + max(1, 1.5)) = ceil(7.5) = 8 s.
    assert run(lab) == ([0.0, 6.0, 8.0], [6.0, 0.0, 0.0])
    assert lab.state["initial_pending"] is None
    assert lab.values["initial"] == "6"


def test_initial_items_later_apply_at_reset(lab: QueueLab) -> None:
    step(lab, 2)  # 1 s, 3 items
    lab.edit("initial", "8")
    assert lab.settings.initial == 8.0
    assert lab.values["initial"] == "8"
    assert now(lab) == (1.0, 3.0)
    assert lab.state["initial_pending"] == 8.0
    assert run(lab) == ([0.0, 4.0, 5.0], [4.0, 0.0, 0.0])  # this run is unchanged
    lab.act("reset")
    assert now(lab) == (0.0, 8.0)
    assert lab.state["initial_pending"] is None
    # Empty at 8 s; ends at ceil(8 + max(1, 2)) = 10 s.
    assert run(lab) == ([0.0, 8.0, 10.0], [8.0, 0.0, 0.0])


# --- bad input -------------------------------------------------------------------------------

FIELDS = [("arrival", 2.0), ("service", 3.0), ("initial", 4.0)]


@pytest.mark.parametrize(("name", "kept"), FIELDS)
@pytest.mark.parametrize("bad", ["-1", "abc", "nan", "", "1e99", "inf", "-inf", "  "])
def test_bad_input_shows_a_message_and_keeps_the_last_valid_state(
    lab: QueueLab, name: str, kept: float, bad: str
) -> None:
    step(lab, 2)  # mid-run, so a refused text could only disturb a real run
    before = snapshot(lab)
    lab.edit(name, bad)
    assert lab.errors[name]
    assert getattr(lab.settings, name) == kept
    after = snapshot(lab)
    assert after[2] == {name: lab.errors[name]}
    assert (after[0], after[1], after[3], after[4], after[5]) == (
        before[0],
        before[1],
        before[3],
        before[4],
        before[5],
    )  # the drawn state, the values, the anchor (revision too: nothing redrawn)
    lab.edit(name, "5")
    assert name not in lab.errors
    assert getattr(lab.settings, name) == 5.0
    assert lab.values[name] == "5"


@pytest.mark.parametrize("bad", ["0.5", "0", "-3", "1001", "abc", "nan", "inf"])
def test_a_bad_run_length_is_refused(lab: QueueLab, bad: str) -> None:
    lab.edit("duration", "8")
    before = snapshot(lab)
    lab.edit("duration", bad)
    assert lab.errors["duration"]
    assert lab.settings.duration == 8.0
    assert lab.anchor == before[3]
    assert json.dumps(lab.state, sort_keys=True) == before[0]


def test_a_good_value_after_a_bad_one_clears_the_message(lab: QueueLab) -> None:
    lab.edit("arrival", "abc")
    lab.edit("arrival", "2")  # the model's value: nothing changes, the message still clears
    assert lab.errors == {}
    lab.edit("arrival", "-3")
    lab.edit("arrival", "2,5")  # a decimal comma is accepted
    assert lab.errors == {}
    assert lab.settings.arrival == 2.5
    assert lab.values["arrival"] == "2.5"
    assert lab.state["segment"]["net"] == -0.5
    # Empty at 4 / 0.5 = 8 s; ends at ceil(8 + 2) = 10 s.
    assert lab.anchor["horizon"] == 10.0


def test_each_field_keeps_its_own_message(lab: QueueLab) -> None:
    lab.edit("arrival", "abc")
    lab.edit("service", "-1")
    assert set(lab.errors) == {"arrival", "service"}
    lab.edit("arrival", "4")  # a good edit redraws, and the other field's message stays
    assert set(lab.errors) == {"service"}
    assert lab.errors["service"] == "Service rate must be 0 to 1000 items/s."
    lab.act("reset")  # Reset clears every message
    assert lab.errors == {}


def test_empty_prediction_means_no_prediction(lab: QueueLab) -> None:
    lab.edit("predicted_drain_time", "4")
    assert lab.state["drain_check"] is not None
    lab.edit("predicted_drain_time", "")
    assert lab.settings.predicted_drain_time is None
    assert lab.errors == {}
    assert lab.values["predicted_drain_time"] == ""
    assert lab.state["drain_check"] is None


def test_bad_prediction_is_refused(lab: QueueLab) -> None:
    lab.edit("predicted_drain_time", "4")
    lab.edit("predicted_drain_time", "-2")
    assert "predicted_drain_time" in lab.errors
    assert lab.settings.predicted_drain_time == 4.0
    assert lab.state["drain_check"]["predicted"] == 4.0


# --- predictions -----------------------------------------------------------------------------


def checked(lab: QueueLab, which: str) -> bool:
    """Whether the run has reached the moment the page shows the outcome."""
    return lab.state["now"]["t"] >= lab.state[which]["at"]


def test_drain_prediction_spot_on(lab: QueueLab) -> None:
    lab.edit("predicted_drain_time", "4")
    # 4 items at -1 item/s: empty at 4 s, exactly as predicted.
    assert lab.state["drain_check"] == {
        "predicted": 4.0,
        "actual": 4.0,
        "at": 4.0,
        "error": 0.0,
        "close": True,
        "missing": DRAINS_AT_4,
    }
    step(lab, 7)  # 3.5 s
    assert not checked(lab, "drain_check")
    step(lab)  # 4 s
    assert now(lab) == (4.0, 0.0)
    assert checked(lab, "drain_check")


def test_drain_prediction_off_by(lab: QueueLab) -> None:
    lab.edit("predicted_drain_time", "3")
    check = lab.state["drain_check"]
    assert (check["actual"], check["at"], check["error"], check["close"]) == (4.0, 4.0, 1.0, False)
    step(lab, 8)
    assert checked(lab, "drain_check")


def test_drain_prediction_when_the_queue_never_drains(lab: QueueLab) -> None:
    lab.edit("arrival", "4")
    lab.edit("predicted_drain_time", "5")
    # It grows: no drain, checked at the end of the 20 s run.
    assert lab.state["drain_check"] == {
        "predicted": 5.0,
        "actual": None,
        "at": 20.0,
        "error": None,
        "close": False,
        "missing": "The queue never drains: it does not shrink.",
    }
    step(lab, 39)  # 19.5 s
    assert not checked(lab, "drain_check")
    step(lab)  # 20 s
    assert checked(lab, "drain_check")
    assert "The queue never drains: it does not shrink." in lab.description


def test_a_draining_queue_past_the_run_says_when_it_would_empty() -> None:
    # 30 items at 1 - 2 = -1 item/s: empty at 30 s, after the longest run (20 s).
    lab = QueueLab(initial=30, arrival=1, service=2, predicted_drain_time=25)
    check = lab.state["drain_check"]
    assert (check["actual"], check["at"]) == (None, 20.0)
    assert check["missing"] == "It would empty at 30.00 s, after the run ends."
    assert "It would empty at 30.00 s, after the run ends." in lab.description


def test_a_queue_that_starts_empty_and_grows_says_it_never_drains() -> None:
    lab = QueueLab(initial=0, arrival=4, service=3, predicted_drain_time=2)
    check = lab.state["drain_check"]
    assert check["actual"] is None  # no drain time, not 0 s
    assert check["at"] == 20.0  # grows: the longest run
    assert check["missing"] == "The queue starts empty and grows: it never drains."
    assert "it never drains" in lab.description


def test_length_prediction(lab: QueueLab) -> None:
    lab.edit("prediction_time", "3")
    assert lab.state["length_check"] is None  # needs both numbers
    assert lab.state["ask_length"] is True  # kept while one is entered, though it drains
    lab.edit("predicted_length", "1.5")
    # q(3) = 4 - 3 = 1 item: off by 1 - 1.5 = -0.5.
    assert lab.state["length_check"] == {
        "predicted": 1.5,
        "actual": 1.0,
        "at": 3.0,
        "error": -0.5,
        "close": False,
        "missing": "It did not happen by the end.",
    }
    step(lab, 5)  # 2.5 s
    assert not checked(lab, "length_check")
    step(lab)  # 3 s
    assert checked(lab, "length_check")


def test_length_prediction_past_the_end_of_the_run(lab: QueueLab) -> None:
    lab.edit("arrival", "4")  # grows: a 20 s run
    lab.edit("prediction_time", "25")
    lab.edit("predicted_length", "29")
    check = lab.state["length_check"]
    assert (check["actual"], check["at"], check["error"]) == (None, 20.0, None)


def test_the_length_question_is_asked_while_the_queue_grows(lab: QueueLab) -> None:
    assert lab.state["ask_length"] is False  # drains
    lab.edit("arrival", "3")
    assert lab.state["ask_length"] is False  # holds steady
    lab.edit("arrival", "4")
    assert lab.state["ask_length"] is True  # grows


# --- Play / Pause ----------------------------------------------------------------------------


def test_play_and_pause_through_the_anchor(lab: QueueLab, wall: FakeWall) -> None:
    lab.act("play")
    assert lab.clock.playing is True
    assert lab.anchor["playing"] is True
    assert lab.anchor["elapsed"] == 0.0
    assert lab.anchor["speed"] == 1.0
    lab.act("pause")
    assert lab.clock.playing is False
    assert lab.anchor["playing"] is False


def test_play_then_pause_advances_by_speed_times_wall(lab: QueueLab, wall: FakeWall) -> None:
    lab.act("play")
    wall.t += 1.5  # at 1 model second per wall second: 1.5 s
    lab.act("pause")
    assert lab.clock.elapsed == 1.5
    assert now(lab) == (1.5, 2.5)  # 4 - 1.5 = 2.5 items
    assert lab.anchor["elapsed"] == 1.5


def test_step_while_playing_pauses_and_steps(lab: QueueLab, wall: FakeWall) -> None:
    lab.act("play")
    wall.t += 1.0
    lab.act("step")  # paused at 1 s, then 0.5 s on
    assert lab.anchor["playing"] is False
    assert lab.clock.elapsed == 1.5
    assert now(lab) == (1.5, 2.5)


def test_edit_while_playing_keeps_time(lab: QueueLab, wall: FakeWall) -> None:
    lab.act("play")
    wall.t += 2.0
    lab.edit("arrival", "4")
    assert lab.clock.playing is True
    assert lab.clock.elapsed == 2.0
    seg = lab.state["segment"]
    assert (seg["start"], seg["length"], seg["net"]) == (2.0, 2.0, 1.0)
    assert lab.anchor["elapsed"] == 2.0
    assert lab.anchor["playing"] is True
    assert lab.anchor["horizon"] == 20.0  # it grows now: the longest run
    wall.t += 1.0
    lab.act("pause")
    assert now(lab) == (3.0, 3.0)  # 2 + 1 x 1 = 3 items


def test_play_past_the_end_reads_the_end_without_a_server(lab: QueueLab, wall: FakeWall) -> None:
    # No server session here (as in a notebook): nothing is sent when the run ends.
    lab.act("play")
    assert lab.anchor["playing"] is True
    # What the page shows at the end travels with Play: 4 items drained at 1 item/s are
    # gone at 4 s, and the run ends at 5 s (4 + max(1, 4 / 4), whole seconds).
    end = lab.anchor["end"]
    assert end["state"] == {"now": {"t": 5.0, "length": 0.0}}
    assert end["description"].startswith("At 5.00 s the queue holds 0.00 items.")
    assert "It was first empty at 4.00 s." in end["description"]
    wall.t += 25.0
    shown = lab.state_now()
    assert shown["anchor"] == {
        "elapsed": 5.0, "playing": False, "speed": 1.0, "horizon": 5.0, "step": 0.5
    }  # fmt: skip
    assert shown["state"]["now"] == {"t": 5.0, "length": 0.0}
    assert shown["description"] == end["description"]
    lab.act("pause")
    assert lab.clock.playing is False
    assert lab.clock.elapsed == 5.0
    assert lab.anchor["playing"] is False
    assert lab.anchor["elapsed"] == 5.0
    assert "end" not in lab.anchor
    assert now(lab) == (5.0, 0.0)


def test_a_redraw_after_the_end_says_not_playing(lab: QueueLab, wall: FakeWall) -> None:
    lab.act("play")
    wall.t += 25.0
    lab.edit("predicted_drain_time", "4")  # before the timer fires
    assert lab.anchor["playing"] is False
    assert lab.anchor["elapsed"] == 5.0
    lab.act("pause")
    assert lab.clock.elapsed == 5.0


def test_play_at_the_end_replays_from_zero_with_the_history_kept(
    lab: QueueLab, wall: FakeWall
) -> None:
    step(lab, 4)  # 2 s, 2 items
    lab.edit("arrival", "2.5")  # empty at 6 s, the run ends at 8 s (see above)
    lab.edit("predicted_drain_time", "6")
    step(lab, 12)  # 2 + 12 x 0.5 = 8 s: the end
    assert lab.anchor["elapsed"] == lab.anchor["horizon"] == 8.0
    drawn = run(lab)
    lab.act("play")
    assert lab.anchor["elapsed"] == 0.0
    assert lab.anchor["playing"] is True
    assert lab.anchor["horizon"] == 8.0
    assert run(lab) == drawn == ([0.0, 2.0, 6.0, 8.0], [4.0, 2.0, 0.0, 0.0])
    assert lab.state["edits"] == {"x": [2.0], "y": [2.0]}
    check = lab.state["drain_check"]
    assert (check["predicted"], check["actual"], check["close"]) == (6.0, 6.0, True)
    assert lab.values["predicted_drain_time"] == "6"
    assert lab.values["arrival"] == "2.5"
    wall.t += 3.0
    lab.act("pause")
    assert now(lab) == (3.0, 1.5)  # past the edit: 2 - 0.5 x 1 = 1.5 items
    lab.act("reset")  # Reset, by contrast, starts a fresh run
    assert lab.state["edits"] == {"x": [], "y": []}
    assert lab.state["drain_check"] is None
    # 4 items at -0.5 item/s: empty at 8 s; ends at ceil(8 + 2) = 10 s.
    assert lab.anchor["horizon"] == 10.0


def test_play_before_the_end_does_not_restart(lab: QueueLab, wall: FakeWall) -> None:
    step(lab, 4)
    lab.act("play")
    assert lab.anchor["elapsed"] == 2.0
    assert lab.anchor["playing"] is True


def test_reset_while_playing(lab: QueueLab, wall: FakeWall) -> None:
    lab.act("play")
    wall.t += 3.0
    lab.act("reset")
    assert lab.clock.playing is False
    assert lab.anchor["playing"] is False
    assert lab.anchor["elapsed"] == 0.0
    assert now(lab) == (0.0, 4.0)


def test_revision_changes_on_every_action(lab: QueueLab, wall: FakeWall) -> None:
    seen = [revision(lab)]

    def changed() -> None:
        seen.append(revision(lab))
        assert seen[-1] not in seen[:-1]

    for do in (
        lambda: lab.act("step"),
        lambda: lab.act("play"),
        lambda: lab.act("pause"),
        lambda: lab.act("pause"),  # even when nothing else changes
        lambda: lab.edit("arrival", "4"),
        lambda: lab.edit("service", "5"),
        lambda: lab.edit("initial", "7"),
        lambda: lab.edit("duration", "9"),
        lambda: lab.edit("predicted_drain_time", "3"),
        lambda: lab.act("reset"),
        lambda: lab.act("reset"),  # even when nothing else changes
        lambda: lab.act("step"),
        lambda: lab._handle_msg({"action": "step"}),
        lambda: lab._handle_msg({"edit": "arrival", "text": "1"}),
    ):
        do()
        changed()


# --- the browser's messages ------------------------------------------------------------------


def test_the_browser_messages_act_and_edit(lab: QueueLab) -> None:
    lab._handle_msg({"action": "step"})
    assert now(lab) == (0.5, 3.5)
    lab._handle_msg({"edit": "arrival", "text": "4"})
    assert lab.settings.arrival == 4.0
    assert lab.state["segment"]["start"] == 0.5
    lab._handle_msg({"edit": "service", "text": "abc"})
    assert lab.errors == {"service": "“abc” is not a number. Enter 0 to 1000 items/s."}
    lab._handle_msg({"edit": "arrival", "text": " " * 199 + "2"})  # 200 characters: allowed
    assert lab.settings.arrival == 2.0


@pytest.mark.parametrize(
    "msg",
    [
        None,
        "step",
        ["step"],
        42,
        b'{"action": "step"}',
        {},
        {"action": "explode"},
        {"action": "STEP"},
        {"action": ["step"]},
        {"action": None},
        {"action": 1},
        {"edit": "clock", "text": "1"},
        {"edit": "name", "text": "x"},
        {"edit": "series", "text": "1"},
        {"edit": "__class__", "text": "1"},
        {"edit": "ARRIVAL", "text": "4"},
        {"edit": ["arrival"], "text": "4"},
        {"edit": 3, "text": "4"},
        {"edit": "arrival"},
        {"edit": "arrival", "text": 4},
        {"edit": "arrival", "text": 4.0},
        {"edit": "arrival", "text": None},
        {"edit": "arrival", "text": ["4"]},
        {"edit": "arrival", "text": "4" + " " * 200},  # 201 characters
        {"edit": "arrival", "text": "1" * 10_000},
    ],
)
def test_the_browser_messages_ignore_anything_else(lab: QueueLab, msg: object) -> None:
    step(lab, 2)
    lab.enable_share("http://localhost:5006", own_page=True)
    before = snapshot(lab), dict(lab.share), dict(lab.snippets)
    lab._handle_msg(msg)
    assert (snapshot(lab), dict(lab.share), dict(lab.snippets)) == before


# --- sharing ---------------------------------------------------------------------------------


def test_the_share_link_follows_the_settings(lab: QueueLab) -> None:
    lab.enable_share("http://localhost:5006", own_page=True)
    assert lab.share == {
        "link": "http://localhost:5006/queue-lab?arrival=2&service=3&initial=4",
        "query": "arrival=2&service=3&initial=4",
        "own_page": True,
    }
    lab.edit("arrival", "4")
    lab.edit("duration", "12")
    lab.edit("predicted_drain_time", "3")  # a prediction is not a setting: not in the link
    assert lab.share["query"] == "arrival=4&service=3&initial=4&duration=12"
    assert lab.snippets == {}  # written only while Embed is open
    lab.act("embed")
    assert (
        "queue-lab?arrival=4&amp;service=3&amp;initial=4&amp;duration=12"
        in (lab.snippets["iframe"])
    )
    assert lab.snippets["script"]
    lab.edit("service", "5")
    assert "service=5" in lab.snippets["iframe"]
    lab.act("unembed")
    assert lab.snippets == {}


# --- loading an experiment -------------------------------------------------------------------


def test_an_experiment_starts_a_fresh_run_with_its_initial_items(
    lab: QueueLab, wall: FakeWall
) -> None:
    step(lab, 4)  # 2 s: 4 -> 2 items at -1 item/s
    lab.edit("arrival", "4")  # a second segment from 2 s
    lab.edit("service", "abc")
    lab.act("play")
    assert len(lab.state["edits"]["x"]) == 1
    lab.apply(note="Loaded: a faster link", initial=7.0, arrival=1.0)
    assert lab.message == {"text": "Loaded: a faster link", "n": 1}
    # History gone, and initial items (which otherwise wait for Reset) apply now.
    assert lab.state["edits"] == {"x": [], "y": []}
    assert lab.model_state()["table"]["rows"] == [[0.0, 5.0, 7.0, -2.0]]  # one segment, to the end
    assert lab.clock.elapsed == 0.0
    assert lab.anchor["playing"] is False
    assert now(lab) == (0.0, 7.0)
    assert lab.state["initial_pending"] is None
    assert lab.errors == {}
    # 7 items at 1 - 3 = -2 item/s: empty at 3.5 s; ends at ceil(3.5 + max(1, 0.875)) = 5 s.
    assert lab.anchor["horizon"] == 5.0
    lab.act("reset")
    assert lab.message == {}


# --- URL state -------------------------------------------------------------------------------


def test_settings_from_query_good_keys() -> None:
    values, notices = settings_from_query(
        FluidQueue,
        {"arrival": [b"4"], "service": [b"3"], "initial": [b"0.5"], "duration": [b"12"]},
    )
    assert values == {"arrival": 4.0, "service": 3.0, "initial": 0.5, "duration": 12.0}
    assert notices == []


def test_settings_from_query_takes_the_last_value_and_str_values() -> None:
    values, notices = settings_from_query(FluidQueue, {"arrival": [b"1", b"4"], "service": ["2,5"]})
    assert values == {"arrival": 4.0, "service": 2.5}
    assert notices == []


def test_settings_from_query_ignores_unknown_keys() -> None:
    values, notices = settings_from_query(
        FluidQueue, {"speed": [b"9"], "predicted_drain_time": [b"4"], "arrival": [b"4"]}
    )
    assert values == {"arrival": 4.0}
    known = "(known: arrival, duration, initial, service)."
    assert notices == [
        f"Ignored unknown setting “speed” {known}",
        f"Ignored unknown setting “predicted_drain_time” {known}",  # a prediction is no setting
    ]


def test_an_empty_run_length_in_a_query_is_no_run_length() -> None:
    assert settings_from_query(FluidQueue, {"duration": [b""]}) == ({}, [])


def test_query_settings_preset_the_lab() -> None:
    values, _ = settings_from_query(
        FluidQueue, {"arrival": [b"4"], "initial": [b"0"], "bogus": [b"1"]}
    )
    lab = QueueLab(**values)
    assert lab.values["arrival"] == "4"
    assert lab.values["initial"] == "0"
    assert now(lab) == (0.0, 0.0)
    seg = lab.state["segment"]
    assert (seg["start"], seg["length"], seg["net"], seg["trend"]) == (0.0, 0.0, 1.0, "grows")
    assert lab.anchor["horizon"] == 20.0  # starts empty and grows: the longest run


def test_the_registry_presets_the_lab_from_a_query() -> None:
    spec = WIDGETS["queue-lab"]
    kwargs, notices = spec.parse({"initial": [b"8"], "duration": [b"12"], "speed": [b"2"]})
    assert kwargs == {"initial": 8.0, "duration": 12.0}
    lab = spec.create(**kwargs)
    assert isinstance(lab, QueueLab)
    lab.show_notices(notices)
    assert lab.notices == notices and len(notices) == 1
    assert lab.values["duration"] == "12"
    assert lab.anchor["horizon"] == 12.0  # the run length as given, not the rule's 10 s
    assert run(lab) == ([0.0, 8.0, 12.0], [8.0, 0.0, 0.0])


# --- what the page is sent: plain JSON values -------------------------------------------------


def plain(value: object, where: str = "state") -> None:
    """Only str, bool, int, finite float, None, lists and str-keyed dicts (no numpy types)."""
    if isinstance(value, dict):
        for k, v in value.items():
            assert type(k) is str, where
            plain(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            plain(v, f"{where}[{i}]")
    else:
        assert type(value) in (str, bool, int, float, type(None)), (where, type(value))
        if type(value) is float:
            assert math.isfinite(value), where


def scenario(name: str, wall: FakeWall) -> QueueLab:
    lab = QueueLab()
    lab.clock._wall_clock = wall
    if name == "mid-run edits and predictions":
        step(lab, 4)
        lab.edit("arrival", "4")
        step(lab, 2)
        lab.edit("service", "6")
        lab.edit("predicted_drain_time", "3")
        lab.edit("prediction_time", "3")
        lab.edit("predicted_length", "1")
    elif name == "never drains, checked at the end":
        lab.edit("arrival", "4")
        lab.edit("predicted_drain_time", "3")
        lab.edit("prediction_time", "30")
        lab.edit("predicted_length", "1")
        step(lab, 50)
    elif name == "initial pending while playing":
        lab.act("play")
        wall.t += 1.25
        lab.edit("initial", "9")
        lab.edit("duration", "7.5")
    elif name == "whole numbers given":
        lab = QueueLab(arrival=1, service=3, initial=5, predicted_drain_time=2)
    elif name == "starts empty and grows":
        lab = QueueLab(initial=0, arrival=4, service=3, predicted_drain_time=0)
    return lab


@pytest.mark.parametrize(
    "name",
    [
        "default",
        "mid-run edits and predictions",
        "never drains, checked at the end",
        "initial pending while playing",
        "whole numbers given",
        "starts empty and grows",
    ],
)
def test_state_holds_only_plain_json_values(name: str) -> None:
    lab = scenario(name, FakeWall())
    plain(lab.state)
    plain(lab.anchor, "anchor")
    plain(lab.values, "values")
    plain(lab.errors, "errors")
    plain(lab.fields, "fields")
    assert json.loads(json.dumps(lab.state, allow_nan=False)) == lab.state
    assert type(lab.anchor["playing"]) is bool
    for check in ("drain_check", "length_check"):
        if lab.state[check] is not None:
            assert type(lab.state[check]["close"]) is bool


# --- a replay keeps the run's length; a predicted length's time is inside the run ---------


def test_a_replay_is_as_long_as_the_run_it_replays(lab: QueueLab, wall: FakeWall) -> None:
    lab.edit("arrival", "4")  # grows: a 20 s run
    step(lab, 20)  # 20 steps of 0.5 s: 10 s
    lab.edit("duration", "3")  # shorter than where the run is: it ends here, at 10 s
    assert lab.state["horizon"] == 10.0
    lab.act("play")  # at the end: replays from 0
    assert lab.anchor["elapsed"] == 0.0 and lab.anchor["playing"] is True
    assert lab.state["horizon"] == 10.0  # not the 3 s typed: the run reached 10 s
    assert run(lab) == ([0.0, 10.0], [4.0, 14.0])  # 4 + 1 item/s x 10 s
    lab.act("reset")  # a fresh run takes the run length as typed
    assert lab.state["horizon"] == 3.0


def test_a_length_predicted_after_the_drain_is_checked_inside_the_run(lab: QueueLab) -> None:
    lab.edit("prediction_time", "10")
    lab.edit("predicted_length", "0")
    # Drains at 4 s (would end at 5 s), but the question is at 10 s: ceil(10) + 1 = 11 s.
    assert lab.state["horizon"] == 11.0
    check = lab.state["length_check"]
    assert check["at"] == 10.0 and check["actual"] == 0.0 and check["close"] is True


def test_minus_zero_is_zero(lab: QueueLab) -> None:
    lab.edit("arrival", "-0")
    assert lab.values["arrival"] == "0"
    assert lab.settings.arrival == 0.0 and math.copysign(1.0, lab.settings.arrival) == 1.0
