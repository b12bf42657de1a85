"""Settings of the page around the widgets, read from the same address as a widget's own.

A page-level setting is no widget's: a link to a widget's settings does not carry it, a
widget's page does not call it unknown, and a static copy reads it as a live page does. Its
name is its URL key, declared once here.
"""

from __future__ import annotations

from collections.abc import Mapping

import param

from .common.parsing import parse_setting
from .model.settings import setting, setting_names


class PageSettings(param.Parameterized):
    """The page's own settings (URL keys any widget or lesson page takes)."""

    theme = param.Selector(
        default="auto",
        objects=["auto", "light", "dark"],
        label="Theme",
        doc=(
            "Light or dark colours: auto follows the browser's preference "
            "(prefers-color-scheme), light or dark holds one, as a course page with its "
            "own dark theme asks for."
        ),
        metadata=setting(),
    )


#: The page's URL keys, in declaration order.
PAGE_KEYS: tuple[str, ...] = tuple(setting_names(PageSettings))


def page_settings_from_query(
    query: Mapping[str, list[bytes] | list[str]],
) -> tuple[dict[str, object], list[str], dict[str, list[bytes] | list[str]]]:
    """The page's settings from a query, a notice for each value ignored, and the rest.

    The rest is every key that is not the page's (a widget's own settings).
    """
    values: dict[str, object] = {}
    notices: list[str] = []
    rest = {k: v for k, v in query.items() if k not in PAGE_KEYS}
    for key in PAGE_KEYS:
        if key not in query or not query[key]:
            continue
        raw = query[key][-1]
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        try:
            values[key] = parse_setting(text, PageSettings.param[key])
        except ValueError as exc:
            notices.append(f"Ignored {key}={text[:40]}: {exc}")
    return values, notices, rest


def theme_choices() -> list[str]:
    """The theme key's values."""
    return [str(o) for o in PageSettings.param["theme"].objects]
