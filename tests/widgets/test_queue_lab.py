"""QueueLab driven in Python through its controls: readouts, data sources, playhead driver."""

from __future__ import annotations

import panel as pn
import pytest
from drive import FakeWall, play, reset, step

from widgets.model.fluid_queue import FluidQueue
from widgets.queue_lab import QueueLab
from widgets.url_state import settings_from_query

pn.extension()


@pytest.fixture
def lab() -> QueueLab:
    return QueueLab()


@pytest.fixture
def wall(lab: QueueLab) -> FakeWall:
    fake = FakeWall()
    lab.clock._wall_clock = fake
    return fake


def type_into(field, text: str) -> None:
    field.input.value = text


def value_of(div) -> str:
    """The text of a readout's ``<output>``."""
    text = div.text
    return text.split('class="ol-value"', 1)[1].split(">", 1)[1].split("</output>", 1)[0]


def revision(lab: QueueLab) -> int:
    return lab.playhead.driver.data["revision"][0]


# --- starting state --------------------------------------------------------------------------


def test_starts_at_the_draining_experiment(lab: QueueLab) -> None:
    assert ">0.00 s<" in lab.elapsed_div.text
    assert ">4.00 items<" in lab.length_div.text
    assert ">−1.00 items/s<" in lab.rate_div.text
    assert "The queue drains." in lab.rate_div.text
    assert ">q(t) = max(0, 4.00 − 1.00 × (t − 0.00))<" in lab.formula_div.text
    assert "From t = 0.00 s with 4.00 items: arrival 2 − service 3 items/s." in (
        lab.formula_div.text
    )
    assert list(lab.run_source.data["x"]) == [0.0, 4.0, 20.0]
    assert list(lab.run_source.data["y"]) == [4.0, 0.0, 0.0]
    assert list(lab.edit_source.data["x"]) == []
    assert lab.prediction_source.data == {"x": [], "y": [], "what": []}
    assert lab.actual_source.data == {"x": [], "y": [], "what": []}
    assert lab.fields["arrival"].input.value == "2"
    assert lab.fields["service"].input.value == "3"
    assert lab.fields["initial"].input.value == "4"
    assert lab.fields["predicted_drain_time"].input.value == ""
    assert lab.time_control.play_button.label == "Play"
    driver = lab.playhead.driver.data
    assert driver["anchor"] == [0.0]
    assert driver["playing"] == [0]
    assert driver["speed"] == [1.0]
    assert driver["horizon"] == [20.0]


def test_readout_texts_start_with_their_number(lab: QueueLab) -> None:
    assert value_of(lab.elapsed_div) == "0.00 s"
    assert value_of(lab.length_div) == "4.00 items"
    assert value_of(lab.rate_div) == "−1.00 items/s"
    assert 'aria-labelledby="' in lab.elapsed_div.text
    assert ">Elapsed time<" in lab.elapsed_div.text
    assert ">Queue length<" in lab.length_div.text


def test_controls_are_labelled_from_the_parameters(lab: QueueLab) -> None:
    assert lab.fields["arrival"].input.label == "Arrival rate"
    assert lab.fields["service"].input.label == "Service rate"
    assert lab.fields["initial"].input.label == "Initial items"
    assert lab.fields["predicted_drain_time"].input.label == "Predicted drain time"
    assert [
        b.label
        for b in (
            lab.time_control.reset_button,
            lab.time_control.play_button,
            lab.time_control.step_button,
        )
    ] == ["Reset", "Play", "Step"]


# --- canonical experiments by Step -----------------------------------------------------------


def test_draining_experiment_by_step(lab: QueueLab) -> None:
    step(lab, 4)
    assert ">2.00 s<" in lab.elapsed_div.text
    assert ">2.00 items<" in lab.length_div.text
    step(lab, 4)
    assert ">4.00 s<" in lab.elapsed_div.text
    assert ">0.00 items<" in lab.length_div.text
    step(lab)
    assert ">4.50 s<" in lab.elapsed_div.text
    assert ">0.00 items<" in lab.length_div.text
    assert lab.playhead.driver.data["anchor"] == [4.5]
    assert lab.playhead.driver.data["playing"] == [0]


