"""A real ``redis-server`` for the tests: on a free loopback port, stopped by the test.

Debian's ``redis-server`` (``/usr/bin/redis-server``, or ``$OVERLAP_LAB_REDIS``)
runs with its append-only file on, fsynced on every write, in a temporary
directory, so a test can kill it and start it again on the same data.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


def redis_path() -> str:
    """``$OVERLAP_LAB_REDIS``, else Debian's ``/usr/bin/redis-server``."""
    return os.environ.get("OVERLAP_LAB_REDIS", "/usr/bin/redis-server")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class RedisServer:
    """One redis-server process; ``restart()`` kills it (SIGKILL) and starts it again."""

    port: int
    directory: Path
    process: subprocess.Popen | None = None
    #: Debian's default is "no": a restart then loses everything written since the last save.
    appendonly: bool = True

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = [
            redis_path(), "--port", str(self.port), "--bind", "127.0.0.1",
            "--dir", str(self.directory), "--appendfsync", "always",
            "--appendonly", "yes" if self.appendonly else "no",
            "--save", "", "--daemonize", "no", "--protected-mode", "yes",
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock,
            ):
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer within 15 s")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def restart(self) -> None:
        """Kill Redis outright (no shutdown save), then start it on the same files."""
        self.kill()
        self.start()


@contextlib.contextmanager
def running_redis(directory: Path, appendonly: bool = True) -> Iterator[RedisServer]:
    """redis-server on a free loopback port with its data in ``directory``, stopped on exit."""
    if not Path(redis_path()).exists():
        raise RuntimeError(
            f"redis-server is not installed at {redis_path()} "
            "(apt-get install redis-server, or set OVERLAP_LAB_REDIS)"
        )
    directory.mkdir(parents=True, exist_ok=True)
    server = RedisServer(free_port(), directory, appendonly=appendonly)
    server.start()
    try:
        yield server
    finally:
        server.stop()
