"""What each kind of part costs a new session, against the bare Panel app.

A widget page is made of three kinds of part: figures, controls and readouts.
This benchmark serves the bare app (``bench/bare_app.py``) with one kind of
part added at a time, in the numbers the bucket timeline has them, made of
Panel's and Bokeh's plainest objects, and measures each page's session the way
``profile_session.py`` does (build, HTML page, document pull, destroy,
collection; this thread's CPU, median). Every part is cheaper here than in the
widget, where figures carry more glyphs, tools and annotations, so the figures
are a floor: a page that holds these parts costs at least this much per
session while Panel builds it on the server.

    .venv/bin/python -m bench.session_parts              # about 30 s
    .venv/bin/python -m bench.session_parts --repeats 15
"""

from __future__ import annotations

import argparse
import sys

import panel as pn
import param
from panel.custom import JSComponent

from bench.bare_app import bare_page
from bench.profile_session import BARE, STAGES, measure

#: The bucket timeline's parts, counted on its page (``profile_session.py``).
TEXT_FIELDS = 13
BUTTONS = 6
READOUTS = 12
FIGURES = 2


def _figure():
    """The plainest figure that draws something: one line, Bokeh's default tools."""
    from bokeh.plotting import figure

    fig = figure(height=260, sizing_mode="stretch_width", title="A figure")
    fig.line([0, 1, 2], [0, 1, 0])
    return fig


def figures_page(n: int = FIGURES) -> pn.viewable.Viewable:
    """The bare app and ``n`` figures."""
    return pn.Column(bare_page(), *(pn.pane.Bokeh(_figure()) for _ in range(n)))


def controls_page() -> pn.viewable.Viewable:
    """The bare app and the bucket timeline's number of labelled fields (with help) and buttons."""
    fields = [
        pn.widgets.TextInput(name=f"Setting {i}", value="1", description="What it sets.")
        for i in range(TEXT_FIELDS)
    ]
    buttons = [pn.widgets.Button(name=f"Action {i}") for i in range(BUTTONS)]
    return pn.Column(bare_page(), *fields, *buttons)


class StateInThePage(JSComponent):
    """A component that carries a widget's whole state to the page, which draws it."""

    settings = param.Dict(default={})
    bars = param.Dict(default={})
    sweep = param.Dict(default={})
    readouts = param.Dict(default={})
    # Draws a summary only: the server's cost does not depend on the drawing.
    _esm = """
    export function render({ model, el }) {
      const show = () => {
        el.textContent = Object.entries(model.readouts)
          .map(([k, v]) => k + ": " + v).join(" · ");
      };
      show();
      model.on("readouts", show);
    }
    """


def state_page() -> pn.viewable.Viewable:
    """The bare app and one component holding the bucket timeline's state, drawn by the page.

    The state is the real one of the default configuration: its settings, the
    bars the timeline draws, the sweep and the readouts' texts.
    """
    from widgets.bucket_timeline.component import BucketTimeline

    timeline = BucketTimeline()
    config = timeline.settings
    settings = {name: getattr(config, name) for name in config.param if name != "name"}
    settings = {k: v for k, v in settings.items() if isinstance(v, (int, float, str, bool))}
    state = StateInThePage(
        settings=settings,
        bars=timeline.state["bars"],
        sweep=timeline.state["sweep"],
        readouts={key: value for key, (value, _) in timeline.state["readouts"].items()},
    )
    return pn.Column(bare_page(), state)


def readouts_page() -> pn.viewable.Viewable:
    """The bare app and the bucket timeline's number of readouts, each one HTML pane."""
    readouts = [pn.pane.HTML(f"<b>Readout {i}</b> 1.00 ms") for i in range(READOUTS)]
    return pn.Column(bare_page(), *readouts)


PARTS = {
    "parts-one-figure": lambda: figures_page(1),
    "parts-two-figures": lambda: figures_page(FIGURES),
    "parts-controls": controls_page,
    "parts-readouts": readouts_page,
    "parts-state-in-page": state_page,
}
LABELS = {
    BARE: "bare app: one slider, one text",
    "/parts-one-figure": "bare app + 1 figure",
    "/parts-two-figures": f"bare app + {FIGURES} figures",
    "/parts-controls": f"bare app + {TEXT_FIELDS} labelled fields + {BUTTONS} buttons",
    "/parts-readouts": f"bare app + {READOUTS} HTML readouts",
    "/parts-state-in-page": "bare app + the bucket timeline's state in one component",
    "/bucket-timeline": "the bucket timeline, for comparison",
}


def report(cpu: dict, anatomies: dict) -> str:
    """A Markdown table: CPU per session, its ratio to the bare app's, and what the part adds."""
    bare = sum(cpu[BARE].values())
    lines = [
        "| page | CPU per session | × bare | added to the bare app | Bokeh models |",
        "|---|---|---|---|---|",
    ]
    for path, stages in cpu.items():
        total = sum(stages.values())
        added = "—" if path == BARE else f"{total - bare:.1f} ms ({(total - bare) / bare:.1f}×)"
        lines.append(
            f"| {LABELS.get(path, path)} | {total:.1f} ms | {total / bare:.1f} | {added} |"
            f" {anatomies[path].models} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9, help="sessions per page (median)")
    args = parser.parse_args(argv)
    paths = [BARE, *(f"/{name}" for name in PARTS), "/bucket-timeline"]
    cpu, anatomies = measure(paths, args.repeats, extra=PARTS)
    print(f"Stages summed: {', '.join(STAGES)}.\n")
    print(report(cpu, anatomies))
    return 0


if __name__ == "__main__":
    sys.exit(main())
