"""Mutation testing: ``python -m bench.mutation PATH...``.

Each module is parsed, and every mutation point (an arithmetic, comparison or
boolean operator, a number, a ``True``/``False``, a ``not``, a unary minus, a
string that is not a docstring or a parameter's ``doc``) is changed one at a
time. For each mutant, the fast tests that import the module (never
``tests/ui``) run against a copy of
the repository holding the mutant; a mutant is killed when they fail or time
out. Surviving mutants are printed, and the run ends with
``killed K of N (P%)``, where N leaves out the mutants listed in
``bench/mutation_equivalent.txt`` (``path:line:mutation  reason``) as
equivalent: no test could tell them from the original.

A small AST mutator is used rather than mutmut: mutmut 3 rewrites every module
into trampolines under its own ``mutants/`` tree and needs its own test layout,
while this one only swaps one file in a copy, so the tests run unchanged, and
forking a process that has already imported Panel, Bokeh and numpy makes each
mutant cost only its tests.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EQUIVALENT = Path(__file__).with_name("mutation_equivalent.txt")
COPIED = ("app", "widgets", "lessons", "traces", "tests", "pyproject.toml")

_BINOPS = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
}
_CMPOPS = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}


@dataclass(frozen=True)
class Mutant:
    """One change to one module: where, what, and the whole mutated source."""

    path: str
    line: int
    change: str
    source: str

    @property
    def key(self) -> str:
        return f"{self.path}:{self.line}:{self.change}"


def _docstring_ids(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
        # ``doc=`` of a parameter is help text, like a docstring.
        if isinstance(node, ast.keyword) and node.arg == "doc":
            ids.update(id(n) for n in ast.walk(node.value))
        # A string alone as a statement documents the line above it (an attribute).
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            ids.add(id(node.value))
    return ids


def _annotation_ids(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        notes = []
        if isinstance(node, ast.AnnAssign):
            notes.append(node.annotation)
        if isinstance(node, ast.arg) and node.annotation is not None:
            notes.append(node.annotation)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
            notes.append(node.returns)
        for note in notes:
            ids.update(id(n) for n in ast.walk(note))
    return ids


def _points(tree: ast.AST) -> Iterator[tuple[ast.AST, str, object]]:
    """Every mutation point: (node, description, how to change it)."""
    skip = _docstring_ids(tree) | _annotation_ids(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _BINOPS:
            new = _BINOPS[type(node.op)]
            yield node, f"{type(node.op).__name__}->{new.__name__}", ("op", new)
        elif isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                new = _CMPOPS[type(op)]
                yield node, f"{type(op).__name__}->{new.__name__}", ("cmp", i, new)
        elif isinstance(node, ast.BoolOp):
            new = ast.Or if isinstance(node.op, ast.And) else ast.And
            yield node, f"{type(node.op).__name__}->{new.__name__}", ("op", new)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
            yield node, f"drop {type(node.op).__name__}", ("unwrap",)
        elif isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                yield node, f"{v}->{not v}", ("const", not v)
            elif isinstance(v, int | float) and not isinstance(v, complex):
                yield node, f"{v!r}->{v + 1!r}", ("const", v + 1)
            elif isinstance(v, str):
                new = "XX" + v + "XX"
                yield node, f"{v[:20]!r}->'XX..XX'", ("const", new)
        elif isinstance(node, ast.IfExp):
            yield node, "negate condition", ("negate_test",)


def _apply(node: ast.AST, how: tuple) -> ast.AST | None:
    """Change ``node`` in place; return a replacement node when it must be swapped out."""
    kind = how[0]
    if kind == "op":
        node.op = how[1]()
    elif kind == "cmp":
        node.ops[how[1]] = how[2]()
    elif kind == "const":
        node.value = how[1]
    elif kind == "unwrap":
        return node.operand
    elif kind == "negate_test":
        node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
    return None


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST):
        self.target, self.replacement = target, replacement

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return self.replacement
        return self.generic_visit(node)


def mutants(path: Path) -> list[Mutant]:
    """Every single-point mutant of the module at ``path``."""
    text = path.read_text(encoding="utf-8")
    rel = str(path.resolve().relative_to(REPO))
    count = sum(1 for _ in _points(ast.parse(text)))
    out = []
    for k in range(count):
        tree = ast.parse(text)  # a fresh tree per mutant
        node, change, how = list(_points(tree))[k]
        replacement = _apply(node, how)
        if replacement is not None:
            tree = _Replace(node, replacement).visit(tree)
        ast.fix_missing_locations(tree)
        source = ast.unparse(tree)
        out.append(Mutant(rel, getattr(node, "lineno", 0), change, source))
    return out


def equivalent_keys() -> set[str]:
    """Mutants declared equivalent: each non-comment line up to its first two spaces
    (a string mutant's key has single spaces in it)."""
    if not EQUIVALENT.exists():
        return set()
    keys = set()
    for line in EQUIVALENT.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keys.add(line.split("  ", 1)[0])
    return keys


def tests_for(rel: str, root: Path) -> list[str]:
    """Fast test files that import the module (by dotted path), else that name its file stem."""
    stem = Path(rel).stem
    dotted = rel.removesuffix(".py").replace("/", ".")
    fast = [
        t
        for t in sorted((root / "tests").rglob("test_*.py"))
        if "ui" not in t.relative_to(root / "tests").parts
    ]
    texts = {t: t.read_text(encoding="utf-8") for t in fast}
    # The module's own tests (by import) when it has them, else any that name it.
    found = [str(t) for t in fast if dotted in texts[t]]
    return found or [str(t) for t in fast if stem in texts[t]]


def _run_tests(root: Path, tests: list[str], timeout: float) -> str:
    """Run ``tests`` in a forked child against the copy at ``root``: passed, failed or timeout."""
    pid = os.fork()
    if pid == 0:  # the child: import the project from the copy, run pytest, exit
        try:
            os.chdir(root)
            sys.path.insert(0, str(root))
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            import pytest
            from hypothesis import settings

            # The same examples for every mutant, and no deadline on a loaded machine.
            settings.register_profile("mutation", derandomize=True, deadline=None, database=None)
            settings.load_profile("mutation")
            code = pytest.main(
                [
                    *tests,
                    "-x",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "-p",
                    "no:randomly",
                    "-o",
                    "addopts=",
                    "--timeout",
                    str(int(timeout) + 5),
                ]
            )
            os._exit(int(code))
        except BaseException:
            os._exit(3)
    deadline = time.monotonic() + timeout
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return "passed" if os.waitstatus_to_exitcode(status) == 0 else "failed"
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
    except BaseException:  # interrupted: never leave the child running
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "timeout"


def main(argv: list[str] | None = None) -> int:
    """Mutate each module, run its fast tests per mutant, report survivors and the score."""
    parser = argparse.ArgumentParser(prog="python -m bench.mutation", description=__doc__)
    parser.add_argument("paths", nargs="+", type=Path, help="modules to mutate")
    parser.add_argument(
        "--tests",
        nargs="+",
        default=None,
        help="test files to run per mutant (default: the fast tests that import the module)",
    )
    args = parser.parse_args(argv)
    sys.dont_write_bytecode = True
    # A terminated run stops its child and removes its copy, like Ctrl-C.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    # Import the heavy dependencies once, so each forked child starts warm.
    import numpy  # noqa: F401
    import panel  # noqa: F401
    import param  # noqa: F401
    import pytest  # noqa: F401

    equivalent = equivalent_keys()
    total_killed = total = 0
    with tempfile.TemporaryDirectory(prefix="overlap-lab-mutation-") as tmp:
        root = Path(tmp)
        for name in COPIED:
            src = REPO / name
            if src.is_dir():
                shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(src, root / name)
        for path in args.paths:
            rel = str(path.resolve().relative_to(REPO))
            tests = [str(root / t) for t in args.tests] if args.tests else tests_for(rel, root)
            original = (root / rel).read_text(encoding="utf-8")
            start = time.monotonic()
            if _run_tests(root, tests, timeout=600) != "passed":
                print(f"{rel}: the tests fail on the unmutated code; skipped", flush=True)
                continue
            timeout = 3 * (time.monotonic() - start) + 10
            killed = counted = 0
            try:
                for m in mutants(path):
                    if m.key in equivalent:
                        continue
                    (root / rel).write_text(m.source, encoding="utf-8")
                    result = _run_tests(root, tests, timeout)
                    counted += 1
                    if result == "passed":
                        print(f"survived {m.key}", flush=True)
                    else:
                        killed += 1
            finally:
                (root / rel).write_text(original, encoding="utf-8")
            pct = 100 * killed / counted if counted else 100.0
            print(f"{rel}: killed {killed} of {counted} ({pct:.0f}%)", flush=True)
            total_killed += killed
            total += counted
    pct = 100 * total_killed / total if total else 100.0
    print(f"killed {total_killed} of {total} ({pct:.0f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
