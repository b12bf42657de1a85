"""Checking every number a lesson states against the model.

(Over 350 lines because of this docstring, the reference a lesson author reads;
the per-widget names live in ``lessons/models.py``.)

A ``numbers`` block sits after the text it checks: the prose, questions,
answers and experiment labels since the previous ``numbers`` block (the first
one also covers the title and summary). It is not shown on the page::

    ```numbers
    layers_per_bucket: 1
    12 transfers = 8.40 ms | n_buckets, overhead_ms
    7.40 ms                | exposed_tail
    link-saturated         | regime.kind
    16-bit                 | not from the model: a number format
    ```

Settings lines (``key: value``, before the entries) say which configuration
the numbers come from. They start from the state of the widget above as the
lesson's experiments leave it (every experiment above applied in order, a
``preset`` or a ranks ``scenario`` first resetting the rest, as its button
does), and are applied on top like an experiment. ``widget: NAME`` starts
instead from a fresh widget at its defaults, for numbers stated before that
widget appears. Besides the URL
keys, any parameter of the widget's model may be set (an input the lesson asks
the learner to type, such as the queue lab's ``prediction_time``).

Each entry is ``TEXT | EXPRESSION``. TEXT is copied from the lesson and must
appear there verbatim (it may hold ``|``, as a table row does: the expression
follows the last one); the numbers in it, in order, must equal the
expression's values (one value, or several separated by commas) rounded to
the decimals TEXT prints them with. An expression giving text (a regime's
name) must equal TEXT. ``not from the model: reason`` marks text whose numbers
are not model results (a formula's constants, a number format); the reason is
required. Every number in the checked text must lie inside some entry's TEXT,
so a number added to a lesson without an entry fails the check.

Expressions are arithmetic, indexing, attribute access and calls over these
names (no other Python; ``lessons.models`` computes them):

- bucket timeline: every field of ``Schedule`` (``step_time``,
  ``exposed_tail``, ``bucket_ready``, ...) and ``n_buckets``, ``n_layers``;
  ``regime`` (a ``Regime``); ``sweep`` (the ``SweepResult`` of the bucketing
  knob in force, as the page's chart shows it); ``config`` (the
  ``BucketConfig``) and each of its settings by name; ``arrival_rate`` and
  ``service_rate`` (``average_rates``); ``DDP_DEFAULT_CAP_MIB``,
  ``DDP_FIRST_BUCKET_MIB``, ``MB_PER_MIB``, ``LATENCY_SHARE``;
- queue lab: ``arrival``, ``service``, ``initial``, ``prediction_time``,
  ``segment_start`` (0 after a Reset), ``net_rate``, ``drain_time``, ``trend`` and ``length_at(t)``;
  ``edited(t, arrival=...)`` the same names (and ``segment_length``) once a run reached ``t``
  and a rate was edited there;
- ranks: each ``RanksConfig`` setting by name and ``config``; ``result``
  (the ``RanksResult``) and each of its fields (``transfer_ms``,
  ``bucket_size_mb``, ``ring_ranks``, ...), ``n_buckets``, ``step_time``,
  ``skipped_layer``. With a timeline (every scenario but *Ranks disagree*):
  ``schedule`` (the ``RankSchedule``) and each of its fields (``bucket_launch``,
  ``bucket_end``, ``backward_end``, ``idle_ms``, ``optimizer_start``, ...),
  ``n_ranks``, ``exposed_tail``, ``overlap_fraction``, ``last_backward_end``,
  ``bucket_link_wait``, ``bucket_duration_ms``, ``slowdown_ms``;
  ``fastest_rank``, ``fastest_idle_ms``, ``defining_ranks``, ``global_ready``,
  ``tied``, ``issue_to_completion(rank)``, ``peer_wait_ms``,
  ``ranks_cutting_otherwise``, ``own_buckets``; ``sweep`` (the ``RanksSweep`` over
  layers per bucket, as the page's chart shows it). When ranks disagree:
  ``disagreement`` (the ``Disagreement``), ``matched``, ``waiting_ranks``,
  ``mismatch_index``, ``skipping_rank``;
- trace: each ``TraceViewConfig`` setting by name (``trace``, ``iteration``,
  ``what_if_cap_mb``) and ``config``; ``result`` (the ``TraceViewResult``);
  ``measured``, ``predicted`` and ``error_pct`` (dicts by quantity:
  ``backward_return_ms``, ``communication_end_ms``, ``exposed_tail_ms``,
  ``step_ms``; measured is the median iteration's unless ``iteration`` picks
  one); ``compute_end`` and ``predicted_compute_end``; ``fit`` (the ``Fit``)
  and ``backward_total``; ``what_if`` (the ``WhatIf``: ``predicted``,
  ``measured``, ``layout``...); ``defining_rank``, ``defining_counts``,
  ``late_rank``, ``late_counts`` (iterations in which each rank started backward
  last), ``late_defines`` (per bucket, iterations in which that rank issued it
  last), ``start_skew`` (per iteration), ``n_buckets``, ``n_ranks``, ``n_iterations``,
  ``other_load`` and ``metadata`` of the trace shown;
- every widget: ``at(key=value, ...)``, the same names for the block's
  configuration with these settings applied (``at(layers_per_bucket=3).step_time``), and
  ``min``, ``max``, ``abs``, ``len``, ``sum``, ``round``, ``ceil`` and
  ``same(...)``, the one value all its arguments equal (an error if they differ).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from . import models
from .parser import (
    Block,
    Experiment,
    Lesson,
    NumberEntry,
    Numbers,
    Prose,
    Question,
    WidgetBlock,
)

#: A number as a lesson prints it: digits with optional decimals, and a minus sign
#: (− or -) only where it does not join two words or terms ("i−1" is 1).
NUMBER = re.compile(r"(?:(?<![\w)\]])[−-])?\d+(?:\.\d+)?")


def same(*values: object) -> float:
    """The one value that every given value (or array element) equals; raise if they differ.

    ``same(sweep.n_buckets[6:11])`` states "k = 7 to 11 all give 2 buckets" as one number.
    """
    flat = np.concatenate([np.ravel(np.asarray(v, float)) for v in values])
    if flat.size == 0:
        raise NumbersError("same() of nothing")
    if not np.allclose(flat, flat[0], rtol=1e-9, atol=1e-9):
        raise NumbersError(f"the values differ: {', '.join(f'{v:g}' for v in flat)}")
    return float(flat[0])


FUNCTIONS: dict[str, Callable] = {
    "same": same,
    "min": min,
    "max": max,
    "abs": abs,
    "len": len,
    "sum": sum,
    "round": round,
    "ceil": math.ceil,
}
_OPERATORS = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.USub,
    ast.UAdd,
)
_NODES = (
    ast.Expression,
    ast.Tuple,
    ast.List,
    ast.Constant,
    ast.Name,
    ast.Load,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.BinOp,
    ast.UnaryOp,
    ast.Call,
    ast.keyword,
    *_OPERATORS,
)


class NumbersError(ValueError):
    """A stated number the model does not give, or a numbers block that cannot be read."""


# --- the configuration each numbers block reads -----------------------------------


def block_states(lesson: Lesson) -> dict[int, tuple[str, dict[str, object]]]:
    """For each numbers block (by index): its widget and the settings its numbers come from."""
    states: dict[int, dict[str, object]] = {}
    out: dict[int, tuple[str, dict[str, object]]] = {}
    for index, block in enumerate(lesson.blocks):
        if isinstance(block, WidgetBlock):
            states[index] = models.start_state(block.widget, block.settings)
        elif isinstance(block, Experiment):
            widget = lesson.blocks[block.target].widget
            states[block.target] = models.apply_settings(
                widget, states[block.target], block.settings
            )
        elif isinstance(block, Numbers):
            if block.target is None:
                base = models.start_state(block.widget, {})
            else:
                base = states[block.target]
            out[index] = (block.widget, models.apply_settings(block.widget, base, block.settings))
    return out


# --- names an expression may read ----------------------------------------------------


class Readings:
    """The names one configuration offers to expressions (see the module docstring)."""

    def __init__(self, widget: str, settings: dict[str, object]) -> None:
        self.widget = widget
        self.settings = settings
        self._names: dict[str, object] | None = None

    def names(self) -> dict[str, object]:
        """Every name, computed once."""
        if self._names is None:
            self._names = {
                **FUNCTIONS,
                **models.names(self.widget, self.settings),
                "at": self.at,
            }
        return self._names

    def at(self, **settings) -> Readings:
        """The same names for this configuration with ``settings`` applied."""
        return Readings(self.widget, models.apply_settings(self.widget, self.settings, settings))

    def __getattr__(self, name: str) -> object:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self.names()[name]
        except KeyError:
            raise AttributeError(f"no number called “{name}”") from None


def evaluate(expression: str, readings: Readings) -> object:
    """The value of one expression; only the forms the module docstring lists are allowed."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise NumbersError(f"“{expression}” is not an expression ({exc.msg})") from None
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise NumbersError(f"“{expression}”: {type(node).__name__} is not allowed here")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise NumbersError(f"“{expression}”: “{node.attr}” is not allowed here")
    names = readings.names()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in names:
            raise NumbersError(f"“{expression}”: no number called “{node.id}”")
    try:
        return eval(compile(tree, "<numbers>", "eval"), {"__builtins__": {}}, names)
    except NumbersError:
        raise
    except Exception as exc:  # the author's expression failed: say so, with the cause
        raise NumbersError(f"“{expression}” failed: {type(exc).__name__}: {exc}") from None