def test_growing_experiment_from_a_fresh_reset(lab: QueueLab) -> None:
    type_into(lab.fields["arrival"], "4")
    reset(lab)
    assert ">+1.00 items/s<" in lab.rate_div.text
    assert "The queue grows." in lab.rate_div.text
    assert ">q(t) = max(0, 4.00 + 1.00 × (t − 0.00))<" in lab.formula_div.text
    assert list(lab.run_source.data["x"]) == [0.0, 20.0]
    assert list(lab.run_source.data["y"]) == [4.0, 24.0]
    for n, (elapsed, length) in enumerate(
        [
            ("0.50 s", "4.50 items"),
            ("1.00 s", "5.00 items"),
            ("1.50 s", "5.50 items"),
            ("2.00 s", "6.00 items"),
        ]
    ):
        step(lab)
        assert f">{elapsed}<" in lab.elapsed_div.text, n
        assert f">{length}<" in lab.length_div.text, n
    assert lab.length_prediction.visible is True


def test_step_until_the_horizon_disables_play_and_step(lab: QueueLab) -> None:
    step(lab, 40)
    assert ">20.00 s<" in lab.elapsed_div.text
    assert lab.time_control.step_button.disabled is True
    assert lab.time_control.play_button.disabled is True
    reset(lab)
    assert lab.time_control.step_button.disabled is False
    assert lab.time_control.play_button.disabled is False


# --- edits keep time -------------------------------------------------------------------------


def test_mid_run_edit_at_t2(lab: QueueLab) -> None:
    step(lab, 4)
    type_into(lab.fields["arrival"], "4")
    assert lab.settings.arrival == 4.0
    assert lab.clock.elapsed == 2.0
    assert ">2.00 s<" in lab.elapsed_div.text
    assert ">2.00 items<" in lab.length_div.text
    assert ">+1.00 items/s<" in lab.rate_div.text
    assert ">q(t) = max(0, 2.00 + 1.00 × (t − 2.00))<" in lab.formula_div.text
    assert "From t = 2.00 s with 2.00 items: arrival 4 − service 3 items/s." in (
        lab.formula_div.text
    )
    assert list(lab.run_source.data["x"]) == [0.0, 2.0, 20.0]
    assert list(lab.run_source.data["y"]) == [4.0, 2.0, 20.0]
    assert list(lab.edit_source.data["x"]) == [2.0]
    assert list(lab.edit_source.data["y"]) == [2.0]
    assert lab.playhead.driver.data["anchor"] == [2.0]
    step(lab, 2)
    assert ">3.00 s<" in lab.elapsed_div.text
    assert ">3.00 items<" in lab.length_div.text


def test_mid_run_edit_of_service(lab: QueueLab) -> None:
    step(lab, 4)
    type_into(lab.fields["service"], "4")
    assert ">q(t) = max(0, 2.00 − 2.00 × (t − 2.00))<" in lab.formula_div.text
    assert list(lab.run_source.data["x"]) == [0.0, 2.0, 3.0, 20.0]
    assert list(lab.run_source.data["y"]) == [4.0, 2.0, 0.0, 0.0]
    step(lab)
    assert ">1.00 items<" in lab.length_div.text


def test_reset_clears_history_and_keeps_controls(lab: QueueLab) -> None:
    step(lab, 4)
    type_into(lab.fields["arrival"], "4")
    type_into(lab.fields["predicted_drain_time"], "4")
    reset(lab)
    assert ">0.00 s<" in lab.elapsed_div.text
    assert ">4.00 items<" in lab.length_div.text
    assert ">q(t) = max(0, 4.00 + 1.00 × (t − 0.00))<" in lab.formula_div.text
    assert list(lab.edit_source.data["x"]) == []
    assert lab.fields["arrival"].input.value == "4"
    assert lab.fields["service"].input.value == "3"
    assert lab.fields["initial"].input.value == "4"
    assert lab.fields["predicted_drain_time"].input.value == ""
    assert lab.prediction_source.data == {"x": [], "y": [], "what": []}
    assert lab.actual_source.data == {"x": [], "y": [], "what": []}


# --- initial items ---------------------------------------------------------------------------


