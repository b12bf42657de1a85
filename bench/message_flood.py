"""A page flooding its websocket with edits: what the process spends, and another learner's wait.

One page of ``/trace``, in a process of its own, sends ``--edits`` property
edits as fast as it can (``PATCH-DOC`` messages changing its ``Location``'s
``hash``, written by hand over the websocket; each is answered with an ``OK``)
and reads what it is sent; another page meanwhile edits its iteration field
once a second (the message its Enter key sends, ``{"edit": "iteration", "text":
...}``, :mod:`bench.upload_client`). Measured, against a fresh
``overlap-lab serve`` of this tree and, with ``--before DIR``, of another
checkout side by side:

- **server CPU share**: the process's CPU time (``/proc/<pid>/stat``) over a
  ``--seconds`` window starting 1 s into the flood, over the window's length
  (1.0 is one core the whole time);
- **the other page's edit**: the median time from its edit to the server's
  answer (a ``PATCH-DOC``), during the flood over the same on an idle server.

    python -m bench.message_flood [--before /tmp/overlap-lab-before]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.loadclient import _message, _read_message, _send, configure_client
from bench.servers import REPO, running_servers
from bench.stats import cpu_seconds
from bench.upload_client import TracePage, _map
from bench.uploads import tree_command


def _edit(k: int) -> dict:
    return _map({"edit": "iteration", "text": str(1 + k % 2)})


async def _round_trip(page: TracePage, k: int) -> float:
    """One edit from ``page`` and the time until the server answers it with a patch."""
    start = time.perf_counter()
    await page.send_message(_edit(k))
    while True:
        header, _ = await asyncio.wait_for(_read_message(page.page.ws), 120)
        if header.get("msgtype") == "PATCH-DOC":
            return time.perf_counter() - start


async def flooder(base: str, edits: int) -> None:
    """The flooding page: every edit sent at once, then what it is sent read until it is stopped."""
    configure_client()
    page = await TracePage.open(base)
    # Each frame at once (a page's browser sends them so): no waiting for the last one's ACK.
    page.page.ws.protocol.stream.set_nodelay(True)
    answered = 0

    async def count_answers() -> None:
        nonlocal answered
        while True:
            header, _ = await _read_message(page.page.ws)
            answered += header.get("msgtype") == "OK"

    def report(*_) -> None:
        print(f"answered {answered}", flush=True)
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, report)
    reading = asyncio.ensure_future(count_answers())
    print("open", flush=True)
    (location,) = page.page.models["Location"]
    for k in range(edits):
        change = {"kind": "ModelChanged", "model": {"id": location["id"]}, "attr": "hash"}
        await _send(page.page.ws, _message("PATCH-DOC", {"events": [{**change, "new": f"#{k}"}]}))
        await asyncio.sleep(0)  # let the reading go on: a write that is done does not yield
    print("sent", flush=True)
    await reading


async def flood(base: str, pid: int, edits: int, seconds: float) -> dict:
    other = await TracePage.open(base)
    idle = [await _round_trip(other, k) for k in range(5)]  # 1, 2, 1, 2, 1: each a change
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.message_flood", "--flood", base, "--edits", str(edits)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert (await asyncio.to_thread(child.stdout.readline)).strip() == "open"
    await asyncio.sleep(1.0)
    cpu0, t0 = cpu_seconds(pid), time.perf_counter()
    during = []
    while time.perf_counter() - t0 < seconds:
        during.append(await _round_trip(other, len(idle) + len(during)))
        await asyncio.sleep(max(0.0, 1.0 - during[-1]))
    cpu1, t1 = cpu_seconds(pid), time.perf_counter()
    child.terminate()
    out, _ = child.communicate(timeout=30)
    answered = int(out.split()[-1]) if out.split() else -1
    other.close()
    return {
        "edits_sent": edits,
        "flood_answered_by_end": answered,
        "flood_answered_per_s": answered / (t1 - t0 + 1.0),
        "window_s": t1 - t0,
        "server_cpu_share": (cpu1 - cpu0) / (t1 - t0),
        "other_edit_idle_s": statistics.median(idle),
        "other_edit_during_flood_s": statistics.median(during),
        "other_edit_ratio": statistics.median(during) / statistics.median(idle),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="a checkout to measure side by side")
    parser.add_argument("--edits", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--flood", metavar="URL", help=argparse.SUPPRESS)  # the flooding page
    args = parser.parse_args(argv)
    if args.flood:
        asyncio.run(flooder(args.flood, args.edits))
        return 0
    configure_client()
    trees = {"after": REPO} if args.before is None else {"before": args.before, "after": REPO}
    results = {}
    for label, tree in trees.items():
        with running_servers() as servers:
            server = servers.start("app", tree_command(tree), "/")
            results[label] = asyncio.run(flood(server.url, server.pid, args.edits, args.seconds))
        print(f"{label} ({tree}): {json.dumps(results[label])}", flush=True)
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
