"""One widget placed on a course site's page: what the Sphinx and MkDocs integrations share.

A course page names a widget and its settings (URL keys) in one block; the
site build writes a static copy of the course beside the site's pages
(:data:`COPY_FOLDER`), holding each such block's state, and the block becomes
an iframe of that copy's widget page with the settings in its query string,
plus the copy's sizing script once per page.
"""

from __future__ import annotations

import html
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from widgets.page_settings import PAGE_KEYS, page_settings_from_query
from widgets.registry import WIDGETS

#: Where a site build writes the static copy, relative to the site's root.
COPY_FOLDER = "overlap-lab"
#: The copy's script that sizes each of its iframes to its content.
SIZING_SCRIPT = "embed.js"


class EmbedError(ValueError):
    """A block that names an unknown widget or a setting it does not take."""


@dataclass(frozen=True)
class EmbedBlock:
    """A widget and its settings as the page wrote them (URL keys to their texts)."""

    widget: str
    settings: tuple[tuple[str, str], ...] = ()
    #: The page's own keys (``theme: dark``), passed to the copy's page as they are.
    page: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, widget: str, settings: Mapping[str, object] | Iterable[tuple[str, object]]):
        """The block, checked as ``export --state`` checks an author's settings.

        Raises ``EmbedError`` naming an unknown widget or a key or value the widget's
        page would ignore (the words its page shows for a bad URL value). The page's own
        keys (``theme``) go to the page, not the widget's state.
        """
        from app.export.wanted import wanted_state

        name = widget.strip()
        if name not in WIDGETS:
            raise EmbedError(f"unknown widget “{name}” (known: {', '.join(WIDGETS)})")
        pairs = settings.items() if isinstance(settings, Mapping) else settings
        pairs = [(str(k).strip(), str(v).strip()) for k, v in pairs]
        page = tuple((k, v) for k, v in pairs if k in PAGE_KEYS)
        _, refused, _ = page_settings_from_query({k: [v] for k, v in page})
        if refused:
            raise EmbedError(refused[0])
        block = cls(name, tuple((k, v) for k, v in pairs if k not in PAGE_KEYS), page)
        if block.settings:
            try:
                wanted_state(block.state)
            except ValueError as exc:
                raise EmbedError(str(exc)) from None
        return block

    @property
    def title(self) -> str:
        """The widget's title: the iframe's accessible name."""
        return WIDGETS[self.widget].title

    @property
    def query(self) -> str:
        """The settings as the copy's page reads them from its address."""
        return urlencode(self.settings)

    @property
    def state(self) -> str:
        """The ``export --state`` text that precomputes this block (``WIDGET?key=value``)."""
        return f"{self.widget}?{self.query}" if self.settings else self.widget

    def html(self, root: str) -> str:
        """The iframe for a page ``root`` away from the site's root (``""``, ``"../"``).

        Its height is a first guess: the copy's sizing script (:func:`sizing_script`,
        once per page) gives it its content's.
        """
        src = f"{root}{COPY_FOLDER}/{self.widget}/index.html"
        query = urlencode(self.settings + self.page)
        src += f"?{query}" if query else ""
        return (
            f'<iframe src="{html.escape(src)}" title="{html.escape(self.title)}" '
            'data-overlap-lab loading="lazy" style="width:100%;height:640px;border:0"></iframe>'
        )


def sizing_script(root: str) -> str:
    """The script tag that sizes every iframe of the copy on a page ``root`` from the root."""
    return f'<script src="{html.escape(root)}{COPY_FOLDER}/{SIZING_SCRIPT}" defer></script>'


def root_of(page_path: str) -> str:
    """The relative path from a page (its URL path within the site) to the site's root.

    ``"index.html"`` → ``""``; ``"lessons/intro.html"`` → ``"../"``;
    ``"lessons/intro/"`` (a folder page) → ``"../../"``.
    """
    folder = posixpath.dirname(page_path)
    depth = len([part for part in folder.split("/") if part])
    return "../" * depth


def parse_block_text(text: str) -> list[tuple[str, str]]:
    """``key: value`` lines (blank lines and ``#`` comments skipped), in order.

    Raises ``EmbedError`` on a line that is not ``key: value``.
    """
    pairs = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = stripped.partition(":")
        if not sep or not key.strip():
            raise EmbedError(f"“{stripped}” is not a “key: value” line")
        pairs.append((key.strip(), value.strip()))
    return pairs