def test_initial_items_at_zero_apply_at_once(lab: QueueLab) -> None:
    type_into(lab.fields["initial"], "6")
    assert ">6.00 items<" in lab.length_div.text
    assert list(lab.run_source.data["y"]) == [6.0, 0.0, 0.0]
    assert lab.initial_note.object == ""


def test_initial_items_later_apply_at_reset(lab: QueueLab) -> None:
    step(lab, 2)
    type_into(lab.fields["initial"], "8")
    assert lab.settings.initial == 8.0
    assert ">3.00 items<" in lab.length_div.text
    assert "Initial items 8 applies at the next Reset." in lab.initial_note.object
    assert 'role="status"' in lab.initial_note.object
    reset(lab)
    assert ">8.00 items<" in lab.length_div.text
    assert lab.initial_note.object == ""
    assert list(lab.run_source.data["x"]) == [0.0, 8.0, 20.0]


# --- bad input -------------------------------------------------------------------------------

FIELDS = [
    ("arrival", "arrival", 2.0),
    ("service", "service", 3.0),
    ("initial", "initial", 4.0),
]


@pytest.mark.parametrize(("field_name", "param_name", "kept"), FIELDS)
@pytest.mark.parametrize("bad", ["-1", "abc", "nan", "", "1e99", "inf", "-inf", "  "])
def test_bad_input_shows_a_message_and_keeps_the_last_valid_value(
    lab: QueueLab, field_name: str, param_name: str, kept: float, bad: str
) -> None:
    field = lab.fields[field_name]
    formula = lab.formula_div.text.split("</span>", 1)[1]  # past the per-render id
    before = revision(lab)
    type_into(field, bad)
    assert 'role="alert"' in field.message.object
    assert getattr(lab.settings, param_name) == kept
    assert lab.formula_div.text.split("</span>", 1)[1] == formula
    assert revision(lab) == before  # nothing changed, nothing sent
    type_into(field, "5")
    assert 'role="alert"' not in field.message.object
    assert getattr(lab.settings, param_name) == 5.0


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ("-1", "Arrival rate must be 0 to 1000 items/s."),
        ("abc", "“abc” is not a number. Enter 0 to 1000 items/s."),
        ("nan", "Enter a finite number (0 to 1000 items/s)."),
        ("inf", "Enter a finite number (0 to 1000 items/s)."),
        ("", "Arrival rate needs a number (0 to 1000 items/s)."),
        ("1e99", "Arrival rate must be 0 to 1000 items/s."),
    ],
)
def test_bad_arrival_messages(lab: QueueLab, bad: str, says: str) -> None:
    type_into(lab.fields["arrival"], bad)
    assert says in lab.fields["arrival"].message.object


def test_bad_initial_items_message(lab: QueueLab) -> None:
    type_into(lab.fields["initial"], "1e99")
    assert "Initial items must be 0 to 100000 items." in lab.fields["initial"].message.object
    assert lab.settings.initial == 4.0


def test_good_value_after_bad_clears_the_message(lab: QueueLab) -> None:
    hint = lab.fields["arrival"].message.object
    assert 'role="alert"' not in hint
    type_into(lab.fields["arrival"], "abc")
    type_into(lab.fields["arrival"], "2")  # the model's value: no change, message still clears
    assert lab.fields["arrival"].message.object == hint
    type_into(lab.fields["arrival"], "-3")
    type_into(lab.fields["arrival"], "2,5")  # a decimal comma is accepted
    assert lab.fields["arrival"].message.object == hint
    assert lab.settings.arrival == 2.5
    assert ">−0.50 items/s<" in lab.rate_div.text


def test_empty_prediction_means_no_prediction(lab: QueueLab) -> None:
    type_into(lab.fields["predicted_drain_time"], "4")
    type_into(lab.fields["predicted_drain_time"], "")
    assert lab.settings.predicted_drain_time is None
    assert 'role="alert"' not in lab.fields["predicted_drain_time"].message.object
    assert lab.prediction_source.data == {"x": [], "y": [], "what": []}


def test_bad_prediction_is_refused(lab: QueueLab) -> None:
    type_into(lab.fields["predicted_drain_time"], "4")
    type_into(lab.fields["predicted_drain_time"], "-2")
    assert 'role="alert"' in lab.fields["predicted_drain_time"].message.object
    assert lab.settings.predicted_drain_time == 4.0


