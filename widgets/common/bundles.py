"""Each widget's browser bundle: its own script and the shared library, in one file.

A widget folder ``widgets/<name>/`` holds its entry script ``<name>.js``; esbuild
bundles it with ``widgets/common/js`` into ``<name>.bundle.js``, minified. The
bundles are committed, so installing needs no node. The class page's script
(``app/classroom/js/class.js``, its modules beside it) is bundled the same way. The first line of a
bundle records the SHA-256 of the sources it was built from; a test fails when
the sources have changed since (rebuild with ``--build``).

    python -m widgets.common.bundles --build   # needs `npm install` (esbuild) once
    python -m widgets.common.bundles --check
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

WIDGETS = Path(__file__).resolve().parents[1]
COMMON_JS = Path(__file__).resolve().parent / "js"
REPO = WIDGETS.parent
HEADER = "/* overlap-lab bundle {name}; sources sha256 {digest} */\n"
SOURCE_SUFFIXES = (".js", ".css")
#: Page scripts bundled like a widget's (inlined into their pages by the server).
PAGE_ENTRIES = (REPO / "app" / "classroom" / "js" / "class.js",)


def entries() -> list[Path]:
    """Every script with a bundle: each widget's (``widgets/<name>/<name>.js``), the pages'."""
    found = sorted(p / f"{p.name}.js" for p in WIDGETS.iterdir() if (p / f"{p.name}.js").is_file())
    return [*found, *PAGE_ENTRIES]


def bundle_of(entry: Path) -> Path:
    """Where the bundle of an entry script lives (beside it)."""
    return entry.with_name(f"{entry.stem}.bundle.js")


#: Entries that draw other widgets (the notebook module draws all four): their folders
#: are sources too.
DRAWS_EVERY_WIDGET = (WIDGETS / "notebook" / "notebook.js",)


def sources(entry: Path) -> list[Path]:
    """The files a bundle is built from: its entry folder's scripts and the shared library
    (and every widget's folder, for an entry that draws every widget)."""
    found = [*entry.parent.iterdir(), *COMMON_JS.iterdir()]
    if entry in DRAWS_EVERY_WIDGET:
        others = [e.parent for e in entries() if e not in DRAWS_EVERY_WIDGET + PAGE_ENTRIES]
        found += [p for folder in others for p in folder.iterdir()]
    return sorted(
        p for p in found if p.suffix in SOURCE_SUFFIXES and not p.name.endswith(".bundle.js")
    )


def source_digest(entry: Path) -> str:
    """SHA-256 over the sources' names and contents."""
    digest = hashlib.sha256()
    for path in sources(entry):
        digest.update(_source_name(path).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes().replace(b"\r\n", b"\n"))
        digest.update(b"\0")
    return digest.hexdigest()


def _source_name(path: Path) -> str:
    # Named from widgets/ as the widgets' bundles have always recorded; a page's from the repo.
    root = WIDGETS if path.is_relative_to(WIDGETS) else WIDGETS.parent
    return path.relative_to(root).as_posix()


def bundled_digest(bundle: Path) -> str | None:
    """The source digest a bundle records, or None if it records none."""
    if not bundle.is_file():
        return None
    with bundle.open(encoding="utf-8") as fh:
        first = fh.readline()
    marker = "sources sha256 "
    if marker not in first:
        return None
    return first.split(marker, 1)[1].split()[0]


def stale() -> list[Path]:
    """Entries whose bundle is missing or older than its sources."""
    return [e for e in entries() if bundled_digest(bundle_of(e)) != source_digest(e)]


def esbuild() -> str:
    """The esbuild binary `npm install` put in node_modules, or one on PATH."""
    local = REPO / "node_modules" / ".bin" / "esbuild"
    found = str(local) if local.exists() else shutil.which("esbuild")
    if found is None:
        raise SystemExit("esbuild is not installed: run `npm install` in the repository first")
    return found


def build(entry: Path) -> Path:
    """Bundle one entry (ES module, minified, CSS as text) and stamp its source digest."""
    out = bundle_of(entry)
    result = subprocess.run(
        [
            esbuild(),
            str(entry),
            "--bundle",
            "--format=esm",
            "--minify",
            "--target=es2020",
            "--loader:.css=text",
            "--legal-comments=none",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    header = HEADER.format(name=entry.stem, digest=source_digest(entry))
    out.write_text(header + result.stdout, encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="store_true", help="rebuild every bundle")
    parser.add_argument("--check", action="store_true", help="fail if a bundle is stale")
    args = parser.parse_args(argv)
    if args.build:
        for entry in entries():
            out = build(entry)
            print(f"{out.relative_to(REPO)}: {out.stat().st_size / 1024:.1f} kB")
    old = stale()
    for entry in old:
        print(f"stale: {bundle_of(entry).relative_to(REPO)} (run with --build)")
    return 1 if (args.check and old) else 0


if __name__ == "__main__":
    sys.exit(main())
