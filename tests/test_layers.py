"""The layers hold: lower layers import nothing from the ones above them.

Each check runs in a fresh interpreter, so nothing another test imported hides
an import the module under test would make.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

VIEW_LIBRARIES = ("panel", "bokeh")
#: The browser-drawn components: Panel objects, never imported by the layers below them.
VIEWS = (
    "widgets.common.component",
    "widgets.queue_lab.component",
    "widgets.bucket_timeline.component",
    "widgets.many_ranks.component",
    "widgets.trace_viewer.component",
)


@pytest.mark.parametrize(
    "modules",
    [
        # The numbers: numpy and param only.
        "widgets.model.buckets, widgets.model.fluid_queue, widgets.model.timeline, "
        "widgets.model.settings, widgets.model.ranks, widgets.model.named, "
        "widgets.many_ranks.model, widgets.many_ranks.result, widgets.bucket_timeline.model",
        # The trace package: format, import, fit and the trace view's numbers (torch: never).
        "traces, widgets.trace_viewer.model, widgets.trace_viewer.text, "
        "widgets.trace_viewer.state, traces.upload, traces.profiler, "
        "traces.profiler_convert, traces.summary, traces.shipped, "
        "traces.commands",
        # Lessons are parsed and checked without a view (the registry imports none).
        "lessons, lessons.check, widgets.registry",
        # URL settings and text parsing are plain Python.
        "widgets.url_state, widgets.common.parsing, widgets.common.formatting, "
        "widgets.common.fields, widgets.common.bundles, widgets.common.state_numbers",
    ],
)
def test_imports_no_view_library(modules: str) -> None:
    code = (
        f"import sys, {modules}\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {VIEW_LIBRARIES!r})\n"
        "assert not bad, bad\n"
        "views = sorted(m for m in sys.modules if m in "
        f"{VIEWS!r})\n"
        "assert not views, views"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_view_library_check_can_fail() -> None:
    # The same check on a module that does import Panel must fail.
    code = (
        "import sys, widgets.common.component\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {VIEW_LIBRARIES!r})\n"
        "assert not bad, bad"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode != 0


def modules_loaded(imports: str, prefix: str) -> list[str]:
    """The modules under ``prefix`` that importing ``imports`` loads, in a fresh interpreter."""
    code = f"import json, sys, {imports}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in json.loads(out.stdout) if m == prefix or m.startswith(prefix + ".")]


def test_pages_know_nothing_of_how_they_are_served() -> None:
    # A page is built from what its route hands it; serving machinery sits above pages.
    pages = (
        "app.pages.page, app.pages.widget_page, app.pages.lesson_page, "
        "app.pages.static_pages, app.pages.thumbnails, app.classroom.pages"
    )
    assert modules_loaded(pages, "app.server") == []
    assert "app.server.routes" in modules_loaded("app.server.routes", "app.server")