# --- predictions -----------------------------------------------------------------------------


def test_drain_prediction_spot_on(lab: QueueLab) -> None:
    type_into(lab.fields["predicted_drain_time"], "4")
    assert lab.prediction_source.data == {
        "x": [4.0],
        "y": [0.0],
        "what": ["Predicted drain at 4.00 s"],
    }
    assert lab.actual_source.data == {"x": [4.0], "y": [0.0], "what": ["Queue empty at 4.00 s"]}
    assert lab.drain_outcome.visible is False
    assert lab.drain_pending.visible is True
    assert "Checked when the run reaches the moment the queue empties." in (lab.drain_pending.text)
    step(lab, 7)
    assert lab.drain_outcome.visible is False
    step(lab)
    assert ">4.00 s<" in lab.elapsed_div.text
    assert lab.drain_outcome.visible is True
    assert lab.drain_pending.visible is False
    assert ">Actual drain time<" in lab.drain_outcome.text
    assert ">4.00 s<" in lab.drain_outcome.text
    assert "Your prediction: 4.00 s (spot on)." in lab.drain_outcome.text
    assert "ol-good" in lab.drain_outcome.text


def test_drain_prediction_off_by(lab: QueueLab) -> None:
    type_into(lab.fields["predicted_drain_time"], "3")
    step(lab, 8)
    assert lab.drain_outcome.visible is True
    assert "Your prediction: 3.00 s (off by +1.00 s)." in lab.drain_outcome.text
    assert "ol-off" in lab.drain_outcome.text


def test_drain_prediction_when_the_queue_never_drains(lab: QueueLab) -> None:
    type_into(lab.fields["arrival"], "4")
    type_into(lab.fields["predicted_drain_time"], "5")
    assert lab.actual_source.data == {"x": [], "y": [], "what": []}
    step(lab, 39)
    assert lab.drain_outcome.visible is False
    step(lab)
    assert lab.drain_outcome.visible is True
    assert ">—<" in lab.drain_outcome.text
    assert "The queue never drains: it does not shrink." in lab.drain_outcome.text


def test_length_prediction(lab: QueueLab) -> None:
    type_into(lab.fields["prediction_time"], "3")
    type_into(lab.fields["predicted_length"], "1.5")
    assert lab.prediction_source.data == {
        "x": [3.0],
        "y": [1.5],
        "what": ["Predicted 1.50 items at 3.00 s"],
    }
    assert lab.actual_source.data == {"x": [3.0], "y": [1.0], "what": ["1.00 items at 3.00 s"]}
    step(lab, 5)
    assert lab.length_outcome.visible is False
    step(lab)
    assert lab.length_outcome.visible is True
    assert ">Actual queue length<" in lab.length_outcome.text
    assert ">1.00 items<" in lab.length_outcome.text
    assert "Your prediction: 1.50 items (off by −0.50 items)." in lab.length_outcome.text


def test_revealed_sources_follow_the_playhead(lab: QueueLab) -> None:
    type_into(lab.fields["predicted_drain_time"], "4")
    shown_run = lab.playhead._reveals[0].shown
    shown_actual = lab.playhead._reveals[1].shown
    step(lab, 3)
    assert shown_run.data == {"x": [0.0, 1.5], "y": [4.0, 2.5]}
    assert shown_actual.data["x"] == []
    step(lab, 5)
    assert shown_run.data == {"x": [0.0, 4.0], "y": [4.0, 0.0]}
    assert shown_actual.data["x"] == [4.0]


# --- Play / Pause ----------------------------------------------------------------------------


def test_play_label_turns_to_pause_and_back(lab: QueueLab, wall: FakeWall) -> None:
    play(lab)
    assert lab.time_control.play_button.label == "Pause"
    assert lab.clock.playing is True
    assert lab.playhead.driver.data["playing"] == [1]
    play(lab)
    assert lab.time_control.play_button.label == "Play"
    assert lab.clock.playing is False
    assert lab.playhead.driver.data["playing"] == [0]


