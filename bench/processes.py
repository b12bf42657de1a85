"""Local processes that the benchmarks and the browser tests start: ports, readiness, stopping.

Both start real servers (the app, nginx, Redis) on loopback ports and must wait
for them and stop them the same way, so the rules live once, here.
"""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable

STOP_GRACE = 10.0  # s, between SIGTERM and SIGKILL


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_ok(
    url: str, process: subprocess.Popen, timeout: float, exited: Callable[[int], Exception]
) -> bool:
    """Poll ``url`` until it answers 200 (True) or ``timeout`` seconds pass (False).

    Raises ``exited(returncode)`` as soon as ``process`` has exited: a server that
    died on startup is reported at once, not after the whole timeout.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise exited(process.returncode)
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return True
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(0.2)
    return False


def stop_process(process: subprocess.Popen, grace: float = STOP_GRACE) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds; nothing if it already exited."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=grace)
