"""Servers a benchmark runs against: each on a free port, restarted if something stops it.

A benchmark names its servers and the command that starts one on a given port::

    with running_servers() as servers:
        servers.start("app", app_command, "/")
        url = servers["app"].url  # restarted first if it died

``attempt(servers, fn)`` runs a sample once more when a server died under it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from bench.processes import STOP_GRACE, free_port, stop_process, wait_until_ok

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent

STARTUP_TIMEOUT = 60.0  # s, for a server to answer its first request
MAX_RESTARTS = 3  # per run, over all servers

T = TypeVar("T")

#: Builds the command line of a server listening on the given port.
Command = Callable[[int], list[str]]


def app_command(port: int) -> list[str]:
    """The real CLI, ``app.cli:main`` (what the ``overlap-lab`` script runs), in this Python."""
    return [sys.executable, "-m", "app.cli", "serve", "--port", str(port)]


def bare_command(port: int) -> list[str]:
    """The reference apps of ``bench/bare_app.py`` (``/bare`` and ``/naive``)."""
    return [sys.executable, str(BENCH / "bare_app.py"), "--port", str(port)]


@dataclass
class Server:
    """One running server process, its base URL and the file its output goes to."""

    name: str
    url: str
    process: subprocess.Popen
    log: Path

    @property
    def pid(self) -> int:
        """The server's process id (whose CPU time the benchmarks read)."""
        return self.process.pid

    def log_text(self) -> str:
        """Everything the server printed so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")


def start_server(name: str, command: list[str], port: int, probe: str, tmp: Path) -> Server:
    """Start a server and wait until ``probe`` answers 200 (bounded)."""
    log = tmp / f"{name}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command,
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    server = Server(name, f"http://localhost:{port}", proc, log)
    if wait_until_ok(
        server.url + probe,
        proc,
        STARTUP_TIMEOUT,
        lambda code: RuntimeError(f"{name} exited with {code}:\n{server.log_text()}"),
    ):
        return server
    stop_server(server)
    raise RuntimeError(f"{name} did not answer within {STARTUP_TIMEOUT:.0f} s")


def stop_server(server: Server) -> None:
    """SIGTERM, then SIGKILL after STOP_GRACE seconds; nothing if it already exited."""
    stop_process(server.process, STOP_GRACE)


class Servers:
    """The servers of one run by name; one that dies (something else stopped it) is restarted."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.specs: dict[str, tuple[Command, str]] = {}
        self.live: dict[str, Server] = {}
        self.notes: list[str] = []

    def start(self, name: str, command: Command, probe: str) -> Server:
        """Start ``command(port)`` on a free port and wait until ``probe`` answers."""
        self.specs[name] = (command, probe)
        used = {urllib.parse.urlsplit(s.url).port for s in self.live.values()}
        port = free_port()
        while port in used:
            port = free_port()
        server = start_server(name, command(port), port, probe, self.tmp)
        self.live[name] = server
        return server

    def dead(self) -> list[str]:
        """Names of the servers whose process has exited."""
        return [n for n, s in self.live.items() if s.process.poll() is not None]

    def __getitem__(self, name: str) -> Server:
        server = self.live[name]
        if server.process.poll() is not None:
            if len(self.notes) >= MAX_RESTARTS:
                raise RuntimeError(f"{name} keeps exiting:\n{server.log_text()[-3000:]}")
            self.notes.append(f"{name} exited with {server.process.returncode}; restarted it")
            print(f"  note: {self.notes[-1]}", file=sys.stderr, flush=True)
            command, probe = self.specs[name]
            server = self.start(name, command, probe)
        return server

    def stop_all(self) -> None:
        """Stop every server of the run."""
        for server in self.live.values():
            stop_server(server)


@contextmanager
def running_servers() -> Iterator[Servers]:
    """Servers logging to a temporary directory; all stopped on exit, tracebacks reported."""
    with tempfile.TemporaryDirectory(prefix="overlap-lab-bench-") as tmp:
        servers = Servers(Path(tmp))
        try:
            yield servers
        finally:
            servers.stop_all()
            for server in servers.live.values():
                if "Traceback" in server.log_text():
                    print(
                        f"warning: {server.name} logged a traceback:\n{server.log_text()[-3000:]}",
                        file=sys.stderr,
                    )


def attempt(servers: Servers, fn: Callable[[], T]) -> T:
    """``fn()``, run once more if a server died under it (with the server restarted)."""
    try:
        return fn()
    except Exception:
        if not servers.dead():
            raise
    for name in servers.dead():
        servers[name]
    return fn()