def test_play_then_pause_advances_by_speed_times_wall(lab: QueueLab, wall: FakeWall) -> None:
    lab.clock.speed = 2.0
    play(lab)
    assert lab.playhead.driver.data["anchor"] == [0.0]
    assert lab.playhead.driver.data["speed"] == [2.0]
    wall.t += 0.75
    play(lab)
    assert lab.clock.elapsed == 1.5
    assert ">1.50 s<" in lab.elapsed_div.text
    assert ">2.50 items<" in lab.length_div.text
    assert lab.playhead.driver.data["anchor"] == [1.5]


def test_step_while_playing_pauses_and_steps(lab: QueueLab, wall: FakeWall) -> None:
    play(lab)
    wall.t += 1.0
    step(lab)
    assert lab.time_control.play_button.label == "Play"
    assert lab.clock.elapsed == 1.5
    assert ">1.50 s<" in lab.elapsed_div.text


def test_edit_while_playing_keeps_time(lab: QueueLab, wall: FakeWall) -> None:
    play(lab)
    wall.t += 2.0
    type_into(lab.fields["arrival"], "4")
    assert lab.clock.playing is True
    assert lab.clock.elapsed == 2.0
    assert ">q(t) = max(0, 2.00 + 1.00 × (t − 2.00))<" in lab.formula_div.text
    assert lab.playhead.driver.data["anchor"] == [2.0]
    assert lab.playhead.driver.data["playing"] == [1]
    wall.t += 1.0
    play(lab)
    assert ">3.00 s<" in lab.elapsed_div.text
    assert ">3.00 items<" in lab.length_div.text


def test_play_past_the_horizon_stops_at_the_horizon(lab: QueueLab, wall: FakeWall) -> None:
    play(lab)
    wall.t += 25.0
    lab.time_control.sync()
    assert lab.clock.playing is False
    assert lab.clock.elapsed == 20.0
    assert lab.time_control.play_button.label == "Play"
    assert lab.time_control.play_button.disabled is True


def test_end_of_run_timer_turns_pause_back_into_play(lab: QueueLab, wall: FakeWall) -> None:
    play(lab)
    wall.t += 20.0
    lab.time_control._reached_end()
    assert lab.clock.elapsed == 20.0
    assert lab.time_control.play_button.label == "Play"
    assert ">20.00 s<" in lab.elapsed_div.text
    assert lab.playhead.driver.data["playing"] == [0]
    assert lab.playhead.driver.data["anchor"] == [20.0]


def test_reset_while_playing(lab: QueueLab, wall: FakeWall) -> None:
    play(lab)
    wall.t += 3.0
    reset(lab)
    assert lab.clock.playing is False
    assert lab.time_control.play_button.label == "Play"
    assert ">0.00 s<" in lab.elapsed_div.text
    assert lab.playhead.driver.data["anchor"] == [0.0]


def test_driver_revision_changes_on_every_action(lab: QueueLab, wall: FakeWall) -> None:
    seen = [revision(lab)]

    def changed() -> None:
        seen.append(revision(lab))
        assert seen[-1] not in seen[:-1]

    step(lab)
    changed()
    play(lab)
    changed()
    play(lab)
    changed()
    type_into(lab.fields["arrival"], "4")
    changed()
    type_into(lab.fields["service"], "5")
    changed()
    type_into(lab.fields["initial"], "7")
    changed()
    type_into(lab.fields["predicted_drain_time"], "3")
    changed()
    reset(lab)
    changed()
    reset(lab)  # even when nothing else changes
    changed()
    step(lab)
    changed()


# --- URL state -------------------------------------------------------------------------------


def test_settings_from_query_good_keys() -> None:
    values, notices = settings_from_query(
        FluidQueue, {"arrival": [b"4"], "service": [b"3"], "initial": [b"0.5"]}
    )
    assert values == {"arrival": 4.0, "service": 3.0, "initial": 0.5}
    assert notices == []


def test_settings_from_query_takes_the_last_value_and_str_values() -> None:
    values, notices = settings_from_query(FluidQueue, {"arrival": [b"1", b"4"], "service": ["2,5"]})
    assert values == {"arrival": 4.0, "service": 2.5}
    assert notices == []


