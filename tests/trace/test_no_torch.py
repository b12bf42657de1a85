"""The server, the widgets and every trace module but the recorder run without importing torch.

torch is the optional ``trace`` extra, large and slow to import; a learner's
server must never pay for it, and must work where it is not installed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORDER = ROOT / "traces" / "recorder"

# Builds every route once, as `overlap-lab serve` does at start-up, runs the
# commands that read traces and profiles, then says whether torch was loaded.
SERVER_SCRIPT = """
import sys, panel as pn, pkgutil, importlib
from app.cli import build_parser
from app.server.routes import build_routes
from app.server.serving import warm
pn.extension(inline=False)
warm(build_routes())
import app, lessons, widgets
for package in (app, lessons, widgets):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not info.name.startswith("traces.recorder"):
            importlib.import_module(info.name)
from traces.commands import run_trace_command
parser = build_parser()
shipped = "traces/shipped/one-bucket.json"
for argv in (["summary", shipped], ["fit", shipped], ["chrome", shipped, "--out", sys.argv[1]]):
    run_trace_command(parser.parse_args(argv))
print("torch" in sys.modules)
"""


def test_serving_every_route_and_the_trace_commands_never_import_torch(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SERVER_SCRIPT, str(tmp_path / "out.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False", done.stdout[-500:]


def test_only_the_recorder_imports_torch() -> None:
    pattern = re.compile(r"^\s*(import torch|from torch)\b", re.MULTILINE)
    importers = {
        path.relative_to(ROOT).as_posix()
        for folder in ("app", "widgets", "lessons", "traces")
        for path in (ROOT / folder).rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    }
    assert importers, "the recorder imports torch, so the scan must find it"
    outside = sorted(p for p in importers if not (ROOT / p).is_relative_to(RECORDER))
    assert outside == []
