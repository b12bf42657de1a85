"""Trace uploads against one server process: memory per upload, 15 at once, a small one's wait.

Each scenario runs against a fresh ``overlap-lab serve`` (this tree) and, with
``--before DIR``, against the same command from another checkout (a tree of an
earlier commit, e.g. ``git archive <commit> | tar -x -C DIR``), side by side in
one run. Uploads are the page's own message over its websocket
(:mod:`bench.upload_client`), with no browser.

1. **memory per upload**: one page uploads a valid 40 MiB profile, six 11.5 MiB
   gzips that unpack past the 64 MiB limit, and the profile again; the process's
   resident size (``/proc/<pid>/status``) after each answer. Reported: MiB per
   upload over the 8 ((after the 8th - before the 1st) / 8) and the most above
   the level after the first.
2. **15 at once**: 15 pages send the oversize gzip together; the peak resident
   size (``VmHWM``, reset first through ``clear_refs``) above the size before,
   and how many were read and how many told "busy".
3. **a small trace behind heavy ones**: 4 heavy profiles are sent (from one
   page, then from 4 pages) and then another page's 21 kB trace; the small
   one's time to its answer, and how many heavy answers came before it. The
   ratio is that time over the same small upload's time on an idle server.

    python -m bench.uploads [--before /tmp/overlap-lab-before]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.loadclient import configure_client
from bench.servers import REPO, running_servers
from bench.upload_client import TracePage, heavy_profile, oversize_gzip, rss_bytes

MIB = 2**20
SMALL_TRACE = REPO / "traces" / "shipped" / "mixed-5-5-2.json"


def tree_command(tree: Path):
    """``overlap-lab serve`` from the checkout at ``tree`` (its modules first on the path)."""

    def command(port: int) -> list[str]:
        start = f"import sys; sys.path.insert(0, {str(tree)!r}); from app.cli import main; main()"
        return [sys.executable, "-c", start, "serve", "--port", str(port)]

    return command


def _peak(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


async def memory_per_upload(base: str, pid: int, files: dict[str, bytes]) -> dict:
    page = await TracePage.open(base)
    start = rss_bytes(pid)
    sizes = []
    for name in ["heavy.json.gz"] + ["oversize.json.gz"] * 6 + ["heavy.json.gz"]:
        await page.upload([(name, files[name])])
        sizes.append(rss_bytes(pid))
    page.close()
    return {
        "rss_start_mib": start / MIB,
        "rss_after_each_mib": [s / MIB for s in sizes],
        # The most a run of uploads grew the process, per upload (a collection may come later).
        "most_mib_per_upload": max((s - start) / (i + 1) for i, s in enumerate(sizes)) / MIB,
        "most_above_first_mib": max(s - sizes[0] for s in sizes) / MIB,
    }


async def at_once(base: str, pid: int, files: dict[str, bytes], n: int = 15) -> dict:
    pages = [await TracePage.open(base) for _ in range(n)]
    start = rss_bytes(pid)
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    sent = [("oversize.json.gz", files["oversize.json.gz"])]
    answers = await asyncio.gather(*(page.upload(sent) for page in pages))
    peak = _peak(pid)
    for page in pages:
        page.close()
    return {
        "uploads": n,
        "peak_above_start_mib": (peak - start) / MIB,
        "busy": sum("busy" in a for a in answers),
        "read": sum("unpacks to more than" in a for a in answers),
    }


async def small_behind_heavy(base: str, files: dict[str, bytes], pages_sending: int) -> dict:
    """4 heavy uploads from ``pages_sending`` pages, then another page's small trace."""
    heavy = [("heavy.json.gz", files["heavy.json.gz"])]
    small = [(SMALL_TRACE.name, SMALL_TRACE.read_bytes())]
    learner = await TracePage.open(base)
    await learner.upload(small)  # the first upload of a process pays for imports
    t0 = time.perf_counter()
    await learner.upload(small)
    alone = time.perf_counter() - t0
    senders = [await TracePage.open(base) for _ in range(pages_sending)]
    for k in range(4):
        await senders[k % pages_sending].send(heavy)
    await asyncio.sleep(0.5)  # every message has arrived
    order: list[str] = []

    async def heavy_answers(page: TracePage, count: int) -> None:
        for _ in range(count):
            answer = await page.answer()
            order.append("heavy" if answer.startswith("Showing") else "refused")

    counts = [sum(1 for k in range(4) if k % pages_sending == i) for i in range(pages_sending)]
    t0 = time.perf_counter()
    await learner.send(small)

    async def small_answer() -> float:
        await learner.answer()
        order.append("small")
        return time.perf_counter() - t0

    results = await asyncio.gather(
        small_answer(), *(heavy_answers(p, c) for p, c in zip(senders, counts, strict=True))
    )
    for page in (*senders, learner):
        page.close()
    return {
        "pages_sending_heavy": pages_sending,
        "small_alone_s": alone,
        "small_behind_heavy_s": results[0],
        "ratio_to_alone": results[0] / alone,
        "heavy_shown_before_small": order[: order.index("small")].count("heavy"),
        "refused_at_once": order.count("refused"),
    }


def measure(command, files: dict[str, bytes]) -> dict:
    out: dict = {}
    for name, scenario in (
        ("memory_per_upload", lambda s: memory_per_upload(s.url, s.pid, files)),
        ("at_once", lambda s: at_once(s.url, s.pid, files)),
        ("small_behind_one_page", lambda s: small_behind_heavy(s.url, files, 1)),
        ("small_behind_four_pages", lambda s: small_behind_heavy(s.url, files, 4)),
    ):
        with running_servers() as servers:  # a fresh process per scenario
            server = servers.start("app", command, "/")
            out[name] = asyncio.run(scenario(server))
            print(f"  {name}: {json.dumps(out[name])[:300]}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="a checkout to measure side by side")
    args = parser.parse_args(argv)
    configure_client()
    trees = {"after": REPO} if args.before is None else {"before": args.before, "after": REPO}
    with tempfile.TemporaryDirectory(prefix="overlap-lab-uploads-") as tmp:
        folder = Path(tmp)
        files = {
            "oversize.json.gz": oversize_gzip(folder).read_bytes(),
            "heavy.json.gz": heavy_profile(folder, 40, "heavy").read_bytes(),
        }
        results = {}
        for label, tree in trees.items():
            print(f"{label} ({tree})", flush=True)
            results[label] = measure(tree_command(tree), files)
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
