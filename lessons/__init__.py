"""Lessons: Markdown files in this folder with widget directives.

A lesson file starts with front matter (``title:``, ``summary:`` and an
optional ``order:`` for its place on the index, between ``---`` lines), then
Markdown prose. Three fenced blocks are directives:

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
````

``widget NAME`` places a live widget (a name from ``widgets.registry``) with
optional settings, one ``key: value`` per line, keys being the widget's URL keys.
``experiment`` is a button that loads its settings into the nearest widget above
it. ``question`` is a self-check question whose answer, after the ``---`` line,
stays hidden until the learner asks for it.
"""

from __future__ import annotations

from .parser import (
    Block,
    Experiment,
    Lesson,
    LessonError,
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
    "Prose",
    "Question",
    "WidgetBlock",
    "load_lessons",
    "parse_lesson",
]
