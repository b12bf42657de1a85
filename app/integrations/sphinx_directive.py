"""The Sphinx extension (and Jupyter Book 1's): a directive places a widget; the build
writes the static copy.

In ``conf.py``: ``extensions = ["app.integrations.sphinx_directive"]`` (Jupyter Book 1:
``sphinx: extra_extensions: [app.integrations.sphinx_directive]`` in ``_config.yml``),
and optionally ``overlap_lab_live = "https://widgets.example.org"``. In a page
(reStructuredText)::

    .. overlap-lab:: bucket-timeline

       preset: Latency-bound
       layers_per_bucket: 2

or MyST Markdown::

    ```{overlap-lab} bucket-timeline
    preset: Latency-bound
    layers_per_bucket: 2
    ```
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from .embed_block import EmbedBlock, EmbedError, parse_block_text, root_of, sizing_script
from .site_copy import write_copy


class OverlapLabDirective(SphinxDirective):
    """``.. overlap-lab:: NAME`` with ``key: value`` lines: the widget as an iframe."""

    required_arguments = 1
    has_content = True

    def run(self) -> list[nodes.Node]:
        try:
            block = EmbedBlock.of(self.arguments[0], parse_block_text("\n".join(self.content)))
        except EmbedError as exc:
            raise self.error(f"overlap-lab: {exc}") from None
        env = self.env
        blocks = _blocks(env).setdefault(env.docname, [])
        root = root_of(self.env.app.builder.get_target_uri(env.docname))
        markup = block.html(root) + (sizing_script(root) if not blocks else "")
        blocks.append(block)
        return [nodes.raw("", markup, format="html")]


def _blocks(env) -> dict[str, list[EmbedBlock]]:
    if not hasattr(env, "overlap_lab_blocks"):
        env.overlap_lab_blocks = {}
    return env.overlap_lab_blocks


def _purge(app: Sphinx, env, docname: str) -> None:
    _blocks(env).pop(docname, None)


def _merge(app: Sphinx, env, docnames: set[str], other) -> None:
    for docname in docnames:
        if docname in _blocks(other):
            _blocks(env)[docname] = _blocks(other)[docname]


def _write_copy(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    blocks = [b for found in _blocks(app.env).values() for b in found]
    write_copy(Path(app.outdir), blocks, app.config.overlap_lab_live)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directive, the live lab's address and the copy written after the build."""
    app.add_config_value("overlap_lab_live", "", "html", [str])
    app.add_directive("overlap-lab", OverlapLabDirective)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", _write_copy)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
