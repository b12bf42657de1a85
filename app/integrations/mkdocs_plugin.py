"""The MkDocs plugin: a fenced block places a widget; the build writes the static copy.

In ``mkdocs.yml``::

    plugins:
      - search
      - overlap-lab:
          live: https://widgets.example.org   # optional: the live lab, linked from the copy

In a page::

    ```overlap-lab bucket-timeline
    preset: Latency-bound
    layers_per_bucket: 2
    ```
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.config import config_options
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin

from .embed_block import EmbedBlock, EmbedError, parse_block_text, root_of, sizing_script
from .site_copy import write_copy

#: A fenced block ```` ```overlap-lab NAME ```` ... ```` ``` ```` at the start of a line.
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*overlap-lab[ \t]+(?P<widget>[\w-]+)[ \t]*\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.M | re.S,
)


class OverlapLabPlugin(BasePlugin):
    """Turns ``overlap-lab`` blocks into iframes of the static copy written after the build."""

    config_scheme = (("live", config_options.Type(str, default="")),)

    def on_config(self, config):
        self._blocks: list[EmbedBlock] = []
        return config

    def on_page_markdown(self, markdown: str, page, config, files) -> str:
        """Each block as an iframe (and the copy's sizing script once on the page)."""
        root = root_of(page.url)
        found = 0

        def replace(match: re.Match) -> str:
            nonlocal found
            line = markdown.count("\n", 0, match.start()) + 1
            try:
                block = EmbedBlock.of(match["widget"], parse_block_text(match["body"]))
            except EmbedError as exc:
                raise PluginError(f"{page.file.src_path}:{line}: overlap-lab: {exc}") from None
            self._blocks.append(block)
            found += 1
            script = sizing_script(root) if found == 1 else ""
            return f"{match['indent']}{block.html(root)}{script}\n"

        return FENCE.sub(replace, markdown)

    def on_post_build(self, config) -> None:
        """Write the static copy into the built site."""
        write_copy(Path(config["site_dir"]), self._blocks, self.config["live"])
