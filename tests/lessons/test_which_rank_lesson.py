"""Every number the lesson "Which rank, which event" states is the model's.

The lesson is walked block by block, the way its page applies experiments to
the ranks widget. Each ``| Readout | Value |`` table must match, row for row,
the readouts the view shows for the settings in force there. Every other time
or share in the prose and the answers (``16.75 ms``, ``92 %``) must be a number
the model gives for a state the lesson visits (a readout, a note, an event time)
or for one of the few comparison states named below.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from lessons import Experiment, Prose, Question, WidgetBlock, load_lessons
from widgets import ranks_text
from widgets.model.ranks_view import (
    DATA_LOADING,
    JITTER,
    SCENARIO_SETTINGS,
    RanksConfig,
)
from widgets.parts.formatting import MILLISECONDS, PERCENT

LESSON = load_lessons()["which-rank-which-event"]
STATED = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?) ?(ms|%)")
#: States the prose compares against without an experiment of their own.
COMPARED = {
    "the same step without the data loading delay": (DATA_LOADING, {"delay_ms": 0.0}),
    "four equal ranks (jitter of 0 %)": (JITTER, {"slowdown_pct": 0.0}),
}


def _settings(state: dict) -> RanksConfig:
    return RanksConfig(**state)


def readouts(state: dict) -> dict[str, str]:
    """Readout label -> the value the view shows for these settings."""
    r = _settings(state).result()
    if r.schedule is None:
        values = ranks_text.disagreement_values(r.disagreement)
    else:
        values = ranks_text.readout_values(r)
    return {label: value for label, value, _ in values.values()}


def model_numbers(state: dict) -> set[str]:
    """Every time and share the model gives for a state, as the page writes them."""
    cfg = _settings(state)
    r = cfg.result()
    texts = [ranks_text.description(r)]
    values = ranks_text.disagreement_values(r.disagreement) if r.schedule is None else {}
    if r.schedule is not None:
        values = ranks_text.readout_values(r)
        s = r.schedule
        times = [
            s.layer_ready,
            s.bucket_ready,
            s.bucket_launch,
            s.bucket_start,
            s.bucket_end,
            s.backward_end,
            s.idle_ms,
            r.transfer_ms,
            [s.optimizer_start, s.comm_end, r.step_time],
        ]
        texts += [MILLISECONDS(float(x)) for t in times for x in np.ravel(t)]
        texts.append(PERCENT(100 * s.overlap_fraction))
    texts += [f"{v} {n}" for _, v, n in values.values()]
    found = {f"{m.group(1)} {m.group(2)}" for text in texts for m in STATED.finditer(text)}
    # Settings as the prose states them ("50 %", "6 ms", "0.05 ms").
    for key, unit in (("slowdown_pct", "%"), ("delay_ms", "ms"), ("enqueue_ms", "ms")):
        found.add(f"{getattr(cfg, key):g} {unit}")
    return found


def walk() -> list[tuple[object, dict]]:
    """Each block with the settings in force when the learner reads it."""
    state: dict = {}
    out = []
    for block in LESSON.blocks:
        if isinstance(block, WidgetBlock):
            scenario = block.settings.get("scenario", RanksConfig.param.scenario.default)
            state = {**SCENARIO_SETTINGS[scenario], **block.settings}
        elif isinstance(block, Experiment):
            base = (
                SCENARIO_SETTINGS[block.settings["scenario"]]
                if "scenario" in block.settings
                else state
            )
            state = {**base, **block.settings}
        out.append((block, dict(state)))
    return out


def tables(text: str) -> list[dict[str, str]]:
    """Each ``| Readout | Value |`` table in Markdown text, as label -> value."""
    found, current = [], None
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if "|" in line else None
        if cells == ["Readout", "Value"]:
            current = {}
            found.append(current)
        elif current is not None and cells and not set(cells[0]) <= {"-", " "}:
            current[cells[0]] = cells[1]
        elif not cells:
            current = None
    return found


def test_the_lesson_is_served_with_the_ranks_widget() -> None:
    assert LESSON.title == "Which rank, which event"
    assert [w.widget for w in LESSON.widgets] == ["ranks"]
    assert sum(isinstance(b, Question) for b in LESSON.blocks) >= 5


def test_every_table_is_the_models_readouts() -> None:
    checked = 0
    for block, state in walk():
        if not isinstance(block, Prose):
            continue
        for table in tables(block.text):
            expected = readouts(state)
            for label, value in table.items():
                assert label in expected, f"no readout called {label!r}"
                assert value == expected[label], f"{label} in {state['scenario']}"
                checked += 1
    assert checked >= 20


def test_every_experiment_follows_a_prediction() -> None:
    # Each experiment is followed, before the next one, by a "Predict" or a question.
    blocks = [b for b, _ in walk()]
    for i, block in enumerate(blocks):
        if isinstance(block, Experiment):
            rest = blocks[i + 1 :]
            upto = next((j for j, b in enumerate(rest) if isinstance(b, Experiment)), len(rest))
            prose = " ".join(b.text for b in rest[:upto] if isinstance(b, Prose))
            asks = "Predict" in prose or any(isinstance(b, Question) for b in rest[:upto])
            assert asks, f"{block.label} asks for no prediction"


def test_every_time_and_share_in_the_text_is_the_models() -> None:
    allowed: set[str] = set()
    for _, state in walk():
        if state:
            allowed |= model_numbers(state)
    for scenario, overrides in COMPARED.values():
        allowed |= model_numbers({**SCENARIO_SETTINGS[scenario], **overrides})
    stated = []
    for block, _ in walk():
        if isinstance(block, Prose):
            texts = [block.text]
        elif isinstance(block, Question):
            texts = [block.question, block.answer]
        else:
            continue
        for text in texts:
            stated += [f"{m.group(1)} {m.group(2)}" for m in STATED.finditer(text)]
    assert len(stated) >= 30
    missing = sorted({s for s in stated if s not in allowed})
    assert not missing, f"numbers the model does not give: {missing}"


@pytest.mark.parametrize("wrong", ["16.76 ms", "91 %"])
def test_the_number_check_can_fail(wrong: str) -> None:
    allowed = set()
    for _, state in walk():
        if state:
            allowed |= model_numbers(state)
    assert wrong not in allowed
