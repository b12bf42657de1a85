"""A class of 200 learners, at the protocol level: join, vote at once, reveal.

Each learner is what a learner's page does, over Tornado's HTTP client: the
page's GET (which gives the learner's session cookie), the page's event
stream, and one vote POST. The instructor is the instructor's page: the start
of a class, its event stream, Open voting and Reveal. Nothing here drives a
browser, so one process can be hundreds of learners.

Targets (issue 21): vote → instructor's histogram p95 ≤ 1 s; Reveal → every
learner's page shows the answer p95 ≤ 2 s; no vote lost, every count exact.

    flock /tmp/overlap-bench.lock .venv/bin/python -m bench.classroom [--learners 200]

runs it against one process (the in-process store), then against nginx with
two backends and Redis (``--setup one`` / ``--setup nginx`` for one of them).
A vote's latency is from sending it until the instructor's stream first
reports a count that includes it (the k-th vote stored is in every count ≥ k).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import numpy as np
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

from bench.loadclient import configure_client
from bench.servers import REPO, app_command, free_port, start_server, stop_server


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (linear between order statistics)."""
    return float(np.percentile(np.asarray(values, float), q))


#: How long one class's run may take at most (s): the run stops by itself.
RUN_SECONDS = 180.0
#: How long a stream may stay open in a run (s).
STREAM_SECONDS = 600.0


@dataclass
class Stream:
    """A page's event stream: every view received, with the time it arrived."""

    views: list[tuple[float, dict]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    _buffer: str = ""

    def feed(self, chunk: bytes) -> None:
        self._buffer += chunk.decode("utf-8", "replace")
        while "\n\n" in self._buffer:
            event, self._buffer = self._buffer.split("\n\n", 1)
            for line in event.split("\n"):
                if line.startswith("data: "):
                    self.views.append((time.perf_counter(), json.loads(line[6:])))
                    self.changed.set()

    async def until(self, test: Callable[[dict], bool], timeout: float = 60.0) -> float:
        """The arrival time of the first view (seen or to come) that passes ``test``."""
        deadline = time.perf_counter() + timeout
        seen = 0
        while True:
            for t, view in self.views[seen:]:
                if test(view):
                    return t
            seen = len(self.views)
            self.changed.clear()
            left = deadline - time.perf_counter()
            if left <= 0:
                last = self.views[-1][1] if self.views else None
                raise TimeoutError(f"no such view within {timeout} s (last: {last})")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), timeout=left)


def _open(client: AsyncHTTPClient, request: HTTPRequest, stream: Stream) -> asyncio.Future:
    request.streaming_callback = stream.feed
    request.request_timeout = STREAM_SECONDS
    future = asyncio.ensure_future(client.fetch(request, raise_error=False))
    # A stream ends when its run's loop closes; that is how it is meant to end.
    future.add_done_callback(lambda f: f.cancelled() or f.exception())
    return future


class Instructor:
    """The instructor's page: start a class, follow it, act on it."""

    def __init__(self, base: str, cookie: str = "") -> None:
        self.base, self.cookie = base, cookie
        self.client = AsyncHTTPClient()
        self.stream = Stream()
        self.code = self.key = ""

    def headers(self) -> dict:
        """What each of the instructor's requests sends: JSON, and its cookie if any."""
        headers = {"Content-Type": "application/json"}
        if self.cookie:
            headers["Cookie"] = self.cookie
        return headers

    async def start(self) -> None:
        response = await self.client.fetch(
            HTTPRequest(f"{self.base}/class/start", method="POST", body=b"",
                        follow_redirects=False, headers=self.headers()),
            raise_error=False,
        )  # fmt: skip
        found = re.search(r"#code=(\w+)&key=(\S+)", response.headers.get("Location", ""))
        if found is None:
            raise RuntimeError(f"Start a class answered {response.code}")
        self.code, self.key = found.group(1), unquote(found.group(2))
        body = json.dumps({"code": self.code, "key": self.key})
        _open(
            self.client,
            HTTPRequest(f"{self.base}/class/api/teach/stream", method="POST", body=body,
                        headers=self.headers()),
            self.stream,
        )  # fmt: skip
        await self.stream.until(lambda v: "code" in v)

    async def act(self, action: str, **extra) -> dict:
        body = json.dumps({"code": self.code, "key": self.key, **extra})
        response = await self.client.fetch(
            HTTPRequest(f"{self.base}/class/api/teach/{action}", method="POST", body=body,
                        headers=self.headers()),
            raise_error=False,
        )  # fmt: skip
        if action == "results":
            return {"status": response.code, "text": response.body.decode()}
        return {"status": response.code, **json.loads(response.body or b"{}")}


