"""The shared timeline model: Clock on a fake wall clock, piecewise-linear series, intervals."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from widgets.model.timeline import (
    Clock,
    Intervals,
    PiecewiseLinearSeries,
    revealed_points,
    revealed_polyline,
)


class FakeWall:
    """A wall clock that moves only when told to."""

    def __init__(self, t: float = 100.0):
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt


@pytest.fixture
def wall() -> FakeWall:
    return FakeWall()


@pytest.fixture
def clock(wall: FakeWall) -> Clock:
    return Clock(wall_clock=wall, horizon=10.0, step_size=0.5)


# --- Clock ---------------------------------------------------------------------------------


def test_clock_starts_paused_at_zero(clock: Clock) -> None:
    assert clock.elapsed == 0.0
    assert clock.playing is False
    assert clock.now() == 0.0
    assert clock.at_end is False


def test_paused_clock_does_not_move_with_wall_time(clock: Clock, wall: FakeWall) -> None:
    wall.advance(5.0)
    assert clock.now() == 0.0


def test_play_anchors_at_current_wall_time(clock: Clock, wall: FakeWall) -> None:
    clock.play()
    assert clock.playing is True
    assert clock.anchor_wall == 100.0
    assert clock.now() == 0.0


def test_elapsed_while_playing_is_anchor_plus_speed_times_wall(
    clock: Clock, wall: FakeWall
) -> None:
    clock.step()  # anchor at 0.5
    clock.speed = 2.0
    clock.play()
    wall.advance(1.25)
    assert clock.now() == 3.0  # 0.5 + 2 * 1.25
    assert clock.elapsed == 0.5  # nothing ticks: elapsed is still the anchor
    wall.advance(0.25)
    assert clock.now() == 3.5
    assert clock.time_at(101.0) == 2.5
    assert clock.time_at(99.0) == 0.5  # never before the anchor


def test_pause_keeps_time_played(clock: Clock, wall: FakeWall) -> None:
    clock.play()
    wall.advance(1.5)
    clock.pause()
    assert clock.playing is False
    assert clock.elapsed == 1.5
    wall.advance(3.0)
    assert clock.now() == 1.5


def test_pause_when_paused_does_nothing(clock: Clock) -> None:
    clock.pause()
    assert clock.elapsed == 0.0
    assert clock.playing is False


def test_play_when_playing_keeps_the_anchor(clock: Clock, wall: FakeWall) -> None:
    clock.play()
    wall.advance(1.0)
    clock.play()
    assert clock.anchor_wall == 100.0
    assert clock.now() == 1.0


def test_step_adds_exactly_step_size(clock: Clock) -> None:
    for _ in range(4):
        clock.step()
    assert clock.elapsed == 2.0
    assert clock.playing is False


def test_step_while_playing_pauses_then_steps(clock: Clock, wall: FakeWall) -> None:
    clock.play()
    wall.advance(1.25)
    clock.step()
    assert clock.playing is False
    assert clock.elapsed == 1.75


def test_step_clips_at_horizon(clock: Clock) -> None:
    clock.step_size = 3.0
    for _ in range(5):
        clock.step()
    assert clock.elapsed == 10.0
    assert clock.at_end is True


def test_reset_pauses_and_returns_to_zero(clock: Clock, wall: FakeWall) -> None:
    clock.step()
    clock.play()
    wall.advance(2.0)
    clock.reset()
    assert clock.elapsed == 0.0
    assert clock.playing is False
    assert clock.anchor_wall == 102.0
    wall.advance(1.0)
    assert clock.now() == 0.0


def test_playing_clock_clips_at_horizon(clock: Clock, wall: FakeWall) -> None:
    clock.play()
    wall.advance(8.0)
    assert clock.wall_seconds_to_end() == 2.0
    assert clock.at_end is False
    wall.advance(4.0)
    assert clock.now() == 10.0
    assert clock.at_end is True
    assert clock.wall_seconds_to_end() == 0.0
    clock.pause()
    assert clock.elapsed == 10.0


def test_wall_seconds_to_end_accounts_for_speed(clock: Clock, wall: FakeWall) -> None:
    clock.speed = 4.0
    clock.play()
    wall.advance(1.0)
    assert clock.wall_seconds_to_end() == 1.5  # (10 - 4) / 4


def test_play_at_horizon_does_nothing(clock: Clock, wall: FakeWall) -> None:
    clock.elapsed = 10.0
    clock.play()
    assert clock.playing is False
    wall.advance(1.0)
    assert clock.now() == 10.0


def test_reanchor_keeps_time_continuous(clock: Clock, wall: FakeWall) -> None:
    clock.play()
    wall.advance(2.5)
    before = clock.now()
    clock.reanchor()
    assert clock.now() == before == 2.5
    assert clock.elapsed == 2.5
    assert clock.anchor_wall == 102.5
    assert clock.playing is True
    wall.advance(1.0)
    assert clock.now() == 3.5


def test_reanchor_while_paused_keeps_elapsed(clock: Clock, wall: FakeWall) -> None:
    clock.step()
    wall.advance(7.0)
    clock.reanchor()
    assert clock.elapsed == 0.5
    assert clock.playing is False


def test_reanchor_past_horizon_stops_at_horizon(clock: Clock, wall: FakeWall) -> None:
    clock.play()
    wall.advance(30.0)
    clock.reanchor()
    assert clock.elapsed == 10.0
    assert clock.playing is False


@given(
    speed=st.floats(0.01, 100.0),
    moves=st.lists(st.floats(0.0, 5.0), max_size=8),
)
def test_reanchor_never_jumps(speed: float, moves: list[float]) -> None:
    wall = FakeWall()
    clock = Clock(wall_clock=wall, horizon=10.0, speed=speed)
    clock.play()
    for dt in moves:
        wall.advance(dt)
        before = clock.now()
        clock.reanchor()
        assert clock.now() == before
        assert clock.now() <= 10.0


# --- PiecewiseLinearSeries ---------------------------------------------------------------


def test_single_segment_at_is_vectorised() -> None:
    s = PiecewiseLinearSeries.single(0.0, 4.0, -1.0, 0.0)
    assert len(s) == 1
    np.testing.assert_array_equal(s.at([0, 1, 2, 3, 4, 5]), [4.0, 3.0, 2.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(s.at([[0, 2], [4, 6]]), [[4.0, 2.0], [0.0, 0.0]])
    assert s.at(1.5).shape == ()
    assert float(s.at(1.5)) == 2.5


def test_at_picks_the_segment_running_at_each_time() -> None:
    s = PiecewiseLinearSeries(
        start=np.array([0.0, 2.0, 5.0]),
        value=np.array([4.0, 2.0, 5.0]),
        slope=np.array([-1.0, 1.0, -2.0]),
        floor=np.array([0.0, 0.0, 0.0]),
    )
    np.testing.assert_array_equal(
        s.at([0.0, 1.0, 2.0, 3.0, 5.0, 6.0, 7.5, 9.0]),
        [4.0, 3.0, 2.0, 3.0, 5.0, 3.0, 0.0, 0.0],
    )


def test_split_at_keeps_history_and_starts_from_value_at_split() -> None:
    s = PiecewiseLinearSeries.single(0.0, 4.0, -1.0, 0.0).split_at(2.0, 1.0)
    np.testing.assert_array_equal(s.start, [0.0, 2.0])
    np.testing.assert_array_equal(s.value, [4.0, 2.0])
    np.testing.assert_array_equal(s.slope, [-1.0, 1.0])
    np.testing.assert_array_equal(s.floor, [0.0, 0.0])
    np.testing.assert_array_equal(s.at([0, 1, 2, 3, 4]), [4.0, 3.0, 2.0, 3.0, 4.0])


def test_split_at_drops_the_future() -> None:
    s = PiecewiseLinearSeries.single(0.0, 4.0, -1.0, 0.0).split_at(3.0, 2.0).split_at(1.0, 0.0)
    np.testing.assert_array_equal(s.start, [0.0, 1.0])
    np.testing.assert_array_equal(s.value, [4.0, 3.0])
    np.testing.assert_array_equal(s.at([1, 5]), [3.0, 3.0])


def test_split_at_an_existing_start_replaces_that_segment() -> None:
    s = PiecewiseLinearSeries.single(0.0, 4.0, -1.0, 0.0).split_at(2.0, 1.0).split_at(2.0, -2.0)
    np.testing.assert_array_equal(s.start, [0.0, 2.0])
    np.testing.assert_array_equal(s.value, [4.0, 2.0])
    np.testing.assert_array_equal(s.slope, [-1.0, -2.0])


def test_split_after_floor_hit_starts_from_floor() -> None:
    s = PiecewiseLinearSeries.single(0.0, 4.0, -1.0, 0.0).split_at(6.0, 1.0)
    np.testing.assert_array_equal(s.value, [4.0, 0.0])
    np.testing.assert_array_equal(s.at([4, 5, 6, 7]), [0.0, 0.0, 0.0, 1.0])


def test_vertices_include_floor_hit_and_end() -> None:
    ts, vs = PiecewiseLinearSeries.single(0.0, 4.0, -1.0, 0.0).vertices(10.0)
    np.testing.assert_array_equal(ts, [0.0, 4.0, 10.0])
    np.testing.assert_array_equal(vs, [4.0, 0.0, 0.0])


def test_vertices_of_split_series() -> None:
    s = PiecewiseLinearSeries.single(0.0, 4.0, -1.0, 0.0).split_at(2.0, -0.5)
    ts, vs = s.vertices(10.0)
    np.testing.assert_array_equal(ts, [0.0, 2.0, 6.0, 10.0])
    np.testing.assert_array_equal(vs, [4.0, 2.0, 0.0, 0.0])


def test_vertices_stop_at_until() -> None:
    s = PiecewiseLinearSeries.single(0.0, 4.0, -1.0, 0.0).split_at(5.0, 2.0)
    ts, vs = s.vertices(3.0)
    np.testing.assert_array_equal(ts, [0.0, 3.0])
    np.testing.assert_array_equal(vs, [4.0, 1.0])


def test_vertices_until_before_start_is_the_start() -> None:
    ts, vs = PiecewiseLinearSeries.single(1.0, 4.0, -1.0, 0.0).vertices(0.5)
    np.testing.assert_array_equal(ts, [1.0])
    np.testing.assert_array_equal(vs, [4.0])


def test_vertices_of_a_segment_starting_on_its_floor() -> None:
    ts, vs = PiecewiseLinearSeries.single(0.0, 0.0, -3.0, 0.0).vertices(2.0)
    np.testing.assert_array_equal(ts, [0.0, 2.0])
    np.testing.assert_array_equal(vs, [0.0, 0.0])


def test_vertices_of_a_segment_rising_off_its_floor() -> None:
    s = PiecewiseLinearSeries.single(0.0, -1.0, 1.0, 0.0)  # held at 0 until t=1, then rises
    ts, vs = s.vertices(3.0)
    grid = np.linspace(0.0, 3.0, 31)
    np.testing.assert_allclose(np.interp(grid, ts, vs), s.at(grid), atol=1e-12)


def _series(data: st.DataObject) -> PiecewiseLinearSeries:
    """A series built the way models build one: a start, then splits at later times."""
    floor = data.draw(st.sampled_from([0.0, -np.inf, -2.0, 1.5]), label="floor")
    low = 0.0 if not np.isfinite(floor) else floor
    value = data.draw(st.floats(low, low + 100.0), label="value")
    slope = data.draw(st.floats(-50.0, 50.0), label="slope")
    s = PiecewiseLinearSeries.single(0.0, value, slope, floor)
    times = data.draw(st.lists(st.floats(0.0, 20.0), max_size=6), label="splits")
    for t in sorted(times):
        s = s.split_at(t, data.draw(st.floats(-50.0, 50.0), label="new slope"))
    return s


# A vanishing slope overflows the floor-hit division to inf, which correctly means "no hit".
@pytest.mark.filterwarnings("ignore:overflow encountered in divide:RuntimeWarning")
@given(st.data())
def test_interpolating_vertices_equals_at_everywhere(data: st.DataObject) -> None:
    s = _series(data)
    until = data.draw(st.floats(0.1, 25.0), label="until")
    ts, vs = s.vertices(until)
    assert ts[0] == s.start[0]
    assert ts[-1] == until
    assert np.all(np.diff(ts) > 0)
    scale = 1.0 + np.max(np.abs(vs))
    # Checked against a plain per-point evaluation, not against the series' own ``at``.
    np.testing.assert_allclose(vs, [_value_at(s, t) for t in ts], rtol=0, atol=1e-9 * scale)
    grid = np.linspace(0.0, until, 501)
    expected = [_value_at(s, t) for t in grid]
    np.testing.assert_allclose(np.interp(grid, ts, vs), expected, rtol=0, atol=1e-9 * scale)


def _value_at(s: PiecewiseLinearSeries, t: float) -> float:
    """The series' definition, one point at a time: the last segment started by ``t``."""
    k = 0
    for i, start in enumerate(s.start.tolist()):
        if start <= t:
            k = i
    raw = s.value[k] + s.slope[k] * (t - s.start[k])
    return max(float(s.floor[k]), float(raw))


