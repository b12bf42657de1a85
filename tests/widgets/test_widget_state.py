"""A widget's state without Panel equals what its component sends, at every moment of a run.

Each widget's ``state`` module computes what its page draws from a settings object
and a clock. Here that function, given settings made without a component and a
clock set to a moment, is compared with the independent path: the Panel component
created for the same settings and driven by its page's messages (Step, Play) on a
fake wall clock, its synced params as the page receives them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from drive import FakeWall, on_fake_wall

from widgets.bucket_timeline.model import PRESETS
from widgets.bucket_timeline.state import bucket_timeline_state
from widgets.many_ranks.state import ranks_state
from widgets.model.fluid_queue import FluidQueue
from widgets.model.timeline import Clock
from widgets.queue_lab.state import queue_lab_state
from widgets.registry import WIDGETS
from widgets.trace_viewer.state import trace_view_state

#: Settings per widget: the defaults, named configurations and edited values.
GRID = {
    "queue-lab": [
        {},
        {"arrival": 4.0},
        {"arrival": 0.0, "initial": 7.0},
        {"predicted_drain_time": 4.0},
        {"arrival": 3.0, "duration": 12.0},
        {"prediction_time": 3.0, "predicted_length": 1.0, "arrival": 4.0},
    ],
    "bucket-timeline": [
        {},
        {"preset": "Latency-bound"},
        {"preset": "Embedding layer", "layers_per_bucket": 2},
        {"preset": "Tied embeddings"},
        {"layers_per_bucket": 5, "ranks": 16},
        {"bucket_cap_mb": 30.0, "ddp_bucketing": True},
    ],
    "ranks": [
        {},
        {"scenario": "Jitter", "seed": 3},
        {"scenario": "Ranks disagree"},
        {"layers_per_bucket": 2},
    ],
    "trace": [{}, {"iteration": 3}],
}
CASES = [(name, settings) for name, grid in GRID.items() for settings in grid]


def pure(name: str, settings: dict, t: float, playing: bool = False) -> dict:
    """The widget's state function, on settings made without Panel and a clock at ``t``."""
    rules = WIDGETS[name].rules()
    made, _ = rules.make(**settings)
    run = rules.run(made)
    clock = made.clock if name == "queue-lab" else Clock()
    clock._wall_clock = FakeWall()  # anchored now: a playing clock reads ``t``
    clock.param.update(horizon=run.horizon, speed=run.speed, step_size=run.step, elapsed=t)
    clock.param.update(anchor_wall=clock._wall_clock(), playing=playing)
    function = {
        "queue-lab": lambda: queue_lab_state(made, clock),
        "bucket-timeline": lambda: bucket_timeline_state(made, clock),
        "ranks": lambda: ranks_state(made, clock),
        "trace": lambda: trace_view_state(made, clock),
    }[name]
    return json.loads(json.dumps(function()))


def sent(view) -> dict:
    """What the component has sent its page: state and steady together, words, clock."""
    anchor = {k: v for k, v in view.anchor.items() if k != "revision"}
    drawn = {"state": view.drawn_state, "description": view.description, "anchor": anchor}
    return json.loads(json.dumps(drawn))


def component(name: str, settings: dict):
    view = WIDGETS[name].create(**settings)
    view.act("table")  # the data table is part of the state
    return view, on_fake_wall(view)


