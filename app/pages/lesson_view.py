"""A lesson on the page: its prose as static HTML, with its widgets placed in it.

One component per lesson page holds the lesson's HTML (rendered from the
Markdown once per process) and its widget components as children; the page
puts each widget where its block stands and answers a click on an experiment
button with one message. The widgets are the only live parts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import param
from panel.custom import Children, JSComponent

from . import theme


class LessonView(JSComponent):
    """A lesson's HTML with its widgets in place; ``on_experiment(i)`` runs experiment i."""

    html = param.String(default="", doc="The lesson as HTML, with a slot for each widget.")
    widgets = Children(default=[], doc="The lesson's widgets, in the order of their slots.")

    _stylesheets: ClassVar[list[str]] = [theme.PROSE_CSS]

    _esm = """
    export function render({ model, el }) {
      const root = document.createElement("div");
      root.className = "ol-lesson";
      // Our own server's HTML, rendered from the lesson's Markdown with raw HTML off.
      root.innerHTML = model.html;
      const widgets = model.get_child("widgets");
      for (const slot of root.querySelectorAll("[data-widget]")) {
        const view = widgets[Number(slot.dataset.widget)];
        if (view) slot.append(view);
      }
      // The lesson sits in a shadow root, where the browser does not follow "#anchor"
      // by itself: scroll to a heading named by the address or by a link on this page.
      const show = (hash) => {
        const id = decodeURIComponent(hash.slice(1));
        const target = id && root.querySelector(`[id="${CSS.escape(id)}"]`);
        if (target) target.scrollIntoView({ block: "start" });
        return Boolean(target);
      };
      root.addEventListener("click", (event) => {
        const button = event.target.closest("button[data-experiment]");
        if (button) model.send_msg({ experiment: Number(button.dataset.experiment) });
        const link = event.target.closest("a[href]");
        const url = link && new URL(link.href, location.href);
        if (url && url.pathname === location.pathname && url.hash && show(url.hash)) {
          event.preventDefault();
          history.replaceState(null, "", url.hash);
        }
      });
      el.append(root);
      if (location.hash) {
        // Again once the widgets above the heading have drawn, unless the reader moved.
        let moved = false;
        const stop = () => { moved = true; };
        for (const kind of ["wheel", "touchstart", "keydown"]) {
          window.addEventListener(kind, stop, { once: true, passive: true });
        }
        requestAnimationFrame(() => show(location.hash));
        setTimeout(() => { if (!moved) show(location.hash); }, 1200);
      }
    }
    """

    def __init__(self, on_experiment: Callable[[int], None], **params):
        super().__init__(**params)
        self._on_experiment = on_experiment

    def _handle_msg(self, msg: object) -> None:
        if isinstance(msg, dict) and type(msg.get("experiment")) is int:
            self._on_experiment(msg["experiment"])