# No deadline: on a loaded machine a first run can take far longer than later ones.
@settings(deadline=None)
@given(st.data())
def test_split_at_is_continuous_and_keeps_history(data: st.DataObject) -> None:
    s = _series(data)
    t = data.draw(st.floats(0.0, 25.0), label="t")
    slope = data.draw(st.floats(-50.0, 50.0), label="slope")
    new = s.split_at(t, slope)
    assert new.at(t) == s.at(t)
    assert new.start[-1] == t
    assert new.value[-1] == s.at(t)
    assert new.slope[-1] == slope
    before = np.linspace(0.0, t, 50, endpoint=False)
    np.testing.assert_array_equal(new.at(before), s.at(before))
    # Each segment starts at the value the previous one reached there.
    k = np.arange(1, len(new))
    prev = np.maximum(
        new.floor[k - 1], new.value[k - 1] + new.slope[k - 1] * (new.start[k] - new.start[k - 1])
    )
    np.testing.assert_array_equal(new.value[k], prev)
    np.testing.assert_array_equal(new.at(new.start[k]), prev)


@given(
    value=st.floats(0.0, 100.0),
    rate=st.floats(0.01, 50.0),
    floor=st.floats(-10.0, -0.01),
)
def test_floor_hit_is_a_vertex(value: float, rate: float, floor: float) -> None:
    s = PiecewiseLinearSeries.single(0.0, value, -rate, floor)
    hit = (floor - value) / -rate
    ts, vs = s.vertices(hit + 10.0)
    assert len(ts) == 3
    assert ts[1] == pytest.approx(hit)
    assert vs[1] == pytest.approx(floor)
    assert vs[2] == floor
    assert np.all(s.at(np.linspace(0.0, hit + 10.0, 101)) >= floor)


