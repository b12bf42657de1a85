"""Redis killed under a running class, and Redis that a restart would empty: said out loud."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from class_http import open_class
from class_pages import start_class
from class_support import run, ui_support
from redis_server import running_redis

from app.classroom.redis_store import SECRET_KEY, RedisStore

UNREACHABLE = "The class store is unreachable — votes are paused"


def _says_down(view: dict) -> bool:
    return any(n.startswith(UNREACHABLE) for n in view.get("notices", []))


def test_a_redis_outage_is_said_in_seconds_answered_in_two_and_the_class_recovers(tmp_path):
    with contextlib.ExitStack() as stack:
        redis = stack.enter_context(running_redis(tmp_path / "redis"))
        server = stack.enter_context(ui_support.running_server("--redis", redis.url))

        async def body():
            teacher, learner = await open_class(server.url)
            assert teacher.stream.views[-1][1]["notices"] == []
            _, _, reply = await learner.vote("3")
            assert reply == {"ok": True, "value": 3.0}

            await asyncio.to_thread(redis.kill)
            killed = time.perf_counter()
            said = await teacher.stream.until(_says_down, timeout=15) - killed
            assert said < 4.0, said
            # A vote and an instructor's action answer in about 2 s, and say why.
            for attempt in (lambda: learner.vote("4"), lambda: teacher.act("reveal")):
                sent = time.perf_counter()
                answer = await attempt()
                took = time.perf_counter() - sent
                reply = answer[2] if isinstance(answer, tuple) else answer
                assert reply["ok"] is False and reply["message"].startswith(UNREACHABLE), reply
                assert took < 3.5, took

            await asyncio.to_thread(redis.start)  # the same append-only file
            back = time.perf_counter()
            await teacher.stream.until(
                lambda v: v.get("notices") == [] and v.get("phase") == "voting", timeout=15
            )
            assert time.perf_counter() - back < 5.0
            # The class goes on where it was: the vote before the outage is there.
            _, _, reply = await learner.vote("5")
            assert reply == {"ok": True, "value": 5.0}
            assert (await teacher.act("reveal"))["ok"] is True
            results = await teacher.act("results")
            assert "# predictions,1\n" in results["text"] and "\n5.0\n" in results["text"]
            return said

        said = run(body(), timeout=120)
        log = server.log.text()
        assert "the class store does not answer" in log and "answers again" in log
        assert "append-only" not in log  # this Redis keeps its file: no warning
        print(f"outage shown on the instructor's page {said:.2f} s after the kill")


def test_serve_warns_at_start_when_a_redis_restart_would_lose_the_class(tmp_path):
    with contextlib.ExitStack() as stack:
        redis = stack.enter_context(running_redis(tmp_path / "redis", appendonly=False))
        server = stack.enter_context(ui_support.running_server("--redis", redis.url))
        # Before any class is started: the check runs when the server starts.
        started = server.log.text()
        assert "appendonly no" in started and "every class and vote in it is lost" in started

        async def body():
            teacher, _ = await open_class(server.url)
            notices = teacher.stream.views[-1][1]["notices"]
            assert len(notices) == 1 and "if it restarts, this class is lost" in notices[0]

        run(body(), timeout=60)


@pytest.mark.ui
def test_the_instructors_page_shows_the_outage_and_clears_it_by_itself(browser, tmp_path):
    with contextlib.ExitStack() as stack:
        redis = stack.enter_context(running_redis(tmp_path / "redis"))
        server = stack.enter_context(ui_support.running_server("--redis", redis.url))
        page = browser.new_page()
        start_class(page, server.url)
        alert = page.get_by_role("alert").filter(has_text=UNREACHABLE)
        assert alert.count() == 0
        redis.kill()
        alert.wait_for(timeout=6_000)  # within a few seconds of the kill
        redis.start()
        alert.wait_for(state="detached", timeout=10_000)  # and gone once Redis answers
        assert page.locator("#store-status").is_hidden()
        page.close()


def test_redis_restarted_empty_gets_the_learners_secret_back(tmp_path):
    """Without its append-only file Redis forgets the secret; the backends put theirs back."""
    with running_redis(tmp_path / "redis", appendonly=False) as redis:

        async def body():
            store = RedisStore(redis.url)
            await store.start()
            try:
                secret = await store.learner_secret()
                assert await store._redis.get(SECRET_KEY) == secret
                await asyncio.to_thread(redis.restart)  # SIGKILL: everything is gone
                for _ in range(100):
                    with contextlib.suppress(Exception):
                        if await store._redis.get(SECRET_KEY) == secret:
                            break
                    await asyncio.sleep(0.1)
                assert await store._redis.get(SECRET_KEY) == secret
                # A backend started now signs with the same secret as the others.
                fresh = RedisStore(redis.url)
                await fresh.start()
                assert await fresh.learner_secret() == secret
                await fresh.close()
            finally:
                await store.close()

        run(body(), timeout=60)
