"""Every number a lesson states is the model's: the numbers blocks, checked and complete."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lessons import (
    Experiment,
    Lesson,
    LessonError,
    Numbers,
    Prose,
    Question,
    WidgetBlock,
    load_lessons,
    models,
    parse_lesson,
)
from lessons.check import main as check_main
from lessons.numbers import as_printed, check_lesson, count_checked, printed_numbers
from widgets.bucket_timeline.model import PRESETS
from widgets.many_ranks import text as ranks_text
from widgets.many_ranks.model import RanksConfig
from widgets.model.buckets import step_schedule, sweep_layers_per_bucket

LESSONS = load_lessons()

GOOD = """---
title: A lesson
summary: One sentence.
---
```widget bucket-timeline
preset: Overlap works
```

The tail is 5.95 ms and the step 43.95 ms, in 4 buckets.

```numbers
The tail is 5.95 ms and the step 43.95 ms | exposed_tail, step_time
in 4 buckets | n_buckets
```

```experiment
label: One bucket
layers_per_bucket: 12
```

Now the Regime readout says no overlap and the tail is 21.70 ms.

```numbers
no overlap | regime.kind
21.70 ms | exposed_tail
```
"""


def problems(text: str) -> list[str]:
    return check_lesson(parse_lesson(text, "demo", Path("lessons/demo.md")))


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_every_number_in_every_lesson_is_the_models(name: str) -> None:
    assert check_lesson(LESSONS[name]) == []


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_every_lesson_checks_its_numbers(name: str) -> None:
    lesson = LESSONS[name]
    checked, exempt = count_checked(lesson)
    assert any(isinstance(b, Numbers) for b in lesson.blocks)
    assert checked > 10 * max(1, exempt), "almost every stated number comes from the model"


def test_the_three_course_lessons_exist_in_order() -> None:
    assert list(LESSONS)[:3] == [
        "overlapping-communication",
        "dependency-schedule",
        "order-matters",
    ]


def test_a_good_lesson_passes() -> None:
    assert problems(GOOD) == []


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        # A number the model does not give, as printed.
        ("43.95", "43.96", "states 43.96, but “exposed_tail, step_time” is 43.95"),
        # An entry whose text is not in the lesson.
        ("in 4 buckets | n_buckets", "in 5 buckets | n_buckets", "does not appear"),
        # A regime named wrongly.
        ("no overlap", "link-saturated", "model gives “no overlap”"),
        # Too few values for the numbers printed.
        ("| exposed_tail, step_time", "| exposed_tail", "prints 2 number(s)"),
        # A name the model does not have.
        ("| n_buckets", "| n_bucket", "no number called “n_bucket”"),
        # Anything but arithmetic over the model's names is refused.
        ("| n_buckets", "| n_buckets.__class__", "not allowed"),
        ("| n_buckets", "| [x for x in bucket_ready]", "not allowed"),
        ("| n_buckets", "| same(bucket_ready)", "the values differ"),
    ],
)
def test_a_wrong_entry_is_reported_with_its_line(old: str, new: str, words: str) -> None:
    found = problems(GOOD.replace(old, new))
    assert any(words in p for p in found), found
    assert all(p.startswith("lessons/demo.md:") for p in found)


def test_a_number_without_an_entry_is_reported_where_it_is_stated() -> None:
    text = GOOD.replace("in 4 buckets.", "in 4 buckets of 75 MB.")
    assert problems(text) == [
        "lessons/demo.md:9: 75 is stated but not checked: add it to its numbers block"
    ]


def test_a_number_after_the_last_numbers_block_is_reported() -> None:
    found = problems(GOOD + "\nIt is 16.25 ms slower.\n")
    assert found == [
        "lessons/demo.md:28: 16.25 is stated but not checked: add it to a numbers block below it"
    ]


def test_numbers_follow_the_experiments_above_and_their_own_settings() -> None:
    text = GOOD.replace(
        "21.70 ms | exposed_tail", "21.70 ms | at(iteration=0, layers_per_bucket=3).exposed_tail"
    )
    assert problems(text) == []
    wrong = GOOD.replace(
        "no overlap | regime.kind", "layers_per_bucket: 3\nno overlap | regime.kind"
    )
    assert any("model gives “overlap-limited”" in p for p in problems(wrong))


def test_text_not_from_the_model_needs_a_reason() -> None:
    text = GOOD.replace("in 4 buckets | n_buckets", "in 4 buckets | not from the model")
    with pytest.raises(LessonError, match=r"demo\.md:13: say why"):
        parse_lesson(text, "demo")
    fine = GOOD.replace("in 4 buckets | n_buckets", "in 4 buckets | not from the model: an example")
    assert problems(fine) == []


def test_a_numbers_block_before_any_widget_names_its_widget() -> None:
    text = (
        "---\ntitle: T\nsummary: S\n---\nDDP caps buckets at 25 MiB.\n\n"
        "```numbers\n25 MiB | DDP_DEFAULT_CAP_MIB\n```\n"
    )
    with pytest.raises(LessonError, match=r"demo\.md:7: .*needs “widget: NAME”"):
        parse_lesson(text, "demo")
    named = text.replace("```numbers\n", "```numbers\nwidget: bucket-timeline\n")
    assert problems(named) == []


def test_the_queue_lab_numbers_come_from_the_fluid_queue() -> None:
    text = (
        "---\ntitle: T\nsummary: S\n---\n"
        "```widget queue-lab\narrival: 2\nservice: 3\ninitial: 4\n```\n\n"
        "It drains at 4 s; at 1 s it holds 3 items.\n\n```numbers\nprediction_time: 1\n"
        "drains at 4 s | drain_time\n"
        "at 1 s it holds 3 items | prediction_time, length_at(prediction_time)\n```\n"
    )
    assert problems(text) == []
    assert problems(
        text.replace("holds 3 items", "holds 2 items").replace("3 items |", "2 items |")
    )


def test_numbers_are_compared_as_printed() -> None:
    assert printed_numbers("−1.00 items/s, layers 12–10, i−1, 2(p−1), 0.55") == [
        "−1.00",
        "12",
        "10",
        "1",
        "2",
        "1",
        "0.55",
    ]
    assert as_printed(-1.0, "−1.00") == "−1.00"
    assert as_printed(0.9750000000000014, "0.98") == "0.98"
    assert as_printed(74.83, "75") == "75"
    assert as_printed(-0.001, "0.00") == "0.00"


def test_the_checker_runs_the_numbers_without_panel_or_bokeh(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_text(GOOD.replace("step 43.95 ms", "step 44.95 ms"))
    assert check_main([str(bad)]) == 1
    code = (
        "import sys; from lessons.check import main; rc = main(); "
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('panel', 'bokeh')]; "
        "print(rc, loaded)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().endswith("0 []"), out


# --- the claims the lessons make in words, beside their numbers --------------------------


def test_only_the_overlap_works_sweep_is_u_shaped() -> None:
    """The first lesson: a clean U for Overlap works; the other presets have steps."""

    def u_shaped(step: np.ndarray) -> bool:
        best = int(np.argmin(step))
        return bool(np.all(np.diff(step[: best + 1]) < 0) and np.all(np.diff(step[best:]) > 0))

    shapes = {
        name: u_shaped(sweep_layers_per_bucket(PRESETS.load(name)).step_time) for name in PRESETS
    }
    assert shapes["Overlap works"]
    assert not shapes["Latency-bound"]


def test_no_bucketing_beats_the_traffic_floor_the_first_lesson_states() -> None:
    """Traffic exceeds compute: the tail is at least first-ready + W + one overhead - E."""
    config = PRESETS.load("Traffic exceeds compute")
    s = step_schedule(config)
    floor = s.layer_ready.min() + s.traffic_ms + s.overhead_ms / s.n_buckets - s.backward_end
    assert floor == pytest.approx(10.70)
    tails = sweep_layers_per_bucket(config).exposed_tail
    assert tails.min() >= floor
    for caps in ([1.0, 5.0, 20.0, 50.0, 100.0, 300.0],):
        from widgets.model.buckets import sweep_byte_caps

        assert sweep_byte_caps(config, caps).exposed_tail.min() >= floor


def test_the_readme_example_lesson_passes_the_check() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    # The lesson example is the one unindented four-backtick block; the indented ones are
    # course-site recipes.
    example = readme.split("\n````markdown\n", 1)[1].split("\n````", 1)[0]
    lesson = parse_lesson(example, "readme-example")
    assert any(isinstance(b, Numbers) for b in lesson.blocks)
    assert check_lesson(lesson) == []


# --- the ranks widget -------------------------------------------------------------------

RANKS = """---
title: A ranks lesson
summary: One sentence.
---
```widget ranks
scenario: One slow rank
enqueue_ms: 0
```

