"""A lesson's widgets in a notebook, each followed by its experiments' buttons.

    from lessons.notebook import lesson_widgets
    lesson_widgets("order-matters")

Each widget block of the lesson becomes the widget's notebook class
(``widgets.notebook``) with the block's settings; each experiment becomes a button
under the widget it loads into, which loads its settings and resets, saying what it
loaded, as the lesson's page does. Needs the ``notebook`` extra.
"""

from __future__ import annotations

from pathlib import Path

import ipywidgets

from widgets.notebook import Column, NotebookWidget, notebook_widget

from .parser import LESSON_DIR, Experiment, WidgetBlock, load_lessons


def experiment_button(widget: NotebookWidget, experiment: Experiment) -> ipywidgets.Button:
    """A button that loads ``experiment`` into ``widget``."""
    button = ipywidgets.Button(
        description=f"▶ {experiment.label}",
        tooltip=experiment.note,
        # As wide as its label, under the widget's left edge, as on the lesson's page.
        layout=ipywidgets.Layout(width="auto", align_self="flex-start", margin="4px 0"),
    )
    button.on_click(lambda _button: widget.load(experiment.note, **experiment.settings))
    return button


def lesson_widgets(name: str, folder: Path = LESSON_DIR) -> Column:
    """Lesson ``name``'s widgets (from ``folder``), each with its experiments' buttons."""
    lessons = load_lessons(folder)
    if name not in lessons:
        raise KeyError(f"no lesson “{name}” in {folder} (known: {', '.join(lessons)})")
    lesson = lessons[name]
    # An experiment names its widget by the widget block's place among the blocks.
    widgets = {
        i: notebook_widget(b.widget, **b.settings)
        for i, b in enumerate(lesson.blocks)
        if isinstance(b, WidgetBlock)
    }
    children: list[ipywidgets.DOMWidget] = []
    for index, widget in widgets.items():
        children.append(widget)
        for block in lesson.blocks:
            if isinstance(block, Experiment) and block.target == index:
                children.append(experiment_button(widget, block))
    return Column(*children)