# --- Intervals -----------------------------------------------------------------------------


def _intervals() -> Intervals:
    return Intervals(
        start=np.array([0.0, 1.0, 3.0]),
        end=np.array([2.0, 4.0, 3.5]),
        lane=np.array(["compute", "link", "compute"]),
        label=np.array(["a", "b", "c"]),
        kind=np.array(["backward", "transfer", "backward"]),
    )


def test_intervals_length() -> None:
    assert len(_intervals()) == 3


def test_intervals_reject_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match=r"^all interval arrays must have the same length$"):
        Intervals(
            np.array([0.0, 1.0]),
            np.array([1.0]),
            np.array(["x", "x"]),
            np.array(["a", "b"]),
            np.array(["k", "k"]),
        )


def test_intervals_reject_end_before_start() -> None:
    with pytest.raises(ValueError, match=r"^an interval ends before it starts$"):
        Intervals(
            np.array([2.0]), np.array([1.0]), np.array(["x"]), np.array(["a"]), np.array(["k"])
        )


def test_intervals_allow_zero_length() -> None:
    iv = Intervals(
        np.array([2.0]), np.array([2.0]), np.array(["x"]), np.array(["a"]), np.array(["k"])
    )
    assert len(iv) == 1
    np.testing.assert_array_equal(iv.revealed(5.0).end, [2.0])


