"""A course author's own settings for a static copy: ``export --state 'WIDGET?KEY=VALUE&…'``.

Each names a widget and a query as its page's address would carry it; the
copy then holds that state (and its axes) on the widget's page, so that a
course page may embed ``WIDGET/index.html?KEY=VALUE&…``. The query is read
by the registry exactly as a live page reads its address; what a live page
would ignore with a notice is refused here, naming it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qs

from widgets.registry import WIDGETS


def wanted_state(text: str) -> tuple[str, dict[str, Any]]:
    """``(widget, settings)`` for ``WIDGET?KEY=VALUE&…``; ValueError naming what is wrong."""
    name, _, query = text.strip().partition("?")
    if name not in WIDGETS:
        raise ValueError(f"{text!r}: no widget {name!r} (widgets: {', '.join(WIDGETS)})")
    if not query:
        raise ValueError(f"{text!r}: no settings after {name!r} (WIDGET?KEY=VALUE&...)")
    settings, notices = WIDGETS[name].parse(parse_qs(query, keep_blank_values=True))
    if notices:
        raise ValueError(f"{text!r}: {' '.join(notices)}")
    return name, settings


def wanted_states(texts: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """Each ``--state`` by widget name, in the order given."""
    found: dict[str, list[dict[str, Any]]] = {}
    for text in texts:
        name, settings = wanted_state(text)
        found.setdefault(name, []).append(settings)
    return found
