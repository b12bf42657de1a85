"""The README's course-site recipes, proven: MkDocs (Material), Sphinx and Jupyter Book 1.

Each tool builds a small course in a temporary folder twice: with the integration
(the MkDocs plugin, the Sphinx directive) and with the README's hand-written
snippet over ``overlap-lab export``. A plain file server on a loopback port
serves the built site, and Chromium opens the page with the widget: the chart
drawn, Play running, the URL's settings shown, the iframe as tall as its
content, no failed request and none to another host. Expected readouts come
from the model.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.ui.pagekit import TIMEOUT, bucket_readouts, button, field, readout, starts
from widgets.bucket_timeline.model import PRESETS

REPO = Path(__file__).resolve().parents[2]
SETTINGS = {"preset": "Latency-bound", "layers_per_bucket": "2"}
QUERY = "preset=Latency-bound&layers_per_bucket=2"
BLOCK = "preset: Latency-bound\nlayers_per_bucket: 2\n"
#: The README's hand-written snippet, the page ``root`` away from the site's root.
SNIPPET = (
    '<iframe src="{root}overlap-lab/bucket-timeline/index.html?' + QUERY + '" '
    'title="Bucket timeline" data-overlap-lab style="width:100%;height:640px;border:0">'
    "</iframe>\n"
    '<script src="{root}overlap-lab/embed.js" defer></script>\n'
)

pytest.importorskip("mkdocs", reason="the course-site recipes need the test extra")
pytest.importorskip("sphinx", reason="the course-site recipes need the test extra")
pytest.importorskip("jupyter_book", reason="the course-site recipes need the test extra")


def _run(*command: str, cwd: Path) -> float:
    """Run a build command; its wall time in seconds (fails with its output on an error)."""
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
    return time.perf_counter() - start


def _tool(name: str) -> str:
    """A console script of this environment (mkdocs, sphinx-build, jupyter-book)."""
    script = Path(sys.executable).with_name(name)
    return str(script) if script.exists() else shutil.which(name) or name


def _export(into: Path) -> None:
    _run(sys.executable, "-m", "app.cli", "export", str(into), "--state",
         f"bucket-timeline?{QUERY}", cwd=REPO)  # fmt: skip


# --- the three tools, each with the integration and with the snippet ----------------


def mkdocs_site(tmp: Path, integration: bool) -> tuple[Path, str]:
    docs = tmp / "docs"
    (docs / "lessons").mkdir(parents=True)
    (docs / "index.md").write_text("# A course\n\n[The lesson](lessons/intro.md)\n")
    if integration:
        body = f"```overlap-lab bucket-timeline\n{BLOCK}```\n"
        plugins = "plugins:\n  - overlap-lab\n"
    else:
        _export(docs / "overlap-lab")  # inside docs/: MkDocs copies it into the site
        body = SNIPPET.format(root="../../")  # lessons/intro.md is served as lessons/intro/
        plugins = ""
    (docs / "lessons" / "intro.md").write_text(f"# Buckets\n\nSome prose.\n\n{body}\nMore prose.\n")
    (tmp / "mkdocs.yml").write_text(
        # Material fetches Google Fonts unless told not to (font: false): classrooms are offline.
        f"site_name: A course\ntheme:\n  name: material\n  font: false\n{plugins}"
        "nav:\n  - index.md\n  - lessons/intro.md\n"
    )
    _run(_tool("mkdocs"), "build", "--strict", cwd=tmp)
    return tmp / "site", "lessons/intro/"


def sphinx_site(tmp: Path, integration: bool) -> tuple[Path, str]:
    src = tmp / "src"
    (src / "lessons").mkdir(parents=True)
    (src / "index.rst").write_text("A course\n========\n\n.. toctree::\n\n   lessons/intro\n")
    if integration:
        conf = 'extensions = ["app.integrations.sphinx_directive"]\n'
        body = ".. overlap-lab:: bucket-timeline\n\n" + "".join(
            f"   {line}\n" for line in BLOCK.splitlines()
        )
    else:
        _export(src / "_extra" / "overlap-lab")
        conf = 'html_extra_path = ["_extra"]\n'
        body = ".. raw:: html\n\n" + "".join(
            f"   {line}\n" for line in SNIPPET.format(root="../").splitlines()
        )
    (src / "conf.py").write_text(f'project = "A course"\n{conf}')
    (src / "lessons" / "intro.rst").write_text(f"Buckets\n=======\n\nSome prose.\n\n{body}\n")
    _run(sys.executable, "-m", "sphinx", "-W", "-b", "html", str(src), str(tmp / "html"), cwd=tmp)
    return tmp / "html", "lessons/intro.html"


def jupyter_book_site(tmp: Path, integration: bool) -> tuple[Path, str]:
    book = tmp / "book"
    (book / "lessons").mkdir(parents=True)
    (book / "intro.md").write_text("# A course\n\nThe first page.\n")
    (book / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n  - file: lessons/intro\n"
    )
    if integration:
        sphinx = "sphinx:\n  extra_extensions:\n    - app.integrations.sphinx_directive\n"
        body = f"```{{overlap-lab}} bucket-timeline\n{BLOCK}```\n"
    else:
        _export(book / "_extra" / "overlap-lab")
        sphinx = "sphinx:\n  config:\n    html_extra_path: [_extra]\n"
        body = SNIPPET.format(root="../")
    (book / "_config.yml").write_text(
        f"title: A course\nexecute:\n  execute_notebooks: 'off'\n{sphinx}"
    )
    (book / "lessons" / "intro.md").write_text(f"# Buckets\n\nSome prose.\n\n{body}\nMore.\n")
    _run(_tool("jupyter-book"), "build", str(book), cwd=tmp)
    return book / "_build" / "html", "lessons/intro.html"


BUILDERS: dict[str, Callable[[Path, bool], tuple[Path, str]]] = {
    "mkdocs": mkdocs_site,
    "sphinx": sphinx_site,
    "jupyter-book": jupyter_book_site,
}


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def _serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="module", params=[(t, i) for t in BUILDERS for i in (True, False)],
                ids=lambda p: f"{p[0]}-{'integration' if p[1] else 'snippet'}")  # fmt: skip
def built_site(request, tmp_path_factory) -> Iterator[tuple[str, str]]:
    tool, integration = request.param
    site, page_path = BUILDERS[tool](tmp_path_factory.mktemp(tool), integration)
    assert (site / "overlap-lab" / "bucket-timeline" / "index.html").is_file()
    server, origin = _serve(site)
    try:
        yield origin, page_path
    finally:
        server.shutdown()
        server.server_close()


def test_a_course_page_embeds_the_widget_with_its_settings(page: Page, built_site) -> None:
    origin, page_path = built_site
    urls: list[str] = []
    failed: list[str] = []
    page.on("request", lambda r: urls.append(r.url))
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{origin}/{page_path}")

    frame_element = page.locator("iframe[data-overlap-lab]")
    expect(frame_element).to_have_count(1)
    frame_element.scroll_into_view_if_needed()
    frame = page.frame_locator("iframe[data-overlap-lab]")
    # The chart drawn, with the settings from the iframe's address.
    expect(frame.locator("svg").first).to_be_visible(timeout=TIMEOUT)
    preset = frame.get_by_role("combobox", name="Preset", exact=True)
    expect(preset).to_have_value("Latency-bound", timeout=TIMEOUT)
    expect(field(frame, "Layers per bucket")).to_have_value("2")
    expected = bucket_readouts(PRESETS.load("Latency-bound", layers_per_bucket=2))
    expect(readout(frame, "Exposed tail")).to_have_text(starts(expected["Exposed tail"]))
    # Play runs in the page.
    button(frame, "Play").click()
    expect(button(frame, "Pause")).to_be_visible(timeout=TIMEOUT)
    expect(readout(frame, "Elapsed time")).not_to_have_text(re.compile(r"^0\.00 ms"))
    button(frame, "Pause").click()

    # The iframe is as tall as its content (the copy's sizing script).
    def heights() -> tuple[float, float]:
        outer = frame_element.evaluate("f => f.getBoundingClientRect().height")
        inner = frame_element.evaluate(
            "f => f.contentDocument.documentElement.getBoundingClientRect().height"
        )
        return outer, inner

    deadline = time.monotonic() + 10
    while abs((h := heights())[0] - h[1]) > 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert abs(h[0] - h[1]) <= 2, f"iframe {h[0]:.0f} px tall, its content {h[1]:.0f} px"
    assert h[0] > 1000, "the widget is taller than the snippet's first guess of 640 px"

    page.wait_for_load_state("networkidle")
    assert not failed, failed
    own = urlsplit(origin).netloc
    foreign = [u for u in urls if urlsplit(u).scheme in ("http", "https", "ws", "wss")
               and urlsplit(u).netloc != own]  # fmt: skip
    assert not foreign, foreign