@pytest.mark.parametrize(
    ("t", "starts", "ends"),
    [
        (0.0, [], []),
        (0.5, [0.0], [0.5]),
        (1.5, [0.0, 1.0], [1.5, 1.5]),
        (3.0, [0.0, 1.0], [2.0, 3.0]),
        (3.25, [0.0, 1.0, 3.0], [2.0, 3.25, 3.25]),
        (10.0, [0.0, 1.0, 3.0], [2.0, 4.0, 3.5]),
    ],
)
def test_revealed(t: float, starts: list[float], ends: list[float]) -> None:
    shown = _intervals().revealed(t)
    np.testing.assert_array_equal(shown.start, starts)
    np.testing.assert_array_equal(shown.end, ends)


@given(st.floats(-5.0, 10.0))
def test_revealed_keeps_begun_intervals_cut_at_t(t: float) -> None:
    iv = _intervals()
    shown = iv.revealed(t)
    begun = iv.start < t
    np.testing.assert_array_equal(shown.start, iv.start[begun])
    assert np.all(shown.end > shown.start)
    assert np.all(shown.end <= iv.end[begun])
    np.testing.assert_array_equal(shown.end, np.minimum(iv.end[begun], t))


# --- edges, worked by hand ------------------------------------------------------------


def test_single_has_no_floor_by_default() -> None:
    assert PiecewiseLinearSeries.single(0.0, 1.0, -1.0).at(5.0) == -4.0


