"""A class round of many learners through the recommended deployment, the widget as a file.

nginx in front of two backends sharing Redis (:func:`bench.classroom.behind_nginx`);
every learner is protocol-level (:class:`bench.classroom.Learner`). A bucket
timeline round on its exposed tail (a hidden round: the chart gives the answer
away). The learners are spread over one process per core
(:class:`bench.learner_workers.LearnerWorkers`, ``--workers``), as a class's
browsers are each their own machine. Measured in one run:

- Open voting → every learner's page has the round's widget: from sending Open
  voting until the learner's stream said so and its frame's file (and, as on a
  learner's first round, the two scripts it imports) arrived;
- Reveal → every page shows the answer: until the learner's stream brought the
  answer and the revealed states its frame plays;
- server CPU per learner for the round (both backends and Redis, from Open
  voting to the last page's answer, votes included), against the bare Panel
  app's CPU per session (``bench/bare_app.py`` behind the same nginx, a burst of
  ``--bare`` page loads) and against what the frame cost before, a live session
  per learner (``/class/bucket-timeline?...&mode=hidden``, ``--before`` loads);
- no vote lost: the revealed count is every learner and the CSV holds exactly
  the values sent.

    flock /tmp/overlap-bench.lock .venv/bin/python -m bench.class_round --learners 1000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from pathlib import Path

from bench.class_arrival import burst, start_deployment, tree_cpu
from bench.classroom import Instructor, behind_nginx, percentile
from bench.learner_workers import WORKERS, LearnerWorkers
from bench.loadclient import close, configure_client, load_page

#: What the frame's file imports (fetched once per learner, then cached by a browser).
ASSETS = ("static_source.js", "bucket_timeline.bundle.js")
ROUND = {"widget": "bucket-timeline", "settings": "", "question": "tail"}


def _stats(xs: list[float]) -> dict:
    return {"p50_s": percentile(xs, 50), "p95_s": percentile(xs, 95), "max_s": max(xs)}


async def run_round(
    target: dict, n: int, before: int, cached: bool = False, workers: int = WORKERS
) -> dict:
    """One round of ``n`` learners (in ``workers`` processes); then ``before`` live frames.

    ``cached``: the learners' browsers hold the frame's scripts (a round after the first).
    """
    assets = () if cached else ASSETS
    base, routes, pids = target["base"], target["routes"], target["pids"]
    configure_client(50 + 4 * before)
    teacher = Instructor(base)
    await teacher.start()
    learners = LearnerWorkers(base, teacher.code, n, routes, workers)
    try:
        await learners.join()
        await teacher.stream.until(lambda v: v.get("connected") == n, timeout=120)
        learners.expect_widget(assets)
        cpu0, t_open = tree_cpu(pids), time.perf_counter()
        opened = await teacher.act("open", **ROUND)
        if not opened.get("ok"):
            raise RuntimeError(f"Open voting was refused: {opened}")
        loaded, client_loaded = await learners.widgets()
        cpu_loaded = tree_cpu(pids)
        rng = random.Random(28)
        values = [round(rng.uniform(1, 12), 2) for _ in range(n)]
        votes = await learners.vote([str(v) for v in values])
        refused = [r for _, _, r in votes if not r.get("ok")]
        await teacher.stream.until(
            lambda v: (v.get("votes") or {}).get("count") == n - len(refused)
        )
        learners.expect_answer()
        cpu_voted, t_reveal = tree_cpu(pids), time.perf_counter()
        if not (await teacher.act("reveal")).get("ok"):
            raise RuntimeError("Reveal was refused")
        shown = await learners.answers()
        cpu1 = tree_cpu(pids)
        lines = (await teacher.act("results"))["text"].strip().split("\n")
        counted = [float(x) for x in lines[lines.index("prediction") + 1 :]]
        live = teacher.stream.views[-1][1]
        route = f"/class/bucket-timeline?room={teacher.code}&round={live['round']}&mode=hidden"
        cpu2 = tree_cpu(pids)
        pages = await asyncio.gather(*(load_page(base, route) for _ in range(before)))
        await asyncio.sleep(1.0)  # the backends finish the pages' patches
        cpu3 = tree_cpu(pids)
        for page in pages:
            close(page)
        await teacher.act("end")
    finally:
        learners.stop()
    return {
        "learners": n,
        "open_to_widget": _stats([t - t_open for t, _ in loaded]),
        "widget_bytes_per_learner": loaded[0][1],
        "reveal_to_answer": _stats([t - t_reveal for t in shown]),
        "round_cpu_ms_per_learner": 1000 * (cpu1 - cpu0) / n,
        "cpu_ms_per_learner_by_part": {
            "open_to_widget": 1000 * (cpu_loaded - cpu0) / n,
            "votes": 1000 * (cpu_voted - cpu_loaded) / n,
            "reveal": 1000 * (cpu1 - cpu_voted) / n,
        },
        "client_cpu_s_open_to_widget": client_loaded,
        "scripts_fetched": bool(assets),
        "learner_workers": learners.workers,
        "live_frame_cpu_ms_per_learner": 1000 * (cpu3 - cpu2) / max(1, before),
        "live_frames_ok": sum(p.ok for p in pages),
        "votes_refused": len(refused),
        "no_vote_lost": not refused and sorted(counted) == sorted(values),
    }


def bare_session_cpu_ms(loads: int) -> float:
    """The bare Panel app's server CPU per session behind nginx with two backends."""
    with tempfile.TemporaryDirectory(prefix="overlap-lab-bare-") as tmp:
        deployment = start_deployment("bare-nginx-2", Path(tmp))
        try:
            return burst(deployment, "/bare", loads, reap=False)["cpu_ms_per_session"]
        finally:
            deployment.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=1000)
    parser.add_argument("--before", type=int, default=100, help="live frames, as before")
    parser.add_argument("--bare", type=int, default=100, help="bare app page loads")
    parser.add_argument(
        "--cached", action="store_true", help="browsers hold the frame's scripts (a later round)"
    )
    parser.add_argument(
        "--workers", type=int, default=WORKERS,
        help="processes the learners are spread over (default: one per core)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    bare = bare_session_cpu_ms(args.bare)
    with (
        tempfile.TemporaryDirectory(prefix="overlap-lab-round-") as tmp,
        behind_nginx(Path(tmp)) as target,
    ):
        result = asyncio.run(
            run_round(target, args.learners, args.before, args.cached, args.workers)
        )
    result["bare_session_cpu_ms"] = bare
    result["round_cpu_x_bare"] = result["round_cpu_ms_per_learner"] / bare
    result["live_frame_cpu_x_bare"] = result["live_frame_cpu_ms_per_learner"] / bare
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
