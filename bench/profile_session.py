"""Where a session's time goes: each route's session built in-process, stage by stage.

The server builds a learner's session in four steps, and this script runs the
same code for each, without sockets, so that the CPU of every step can be read
apart and profiled:

1. **build**: Panel's application handler runs the route function and turns
   the Panel objects into Bokeh models (``generate_session``, what the HTTP GET
   of a route does);
2. **page**: the HTML page for the session (``server_html_page_for_session``:
   stylesheet paths rewritten on every model, resources bundled, template);
3. **pull**: the document serialized as the ``PULL-DOC-REPLY`` the browser
   asks for when its websocket opens;
4. **destroy**: what the server does when it reaps the closed session
   (session-destroyed callbacks, Panel's view clean-up, ``Document.destroy``),
   then ``gc.collect()``.

CPU is this thread's CPU time (``time.thread_time``), the median over repeats,
so other load on the machine does not inflate it. It also counts what a page
is made of: Bokeh models (by type), Panel objects, stylesheet references and
distinct stylesheet texts, and the size of the serialized document.

    .venv/bin/python -m bench.profile_session                 # every route, table
    .venv/bin/python -m bench.profile_session --profile /bucket-timeline   # + pyinstrument

``--profile`` needs pyinstrument (``pip install pyinstrument``), a development
tool, not a dependency of the app.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from app.server.panel_internals import destroy_document
from bench.panel_internals import build_session_page, tornado_application, views_of

ROUTES = (
    "/queue-lab",
    "/bucket-timeline",
    "/ranks",
    "/trace",
    "/lessons/overlapping-communication",
    "/lessons/dependency-schedule",
)
BARE = "/bare"
STAGES = ("build", "page", "pull", "destroy", "gc")


@dataclass
class Anatomy:
    """What one session's page is made of."""

    models: int = 0
    model_types: Counter = field(default_factory=Counter)
    panel_objects: int = 0
    panel_types: Counter = field(default_factory=Counter)
    stylesheet_refs: int = 0
    stylesheet_chars: int = 0
    distinct_stylesheets: int = 0
    doc_bytes: int = 0
    page_bytes: int = 0


def _servers(tuned: bool = True, extra: Mapping[str, Callable] | None = None):
    """Bokeh applications for the app's routes and the bare app, as ``pn.serve`` makes them.

    ``tuned``: with the process settings ``overlap-lab serve`` applies
    (``app.server.serving.configure_process`` and ``warm``); otherwise Panel's and
    Bokeh's defaults. ``extra``: more routes (name: page function), served alike.
    """
    import panel as pn

    from app.server.routes import build_routes
    from app.server.serving import configure_process, warm
    from bench.bare_app import bare_page

    pn.extension(inline=False)
    routes = {**build_routes(), "bare": bare_page, **(extra or {})}
    if tuned:
        configure_process()
        warm(routes)
    server = pn.serve(routes, port=0, address="127.0.0.1", show=False, start=False, verbose=False)
    return server


def _session_stages(tornado, path: str, timings: dict[str, list[float]] | None):
    """Build, render, serialize and destroy one session of ``path``; return its anatomy."""
    from bokeh.protocol import Protocol
    from panel.io.resources import Resources
    from panel.io.session import generate_session
    from panel.io.state import set_curdoc

    app = tornado.applications[path].application
    payload = {"arguments": {}, "headers": {"Host": "localhost:5006"}, "cookies": {}}

    clock = time.thread_time
    t0 = clock()
    session = generate_session(app, payload=payload)
    doc = session.document
    t1 = clock()
    with set_curdoc(doc):
        resources = Resources.from_bokeh(tornado.resources())
        page = build_session_page(session, resources)
    t2 = clock()
    msg = Protocol().create("PULL-DOC-REPLY", "profile", doc)
    content = msg.content_json
    buffers = sum(len(b.data) for b in msg.buffers)
    t3 = clock()

    anatomy = Anatomy(doc_bytes=len(content) + buffers, page_bytes=len(page))
    models = list(doc.models)
    anatomy.models = len(models)
    anatomy.model_types = Counter(type(m).__name__ for m in models)
    texts = set()
    for m in models:
        for sheet in getattr(m, "stylesheets", None) or ():
            text = sheet if isinstance(sheet, str) else getattr(sheet, "css", None) or sheet.url
            anatomy.stylesheet_refs += 1
            anatomy.stylesheet_chars += len(text)
            texts.add(text)
    anatomy.distinct_stylesheets = len(texts)
    viewables = set()
    for pane in views_of(doc):
        viewables.update(id(o) for o in pane.select())
        anatomy.panel_types.update(type(o).__name__ for o in pane.select())
    anatomy.panel_objects = len(viewables)
    del models, texts, msg, content, page

    t4 = clock()
    destroy_document(doc)
    del doc, session
    t5 = clock()
    gc.collect()
    t6 = clock()
    if timings is not None:
        spans = ((t0, t1), (t1, t2), (t2, t3), (t4, t5), (t5, t6))
        for stage, (a, b) in zip(STAGES, spans, strict=True):
            timings[stage].append(b - a)
    return anatomy