def test_vertices_until_the_start_is_the_start_alone() -> None:
    ts, vs = PiecewiseLinearSeries.single(1.0, 4.0, -1.0).vertices(1.0)
    assert ts.tolist() == [1.0] and vs.tolist() == [4.0]


def test_vertices_until_a_segment_start_leave_that_segment_out() -> None:
    s = PiecewiseLinearSeries.single(0.0, 10.0, -1.0).split_at(3.0, 1.0)
    ts, vs = s.vertices(3.0)
    assert ts.tolist() == [0.0, 3.0] and vs.tolist() == [10.0, 7.0]


def test_revealed_polyline_edges() -> None:
    for x, y, t in (([], [], 1.0), ([1.0, 2.0], [3.0, 4.0], 0.5)):
        xs, ys = revealed_polyline(x, y, t)
        assert xs.tolist() == [] and ys.tolist() == []
    xs, ys = revealed_polyline([0.0, 1.0, 2.0], [0.0, 10.0, 20.0], 1.0)
    assert xs.tolist() == [0.0, 1.0] and ys.tolist() == [0.0, 10.0]


def test_revealed_points_include_the_one_at_t() -> None:
    assert revealed_points([0.0, 1.0, 2.0], 1.0).tolist() == [True, True, False]


def test_a_series_is_immutable() -> None:
    s = PiecewiseLinearSeries.single(0.0, 1.0, -1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.start = s.start  # type: ignore[misc]


def test_revealed_polyline_at_its_first_vertex_is_that_vertex() -> None:
    xs, ys = revealed_polyline([1.0, 2.0], [3.0, 4.0], 1.0)
    assert xs.tolist() == [1.0] and ys.tolist() == [3.0]


def test_intervals_are_immutable() -> None:
    intervals = Intervals(**{f.name: np.zeros(0) for f in dataclasses.fields(Intervals)})
    with pytest.raises(dataclasses.FrozenInstanceError):
        intervals.start = None  # type: ignore[misc]


def test_clock_defaults() -> None:
    c = Clock(wall_clock=lambda: 5.0)
    assert (c.elapsed, c.playing, c.speed, c.step_size, c.horizon) == (0.0, False, 1.0, 0.5, 10.0)
    assert c.anchor_wall == 0.0


def test_at_uses_the_segment_running_at_each_time() -> None:
    s = PiecewiseLinearSeries.single(0.0, 10.0, -1.0).split_at(3.0, 1.0)
    assert s.at(np.array([1.0, 3.0, 5.0])).tolist() == [9.0, 7.0, 9.0]


def test_clock_lower_bounds() -> None:
    # Fractions of one are valid everywhere; zero is valid only as the elapsed time.
    c = Clock(elapsed=0.5, speed=0.5, step_size=0.5, horizon=0.5)
    assert (c.elapsed, c.speed, c.step_size, c.horizon) == (0.5, 0.5, 0.5, 0.5)
    assert Clock(elapsed=0.0).elapsed == 0.0
    for name, bad in (("elapsed", -0.5), ("speed", 0.0), ("step_size", 0.0), ("horizon", 0.0)):
        with pytest.raises(ValueError):
            Clock(**{name: bad})
