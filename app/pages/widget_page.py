"""A widget on its own page: preset from its URL keys, with its share bar."""

from __future__ import annotations

import html
from collections.abc import Mapping

import panel as pn

from widgets.page_settings import page_settings_from_query
from widgets.registry import WidgetSpec

from .page import page


def widget_page(
    spec: WidgetSpec, query: Mapping, origin: str, own_page: bool = True
) -> pn.viewable.Viewable:
    """Widget ``spec`` preset from ``query`` (its URL keys), unknown keys said in a notice.

    ``origin`` is this server as the browser reached it, for the share links;
    ``own_page`` is False in a script-tag embed, whose address is the course's own.
    """
    # The page's own keys (its theme) are read by the page itself; only a bad value is said.
    _, page_notices, query = page_settings_from_query(query)
    kwargs, notices = spec.parse(query)
    view = spec.create(**kwargs)
    view.show_notices(page_notices + notices)
    view.enable_share(origin, own_page=own_page)
    return page(spec.title, html.escape(spec.summary), view)
