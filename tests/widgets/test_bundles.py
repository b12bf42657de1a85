"""Each widget's committed browser bundle is built from the sources as they are now."""

from __future__ import annotations

from pathlib import Path

import pytest

from widgets.common import bundles
from widgets.common.component import WidgetComponent
from widgets.registry import WIDGETS

#: The size each widget's bundle must stay within, minified.
MAX_BUNDLE_BYTES = 100_000

ENTRIES = bundles.entries()


def test_every_browser_drawn_widget_has_an_entry_script() -> None:
    for spec in WIDGETS.values():
        cls = spec.view_class()
        if issubclass(cls, WidgetComponent):
            assert Path(cls._bundle) == bundles.bundle_of(cls.entry), spec.name


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.stem for e in ENTRIES])
def test_the_committed_bundle_is_built_from_the_current_sources(entry: Path) -> None:
    bundle = bundles.bundle_of(entry)
    assert bundle.is_file(), f"{bundle} is missing: python -m widgets.common.bundles --build"
    assert bundles.bundled_digest(bundle) == bundles.source_digest(entry), (
        f"{bundle.name} is older than its sources: python -m widgets.common.bundles --build"
    )


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.stem for e in ENTRIES])
def test_a_bundle_stays_small(entry: Path) -> None:
    size = bundles.bundle_of(entry).stat().st_size
    assert size <= MAX_BUNDLE_BYTES, f"{entry.stem}: {size} bytes"


def test_the_digest_covers_the_shared_library_and_the_widget(tmp_path, monkeypatch) -> None:
    widget = tmp_path / "demo"
    library = tmp_path / "js"
    widget.mkdir()
    library.mkdir()
    entry = widget / "demo.js"
    entry.write_text("export const a = 1;\n")
    (library / "rules.js").write_text("export const b = 2;\n")
    monkeypatch.setattr(bundles, "WIDGETS", tmp_path)
    monkeypatch.setattr(bundles, "COMMON_JS", library)
    before = bundles.source_digest(entry)
    bundles.bundle_of(entry).write_text(bundles.HEADER.format(name="demo", digest=before) + "x")
    assert bundles.bundled_digest(bundles.bundle_of(entry)) == before
    (library / "rules.js").write_text("export const b = 3;\n")
    assert bundles.source_digest(entry) != before
    (library / "rules.js").write_text("export const b = 2;\n")
    assert bundles.source_digest(entry) == before
    (widget / "demo.css").write_text("p { color: red }\n")
    assert bundles.source_digest(entry) != before
