"""Download a widget's data as CSV and its chart as PNG, from the page, offline."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence

import panel as pn
from bokeh.plotting import figure as Figure

# Bokeh draws the figure to a canvas already; ask its view for a PNG of that
# canvas and save it with a temporary link (the browser does it all).
_PNG_JS = """
const view = Bokeh.index.find_one(fig);
if (!view) return;
view.export("png").to_blob().then((blob) => {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = filename;
  document.body.appendChild(link);
  link.click();
  setTimeout(() => { URL.revokeObjectURL(link.href); link.remove(); }, 1000);
});
"""


def csv_text(readouts: Sequence[tuple[str, str]], columns: Mapping[str, Sequence[object]]) -> str:
    """Readouts as ``# label,value`` lines, then one table with a header row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for label, value in readouts:
        out.write("# ")
        writer.writerow([label, value])
    writer.writerow(list(columns))
    writer.writerows(zip(*columns.values(), strict=True))
    return out.getvalue()


def csv_button(filename: str, make_text) -> pn.widgets.FileDownload:
    """A "Download data (CSV)" button that builds the file when pressed."""
    return pn.widgets.FileDownload(
        callback=lambda: io.BytesIO(make_text().encode("utf-8")),
        filename=filename,
        label="Download data (CSV)",
        width=200,
    )


def png_button(fig: Figure, filename: str) -> pn.widgets.Button:
    """A "Download chart (PNG)" button for one figure."""
    button = pn.widgets.Button(label="Download chart (PNG)", width=200)
    button.js_on_click(args={"fig": fig, "filename": filename}, code=_PNG_JS)
    return button
