"""``overlap-lab export DIR``: the index, every lesson and every widget as static files.

The folder holds ``index.html``, ``embed.js`` (what a course page includes once
so that every iframe of the copy takes its content's height), ``assets/`` (the
bundles and the static state source), one folder per widget and per lesson with
its ``index.html`` and ``states.json.gz``, and with ``--single-file`` also
``single/<name>.html``: one self-contained file per widget and lesson.
"""

from __future__ import annotations

import gzip
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.pages.lesson_page import experiment_note
from lessons import Lesson
from lessons.course import course_lessons
from lessons.parser import Experiment, WidgetBlock
from widgets.common.embed import EMBED_SCRIPT
from widgets.model.settings import setting_names
from widgets.page_settings import PAGE_KEYS
from widgets.registry import WIDGETS

from .pages import (
    STATIC_SOURCE,
    Page,
    bundle_path,
    index_page,
    lesson_page,
    served_html,
    single_html,
    widget_page,
)
from .states import widget_states


@dataclass
class ExportReport:
    """What an export wrote: each file's path (relative to the folder) and size in bytes."""

    out: Path
    files: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Bytes written, every file together."""
        return sum(self.files.values())

    def write(self, path: str, data: bytes | str) -> None:
        """Write one file of the export."""
        target = self.out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        raw = data.encode("utf-8") if isinstance(data, str) else data
        target.write_bytes(raw)
        self.files[path] = len(raw)


def widget_entry(states, shared, notes: dict[int, str]) -> dict:
    """One widget's states as a page's static source reads them.

    ``keys`` are its URL keys, ``page_keys`` the page's own (read by the page, never a
    notice), and ``settings`` the names a live page's notice for
    an unknown key lists (sorted, as :func:`widgets.url_state.settings_from_query`).
    """
    spec = states.spec
    return {
        "name": spec.name,
        "title": spec.title,
        "keys": spec.keys,
        "page_keys": list(PAGE_KEYS),
        "settings": sorted(setting_names(spec.settings)),
        **shared,
        "records": states.records,
        "configurations": states.configurations,
        "notes": {str(k): v for k, v in notes.items()},
        "start": 0,
    }


def widget_page_states(name: str, live: str, more: Sequence[Mapping[str, Any]] = ()) -> dict:
    """A widget page's states: its defaults, named configurations and declared axes, and
    ``more`` settings (a course author's, ``export --state``) with their axes.

    ``address``: the page starts from the settings in its address, as a live page does.
    """
    states, shared = widget_states(WIDGETS[name], more=[dict(m) for m in more])
    return {
        "widgets": [widget_entry(states, shared, {})],
        "experiments": {},
        "live": live,
        "address": True,
    }


def lesson_page_states(lesson: Lesson, live: str, origin: str | None = None) -> dict:
    """A lesson's states: each widget's initial state and each experiment's, per widget.

    ``origin``: the server whose page holds them (for the links they draw), or None.
    """
    # Slots and experiment buttons are numbered in the lesson's order (app.lesson_page).
    blocks = [b for b in lesson.blocks if isinstance(b, WidgetBlock)]
    experiments = [b for b in lesson.blocks if isinstance(b, Experiment)]
    slot = {id(b): i for i, b in enumerate(blocks)}
    widgets, targets = [], {}
    for i, block in enumerate(blocks):
        mine = [
            (n, experiment_note(e), dict(e.settings))
            for n, e in enumerate(experiments)
            if slot[id(lesson.blocks[e.target])] == i
        ]
        targets.update({str(n): i for n, _, _ in mine})
        states, shared = widget_states(
            WIDGETS[block.widget], dict(block.settings), mine, axes=False, origin=origin
        )
        widgets.append(widget_entry(states, shared, {n: note for n, note, _ in mine}))
    return {"widgets": widgets, "experiments": targets, "live": live}


def packed(states: dict) -> bytes:
    """A page's states as gzipped JSON (deterministic: no time stamp)."""
    text = json.dumps(states, separators=(",", ":"), allow_nan=False)
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def _packed_page(task: tuple[str, str] | Lesson, live: str, more: Mapping) -> bytes:
    # A lesson travels whole: a worker process need not know which course is in use.
    if isinstance(task, Lesson):
        return packed(lesson_page_states(task, live))
    return packed(widget_page_states(task[1], live, more.get(task[1], ())))


def export_course(
    out: Path,
    live: str = "",
    single_file: bool = False,
    more: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    progress: Callable[[str], None] | None = None,
) -> ExportReport:
    """Write the whole course into ``out`` (files of an earlier export are replaced).

    ``more`` holds, per widget name, a course author's settings to precompute on the
    widget's page beside its own (``export --state``); ``progress`` is told each
    page as it is written.
    """
    live = live.rstrip("/")
    more = dict(more or {})
    report = ExportReport(out)
    lessons = list(course_lessons().values())
    report.write("index.html", index_page(live, single_file, lessons))
    report.write("embed.js", EMBED_SCRIPT)
    for name in WIDGETS:
        report.write(f"assets/{bundle_path(name).name}", bundle_path(name).read_bytes())
    report.write(f"assets/{STATIC_SOURCE.name}", STATIC_SOURCE.read_bytes())
    pages: list[tuple[Page, Page]] = [(widget_page(n, live),) * 2 for n in WIDGETS]
    pages += [
        (lesson_page(lesson, lessons, live), lesson_page(lesson, lessons, live, nav=False))
        for lesson in lessons
    ]
    tasks: list[tuple[str, str] | Lesson] = [("widget", n) for n in WIDGETS]
    tasks += lessons
    # Pages are independent: one process per core computes them.
    started = time.monotonic()
    with ProcessPoolExecutor(max_workers=min(len(tasks), os.cpu_count() or 1)) as pool:
        packs = pool.map(_packed_page, tasks, [live] * len(tasks), [more] * len(tasks))
        for n, ((page, alone), data) in enumerate(zip(pages, packs, strict=True), 1):
            folder = page.path.rsplit("/", 1)[0]
            single = f"single/{folder.rsplit('/', 1)[-1]}.html"
            report.write(page.path, served_html(page, single if single_file else ""))
            report.write(f"{folder}/states.json.gz", data)
            if single_file:
                report.write(single, single_html(alone, data))
            if progress is not None:
                progress(
                    f"[{n}/{len(pages)}] {folder}/ ({len(data) / 1e6:.2f} MB of states, "
                    f"{time.monotonic() - started:.1f} s)"
                )
    return report