# --- comparing with the text as printed --------------------------------------------


def printed_numbers(text: str) -> list[str]:
    """The numbers in ``text``, as printed."""
    return NUMBER.findall(text)


def as_printed(value: float, printed: str) -> str:
    """``value`` with the decimals (and the minus sign) ``printed`` uses."""
    decimals = len(printed.split(".", 1)[1]) if "." in printed else 0
    value = 0.0 if round(value, decimals) == 0 else value
    text = f"{value:.{decimals}f}"
    return text.replace("-", "−") if "−" in printed else text


def _flat(value: object) -> list[object]:
    if isinstance(value, str | bool) or value is None:
        return [value]
    if isinstance(value, np.ndarray | list | tuple):
        return [v for item in np.asarray(value, dtype=object).ravel() for v in _flat(item)]
    return [value]


def compare(entry: NumberEntry, value: object) -> None:
    """Raise ``NumbersError`` unless ``value`` prints as ``entry.text`` does."""
    if isinstance(value, str):  # a regime's name, a trend
        if str(value) != entry.text:
            raise NumbersError(f"“{entry.text}” but the model gives “{value}”")
        return
    values = _flat(value)
    printed = printed_numbers(entry.text)
    if len(values) != len(printed):
        raise NumbersError(
            f"“{entry.text}” prints {len(printed)} number(s) but “{entry.expression}” "
            f"gives {len(values)}"
        )
    for shown, v in zip(printed, values, strict=True):
        if isinstance(v, bool) or v is None or not isinstance(v, int | float | np.number):
            raise NumbersError(f"“{entry.expression}” gives {v!r}, not a number")
        if not math.isfinite(float(v)):
            raise NumbersError(f"“{entry.expression}” gives {v}, not a finite number")
        expected = as_printed(float(v), shown)
        if expected != shown:
            raise NumbersError(
                f"“{entry.text}” states {shown}, but “{entry.expression}” is {expected}"
            )


