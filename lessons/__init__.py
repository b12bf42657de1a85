"""Lessons: Markdown files in this folder with widget directives, their numbers checked.

A lesson file starts with front matter (``title:``, ``summary:`` and an
optional ``order:`` for its place on the index, between ``---`` lines), then
Markdown prose. Four fenced blocks are directives:

````
```widget bucket-timeline
preset: Overlap works
layers_per_bucket: 3
```

```experiment
label: One layer per bucket on a high-latency link
preset: Latency-bound
```

```question
Why is the tail never shorter than the last bucket's transfer?
---
Because the last bucket holds layer 1, whose gradient is ready only when backward ends.
```

```numbers
layers_per_bucket: 3
Exposed tail 5.95 ms | exposed_tail
```
````

``widget NAME`` places a live widget (a name from ``widgets.registry``) with
optional settings, one ``key: value`` per line, keys being the widget's URL keys.
``experiment`` is a button that loads its settings into the nearest widget above
it. ``question`` is a self-check question whose answer, after the ``---`` line,
stays hidden until the learner asks for it.

``numbers`` is not shown: it lists every number stated since the previous
``numbers`` block, one ``TEXT | EXPRESSION`` line each, with the settings
they come from (``key: value`` lines first; by default the widget above as
its experiments leave it). ``python -m lessons.check`` and the tests evaluate
each expression on the model (``step_schedule(BucketConfig(...))``, the sweep, the
fluid queue, ``RanksConfig(...).result()``), compare it with the number as TEXT
prints it, check TEXT appears verbatim, and fail on any number in the text that no entry covers. The
expressions and names are documented in ``lessons.numbers``.
"""

from __future__ import annotations

from .parser import (
    Block,
    Experiment,
    Lesson,
    LessonError,
    NumberEntry,
    Numbers,
    Prose,
    Question,
    WidgetBlock,
    load_lessons,
    parse_lesson,
)

__all__ = [
    "Block",
    "Experiment",
    "Lesson",
    "LessonError",
    "NumberEntry",
    "Numbers",
    "Prose",
    "Question",
    "WidgetBlock",
    "load_lessons",
    "parse_lesson",
]
