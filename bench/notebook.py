"""A widget in a notebook: what one queue lab adds to a saved notebook, anywidget against
Panel.

    python -m bench.notebook

One cell showing the queue lab (arrival 2), run by ``nbclient`` in a fresh kernel
per path: the notebook widget (``widgets.notebook``), and the Panel component after
``pn.extension(inline=True)`` (Panel's offline path) and after ``pn.extension()``
(its scripts from public CDNs, not counted). Bytes are the cells' outputs and the
notebook's saved widget state, as JSON. Target: the offline notebook widget
<= 0.05x Panel's offline path.
"""

from __future__ import annotations

import argparse
import json

from bench.report import fmt_ratio, table
from bench.servers import REPO

PATHS = {
    "notebook widget (anywidget)": ["from widgets.notebook import QueueLab\nQueueLab(arrival=2)"],
    "Panel, pn.extension(inline=True)": [
        "import panel as pn\npn.extension(inline=True)",
        "from widgets import QueueLab\nQueueLab(arrival=2)",
    ],
    "Panel, pn.extension() (CDN scripts not counted)": [
        "import panel as pn\npn.extension()",
        "from widgets import QueueLab\nQueueLab(arrival=2)",
    ],
}


def saved_bytes(cells: list[str]) -> int:
    """Bytes a run of ``cells`` adds to a notebook: outputs and saved widget state."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    NotebookClient(notebook, kernel_name="python3", timeout=300, cwd=str(REPO)).execute()
    outputs = sum(len(json.dumps(c.outputs)) for c in notebook.cells)
    return outputs + len(json.dumps(notebook.metadata.get("widgets", {})))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    sizes = {name: saved_bytes(cells) for name, cells in PATHS.items()}
    anywidget, inline, cdn = sizes.values()
    rows = [(name, f"{size / 1024:.0f} kB") for name, size in sizes.items()]
    print(table(rows, ("one queue lab in a saved notebook", "bytes")))
    print(f"notebook widget / Panel offline: {fmt_ratio(anywidget / inline)} (target <= 0.05x)")
    print(f"notebook widget / Panel with CDN scripts: {fmt_ratio(anywidget / cdn)}")


if __name__ == "__main__":
    main()