@pytest.mark.parametrize(("name", "settings"), CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_the_state_function_equals_the_component_at_every_step(name: str, settings: dict):
    view, _ = component(name, settings)
    moments = 0
    while True:
        t = view.anchor["elapsed"]
        assert pure(name, settings, t) == sent(view), (name, settings, t)
        if t >= view.anchor["horizon"]:
            break
        view.act("step")
        moments += 1
    assert moments >= 2


@pytest.mark.parametrize(("name", "settings"), CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_a_played_state_carries_its_end_as_the_component_reaches_it(name: str, settings: dict):
    # Played with no server session (a notebook): the anchor Play sends holds the end.
    view, wall = component(name, settings)
    view.act("play")
    horizon = view.anchor["horizon"]
    assert pure(name, settings, 0.0, playing=True) == sent(view)
    end = view.anchor["end"]
    # Past the end, the state computed from the settings and the clock is the end's.
    wall.t += 2 * horizon / view.anchor["speed"] + 1.0
    now = view.state_now()
    assert now["anchor"]["elapsed"] == horizon
    assert now["anchor"]["playing"] is False
    assert now["description"] == end["description"]
    for key, value in end["state"].items():
        assert json.loads(json.dumps(now["state"][key])) == value
    # And it is what the component sends once asked after the end (Pause).
    view.act("pause")
    after = sent(view)
    assert after == pure(name, settings, horizon)
    assert after["description"] == end["description"]
    for key, value in end["state"].items():
        assert after["state"][key] == value


def test_hand_computed_readouts_of_the_queue_lab():
    # 4 items, arrival 2, service 3: 4 - (3 - 2) t, empty at 4 s; the run ends at
    # ceil(4 + max(1, 4 / 4)) = 5 s.
    at_two = pure("queue-lab", {}, 2.0)
    assert at_two["state"]["now"] == {"t": 2.0, "length": 2.0}
    assert at_two["anchor"]["horizon"] == 5.0
    assert at_two["description"].startswith("At 2.00 s the queue holds 2.00 items.")
    at_end = pure("queue-lab", {}, 5.0)
    assert at_end["state"]["now"] == {"t": 5.0, "length": 0.0}
    assert "It was first empty at 4.00 s." in at_end["description"]
    # Arrival 4 from a fresh start: 4 + (4 - 3) t, 7 items at 3 s.
    assert pure("queue-lab", {"arrival": 4.0}, 3.0)["state"]["now"]["length"] == 7.0


def test_hand_computed_marks_of_the_default_bucket_timeline():
    # Twelve 2 ms layers: backward ends at 24 ms; buckets of 3 layers (75 MB) are ready at
    # 6, 12, 18, 24 ms. A ring all-reduce over 8 ranks: 2 x 7 x 0.05 ms of latency plus
    # 2 x 7/8 x 75 MB / 25 MB/ms = 0.7 + 5.25 = 5.95 ms; each starts when ready.
    marks = pure("bucket-timeline", {}, 0.0)["state"]["marks"]
    assert marks == pytest.approx(
        {"backward_end": 24.0, "comm_end": 29.95, "optimizer_start": 29.95, "tail": 5.95}
    )


def test_the_state_modules_import_and_compute_without_panel_or_bokeh():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["panel"] = None
        sys.modules["bokeh"] = None
        from widgets.model.timeline import Clock
        from widgets.registry import WIDGETS
        from app.export.states import widget_states
        for name, spec in WIDGETS.items():
            rules = spec.rules()
            settings, _ = rules.make()
            run = rules.run(settings)
            assert run.description(run.horizon) and "table" in run.state(0.0)
        states, _ = widget_states(WIDGETS["queue-lab"], axes=False)
        assert states.records
        bad = sorted(m for m in sys.modules if m.split(".")[0] in ("panel", "bokeh")
                     and sys.modules[m] is not None)
        assert not bad, bad
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_only_the_anchor_is_taken_from_the_clock():
    # A clock that never timed this run: its own horizon (10) and speed are not used.
    settings = PRESETS.load("Latency-bound")
    shown = json.loads(json.dumps(bucket_timeline_state(settings, Clock(elapsed=4.0))))
    assert shown == pure("bucket-timeline", {"preset": "Latency-bound"}, 4.0)
    # The queue's own clock is given the run's length: empty at 4 s, the run ends at 5 s.
    assert queue_lab_state(FluidQueue())["anchor"]["horizon"] == 5.0
