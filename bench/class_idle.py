"""The server's CPU while a class of many learners waits between rounds.

nginx in front of two backends sharing Redis (:func:`bench.classroom.behind_nginx`),
``--learners`` protocol-level learners joined (their event streams open, in one
process per core), then nothing happens for ``--seconds``: what the backends and
Redis spend is the cost of keeping the class, mostly each process's heartbeat
(every ``app.classroom.hub.HEARTBEAT`` seconds it marks its learners as still
connected and tells the instructor's page the count).

    flock /tmp/overlap-bench.lock .venv/bin/python -m bench.class_idle --learners 1000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from bench.class_arrival import tree_cpu
from bench.classroom import Instructor, behind_nginx
from bench.learner_workers import WORKERS, LearnerWorkers
from bench.loadclient import configure_client


async def idle_class(target: dict, n: int, seconds: float, workers: int) -> dict:
    """Join ``n`` learners, settle, then measure the server's CPU over ``seconds``."""
    pids = target["pids"]
    configure_client(50)
    teacher = Instructor(target["base"])
    await teacher.start()
    learners = LearnerWorkers(target["base"], teacher.code, n, target["routes"], workers)
    try:
        await learners.join()
        await teacher.stream.until(lambda v: v.get("connected") == n, timeout=120)
        await asyncio.sleep(2.0)  # the joins' own work is done
        cpu0, t0 = tree_cpu(pids), time.perf_counter()
        await asyncio.sleep(seconds)
        cpu1, t1 = tree_cpu(pids), time.perf_counter()
        still = teacher.stream.views[-1][1].get("connected")
        await teacher.act("end")
    finally:
        learners.stop()
    return {
        "learners": n,
        "seconds": t1 - t0,
        "server_cpu_s": cpu1 - cpu0,
        "server_cpu_ms_per_learner_per_minute": 1000 * (cpu1 - cpu0) / n * 60 / (t1 - t0),
        "connected_at_end": still,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--workers", type=int, default=WORKERS)
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="overlap-lab-idle-") as tmp,
        behind_nginx(Path(tmp)) as target,
    ):
        result = asyncio.run(idle_class(target, args.learners, args.seconds, args.workers))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