# --- the text each numbers block checks ----------------------------------------------


@dataclass(frozen=True)
class Passage:
    """A piece of checked text and the line it starts on."""

    text: str
    line: int


def _passages(block: Block) -> Iterable[Passage]:
    if isinstance(block, Prose):
        yield Passage(block.text, block.line)
    elif isinstance(block, Question):
        yield Passage(block.question, block.line + 1)
        yield Passage(block.answer, block.line + 1 + block.question.count("\n") + 2)
    elif isinstance(block, Experiment):
        yield Passage(block.label, block.line)


def scopes(lesson: Lesson) -> list[tuple[int | None, list[Passage]]]:
    """(index of a numbers block, the text it checks); the last scope's index is None
    when text follows the last numbers block."""
    out: list[tuple[int | None, list[Passage]]] = []
    current = [Passage(lesson.title, 1), Passage(lesson.summary, 1)]
    for index, block in enumerate(lesson.blocks):
        if isinstance(block, Numbers):
            out.append((index, current))
            current = []
        else:
            current.extend(_passages(block))
    if any(printed_numbers(p.text) for p in current):
        out.append((None, current))
    return out


def check_lesson(lesson: Lesson) -> list[str]:
    """Every problem with the lesson's stated numbers, as ``path:line: message`` lines."""
    path = lesson.path or f"{lesson.name}.md"
    problems: list[str] = []
    states = block_states(lesson)
    for index, passages in scopes(lesson):
        entries = [] if index is None else lesson.blocks[index].entries
        if index is not None:
            widget, settings = states[index]
            readings = Readings(widget, settings)
            for entry in entries:
                if not any(entry.text in p.text for p in passages):
                    problems.append(
                        f"{path}:{entry.line}: “{entry.text}” does not appear in the text "
                        "this numbers block checks"
                    )
                    continue
                if entry.expression is None:
                    continue
                try:
                    compare(entry, evaluate(entry.expression, readings))
                except NumbersError as exc:
                    problems.append(f"{path}:{entry.line}: {exc}")
                except (ValueError, KeyError, TypeError) as exc:
                    problems.append(f"{path}:{entry.line}: these settings fail: {exc}")
                    break
        for passage in passages:
            for line, number in uncovered(passage, entries):
                where = "a numbers block below it" if index is None else "its numbers block"
                problems.append(
                    f"{path}:{line}: {number} is stated but not checked: add it to {where}"
                )
    return problems


def uncovered(passage: Passage, entries: list[NumberEntry]) -> list[tuple[int, str]]:
    """(line, number) of each number in ``passage`` that lies in no entry's text."""
    covered = np.zeros(len(passage.text) + 1, bool)
    for entry in entries:
        for match in re.finditer(re.escape(entry.text), passage.text):
            covered[match.start() : match.end()] = True
    return [
        (passage.line + passage.text.count("\n", 0, m.start()), m.group())
        for m in NUMBER.finditer(passage.text)
        if not covered[m.start() : m.end()].all()
    ]


def count_checked(lesson: Lesson) -> tuple[int, int]:
    """(numbers checked against the model, numbers marked not from the model)."""
    checked = exempt = 0
    for block in lesson.blocks:
        if isinstance(block, Numbers):
            for entry in block.entries:
                n = len(printed_numbers(entry.text)) or 1
                if entry.expression is None:
                    exempt += n
                else:
                    checked += n
    return checked, exempt
