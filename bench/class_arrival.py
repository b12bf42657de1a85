"""A class arriving at once: N learners open the page at the same moment.

Run with ``python -m bench.class_arrival`` from the repository root (Linux: it
reads ``/proc``; the nginx cases need ``/usr/sbin/nginx`` or
``$OVERLAP_LAB_NGINX``). Not part of pytest. See ``bench/README.md``.

A "page load" is what the server does for one learner: the HTTP GET that
builds the session and renders the page, then the websocket that pulls the
document and receives the patches a browser sends once it has drawn the page,
then one edit of a control. :mod:`bench.loadclient` does this with Bokeh's
wire protocol instead of a browser, so that 200 learners cost the machine what
they cost the server, not 200 Chromium renderers on the same two cores.

Measured side by side in one run, each server on its own free port:

1. server CPU per new session for every route of the app and for the bare
   Panel app (``bench/bare_app.py``), from bursts of ``--route-burst`` loads;
2. a class of N (``--sizes``, 40 and 200) on one route, against the app with
   the README's recommended options for one machine, the bare app, and nginx
   (``deploy/nginx.conf``) in front of one and two backends: p50/p95 time to
   page, CPU per session, sessions built per page, memory per session held
   while the class is connected and kept after their sessions were reaped, in
   a first and a second round.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from bench.loadclient import PageLoad, close, configure_client, edit, load_page
from bench.processes import stop_process
from bench.servers import free_port, start_server, stop_server
from bench.stats import CLOCK_TICK, cpu_seconds

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "class_arrival.json"
NGINX = os.environ.get("OVERLAP_LAB_NGINX", "/usr/sbin/nginx")

#: ``overlap-lab serve`` options the README recommends for one process.
RECOMMENDED = ("--unused-session-lifetime", "15000", "--check-unused-sessions", "5000")
LIFETIME_S = 15.0
CHECK_S = 5.0
#: Panel collects garbage this long after the last session was destroyed.
GC_DEBOUNCE_S = 5.0
HOOKS = {"OVERLAP_LAB_TEST_HOOKS": "1"}

#: What one learner edits on each route (label, value), as typing it would.
EDITS = {
    "/bare": ("Value", 51.0),
    "/queue-lab": ("Arrival rate", "3"),
    "/bucket-timeline": ("Layers per bucket", "2"),
    "/lessons/overlapping-communication": ("Layers per bucket", "2"),
    "/lessons/dependency-schedule": ("Arrival rate", "3"),
}
# The index is a static page without a session: nothing to build, so not measured here.
APP_ROUTES = (
    "/queue-lab",
    "/bucket-timeline",
    "/lessons/overlapping-communication",
    "/lessons/dependency-schedule",
)


# --- processes ------------------------------------------------------------------------


def process_tree(pid: int) -> list[int]:
    """``pid`` and every descendant (forked workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def tree_cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):  # a worker that just exited
            total += cpu_seconds(pid)
    return total


