"""nginx as the load balancer in the browser tests: ``deploy/nginx.conf``, rendered and run.

nginx (Debian's package, ``/usr/sbin/nginx``, or ``$OVERLAP_LAB_NGINX``) runs in
the foreground with its own temporary directory for the pid file, logs and
temporary files, on a loopback port, and is stopped by the test that started it.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.processes import stop_process, wait_until_ok

REPO = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT = 30.0
_LINE = re.compile(
    r'"(?P<method>\S+) (?P<path>\S+) [^"]*" (?P<status>\d+) '
    r"upstream=(?P<upstream>\S+) route=(?P<route>\S+)"
)


def nginx_path() -> str:
    """``$OVERLAP_LAB_NGINX``, else Debian's ``/usr/sbin/nginx``."""
    return os.environ.get("OVERLAP_LAB_NGINX", "/usr/sbin/nginx")


@dataclass
class Balancer:
    url: str
    port: int
    runtime: Path
    process: subprocess.Popen

    def access_log(self) -> list[dict]:
        """Every request nginx logged: method, path, status, upstream (backend) and route."""
        path = self.runtime / "access.log"
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        return [m.groupdict() for m in map(_LINE.search, text.splitlines()) if m]

    def error_log(self) -> str:
        path = self.runtime / "error.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def render(backends: list[str], listen: str, prefix: str, runtime: Path) -> str:
    """``deploy/render.py``, run the way deploy/README.md says."""
    command = [sys.executable, str(REPO / "deploy" / "render.py"), "--listen", listen]
    command += ["--server-name", "localhost", "--prefix", prefix, "--runtime", str(runtime)]
    for backend in backends:
        command += ["--backend", backend]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


@contextlib.contextmanager
def running_nginx(backends: list[str], port: int, prefix: str = "/") -> Iterator[Balancer]:
    """nginx on ``127.0.0.1:port`` in front of ``backends`` (``host:port`` each)."""
    nginx = nginx_path()
    if not Path(nginx).exists():
        raise RuntimeError(
            f"nginx is not installed at {nginx} (apt-get install nginx, or set OVERLAP_LAB_NGINX)"
        )
    with tempfile.TemporaryDirectory(prefix="overlap-lab-nginx-") as tmp:
        runtime = Path(tmp)
        # Workers drop root privileges; they must reach their temporary directories.
        runtime.chmod(0o755)
        conf = runtime / "nginx.conf"
        conf.write_text(render(backends, f"127.0.0.1:{port}", prefix, runtime), encoding="utf-8")
        command = [nginx, "-p", str(runtime), "-c", str(conf), "-e", str(runtime / "error.log")]
        proc = subprocess.Popen(
            [*command, "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        balancer = Balancer(f"http://localhost:{port}", port, runtime, proc)
        try:
            _wait_until_up(balancer, f"{balancer.url}{prefix.rstrip('/')}/liveness")
            yield balancer
        finally:
            stop_process(proc)  # SIGTERM first: the master stops its workers and exits


def _wait_until_up(balancer: Balancer, url: str) -> None:
    def exited(code: int) -> Exception:
        return RuntimeError(f"nginx exited with {code}:\n{balancer.error_log()}")

    if wait_until_ok(url, balancer.process, STARTUP_TIMEOUT, exited):
        return
    raise RuntimeError(f"nginx did not answer {url}:\n{balancer.error_log()}")
