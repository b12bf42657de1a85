"""The fluid queue model: exact canonical experiments, edits that keep time, invariants."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import event, given, settings, target
from hypothesis import strategies as st

from widgets.bucket_timeline.model import PRESETS
from widgets.model.fluid_queue import (
    LONGEST_RUN,
    Drain,
    DrainStatus,
    FluidQueue,
    PredictionCheck,
    Segment,
)
from widgets.model.timeline import Clock


class FakeWall:
    """A wall clock that moves only when told to."""

    def __init__(self, t: float = 50.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def make_queue(wall: FakeWall | None = None, step_size: float = 0.5, **params) -> FluidQueue:
    clock = Clock(wall_clock=wall or FakeWall(), horizon=20.0, step_size=step_size)
    return FluidQueue(clock=clock, **params)


def steps(q: FluidQueue, n: int) -> None:
    for _ in range(n):
        q.clock.step()


# --- canonical experiments -----------------------------------------------------------------


def test_defaults_are_the_draining_experiment() -> None:
    q = FluidQueue()
    assert (q.initial, q.arrival, q.service) == (4.0, 2.0, 3.0)
    assert q.duration is None
    assert q.clock.horizon == 20.0
    assert q.clock.step_size == 0.5


def test_initial_4_arrival_2_service_3_drains_at_4() -> None:
    q = make_queue(initial=4, arrival=2, service=3)
    assert q.first_empty_time() == 4.0
    assert q.segment == Segment(start=0.0, length=4.0, arrival=2.0, service=3.0)
    assert q.segment.drain_time == 4.0
    assert q.segment.net_rate == -1.0
    assert q.segment.trend == "drains"
    np.testing.assert_array_equal(q.length_at([0, 1, 2, 3, 4, 5]), [4.0, 3.0, 2.0, 1.0, 0.0, 0.0])


def test_draining_by_step() -> None:
    q = make_queue()
    lengths = []
    for _ in range(10):
        q.clock.step()
        lengths.append(q.length())
    assert q.clock.elapsed == 5.0
    assert lengths == [3.5, 3.0, 2.5, 2.0, 1.5, 1.0, 0.5, 0.0, 0.0, 0.0]


def test_fresh_reset_arrival_4_service_3_grows_one_item_per_second() -> None:
    q = make_queue()
    q.arrival = 4
    q.reset()
    assert len(q.series) == 1
    assert q.segment == Segment(start=0.0, length=4.0, arrival=4.0, service=3.0)
    assert q.segment.net_rate == 1.0
    assert q.segment.trend == "grows"
    assert q.segment.drain_time is None
    assert q.first_empty_time() is None
    np.testing.assert_array_equal(q.length_at([0, 1, 2, 3, 10]), [4.0, 5.0, 6.0, 7.0, 14.0])
    steps(q, 2)
    assert q.length() == 5.0
    steps(q, 2)
    assert q.length() == 6.0


def test_equal_rates_hold_steady() -> None:
    q = make_queue(arrival=3, service=3)
    assert q.segment.trend == "constant"
    assert q.segment.net_rate == 0.0
    assert q.segment.drain_time is None
    np.testing.assert_array_equal(q.length_at([0, 5, 20]), [4.0, 4.0, 4.0])


def test_empty_queue_that_cannot_grow_is_drained_at_its_start() -> None:
    q = make_queue(initial=0, arrival=2, service=3)
    assert q.segment.drain_time == 0.0
    assert q.first_empty_time() == 0.0
    assert make_queue(initial=0, arrival=3, service=3).segment.drain_time == 0.0
    assert make_queue(initial=0, arrival=4, service=3).segment.drain_time is None


# --- a queue that starts empty -------------------------------------------------------------


def test_empty_queue_that_grows_never_drains() -> None:
    # q(t) = max(0, 0 + (4 - 3) t) = t: empty only at the instant t = 0, then growing.
    q = make_queue(initial=0, arrival=4, service=3, predicted_drain_time=0.0)
    assert q.first_empty_time() is None
    assert q.drain() == Drain(DrainStatus.GROWS_FROM_EMPTY, None)
    check = q.drain_check()
    # Never "Actual drain time 0.00 s": nothing happened, checked at the end of the run.
    assert check == PredictionCheck(predicted=0.0, actual=None, check_at=20.0)
    assert q.checked(check) is False
    assert check.close() is False


def test_the_bridge_from_traffic_exceeds_compute_grows_from_empty() -> None:
    from widgets.model.buckets import average_rates

    arrival, service = average_rates(PRESETS.load("Traffic exceeds compute"))
    # 300 MB over 12 ms of backward against 25 * 8 / 14 = 14.29 MB/ms of service.
    assert (round(arrival, 2), round(service, 2)) == (25.0, 14.29)
    q = make_queue(initial=0, arrival=round(arrival, 2), service=round(service, 2))
    assert q.drain().status == DrainStatus.GROWS_FROM_EMPTY
    assert q.first_empty_time() is None


def test_empty_queue_that_grows_then_drains_after_an_edit() -> None:
    q = make_queue(initial=0, arrival=4, service=3)
    steps(q, 10)  # t = 5, q = 5
    q.service = 6.0  # net -2: empty at 5 + 5 / 2 = 7.5
    assert q.first_empty_time() == 7.5
    assert q.drain() == Drain(DrainStatus.DRAINS, 7.5)


def test_emptying_at_an_edit_that_then_grows_still_drained() -> None:
    q = make_queue()  # 4 items, net -1: empty at t = 4
    steps(q, 8)  # t = 4
    q.arrival = 5.0  # grows from here: it did empty at 4
    assert q.first_empty_time() == 4.0
    assert q.drain() == Drain(DrainStatus.DRAINS, 4.0)


def test_drain_after_the_run_and_never() -> None:
    q = make_queue(initial=100, arrival=2, service=3)  # empties at 100 > horizon 20
    assert q.first_empty_time() is None
    assert q.drain() == Drain(DrainStatus.AFTER_THE_RUN, 100.0)
    assert make_queue(arrival=3, service=3).drain() == Drain(DrainStatus.NEVER, None)
    assert make_queue(arrival=4, service=3).drain() == Drain(DrainStatus.NEVER, None)
    assert make_queue(initial=0, arrival=2, service=3).drain() == Drain(DrainStatus.DRAINS, 0.0)


quarters = st.integers(0, 40).map(lambda x: x / 4)


@settings(max_examples=300, deadline=None)
@given(
    initial=st.sampled_from([0.0, 0.0, 1.0, 5.0]),
    rates=st.lists(
        # Rates in quarter items per second: a classroom's numbers, not 1e-80.
        st.tuples(quarters, quarters, st.integers(1, 8)),
        min_size=1,
        max_size=4,
    ),
)
def test_a_reported_drain_is_a_real_drain(initial: float, rates: list) -> None:
    """The drain time is empty, and either emptied from above or stays empty; nothing
    earlier is; without one, the queue is never empty for a stretch of time."""
    q = make_queue(initial=initial, arrival=rates[0][0], service=rates[0][1])
    for arrival, service, n in rates[1:]:
        steps(q, n)
        q.param.update(arrival=arrival, service=service)
    t = q.first_empty_time()
    grid = np.linspace(0.0, 20.0, 4001)
    qs = q.length_at(grid)
    if t is None:
        tiny = 1e-12 * max(1.0, float(qs.max()))
        assert not np.any((qs[:-1] <= tiny) & (qs[1:] <= tiny))
        assert q.drain().status != DrainStatus.DRAINS
    else:
        tiny = 1e-12 * max(1.0, float(qs.max()))  # rounding at a computed floor hit
        assert q.length_at(t) <= tiny
        eps = 1e-6
        emptied = t > 0 and q.length_at(t - eps) > tiny
        stays = q.length_at(min(t + eps, 20.0)) <= tiny
        assert emptied or stays
        earlier = grid[grid < t - 1e-3]
        stretch = (q.length_at(earlier) <= tiny) & (q.length_at(earlier + 1e-3) <= tiny)
        assert not np.any(stretch)
        assert q.drain() == Drain(DrainStatus.DRAINS, t)


# --- edits keep time -----------------------------------------------------------------------


def test_edit_at_t2_restarts_the_formula_from_q2() -> None:
    q = make_queue()
    steps(q, 4)
    assert q.clock.elapsed == 2.0
    assert q.length() == 2.0
    q.arrival = 4
    assert q.clock.elapsed == 2.0
    assert q.clock.playing is False
    assert q.segment == Segment(start=2.0, length=2.0, arrival=4.0, service=3.0)
    assert q.segment.drain_time is None
    np.testing.assert_array_equal(q.segment_starts, [0.0, 2.0])
    np.testing.assert_array_equal(q.length_at([0, 1, 2, 3, 4]), [4.0, 3.0, 2.0, 3.0, 4.0])
    q.clock.step()
    assert q.length() == 2.5


def test_edit_at_t2_to_a_faster_drain() -> None:
    q = make_queue()
    steps(q, 4)
    q.arrival = 1
    assert q.segment == Segment(start=2.0, length=2.0, arrival=1.0, service=3.0)
    assert q.segment.drain_time == 3.0
    assert q.first_empty_time() == 3.0
    np.testing.assert_array_equal(q.length_at([2, 2.5, 3, 4]), [2.0, 1.0, 0.0, 0.0])


def test_edit_after_draining_restarts_from_empty() -> None:
    q = make_queue()
    steps(q, 12)
    assert q.clock.elapsed == 6.0
    q.arrival = 5
    assert q.segment == Segment(start=6.0, length=0.0, arrival=5.0, service=3.0)
    np.testing.assert_array_equal(q.length_at([4, 6, 7]), [0.0, 0.0, 2.0])
    assert q.first_empty_time() == 4.0


def test_edit_while_playing_folds_played_time_and_keeps_playing() -> None:
    wall = FakeWall()
    q = make_queue(wall)
    q.clock.play()
    wall.t += 1.5
    q.service = 5
    assert q.clock.playing is True
    assert q.clock.elapsed == 1.5
    assert q.clock.anchor_wall == wall.t
    assert q.segment == Segment(start=1.5, length=2.5, arrival=2.0, service=5.0)
    wall.t += 0.5
    assert q.length() == 1.0


def test_two_edits_at_the_same_time_leave_one_segment_there() -> None:
    q = make_queue()
    steps(q, 4)
    q.arrival = 4
    q.service = 1
    np.testing.assert_array_equal(q.segment_starts, [0.0, 2.0])
    assert q.segment == Segment(start=2.0, length=2.0, arrival=4.0, service=1.0)


def test_rate_edit_at_zero_replaces_the_first_segment() -> None:
    q = make_queue()
    q.param.update(arrival=4, service=3)
    np.testing.assert_array_equal(q.segment_starts, [0.0])
    assert q.segment == Segment(start=0.0, length=4.0, arrival=4.0, service=3.0)


# --- initial items ---------------------------------------------------------------------------


def test_initial_edit_at_zero_applies_at_once() -> None:
    q = make_queue()
    q.initial = 6
    assert q.initial_pending is False
    assert q.length() == 6.0
    assert q.segment == Segment(start=0.0, length=6.0, arrival=2.0, service=3.0)
    assert q.first_empty_time() == 6.0


def test_initial_edit_later_waits_for_reset() -> None:
    q = make_queue()
    steps(q, 2)
    series = q.series
    q.initial = 8
    assert q.initial_pending is True
    assert q.series is series
    assert q.length() == 3.0
    q.reset()
    assert q.initial_pending is False
    assert q.length() == 8.0
    assert q.first_empty_time() == 8.0


def test_initial_edit_while_playing_at_time_zero_applies_at_once() -> None:
    wall = FakeWall()
    q = make_queue(wall)
    q.clock.play()
    q.initial = 2
    assert q.initial_pending is False
    assert q.length() == 2.0


def test_initial_edit_while_playing_after_zero_is_pending() -> None:
    wall = FakeWall()
    q = make_queue(wall)
    q.clock.play()
    wall.t += 0.25
    q.initial = 2
    assert q.initial_pending is True
    assert q.length() == 3.75


# --- Reset -----------------------------------------------------------------------------------


def test_reset_clears_history_and_predictions_but_keeps_controls() -> None:
    q = make_queue()
    steps(q, 4)
    q.arrival = 4
    q.param.update(predicted_drain_time=4.0, prediction_time=3.0, predicted_length=1.0)
    q.reset()
    assert q.clock.elapsed == 0.0
    assert q.clock.playing is False
    np.testing.assert_array_equal(q.segment_starts, [0.0])
    assert q.segment == Segment(start=0.0, length=4.0, arrival=4.0, service=3.0)
    assert (q.arrival, q.service, q.initial) == (4.0, 3.0, 4.0)
    assert q.predicted_drain_time is None
    assert q.prediction_time is None
    assert q.predicted_length is None
    assert q.drain_check() is None
    assert q.length_check() is None


# --- predictions -----------------------------------------------------------------------------


def test_drain_check_for_the_canonical_experiment() -> None:
    q = make_queue()
    assert q.drain_check() is None
    q.predicted_drain_time = 4.0
    check = q.drain_check()
    assert check == PredictionCheck(predicted=4.0, actual=4.0, check_at=4.0)
    assert check.error == 0.0
    assert check.close() is True
    steps(q, 7)
    assert q.checked(check) is False
    q.clock.step()
    assert q.clock.elapsed == 4.0
    assert q.checked(check) is True


def test_drain_check_off_by_one() -> None:
    q = make_queue(predicted_drain_time=3.0)
    check = q.drain_check()
    assert check == PredictionCheck(predicted=3.0, actual=4.0, check_at=4.0)
    assert check.error == 1.0
    assert check.close() is False


def test_drain_check_when_the_queue_never_empties() -> None:
    q = make_queue(arrival=4, predicted_drain_time=5.0)
    check = q.drain_check()
    assert check == PredictionCheck(predicted=5.0, actual=None, check_at=20.0)
    assert check.error is None
    assert check.close() is False
    steps(q, 39)
    assert q.checked(check) is False
    q.clock.step()
    assert q.checked(check) is True


def test_length_check() -> None:
    q = make_queue()
    q.prediction_time = 3.0
    assert q.length_check() is None  # needs both numbers
    q.predicted_length = 1.0
    check = q.length_check()
    assert check == PredictionCheck(predicted=1.0, actual=1.0, check_at=3.0)
    assert check.close() is True
    q.predicted_length = 2.0
    assert q.length_check().error == -1.0
    steps(q, 5)
    assert q.checked(q.length_check()) is False
    q.clock.step()
    assert q.checked(q.length_check()) is True


def test_length_check_beyond_the_horizon() -> None:
    q = make_queue(prediction_time=25.0, predicted_length=3.0)
    assert q.length_check() == PredictionCheck(predicted=3.0, actual=None, check_at=20.0)


def test_checked_none_is_false() -> None:
    assert make_queue().checked(None) is False


@pytest.mark.parametrize(
    ("predicted", "actual", "close"),
    [
        (4.0, 4.0, True),
        (4.15, 4.0, True),  # within 5 % of 4
        (4.3, 4.0, False),
        (95.5, 100.0, True),
        (94.0, 100.0, False),
        (0.04, 0.0, True),  # at least 0.05 absolute
        (0.06, 0.0, False),
    ],
)
def test_prediction_tolerance(predicted: float, actual: float, close: bool) -> None:
    assert PredictionCheck(predicted, actual, actual).close() is close


# --- how long a run lasts ------------------------------------------------------------------


def test_the_longest_run_is_twenty_seconds() -> None:
    assert LONGEST_RUN == 20.0


@pytest.mark.parametrize(
    ("initial", "arrival", "service", "horizon"),
    [
        (4, 2, 3, 5.0),  # empty at 4 / 1 = 4: ceil(4 + max(1, 1)) = 5
        (8, 2, 3, 10.0),  # empty at 8: ceil(8 + max(1, 2)) = 10
        (10, 1, 3, 7.0),  # empty at 10 / 2 = 5: ceil(5 + 1.25) = ceil(6.25) = 7
        (3, 0, 2, 3.0),  # empty at 1.5: ceil(1.5 + max(1, 0.375)) = ceil(2.5) = 3
        (0.5, 2, 3, 2.0),  # empty at 0.5: ceil(0.5 + 1) = ceil(1.5) = 2
        (2, 0, 8, 2.0),  # empty at 0.25: ceil(0.25 + 1) = 2
        (15, 2, 3, 19.0),  # empty at 15: ceil(15 + 3.75) = ceil(18.75) = 19
        (16, 2, 3, 20.0),  # empty at 16: ceil(16 + 4) = 20, the longest anyway
        (17, 2, 3, 20.0),  # empty at 17: ceil(17 + 4.25) = 22, cut to 20
        (20, 2, 3, 20.0),  # empty at 20 exactly: the longest run
        (30, 1, 2, 20.0),  # empty at 30, after the longest run
        (4, 4, 3, 20.0),  # grows: never empty
        (4, 3, 3, 20.0),  # holds at 4 items: never empty
        (0, 4, 3, 20.0),  # starts empty and grows
        (0, 2, 3, 1.0),  # empty from the start and stays so: ceil(0 + max(1, 0)) = 1
        (0, 3, 3, 1.0),  # empty and held there: drained at 0, ceil(0 + 1) = 1
    ],
)
def test_run_horizon_ends_a_little_after_the_queue_empties(
    initial: float, arrival: float, service: float, horizon: float
) -> None:
    assert make_queue(initial=initial, arrival=arrival, service=service).run_horizon() == horizon


def test_run_horizon_is_never_before_the_elapsed_time() -> None:
    q = make_queue()  # empty at 4: the rule says 5
    assert q.run_horizon(0.0) == 5.0
    assert q.run_horizon(4.5) == 5.0
    assert q.run_horizon(5.0) == 5.0
    assert q.run_horizon(7.25) == 7.25
    grows = make_queue(arrival=4)
    assert grows.run_horizon(12.0) == 20.0
    assert grows.run_horizon(25.0) == 25.0


def test_run_horizon_uses_a_run_length_as_set() -> None:
    assert make_queue(duration=8.0).run_horizon() == 8.0  # longer than the rule's 5
    assert make_queue(duration=2.5).run_horizon() == 2.5  # before the drain at 4: as set
    assert make_queue(arrival=4, duration=3.0).run_horizon() == 3.0  # not the 20 of growth
    assert make_queue(duration=1000.0).run_horizon() == 1000.0  # past the longest run
    assert make_queue(duration=3.0).run_horizon(10.0) == 10.0  # but never before elapsed
    q = make_queue(duration=8.0)
    q.duration = None  # empty again: the rule
    assert q.run_horizon() == 5.0


def test_a_run_length_is_bounded() -> None:
    assert FluidQueue(duration=1.0).duration == 1.0
    for bad in (0.5, 1000.5, -1.0):
        with pytest.raises(ValueError):
            FluidQueue(duration=bad)


def test_run_horizon_after_an_edit_follows_the_running_segment() -> None:
    q = make_queue()
    steps(q, 4)  # t = 2, 2 items
    q.arrival = 2.5  # net -0.5: empty at 2 + 2 / 0.5 = 6; ceil(6 + max(1, 1.5)) = 8
    assert q.run_horizon(q.clock.now()) == 8.0
    q.arrival = 1.0  # (same instant) net -2: empty at 2 + 1 = 3; ceil(3 + max(1, 0.75)) = 4
    assert q.run_horizon(q.clock.now()) == 4.0


def test_run_horizon_waits_for_the_queue_to_empty_for_good() -> None:
    q = make_queue()
    steps(q, 8)  # t = 4: empty
    assert q.run_horizon(4.0) == 5.0
    q.arrival = 5.0  # grows from empty at 4: it emptied once, but not for good
    assert q.first_empty_time() == 4.0
    assert q.run_horizon(4.0) == 20.0
    steps(q, 4)  # t = 6: 0 + 2 x 2 = 4 items
    q.arrival = 1.0  # net -2: empty at 6 + 4 / 2 = 8; ceil(8 + max(1, 2)) = 10
    assert q.run_horizon(6.0) == 10.0


def test_run_horizon_after_the_queue_emptied_counts_from_the_edit() -> None:
    q = make_queue()
    steps(q, 9)  # t = 4.5, empty since 4
    q.service = 4.0  # empty from 4.5 (net -2): ceil(4.5 + max(1, 1.125)) = ceil(5.625) = 6
    assert q.run_horizon(4.5) == 6.0


def test_run_horizon_ignores_a_pending_initial_until_reset() -> None:
    q = make_queue()
    steps(q, 2)  # t = 1
    q.initial = 8.0  # applies at Reset: this run still empties at 4
    assert q.run_horizon(1.0) == 5.0
    q.reset()  # empty at 8: ceil(8 + 2) = 10
    assert q.run_horizon() == 10.0


# Classroom rates (quarter items per second) and any rate the bounds allow.
any_rate = st.one_of(quarters, st.floats(0.0, 1000.0))


@settings(max_examples=300, deadline=None)
@given(
    initial=st.one_of(st.sampled_from([0.0, 0.5, 4.0, 30.0]), st.floats(0.0, 100000.0)),
    rates=st.lists(
        st.tuples(any_rate, any_rate, st.integers(1, 12)),
        min_size=1,
        max_size=4,
    ),
    duration=st.one_of(st.none(), st.sampled_from([1.0, 5.0, 20.0]), st.floats(1.0, 1000.0)),
    later=st.one_of(st.just(0.0), st.floats(0.0, 1000.0)),
)
def test_run_horizon_properties(
    initial: float, rates: list, duration: float | None, later: float
) -> None:
    """Never before elapsed; at most the longest run (or elapsed) without a run length, the
    run length (or elapsed) with one; a drain before 20 s is strictly inside the run, and the
    queue is still empty at its end; without a run length, a run that does not end now ends
    on a whole second."""
    q = make_queue(initial=initial, arrival=rates[0][0], service=rates[0][1], duration=duration)
    for arrival, service, n in rates[1:]:
        steps(q, n)
        q.param.update(arrival=arrival, service=service)
    for elapsed in (q.clock.now(), later):
        h = q.run_horizon(elapsed)
        assert h >= elapsed
        assert h >= 1.0
        if duration is not None:
            assert h == max(duration, elapsed)
            continue
        assert h <= max(LONGEST_RUN, elapsed)
        if h > elapsed:
            assert h == int(h)
        empty = q.segment.drain_time
        if empty is not None and empty < LONGEST_RUN:
            event("drains before the longest run")
            assert empty < h
            tiny = 1e-12 * max(1.0, q.segment.length)
            assert q.length_at(h) <= tiny
        elif elapsed <= LONGEST_RUN:
            assert h == LONGEST_RUN


# --- invariants over random sequences of operations ------------------------------------------

rates = st.one_of(st.sampled_from([0.0, 1.0, 2.0, 3.0, 4.0, 1000.0]), st.floats(0.0, 1000.0))
items = st.one_of(st.sampled_from([0.0, 4.0, 100000.0]), st.floats(0.0, 100000.0))
operations = st.lists(
    st.one_of(
        st.just(("step",)),
        st.just(("toggle",)),
        st.just(("reset",)),
        st.tuples(st.just("wall"), st.floats(0.0, 5.0)),
        st.tuples(st.just("arrival"), rates),
        st.tuples(st.just("service"), rates),
        st.tuples(st.just("initial"), items),
        # Steered: play, let wall time pass, then edit a rate while still playing
        # (plain random sequences reach this only a few per cent of the time).
        st.tuples(
            st.just("played_edit"),
            st.floats(0.01, 5.0),
            st.sampled_from(["arrival", "service"]),
            rates,
        ),
    ),
    max_size=30,
)


def check_series(q: FluidQueue) -> None:
    """Every invariant of the series as it stands."""
    s, horizon = q.series, q.clock.horizon
    assert np.all(np.diff(s.start) > 0)
    assert s.start[0] == 0.0
    assert s.start[-1] <= horizon
    grid = np.linspace(0.0, horizon, 401)
    assert np.all(q.length_at(grid) >= 0.0)
    ts, vs = s.vertices(horizon)
    assert np.all(vs >= 0.0)
    scale = 1.0 + np.max(vs)
    np.testing.assert_allclose(
        np.interp(grid, ts, vs), q.length_at(grid), rtol=0, atol=1e-9 * scale
    )
    # Continuous: each segment starts where the previous one had got to.
    k = np.arange(1, len(s))
    prev = np.maximum(0.0, s.value[k - 1] + s.slope[k - 1] * (s.start[k] - s.start[k - 1]))
    np.testing.assert_array_equal(s.value[k], prev)
    np.testing.assert_array_equal(s.at(s.start[k]), prev)


@settings(max_examples=200, deadline=None)
@given(
    step_size=st.sampled_from([0.5, 0.25, 0.1, 1.0, 3.0, 0.3]),
    speed=st.sampled_from([1.0, 0.5, 2.0, 3.7]),
    ops=operations,
)
def test_invariants_over_random_operations(step_size: float, speed: float, ops: list) -> None:
    wall = FakeWall()
    q = make_queue(wall, step_size=step_size)
    q.clock.speed = speed
    check_series(q)
    played_edits = 0
    for op in ops:
        kind = op[0]
        if kind == "played_edit":
            q.clock.play()
            wall.t += op[1]
            if q.clock.playing:
                played_edits += 1
            op, kind = (op[2], op[3]), op[2]
        now, elapsed, playing = q.clock.now(), q.clock.elapsed, q.clock.playing
        wall_still = wall() == q.clock.anchor_wall
        old = q.series
        if kind == "step":
            q.clock.step()
            assert q.clock.playing is False
            if now + step_size < q.clock.horizon:
                assert q.clock.elapsed == now + step_size
            else:
                assert q.clock.elapsed == q.clock.horizon
            assert q.series is old
        elif kind == "toggle":
            if playing:
                q.clock.pause()
                assert q.clock.elapsed == now
            else:
                q.clock.play()
                assert q.clock.now() == now
        elif kind == "reset":
            q.param.update(predicted_drain_time=1.0)
            q.reset()
            assert q.clock.elapsed == 0.0
            assert q.clock.playing is False
            assert q.initial_pending is False
            assert q.predicted_drain_time is None
            np.testing.assert_array_equal(q.segment_starts, [0.0])
            assert q.segment == Segment(0.0, q.initial, q.arrival, q.service)
        elif kind == "wall":
            wall.t += op[1]
            assert q.clock.now() >= now
            assert q.clock.now() <= q.clock.horizon
        elif kind in ("arrival", "service"):
            changed = getattr(q, kind) != op[1]
            setattr(q, kind, op[1])
            assert q.clock.now() == now
            if not playing or wall_still:
                assert q.clock.elapsed == elapsed
            if changed:
                assert q.segment.start == now
                assert q.segment.length == old.at(now)
                assert q.length() == old.at(now)
                before = np.linspace(0.0, now, 40, endpoint=False)
                np.testing.assert_array_equal(q.length_at(before), old.at(before))
                if now > 0:
                    just_before = np.nextafter(now, -np.inf)
                    assert q.length_at(just_before) == pytest.approx(
                        q.length(), abs=1e-9 * (1.0 + abs(q.segment.net_rate) + q.length())
                    )
        else:  # initial
            changed = q.initial != op[1]
            q.initial = op[1]
            assert q.clock.now() == now
            assert q.clock.elapsed == elapsed
            if changed and now == 0.0:
                assert q.initial_pending is False
                assert q.length() == op[1]
            elif changed:
                assert q.initial_pending is True
                assert q.series is old
        check_series(q)
    event(f"edits while playing: {min(played_edits, 3)}{'+' if played_edits >= 3 else ''}")
    target(float(played_edits), label="edits while playing")


# --- edges, worked by hand ------------------------------------------------------------


def test_rates_are_bounded_at_1000_items_per_second() -> None:
    q = FluidQueue(arrival=1000.0, service=1000.0)
    assert (q.arrival, q.service) == (1000.0, 1000.0)
    with pytest.raises(ValueError):
        FluidQueue(arrival=1000.5)
    with pytest.raises(ValueError):
        FluidQueue(service=1000.5)


def test_records_are_immutable() -> None:
    q = FluidQueue()
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.segment.start = 1.0  # type: ignore[misc]
    check = PredictionCheck(3.0, 4.0, 4.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        check.actual = 1.0  # type: ignore[misc]


def test_a_prediction_exactly_at_the_tolerance_is_close() -> None:
    # Tolerance 0.25 of 4.0 is 1.0 exactly (binary-exact numbers): the edge counts as close.
    assert PredictionCheck(3.0, 4.0, 4.0).close(tolerance=0.25)
    assert not PredictionCheck(2.875, 4.0, 4.0).close(tolerance=0.25)


def test_no_initial_change_is_pending_until_one_is_made_after_time_zero() -> None:
    q = FluidQueue()
    assert q.initial_pending is False
    q.initial = 6.0  # at time zero: applies at once
    assert q.initial_pending is False and q.length() == 6.0
    q.clock.step()
    q.initial = 2.0
    assert q.initial_pending is True


# --- what the page relies on: each setting's declaration ----------------------------------


def test_each_setting_and_entry_is_declared_as_the_page_shows_it() -> None:
    """Label, unit, hint, bounds and default of every field (the page's contract)."""
    from widgets.model.settings import hint_of, is_setting, unit_of

    expected = {
        "arrival": ("Arrival rate", "items/s", None, (0.0, 1000.0), 2.0, True),
        "service": ("Service rate", "items/s", None, (0.0, 1000.0), 3.0, True),
        "initial": ("Initial items", "items", None, (0.0, 100000.0), 4.0, True),
        "duration": (
            "Run length",
            "s",
            "1 to 1000 s; empty: ends soon after the queue empties.",
            (1.0, 1000.0),
            None,
            True,
        ),
        "predicted_drain_time": (
            "Predicted drain time",
            "s",
            "Seconds; checked when the queue empties.",
            (0.0, 100000.0),
            None,
            False,
        ),
        "prediction_time": (
            "Prediction time",
            "s",
            "Seconds from 0.",
            (0.0, 100000.0),
            None,
            False,
        ),
        "predicted_length": (
            "Predicted length",
            "items",
            "Items at that time.",
            (0.0, 1e9),
            None,
            False,
        ),
    }
    params = FluidQueue.param
    for name, (label, unit, hint, bounds, default, user_setting) in expected.items():
        p = params[name]
        assert (p.label, unit_of(p), hint_of(p)) == (label, unit, hint), name
        assert (p.bounds, p.default, is_setting(p)) == (bounds, default, user_setting), name
    assert FluidQueue(initial=100000.0).initial == 100000.0
    with pytest.raises(ValueError):
        FluidQueue(initial=100000.5)


def test_drain_statuses_read_as_words() -> None:
    assert [str(s) for s in DrainStatus] == [
        "drains",
        "drains after the run",
        "grows from empty",
        "never drains",
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Drain(DrainStatus.DRAINS, 1.0).time = 2.0  # type: ignore[misc]


def test_a_held_queue_above_empty_never_drains() -> None:
    # Equal rates hold the queue where it is: half an item stays half an item.
    assert Segment(start=2.0, length=0.5, arrival=3.0, service=3.0).drain_time is None
    assert Segment(start=2.0, length=0.0, arrival=3.0, service=3.0).drain_time == 2.0
    # Half an item growing is not "grows from empty": it never drains.
    q = make_queue(initial=0.5, arrival=3.0, service=2.0)
    assert q.drain().status == DrainStatus.NEVER


def test_a_drain_followed_by_growth_counts_even_when_it_ends_empty() -> None:
    # 2 items at -1/s empty at t = 2; an edit there makes it grow (+1/s); at t = 3
    # (1 item) an edit drains it at -2/s, empty at 3.5 and staying empty to the end.
    wall = FakeWall()
    q = make_queue(wall, step_size=1.0, initial=2.0, arrival=2.0, service=3.0)
    steps(q, 2)
    q.arrival = 4.0
    steps(q, 1)
    q.arrival = 1.0
    assert q.first_empty_time() == 2.0


def test_a_length_predicted_at_the_end_of_the_run_is_checked_there() -> None:
    # Initial 4 at -1/s is empty from 4 on: at the horizon (20) the length is 0.
    q = make_queue(prediction_time=20.0, predicted_length=0.0)
    assert q.length_check() == PredictionCheck(predicted=0.0, actual=0.0, check_at=20.0)


def test_a_drain_that_rounds_a_hair_above_empty_still_drains() -> None:
    # 1011 items at 81.6 - 855.2 items/s: the floor hit s + q / rate computes a
    # length of about 1e-13 there, not 0. Relative to 1011 items that is empty.
    q = make_queue(initial=1011.0, arrival=81.6, service=855.2)
    _, qs = q.series.vertices(20.0)
    assert 0.0 < qs[1] < 1e-12  # the rounding this guards against, as it happens
    assert q.first_empty_time() == pytest.approx(1011.0 / (855.2 - 81.6))
    assert q.drain().status == DrainStatus.DRAINS