def test_settings_from_query_ignores_unknown_keys() -> None:
    values, notices = settings_from_query(FluidQueue, {"speed": [b"9"], "arrival": [b"4"]})
    assert values == {"arrival": 4.0}
    assert notices == ["Ignored unknown setting “speed” (known: arrival, initial, service)."]


@pytest.mark.parametrize(
    ("query", "notice"),
    [
        ({"arrival": [b"-1"]}, "Ignored arrival=-1: Arrival rate must be 0 to 1000 items/s."),
        ({"arrival": [b"abc"]}, "Ignored arrival=abc: “abc” is not a number."),
        ({"service": [b"nan"]}, "Ignored service=nan: Enter a finite number"),
        ({"service": [b"inf"]}, "Ignored service=inf: Enter a finite number"),
        ({"initial": [b"1e99"]}, "Ignored initial=1e99: Initial items must be 0 to 100000 items."),
        ({"initial": [b""]}, "Ignored initial=: Initial items needs a number"),
        ({"arrival": [b"\xff"]}, "Ignored arrival=\ufffd:"),
    ],
)
def test_settings_from_query_ignores_invalid_values(query: dict, notice: str) -> None:
    values, notices = settings_from_query(FluidQueue, query)
    assert values == {}
    assert len(notices) == 1
    assert notices[0].startswith(notice)


def test_query_settings_preset_the_lab() -> None:
    values, _ = settings_from_query(
        FluidQueue, {"arrival": [b"4"], "initial": [b"0"], "bogus": [b"1"]}
    )
    lab = QueueLab(**values)
    assert lab.fields["arrival"].input.value == "4"
    assert lab.fields["initial"].input.value == "0"
    assert ">0.00 items<" in lab.length_div.text
    assert ">q(t) = max(0, 0.00 + 1.00 × (t − 0.00))<" in lab.formula_div.text


def test_the_y_axis_follows_the_run_so_far_not_the_whole_run(lab: QueueLab) -> None:
    y = lab.figure.y_range
    reset(lab)
    type_into(lab.fields["arrival"], "4")  # grows by 1 item/s from 4: 24 items at 20 s
    # Only q(0) = 4 has happened: ceil(4 × 1.12) = 5, with 4 % below zero for markers.
    assert (y.start, y.end) == (pytest.approx(-0.2), 5.0)
    step(lab, 12)  # t = 6 s, q = 10: ceil(11.2) = 12
    assert y.end == 12.0
    reset(lab)
    assert y.end == 5.0
    type_into(lab.fields["prediction_time"], "10")
    type_into(lab.fields["predicted_length"], "30")  # a prediction stays on screen: ceil(33.6) = 34
    assert y.end == 34.0


def test_a_queue_that_starts_empty_and_grows_says_it_never_drains() -> None:
    lab = QueueLab(initial=0, arrival=4, service=3, predicted_drain_time=2)
    lab.settings.clock.elapsed = lab.clock.horizon
    lab.refresh()
    assert "The queue starts empty and grows: it never drains." in lab.drain_outcome.text
    assert ">—<" in lab.drain_outcome.text  # no drain time, not "0.00 s"
    assert "it never drains" in lab.describe()


def test_a_draining_queue_past_the_run_says_when_it_would_empty() -> None:
    lab = QueueLab(initial=30, arrival=1, service=2, predicted_drain_time=25)
    lab.settings.clock.elapsed = lab.clock.horizon
    lab.refresh()
    assert "It would empty at 30.00 s, after the run ends." in lab.drain_outcome.text


def test_an_experiment_starts_a_fresh_run_with_its_initial_items(lab: QueueLab) -> None:
    step(lab, 4)  # t = 2: the queue went 4 -> 2 at net -1/s
    lab.settings.arrival = 4.0  # an edit mid-run: a second segment from t = 2
    assert len(lab.settings.series) == 2
    lab.apply(initial=7.0, arrival=1.0)
    series = lab.settings.series
    # History gone, and initial items (which otherwise wait for Reset) apply now.
    assert len(series) == 1
    assert series.start[0] == 0.0 and series.value[0] == 7.0 and series.slope[0] == -2.0
    assert lab.clock.elapsed == 0.0
    assert ">7.00 items<" in lab.length_div.text
