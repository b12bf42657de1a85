"""Copy link and Embed: the current settings as a URL, an iframe and a script tag."""

from __future__ import annotations

import html
from collections.abc import Callable
from urllib.parse import urlencode

import panel as pn
from bokeh.embed import server_document
from bokeh.models import Div

from ..model.settings import setting_names
from ..registry import WidgetSpec
from . import theme

_COPY_JS = """
// Write into the live region the status already has, so screen readers announce it.
const say = (message) => {
  const view = Bokeh.index.find_one(status);
  const root = view ? (view.shadow_el || view.el.shadowRoot) : null;
  const region = root ? root.querySelector('[role="status"]') : null;
  if (region) region.textContent = message;
};
const url = field.value;
if (navigator.clipboard && window.isSecureContext) {
  navigator.clipboard.writeText(url).then(
    () => say("Link copied."),
    () => say("Select the link above and copy it."),
  );
} else {
  say("Select the link above and copy it.");
}
"""


class ShareBar(pn.viewable.Viewer):
    """A link to the current settings, kept up to date, with copy and embed snippets.

    ``origin`` is the server as the browser reached it (``http://host:port``);
    the page that knows the request passes it. ``on_query``, if given, gets the
    query string after every change (a widget's own page puts it in the
    address bar, so the address bar is always a link to what is on screen).
    """

    def __init__(
        self,
        spec: WidgetSpec,
        view,
        origin: str,
        on_query: Callable[[str], None] | None = None,
    ):
        super().__init__()
        self.spec, self.view, self.on_query = spec, view, on_query
        self.origin = origin
        self.link = pn.widgets.TextInput(
            label="Link to these settings", sizing_mode="stretch_width", value=""
        )
        self.copy_button = pn.widgets.Button(label="Copy link", width=120)
        # A raw Bokeh Div keeps its markup, so the live region exists before any message.
        self.copy_status = Div(
            text='<div role="status" aria-live="polite" class="ol-hint"></div>',
            stylesheets=[theme.PAGE_CSS],
            margin=(0, 10),
        )
        self.embed_toggle = pn.widgets.Toggle(label="Embed", width=120, value=False)
        self.iframe_code = pn.widgets.TextAreaInput(
            label="Iframe snippet", sizing_mode="stretch_width", height=90
        )
        self.script_code = pn.widgets.TextAreaInput(
            label="Script tag snippet", sizing_mode="stretch_width", height=120
        )
        self.embed_panel = pn.Column(
            pn.pane.HTML(
                "<p class='ol-hint'>Paste one of these into a course page. The server must "
                "be started with <code>--allow-websocket-origin</code> set to the course "
                "site's host.</p>",
                stylesheets=[theme.PAGE_CSS],
                sizing_mode="stretch_width",
            ),
            self.iframe_code,
            self.script_code,
            visible=False,
            sizing_mode="stretch_width",
        )
        self.embed_toggle.param.watch(self._toggle_embed, "value")
        self.copy_button.js_on_click(
            args={"field": self.link, "status": self.copy_status}, code=_COPY_JS
        )
        view.settings.param.watch(lambda *_: self.update(), setting_names(view.settings))
        if hasattr(view, "param") and "preset" in view.param:
            view.param.watch(lambda *_: self.update(), "preset")
        self.update()

    def _toggle_embed(self, event) -> None:
        if event.new:
            self._write_snippets(self.spec.query_values(self.view.settings_values()))
        self.embed_panel.visible = event.new

    def update(self) -> None:
        """Rewrite the link, the snippets if they are shown, and (if synced) the page URL."""
        values = self.spec.query_values(self.view.settings_values())
        query = urlencode(values)
        self.link.value = f"{self.origin}/{self.spec.name}?{query}"
        # Hidden snippets are written when Embed opens: an edit need not send them.
        if self.embed_toggle.value:
            self._write_snippets(values)
        if self.on_query is not None:
            self.on_query(query)

    def _write_snippets(self, values: dict) -> None:
        url = f"{self.origin}/{self.spec.name}?{urlencode(values)}"
        self.iframe_code.value = (
            f'<iframe src="{html.escape(url)}" title="{html.escape(self.spec.title)}" '
            'style="width:100%;height:1200px;border:0" loading="lazy"></iframe>'
        )
        self.script_code.value = server_document(
            f"{self.origin}/{self.spec.name}", arguments=values
        ).strip()

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(
            theme.heading("Share"),
            pn.FlexBox(
                pn.Column(self.link, sizing_mode="stretch_width", styles={"flex": "1 1 260px"}),
                pn.Row(self.copy_button, self.embed_toggle, styles={"align-self": "flex-end"}),
                sizing_mode="stretch_width",
                flex_direction="row",
            ),
            self.copy_status,
            self.embed_panel,
            sizing_mode="stretch_width",
            css_classes=["ol-card"],
            margin=(12, 0, 0, 0),
        )
