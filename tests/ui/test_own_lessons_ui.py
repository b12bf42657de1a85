"""A course's own lessons served from its own folder (``serve --lessons DIR``), in Chromium."""

from __future__ import annotations

from pathlib import Path
from urllib.request import urlopen

from conftest import running_server
from pagekit import bucket_readouts, button, readout, starts
from playwright.sync_api import Page, expect

from lessons.parser import LESSON_DIR
from widgets.bucket_timeline.model import PRESETS

OWN = """---
title: Our course's first lesson
summary: Kept in the course's own repository.
order: 0
---
A lesson the product never shipped.

```widget bucket-timeline
preset: Latency-bound
```

```experiment
label: Three layers per bucket
layers_per_bucket: 3
```

```question
Why?
---
Because.
```
"""

TIMEOUT = 15_000


def _status(url: str) -> int:
    try:
        with urlopen(url, timeout=30) as response:
            return response.status
    except OSError as exc:  # HTTPError: an answer other than 2xx
        return getattr(exc, "code", 0)


def test_a_lesson_kept_outside_the_package_is_served_listed_and_live(
    page: Page, ui, tmp_path: Path
):
    (tmp_path / "our-first.md").write_text(OWN, encoding="utf-8")
    builtin = sorted(p.stem for p in LESSON_DIR.glob("*.md"))
    with running_server("--lessons", str(tmp_path)) as served:
        ui.open_widget(page, served.url + "/", ready=None)
        course = page.get_by_role("navigation", name="Lessons").get_by_role("link")
        # order 0: the course's own lesson comes first, then every product lesson
        expect(course).to_have_count(1 + len(builtin))
        expect(course.first).to_have_text("Our course's first lesson")

        ui.open_widget(page, served.url + "/lessons/our-first")
        title = page.get_by_role("heading", level=1, name="Our course's first lesson")
        expect(title).to_be_visible()
        button(page, "Three layers per bucket").click()
        expected = bucket_readouts(PRESETS.load("Latency-bound", layers_per_bucket=3))
        expect(readout(page, "Exposed tail")).to_have_text(
            starts(expected["Exposed tail"]), timeout=TIMEOUT
        )
        assert _status(served.url + f"/lessons/{builtin[0]}") == 200


def test_without_the_builtin_lessons_only_the_courses_own_are_served(tmp_path: Path):
    (tmp_path / "our-first.md").write_text(OWN, encoding="utf-8")
    builtin = sorted(p.stem for p in LESSON_DIR.glob("*.md"))
    with running_server("--lessons", str(tmp_path), "--no-builtin-lessons") as served:
        assert _status(served.url + "/lessons/our-first") == 200
        assert _status(served.url + f"/lessons/{builtin[0]}") == 404
        with urlopen(served.url + "/", timeout=30) as response:
            index = response.read().decode()
        assert "Our course&#x27;s first lesson" in index or "Our course's first lesson" in index
        assert (
            LESSON_DIR.joinpath(f"{builtin[0]}.md").read_text().split("title: ")[1].split("\n")[0]
            not in index
        )
