"""A process's subscription to Redis while nothing happens: it waits, it does not spin."""

from __future__ import annotations

import asyncio

from class_support import run
from redis_server import running_redis

from app.classroom.redis_store import HEALTH_EVERY, QUIET, RedisStore


def _pings(info: dict) -> int:
    return int(info.get("cmdstat_ping", {}).get("calls", 0))


def test_a_quiet_subscription_pings_redis_only_after_a_quiet_wait(tmp_path):
    """The answer to a ping is read as "no message": pinging after each would never pause."""
    with running_redis(tmp_path) as redis:

        async def body():
            store = RedisStore(redis.url)
            await store.start()
            heard: list[tuple[str, str]] = []
            store.on_event(lambda code, kind: heard.append((code, kind)))
            try:
                before = _pings(await store._redis.info("commandstats"))
                await asyncio.sleep(QUIET + 1.0)  # one quiet wait, and a second begun
                during = _pings(await store._redis.info("commandstats")) - before
                await store.publish("ABCDEF", "room")
                for _ in range(100):
                    if heard:
                        break
                    await asyncio.sleep(0.02)
            finally:
                await store.close()
            # One ping of the subscription after the quiet wait, and the health check's one
            # a second (HEALTH_EVERY): a few, not thousands.
            checks = (QUIET + 1.0) / HEALTH_EVERY
            assert 1 + checks - 2 <= during <= 1 + checks + 2, during
            assert heard == [("ABCDEF", "room")]  # and it still hears what is published

        run(body())