class Learner:
    """A learner's page: its GET (the session cookie), its event stream and its votes."""

    def __init__(self, base: str, code: str, route: str = "") -> None:
        self.base, self.code, self.route = base, code, route
        self.client = AsyncHTTPClient()
        self.stream = Stream()
        self.cookie = f"ol_route={route}" if route else ""

    def headers(self, json_body: bool = False) -> dict:
        """What each of the learner's requests sends: its cookie, and JSON for a vote."""
        headers = {"Cookie": self.cookie} if self.cookie else {}
        if json_body:
            headers["Content-Type"] = "application/json"
        return headers

    async def join(self) -> None:
        response = await self.client.fetch(
            HTTPRequest(f"{self.base}/class/{self.code}", headers=self.headers()),
        )
        for header in response.headers.get_list("Set-Cookie"):
            if header.startswith("ol_learner="):
                self.cookie = "; ".join(filter(None, [self.cookie, header.split(";")[0]]))
        _open(
            self.client,
            HTTPRequest(f"{self.base}/class/{self.code}/events", headers=self.headers()),
            self.stream,
        )
        await self.stream.until(lambda v: "phase" in v)

    async def vote(self, text: object) -> tuple[float, float, dict]:
        """Send a prediction: (sent, answered, reply)."""
        sent = time.perf_counter()
        try:
            response = await self.client.fetch(
                HTTPRequest(f"{self.base}/class/{self.code}/vote", method="POST",
                            body=json.dumps({"text": text}), headers=self.headers(True)),
            )  # fmt: skip
            reply = json.loads(response.body)
        except HTTPClientError as exc:
            reply = json.loads(exc.response.body) if exc.response is not None else {}
            reply.setdefault("status", exc.code)
        return sent, time.perf_counter(), reply


@dataclass
class RoundResult:
    """What one run of a class measured."""

    learners: int
    join_s: float
    ack_latency: list[float]
    vote_latency: list[float]
    reveal_latency: list[float]
    counted: int
    csv_values: list[float]
    sent_values: list[float]

    def summary(self) -> dict:
        def stats(xs: list[float]) -> dict:
            return {
                "p50_s": percentile(xs, 50),
                "p95_s": percentile(xs, 95),
                "max_s": max(xs),
            }

        return {
            "learners": self.learners,
            "all_joined_s": self.join_s,
            "vote_acknowledged": stats(self.ack_latency),
            "vote_to_histogram": stats(self.vote_latency),
            "reveal_to_answer": stats(self.reveal_latency),
            "votes_counted": self.counted,
            "no_vote_lost": sorted(self.csv_values) == sorted(self.sent_values),
        }


async def run_class(
    base: str, n: int, routes: Callable[[int], str] | None = None, instructor_route: str = ""
) -> RoundResult:
    """One round with ``n`` learners: all join, all vote at once, then Reveal."""
    configure_client(4 * n + 50)
    teacher = Instructor(base, f"ol_route={instructor_route}" if instructor_route else "")
    await teacher.start()
    learners = [Learner(base, teacher.code, routes(i) if routes else "") for i in range(n)]
    t0 = time.perf_counter()
    await asyncio.gather(*(lr.join() for lr in learners))
    await teacher.stream.until(lambda v: v.get("connected") == n)
    join_s = time.perf_counter() - t0
    opened = await teacher.act(
        "open", widget="queue-lab", settings="arrival=2&service=3&initial=4", question="drain"
    )
    if not opened.get("ok"):
        raise RuntimeError(f"Open voting was refused: {opened}")
    await asyncio.gather(
        *(lr.stream.until(lambda v: v.get("phase") == "voting") for lr in learners)
    )
    rng = random.Random(21)
    values = [round(rng.uniform(1, 8), 2) for _ in range(n)]
    votes = await asyncio.gather(*(lr.vote(str(v)) for lr, v in zip(learners, values, strict=True)))
    refused = [r for _, _, r in votes if not r.get("ok")]
    if refused:
        raise RuntimeError(f"{len(refused)} votes refused, e.g. {refused[0]}")
    await teacher.stream.until(lambda v: (v.get("votes") or {}).get("count") == n)
    by_ack = sorted(votes, key=lambda v: v[1])
    counts = [(t, (v.get("votes") or {}).get("count", 0)) for t, v in teacher.stream.views]
    latency = []
    for k, (sent, _acked, _reply) in enumerate(by_ack, start=1):
        shown = next(t for t, c in counts if c >= k and t >= sent)
        latency.append(shown - sent)
    t_reveal = time.perf_counter()
    revealed = await teacher.act("reveal")
    if not revealed.get("ok"):
        raise RuntimeError(f"Reveal was refused: {revealed}")
    arrived = await asyncio.gather(*(lr.stream.until(lambda v: "answer" in v) for lr in learners))
    reveal_latency = [t - t_reveal for t in arrived]
    view = teacher.stream.views[-1][1]
    csv_text = (await teacher.act("results"))["text"]
    lines = csv_text.strip().split("\n")
    csv_values = [float(x) for x in lines[lines.index("prediction") + 1 :]]
    await teacher.act("end")
    return RoundResult(
        n,
        join_s,
        [acked - sent for sent, acked, _ in votes],
        latency,
        reveal_latency,
        view["result"]["count"],
        csv_values,
        values,
    )