def tree_rss_kb(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


@dataclass
class Deployment:
    """One way of serving: its processes, the URL learners use, and how to stop it."""

    name: str
    url: str
    backends: list  # bench.run.Server
    nginx: subprocess.Popen | None = None
    runtime: tempfile.TemporaryDirectory | None = None
    notes: list[str] = field(default_factory=list)

    def server_pids(self) -> list[int]:
        return [p for b in self.backends for p in process_tree(b.pid)]

    def builds(self) -> int:
        """Sessions built so far, from the test hook's log lines (app servers only)."""
        return sum(b.log_text().count("test hook: session built") for b in self.backends)

    def stop(self) -> None:
        if self.nginx is not None:
            stop_process(self.nginx)
        for backend in self.backends:
            workers = process_tree(backend.pid)[1:]  # forked by --num-procs
            stop_server(backend)
            for pid in workers:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
        if self.runtime is not None:
            self.runtime.cleanup()


def app_command(port: int, *extra: str) -> list[str]:
    """``overlap-lab serve`` of this tree on ``port``."""
    return [sys.executable, "-m", "app.cli", "serve", "--port", str(port), *extra]


#: The command an app backend runs (``app_command``; a benchmark of another tree swaps it).
APP = app_command


def _start(name: str, command: list[str], probe: str, tmp: Path, env: dict | None = None):
    port = int(command[command.index("--port") + 1])
    old = dict(os.environ)
    os.environ.update(env or {})
    try:
        return start_server(name, command, port, probe, tmp)
    finally:
        os.environ.clear()
        os.environ.update(old)


def start_deployment(kind: str, tmp: Path) -> Deployment:
    """``bare``, ``app``, ``app-procs2`` (``--num-procs 2``), ``nginx-1``, ``nginx-2``, or
    ``bare-nginx-2`` (the bare app in the same deployment as ``nginx-2``: the reference
    for the recommended deployment)."""
    if kind == "bare":
        port = free_port()
        cmd = [sys.executable, str(BENCH / "bare_app.py"), "--port", str(port)]
        server = _start("bare", cmd, "/bare", tmp)
        return Deployment(kind, server.url, [server])
    if kind in ("app", "app-procs2"):
        port = free_port()
        extra = (*RECOMMENDED, *(("--num-procs", "2") if kind == "app-procs2" else ()))
        server = _start(kind, APP(port, *extra), "/liveness", tmp, HOOKS)
        return Deployment(kind, server.url, [server])
    count = int(kind.rsplit("-", 1)[1])
    nginx_port = free_port()
    origin = ("--allow-websocket-origin", f"localhost:{nginx_port}", "--trusted-proxy", "127.0.0.1")
    backends = []
    for i in range(count):
        port = free_port()
        if kind.startswith("bare"):
            cmd = [sys.executable, str(BENCH / "bare_app.py"), "--port", str(port), *origin]
            backends.append(_start(f"{kind}-backend{i}", cmd, "/bare", tmp))
        else:
            cmd = APP(port, *RECOMMENDED, *origin)
            backends.append(_start(f"{kind}-backend{i}", cmd, "/liveness", tmp, HOOKS))
    runtime = tempfile.TemporaryDirectory(prefix="overlap-lab-bench-nginx-")
    root = Path(runtime.name)
    root.chmod(0o755)
    spec = importlib.util.spec_from_file_location("render", REPO / "deploy" / "render.py")
    render = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(render)
    conf = root / "nginx.conf"
    conf.write_text(
        render.render(
            [f"127.0.0.1:{urllib.parse.urlsplit(b.url).port}" for b in backends],
            listen=f"127.0.0.1:{nginx_port}",
            server_name="localhost",
            runtime=str(root),
        )
    )
    proc = subprocess.Popen(
        [
            NGINX,
            "-p",
            str(root),
            "-c",
            str(conf),
            "-e",
            str(root / "error.log"),
            "-g",
            "daemon off;",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    deployment = Deployment(kind, f"http://localhost:{nginx_port}", backends, proc, runtime)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(deployment.url + "/liveness", timeout=2):
                return deployment
        except OSError:
            time.sleep(0.2)
    deployment.stop()
    raise RuntimeError(f"nginx did not come up:\n{(root / 'error.log').read_text()}")


# --- one burst ------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation; nan for no values."""
    if not values:
        return float("nan")
    values = sorted(values)
    pos = q * (len(values) - 1)
    lo, hi = int(pos), min(int(pos) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


async def _class(base: str, route: str, n: int) -> list[PageLoad]:
    """N learners at once: load, then each edits once; the pages stay open."""
    pages = await asyncio.gather(*(load_page(base, route) for _ in range(n)))
    target = EDITS.get(route)
    if target is not None:
        for page in pages:
            if page.ok and not await edit(page, *target):
                page.error = f"no control named {target[0]!r}"
    return pages


def settle(pids: list[int], quiet: float = 1.0, limit: float = 60.0) -> None:
    """Wait until the servers have used no CPU for ``quiet`` seconds (at most ``limit``)."""
    deadline = time.monotonic() + limit
    last = tree_cpu(pids)
    calm_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = tree_cpu(pids)
        if now - last > 2 * CLOCK_TICK:
            calm_since = time.monotonic()
        last = now
        if time.monotonic() - calm_since >= quiet:
            return


def _stable_rss(pids: list[int], limit: float = 30.0) -> int:
    """Resident memory once it stops changing by more than 1 % over three seconds."""
    deadline = time.monotonic() + limit
    history = [tree_rss_kb(pids)]
    while time.monotonic() < deadline:
        time.sleep(1.0)
        history.append(tree_rss_kb(pids))
        window = history[-4:]
        if len(window) == 4 and max(window) - min(window) <= 0.01 * max(window):
            break
    return history[-1]


def burst(deployment: Deployment, route: str, n: int, reap: bool = True) -> dict:
    """One class of ``n`` on ``route``: timings, CPU, builds and memory."""
    pids = deployment.server_pids()
    settle(pids)
    rss_before = tree_rss_kb(pids)
    builds_before = deployment.builds()
    cpu_before = tree_cpu(pids)
    client_before = time.process_time()
    started = time.monotonic()
    configure_client()
    result = asyncio.run(_hold(deployment.url, route, n, pids))
    result.update(
        route=route,
        n=n,
        wall_s=time.monotonic() - started,
        cpu_ms_per_session=1000 * (result.pop("cpu_after") - cpu_before) / n,
        client_cpu_ms_per_session=1000 * (time.process_time() - client_before) / n,
        builds_per_page=(deployment.builds() - builds_before) / n,
        held_kb_per_session=(result.pop("rss_held") - rss_before) / n,
        rss_before_kb=rss_before,
    )
    if reap:
        reap_cpu = tree_cpu(pids)
        time.sleep(LIFETIME_S + CHECK_S + GC_DEBOUNCE_S + 2)
        settle(pids)
        rss_after = _stable_rss(pids)
        result.update(
            reap_cpu_ms_per_session=1000 * (tree_cpu(pids) - reap_cpu) / n,
            rss_after_kb=rss_after,
            kept_kb_per_session=(rss_after - rss_before) / n,
        )
    return result


async def _hold(base: str, route: str, n: int, pids: list[int]) -> dict:
    """Run the class, measure while every page is still open, then close them all."""
    pages = await _class(base, route, n)
    # Let the server finish the edits before reading its CPU and memory.
    await asyncio.get_running_loop().run_in_executor(None, settle, pids)
    cpu_after = tree_cpu(pids)
    rss_held = tree_rss_kb(pids)
    ok = [p for p in pages if p.ok]
    doc = [p.document for p in ok]
    html = [p.html for p in ok]
    first = [p.first_byte for p in ok]
    summary = {
        "errors": len(pages) - len(ok),
        "error_samples": sorted({p.error for p in pages if p.error})[:3],
        "p50_s": percentile(doc, 0.5),
        "p95_s": percentile(doc, 0.95),
        "max_s": max(doc, default=float("nan")),
        "html_p50_s": percentile(html, 0.5),
        "html_p95_s": percentile(html, 0.95),
        "first_byte_p95_s": percentile(first, 0.95),
        "doc_kb": statistics.median([p.doc_bytes for p in ok]) / 1000 if ok else float("nan"),
        "cpu_after": cpu_after,
        "rss_held": rss_held,
    }
    for page in pages:
        close(page)
    await asyncio.sleep(0.5)
    return summary


# --- the run ------------------------------------------------------------------------


def run(args) -> dict:
    results: dict = {"routes": {}, "classes": [], "notes": []}
    with tempfile.TemporaryDirectory(prefix="overlap-lab-class-") as tmp_name:
        tmp = Path(tmp_name)
        running: list[Deployment] = []
        try:
            print(f"1. CPU per new session: bursts of {args.route_burst}", flush=True)
            bare, app = (start_deployment(kind, tmp) for kind in ("bare", "app"))
            running += [bare, app]
            for deployment, route in [(bare, "/bare")] + [(app, r) for r in args.routes]:
                asyncio.run(_warm(deployment.url, route))
                r = burst(deployment, route, args.route_burst, reap=False)
                results["routes"][route] = r
                print(f"   {route}: {r['cpu_ms_per_session']:.0f} ms/session", flush=True)
                _reap_wait(deployment)
            for deployment in (bare, app):
                deployment.stop()
            running.clear()

            # A fresh deployment for every class, so that memory is measured from its start.
            for n in args.sizes:
                for kind in args.deployments:
                    deployment = start_deployment(kind, tmp)
                    running.append(deployment)
                    route = "/bare" if kind.startswith("bare") else args.class_route
                    asyncio.run(_warm(deployment.url, route))
                    _reap_wait(deployment)
                    rounds = args.rounds if kind in ("bare", "app") else 1
                    for i in range(rounds):
                        r = burst(deployment, route, n)
                        r.update(deployment=kind, round=i + 1)
                        results["classes"].append(r)
                        print(
                            f"2. {kind} N={n} round {i + 1}: p95 {r['p95_s']:.1f} s, "
                            f"{r['cpu_ms_per_session']:.0f} ms/session, "
                            f"{r['builds_per_page']:.2f} builds/page, "
                            f"held {r['held_kb_per_session']:.0f} kB, "
                            f"kept {r['kept_kb_per_session']:.0f} kB/session, "
                            f"{r['errors']} errors",
                            flush=True,
                        )
                    deployment.stop()
                    running.remove(deployment)
        finally:
            for deployment in running:
                deployment.stop()
    return results


async def _warm(base: str, route: str) -> None:
    configure_client()
    page = await load_page(base, route)
    if not page.ok:
        raise RuntimeError(f"{base}{route}: {page.error}")
    close(page)


def _reap_wait(deployment: Deployment) -> None:
    time.sleep(LIFETIME_S + CHECK_S + GC_DEBOUNCE_S + 2)
    settle(deployment.server_pids())


def _builds(route: str, r: dict) -> str:
    return "—" if route == "/bare" else f"{r['builds_per_page']:.2f}"


def report(results: dict) -> str:
    routes = results["routes"]
    bare = routes["/bare"]["cpu_ms_per_session"]
    lines = [
        "| route | server CPU per new session | × bare | p50 / p95 time to page |"
        " sessions built per page |",
        "|---|---|---|---|---|",
    ]
    for route, r in routes.items():
        lines.append(
            f"| `{route}` | {r['cpu_ms_per_session']:.0f} ms | "
            f"{r['cpu_ms_per_session'] / bare:.1f} | {r['p50_s']:.1f} / {r['p95_s']:.1f} s | "
            f"{_builds(route, r)} |"
        )
    lines += [
        "",
        "| deployment | N | round | p50 / p95 time to page | p95 time to the first bytes"
        " / to the HTML |"
        " CPU per session | built per page | held per session | kept per session | errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["classes"]:
        lines.append(
            f"| {r['deployment']} `{r['route']}` | {r['n']} | {r['round']} | "
            f"{r['p50_s']:.1f} / {r['p95_s']:.1f} s | "
            f"{r['first_byte_p95_s']:.1f} / {r['html_p95_s']:.1f} s | "
            f"{r['cpu_ms_per_session']:.0f} ms | {_builds(r['route'], r)} | "
            f"{r['held_kb_per_session']:.0f} kB | {r['kept_kb_per_session']:.0f} kB | "
            f"{r['errors']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[40, 200])
    parser.add_argument("--route-burst", type=int, default=40)
    parser.add_argument("--routes", nargs="+", default=list(APP_ROUTES))
    parser.add_argument("--class-route", default="/bucket-timeline")
    parser.add_argument(
        "--deployments", nargs="+", default=["bare", "app", "app-procs2", "nginx-1", "nginx-2"]
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds for bare and app")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    # Stopped from outside: unwind, so that every server this run started is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    results = run(args)
    results["meta"] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "recommended": list(RECOMMENDED),
        "runtime_s": time.monotonic() - started,
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "load_average_at_end": os.getloadavg(),
    }
    print()
    print(report(results))
    args.output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\n(total {results['meta']['runtime_s']:.0f} s; raw results in {args.output})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