Rank 0 defines every bucket, and the on-time ranks wait 16.75 ms.

| Readout | Value |
| --- | --- |
| Step time | 52.35 ms |

```numbers
Rank 0 defines every bucket | same(defining_ranks)
wait 16.75 ms | same(idle_ms[1:])
| Step time | 52.35 ms | step_time
```

```experiment
label: The scenario again
scenario: One slow rank
```

Its button resets the enqueue cost: the wait is now 16.80 ms.

```numbers
16.80 ms | fastest_idle_ms
```

```experiment
label: Disagree
scenario: Ranks disagree
```

Rank 1 skips layer 7, and 1 collective gets through.

```numbers
Rank 1 skips layer 7 | skipping_rank, skipped_layer
1 collective | matched
```
"""


def test_the_ranks_numbers_come_from_its_model() -> None:
    assert problems(RANKS) == []


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("wait 16.75 ms", "wait 16.70 ms", "states 16.70, but “same(idle_ms[1:])” is 16.75"),
        # A scenario resets every setting, as its button does.
        ("16.80 ms", "16.75 ms", "states 16.75, but “fastest_idle_ms” is 16.80"),
        ("| 52.35 ms | step_time", "| 52.35 ms | exposed_tail", "is 5.95"),
        # Without a timeline there is no schedule to read.
        ("| matched", "| fastest_idle_ms", "no number called “fastest_idle_ms”"),
        ("| matched", "| step_time", "not a finite number"),
    ],
)
def test_a_wrong_ranks_entry_is_reported(old: str, new: str, words: str) -> None:
    found = problems(RANKS.replace(old, new))
    assert any(words in p for p in found), found


def readout_table_mismatches(lesson: Lesson) -> tuple[int, list[str]]:
    """(rows checked, mismatches) of every ``| Readout | Value |`` row in a ranks lesson
    against the readouts the view shows for the settings in force there."""
    state: dict[str, object] = {}
    rows, wrong = 0, []
    for block in lesson.blocks:
        if isinstance(block, WidgetBlock):
            state = models.start_state(block.widget, block.settings)
        elif isinstance(block, Experiment):
            state = models.apply_settings("ranks", state, block.settings)
        elif isinstance(block, Prose | Question):
            # A prediction's answer table sits behind "Show answer" (a question's answer).
            text = block.text if isinstance(block, Prose) else block.answer
            result = RanksConfig(**state).result()
            values = (
                ranks_text.readout_values(result)
                if result.schedule is not None
                else ranks_text.disagreement_values(result.disagreement)
            )
            shown = {label: value for label, value, _ in values.values()}
            for line in text.splitlines():
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if not line.startswith("|") or cells[0] in ("Readout", "---"):
                    continue
                rows += 1
                if shown.get(cells[0]) != cells[1]:
                    wrong.append(f"{cells[0]}: {cells[1]}, the view shows {shown.get(cells[0])}")
    return rows, wrong


def test_every_readout_table_in_the_ranks_lesson_is_what_the_view_shows() -> None:
    """A table row names a readout: its value must be that readout's, not only the model's."""
    lesson = LESSONS["which-rank-which-event"]
    assert [w.widget for w in lesson.widgets] == ["ranks"]
    rows, wrong = readout_table_mismatches(lesson)
    assert rows >= 20
    assert wrong == []


def test_a_readout_table_row_that_is_not_the_view_is_reported() -> None:
    text = (Path(__file__).parents[2] / "lessons" / "which-rank-which-event.md").read_text()
    swapped = text.replace(
        "| Exposed tail | 4.25 ms |", "| Idle time of the fastest rank | 4.25 ms |"
    )
    _, wrong = readout_table_mismatches(parse_lesson(swapped, "swapped"))
    assert wrong == ["Idle time of the fastest rank: 4.25 ms, the view shows 16.25 ms"]
