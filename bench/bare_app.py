"""Reference Panel apps the benchmarks compare overlap-lab against.

``/bare``: one FloatSlider and one Markdown text showing its value, the
smallest interactive Panel app there is.

``/naive``: the usual way to animate a Panel app, which overlap-lab's design
avoids: a Bokeh figure with a Span whose location the server moves from a
``pn.state.add_periodic_callback`` at 30 Hz while a Play toggle is on. Every
frame is computed in Python and sent to the browser as a document patch.

Run with ``python bench/bare_app.py --port N`` (or ``python -m bench.bare_app``).
"""

from __future__ import annotations

import argparse
import time

import panel as pn
from bokeh.models import Range1d, Span
from bokeh.plotting import figure

#: Frames per second of the naive animation.
NAIVE_HZ = 30
#: Model seconds the naive playhead covers before it wraps around.
NAIVE_HORIZON = 20.0


def bare_page() -> pn.viewable.Viewable:
    """One slider and one text that shows its value."""
    slider = pn.widgets.FloatSlider(name="Value", start=0.0, end=100.0, step=1.0, value=50.0)
    text = pn.pane.Markdown(f"Slider value is {slider.value:.2f}")

    def show(event) -> None:
        text.object = f"Slider value is {event.new:.2f}"

    slider.param.watch(show, "value")
    return pn.Column(slider, text)


def naive_page() -> pn.viewable.Viewable:
    """A playhead moved by the server 30 times a second while Play is on."""
    fig = figure(height=300, width=600, x_range=Range1d(0, NAIVE_HORIZON), y_range=Range1d(0, 1))
    fig.line([0, NAIVE_HORIZON], [0.2, 0.8], line_width=3)
    span = Span(location=0.0, dimension="height", line_color="#222222", line_width=2)
    fig.add_layout(span)
    toggle = pn.widgets.Toggle(name="Play", button_type="primary", width=90)
    elapsed = pn.pane.Markdown("Elapsed time: 0.00 s")
    state = {"callback": None, "t0": 0.0, "start": 0.0}

    def tick() -> None:
        t = (state["start"] + time.monotonic() - state["t0"]) % NAIVE_HORIZON
        span.location = t
        elapsed.object = f"Elapsed time: {t:.2f} s"

    def toggled(event) -> None:
        if event.new:
            toggle.name = "Pause"
            state["t0"] = time.monotonic()
            state["callback"] = pn.state.add_periodic_callback(tick, period=1000 // NAIVE_HZ)
        else:
            toggle.name = "Play"
            if state["callback"] is not None:
                state["callback"].stop()
                state["callback"] = None
            state["start"] = span.location

    toggle.param.watch(toggled, "value")
    return pn.Column(toggle, elapsed, pn.pane.Bokeh(fig))


def main(argv: list[str] | None = None) -> None:
    """Serve ``/bare`` and ``/naive`` on ``--port`` until stopped."""
    parser = argparse.ArgumentParser(description="Serve the reference apps for the benchmarks.")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument(
        "--allow-websocket-origin", action="append", default=[], help="behind a proxy: its host"
    )
    parser.add_argument("--use-xheaders", action="store_true", help="behind a proxy")
    args = parser.parse_args(argv)
    pn.extension(inline=False)
    pn.serve(
        {"bare": bare_page, "naive": naive_page},
        port=args.port,
        address="localhost",
        websocket_origin=[
            f"localhost:{args.port}",
            f"127.0.0.1:{args.port}",
            *args.allow_websocket_origin,
        ],
        use_xheaders=args.use_xheaders,
        # The proxy's health check, as the app's own server answers it.
        liveness=True,
        show=False,
        title="bench reference",
        # Bokeh's server takes these under their full names (short ones are ignored).
        unused_session_lifetime_milliseconds=15_000,
        check_unused_sessions_milliseconds=5_000,
    )


if __name__ == "__main__":
    main()