# --- the servers ----------------------------------------------------------------------


@contextlib.contextmanager
def _process(command: list[str], log: Path) -> Iterator[subprocess.Popen]:
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)  # fmt: skip
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextlib.contextmanager
def one_process(tmp: Path) -> Iterator[dict]:
    """One ``overlap-lab serve`` with the in-process store."""
    port = free_port()
    server = start_server("app", app_command(port), port, "/liveness", tmp)
    try:
        yield {"base": server.url}
    finally:
        stop_server(server)


@contextlib.contextmanager
def behind_nginx(tmp: Path) -> Iterator[dict]:
    """nginx (deploy/nginx.conf) in front of two backends sharing Redis."""
    redis_port = free_port()
    with _process(
        ["/usr/bin/redis-server", "--port", str(redis_port), "--bind", "127.0.0.1",
         "--dir", str(tmp), "--appendonly", "yes", "--appendfsync", "always", "--save", ""],
        tmp / "redis.log",
    ) as redis:  # fmt: skip
        time.sleep(0.5)
        url = f"redis://127.0.0.1:{redis_port}/0"
        ports = [free_port(), free_port()]
        servers = [
            start_server(f"app{i}", [*app_command(p), "--redis", url], p, "/liveness", tmp)
            for i, p in enumerate(ports)
        ]
        try:
            listen = free_port()
            backends = [arg for p in ports for arg in ("--backend", f"127.0.0.1:{p}")]
            conf = subprocess.run(
                [sys.executable, str(REPO / "deploy" / "render.py"), "--listen",
                 f"127.0.0.1:{listen}", "--server-name", "localhost", "--prefix", "/",
                 "--runtime", str(tmp), *backends],
                check=True, capture_output=True, text=True,
            ).stdout  # fmt: skip
            tmp.chmod(0o755)
            (tmp / "nginx.conf").write_text(conf, encoding="utf-8")
            with _process(
                ["/usr/sbin/nginx", "-p", str(tmp), "-c", str(tmp / "nginx.conf"),
                 "-e", str(tmp / "error.log"), "-g", "daemon off;"],
                tmp / "nginx.out",
            ):  # fmt: skip
                base = f"http://127.0.0.1:{listen}"
                for _ in range(100):
                    with contextlib.suppress(OSError):
                        import urllib.request

                        urllib.request.urlopen(f"{base}/liveness", timeout=1)
                        break
                    time.sleep(0.1)
                yield {
                    "base": base,
                    "routes": lambda i: f"learner{i}",
                    "pids": [redis.pid, *(server.pid for server in servers)],
                }
        finally:
            for server in servers:
                stop_server(server)


SETUPS = {"one": one_process, "nginx": behind_nginx}


def measure(setup: str, learners: int) -> dict:
    """One class of ``learners`` on ``setup``: the summary of :class:`RoundResult`."""
    with (
        tempfile.TemporaryDirectory(prefix="overlap-lab-class-") as tmp,
        SETUPS[setup](Path(tmp)) as target,
    ):
        run = run_class(target["base"], learners, target.get("routes"))
        result = asyncio.run(asyncio.wait_for(run, timeout=RUN_SECONDS))
    return {"setup": setup, **result.summary()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--setup", choices=[*SETUPS, "both"], default="both")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    setups = list(SETUPS) if args.setup == "both" else [args.setup]
    for setup in setups:
        for _ in range(args.repeats):
            print(json.dumps(measure(setup, args.learners)), flush=True)


if __name__ == "__main__":
    main()