def measure(
    paths: list[str],
    repeats: int,
    tuned: bool = True,
    extra: Mapping[str, Callable] | None = None,
) -> tuple[dict, dict]:
    """CPU ms per stage (median) and the anatomy of every path (``extra``: more routes)."""
    server = _servers(tuned, extra)
    tornado = tornado_application(server)
    cpu: dict[str, dict[str, float]] = {}
    anatomies: dict[str, Anatomy] = {}
    for path in paths:
        _session_stages(tornado, path, None)  # first use: imports, caches
        timings: dict[str, list[float]] = {s: [] for s in STAGES}
        for _ in range(repeats):
            anatomies[path] = _session_stages(tornado, path, timings)
        cpu[path] = {s: 1000 * statistics.median(v) for s, v in timings.items()}
    return cpu, anatomies


def profile(path: str, repeats: int, out_html: str | None, tuned: bool = True) -> str:
    """A pyinstrument profile of ``repeats`` full sessions of ``path`` (text)."""
    from pyinstrument import Profiler

    server = _servers(tuned)
    tornado = tornado_application(server)
    _session_stages(tornado, path, None)
    profiler = Profiler(interval=0.0005, async_mode="disabled")
    profiler.start()
    for _ in range(repeats):
        _session_stages(tornado, path, None)
    profiler.stop()
    if out_html:
        with open(out_html, "w", encoding="utf-8") as fh:
            fh.write(profiler.output_html())
    return profiler.output_text(unicode=True, color=False, show_all=True)


def report(cpu: dict, anatomies: dict) -> str:
    lines = []
    bare = sum(cpu[BARE].values()) if BARE in cpu else None
    head = (
        "| route | build | page | pull | destroy | gc | total CPU ms | × bare | Bokeh models |"
        " Panel objects | stylesheet refs (distinct) | document kB |"
    )
    lines += [head, "|" + "---|" * 12]
    for path, stages in cpu.items():
        a = anatomies[path]
        total = sum(stages.values())
        ratio = f"{total / bare:.1f}" if bare else "—"
        lines.append(
            f"| `{path}` | "
            + " | ".join(f"{stages[s]:.1f}" for s in STAGES)
            + f" | {total:.1f} | {ratio} | {a.models} | {a.panel_objects} | "
            f"{a.stylesheet_refs} ({a.distinct_stylesheets}) | {a.doc_bytes / 1000:.0f} |"
        )
    lines.append("")
    for path, a in anatomies.items():
        top = ", ".join(f"{n} {k}" for k, n in a.model_types.most_common(8))
        ptop = ", ".join(f"{n} {k}" for k, n in a.panel_types.most_common(8))
        lines.append(f"- `{path}`: models: {top}; Panel: {ptop}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="sessions per route (median)")
    parser.add_argument("--routes", nargs="*", default=[*ROUTES, BARE])
    parser.add_argument("--profile", metavar="ROUTE", help="pyinstrument profile of one route")
    parser.add_argument("--html", metavar="FILE", help="also write the profile as HTML")
    parser.add_argument(
        "--untuned", action="store_true", help="Panel's and Bokeh's defaults, not the server's"
    )
    args = parser.parse_args(argv)
    if args.profile:
        print(profile(args.profile, args.repeats, args.html, not args.untuned))
        return 0
    cpu, anatomies = measure(args.routes, args.repeats, not args.untuned)
    print(report(cpu, anatomies))
    return 0


if __name__ == "__main__":
    sys.exit(main())
