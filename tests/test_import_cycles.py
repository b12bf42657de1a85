"""No import circles among the product's modules.

Every import counts, at module level or inside a function: a lazy import that
closes a circle still ties two modules into one concept, which is what this
test is for. Imports under ``if TYPE_CHECKING:`` count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "widgets", "lessons", "traces")


def module_name(path: Path) -> str:
    """``widgets/model/ranks.py`` -> ``widgets.model.ranks`` (a package is its ``__init__``)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def product_modules() -> dict[str, Path]:
    """Every Python module of the product, by dotted name."""
    return {
        module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")
    }


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The product modules that ``name`` imports, resolved to modules that exist."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join([*base, node.module] if node.module else base)
            else:
                prefix = node.module or ""
            # ``from pkg import mod`` imports the module pkg.mod where there is one.
            targets = [f"{prefix}.{alias.name}" for alias in node.names] + [prefix]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the product modules it imports (a package's ``__init__`` is left out as a
    target when the importer lies inside that package, since Python runs it first anyway)."""
    modules = product_modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = imported_modules(name, path, known)
        graph[name] = {t for t in targets if not name.startswith(t + ".")}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles() -> None:
    found = circles(import_graph())
    assert found == [], "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_circle_check_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]


def test_relative_imports_resolve_to_modules(tmp_path: Path) -> None:
    known = {"widgets.model.buckets", "widgets.model.buckets.config", "widgets.model.settings"}
    source = tmp_path / "config.py"
    source.write_text(
        "from ..settings import setting\nfrom . import config\n"
        "def f():\n    from widgets.model.buckets import presets\n",
        encoding="utf-8",
    )
    found = imported_modules("widgets.model.buckets.sweep", source, known)
    assert found == {
        "widgets.model.settings",
        "widgets.model.buckets.config",
        "widgets.model.buckets",
    }


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_has_modules(package: str) -> None:
    assert any(name.split(".")[0] == package for name in product_modules())
