"""The store of a class served by several processes or machines: Redis, with pub/sub.

Every room's keys (:func:`~app.classroom.store.room_keys`) expire together,
renewed by each write. Writes that depend on a room's state are Lua scripts,
so they are atomic however many backends write at once. Events go out on one
channel; each process subscribes once and hands them to its listeners. When
the connection to Redis drops (Redis restarted), commands are retried and the
subscription is made again, followed by a ``resync`` event so that every page
is brought up to date with what it may have missed.

Start Redis with its append-only file (``appendonly yes``) so that a restart
keeps every room and vote.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Collection, Mapping

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .codes import new_secret
from .errors import StoreDown
from .store import EVERY_ROOM, RESYNC, RoomStore, VoteRecord, room_keys, vote_field

log = logging.getLogger("overlap-lab.classroom")
CHANNEL = "ol:events"
#: How long to wait before trying Redis again after a failure (s).
RETRY_DELAY = 0.25
#: Connections one process keeps to Redis at most (the subscription takes one).
MAX_CONNECTIONS = 32
#: A call to Redis that takes longer than this fails with a message (s).
STORE_TIMEOUT = 2.0
#: How often each process asks Redis whether it is there (s).
HEALTH_EVERY = 1.0
#: Where the secret that signs learner ids is kept, for every backend alike.
SECRET_KEY = "ol:learner-secret"
#: What the log and the instructor's page say when Redis would lose the class in a restart.
NOT_DURABLE = (
    "Redis runs without its append-only file (appendonly no): if Redis restarts, "
    "every class and vote in it is lost. Start Redis with appendonly yes."
)
#: A subscription quiet this long asks Redis whether it is still there (s).
QUIET = 5.0

_UPDATE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local n = tonumber(ARGV[2])
local i = 3
for _ = 1, n do
  if redis.call('HGET', KEYS[1], ARGV[i]) ~= ARGV[i + 1] then return false end
  i = i + 2
end
if i <= #ARGV then redis.call('HSET', KEYS[1], unpack(ARGV, i)) end
redis.call('HINCRBY', KEYS[1], 'version', 1)
for k = 1, 3 do redis.call('EXPIRE', KEYS[k], ARGV[1]) end
return redis.call('HGETALL', KEYS[1])
"""
# One round trip per vote: the checks, the learner's rate, the vote, the expiry
# and the announcement (the codes are those of app.classroom.store).
_VOTE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no room' end
local room = redis.call('HMGET', KEYS[1], 'round', 'opened', 'phase')
if room[1] ~= ARGV[1] or room[2] ~= ARGV[2] then return 'moved' end
if room[3] ~= 'voting' then return 'closed' end
local n = redis.call('INCR', KEYS[4])
if n == 1 then redis.call('PEXPIRE', KEYS[4], ARGV[7]) end
if n > tonumber(ARGV[6]) then return 'limited' end
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
for k = 1, 3 do redis.call('EXPIRE', KEYS[k], ARGV[5]) end
redis.call('PUBLISH', ARGV[8], ARGV[9])
return 'kept'
"""
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('HSET', KEYS[1], 'version', 1)
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
"""
_HIT = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
"""


def _rate_key(bucket: str) -> str:
    return f"ol:rate:{bucket}"


def _seconds(ttl: float) -> int:
    return max(1, round(ttl))


class RedisStore(RoomStore):
    """Rooms in Redis at ``url`` (``redis://host:port/db``)."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self._redis = None
        self._listener: asyncio.Task | None = None
        self._subscribed: asyncio.Event | None = None
        self._closing = False
        self._scripts: dict[str, object] = {}
        self._watcher: asyncio.Task | None = None
        self._secret = ""

    async def start(self) -> None:
        import redis.asyncio as aioredis
        from redis.asyncio.retry import Retry
        from redis.backoff import ExponentialBackoff

        # A command retries while Redis restarts, but every call gives up after
        # STORE_TIMEOUT (see _call); a burst of requests waits for one of the pool's
        # connections rather than failing.
        pool = aioredis.BlockingConnectionPool.from_url(
            self.url,
            max_connections=MAX_CONNECTIONS,
            timeout=STORE_TIMEOUT,
            decode_responses=True,
            retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 20),
            retry_on_error=[RedisConnectionError, RedisTimeoutError],
            socket_connect_timeout=STORE_TIMEOUT,
            socket_timeout=STORE_TIMEOUT,
            health_check_interval=10,
        )
        self._redis = aioredis.Redis(connection_pool=pool)
        for name, source in (("update", _UPDATE), ("vote", _VOTE), ("create", _CREATE)):
            self._scripts[name] = self._redis.register_script(source)
        self._scripts["hit"] = self._redis.register_script(_HIT)
        try:
            await self._call(self._redis.ping())
            self.durable = await self._call(appendonly(self._redis))
            candidate = new_secret()
            await self._call(self._redis.set(SECRET_KEY, candidate, nx=True))
            self._secret = await self._call(self._redis.get(SECRET_KEY)) or candidate
        except BaseException:
            await self.close()
            raise
        self._subscribed = asyncio.Event()
        loop = asyncio.get_running_loop()
        self._listener = loop.create_task(self._listen())
        self._watcher = loop.create_task(self._watch())
        await asyncio.wait_for(self._subscribed.wait(), timeout=10)

    async def _call(self, awaitable):
        """``awaitable``'s result, or StoreDown once Redis has not answered in STORE_TIMEOUT."""
        try:
            async with asyncio.timeout(STORE_TIMEOUT):
                result = await awaitable
        except (TimeoutError, RedisConnectionError, RedisTimeoutError, OSError) as exc:
            self._set_available(False, type(exc).__name__)
            raise StoreDown() from None
        self._set_available(True)
        return result

    async def _watch(self) -> None:
        """Ask Redis whether it is there every HEALTH_EVERY seconds, so that pages say so."""
        while not self._closing:
            await asyncio.sleep(HEALTH_EVERY)
            try:
                await self._call(self._redis.ping())
                # Redis may have come back empty (no append-only file): the learners'
                # secret is put back, so that every backend still accepts their cookies.
                await self._call(self._redis.set(SECRET_KEY, self._secret, nx=True))
            except StoreDown:
                pass  # said once by _call; asked again in a moment
            except Exception as exc:  # Redis answered with an error (read-only, out of memory)
                log.warning("classroom: Redis refused its health check (%s)", type(exc).__name__)

    async def learner_secret(self) -> str:
        return self._secret

    async def close(self) -> None:
        self._closing = True
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError, Exception):
                await asyncio.wait_for(self._listener, timeout=2)
            self._listener = None
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def _listen(self) -> None:
        """Receive events for ever, subscribing again after Redis comes back."""
        first = True
        while not self._closing:
            pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(CHANNEL)
                # The client reconnects and subscribes again by itself after Redis comes
                # back; what was published meanwhile is lost, so listeners catch up.
                pubsub.connection.register_connect_callback(self._reconnected)
                self._subscribed.set()
                if not first:
                    log.warning("classroom: Redis is back; pages catch up")
                    self._deliver(EVERY_ROOM, RESYNC)
                first = False
                loop = asyncio.get_running_loop()
                while not self._closing:
                    since = loop.time()
                    message = await pubsub.get_message(timeout=QUIET)
                    if message is None:
                        # Only after a quiet wait: the answer to a ping is itself read as
                        # None, so pinging after every None would ping without pause.
                        if loop.time() - since >= QUIET:
                            await pubsub.ping()
                        continue
                    kind, _, code = str(message.get("data", "")).partition(" ")
                    if kind and code:
                        self._deliver(code, kind)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a lost connection: try again shortly
                if self._closing:
                    return
                log.warning("classroom: Redis subscription lost (%s); retrying", type(exc).__name__)
                await asyncio.sleep(RETRY_DELAY)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    def _reconnected(self, _connection) -> None:
        log.warning("classroom: Redis is back; pages catch up")
        # After the subscription is made again (the client's own callback runs first).
        asyncio.get_running_loop().call_later(0.05, self._deliver, EVERY_ROOM, RESYNC)

    async def create_room(self, code: str, fields: Mapping[str, str], ttl: float) -> bool:
        args = [_seconds(ttl)]
        for k, v in fields.items():
            args += [k, v]
        return bool(await self._call(self._scripts["create"](keys=[room_keys(code)[0]], args=args)))

    async def get_room(self, code: str) -> dict[str, str] | None:
        room = await self._call(self._redis.hgetall(room_keys(code)[0]))
        return room or None

    async def update_room(
        self, code: str, expect: Mapping[str, str], changes: Mapping[str, str], ttl: float
    ) -> dict[str, str] | None:
        args: list = [_seconds(ttl), len(expect)]
        for k, v in expect.items():
            args += [k, v]
        for k, v in changes.items():
            args += [k, v]
        flat = await self._call(self._scripts["update"](keys=list(room_keys(code)), args=args))
        if not flat:
            return None
        return dict(zip(flat[::2], flat[1::2], strict=True))

    async def cast_vote(self, vote: VoteRecord) -> str:
        keys = [*room_keys(vote.code), _rate_key(f"vote:{vote.learner}")]
        args = [
            str(vote.round_no), vote.opened, vote.field, repr(float(vote.value)),
            _seconds(vote.ttl), vote.limit, int(vote.window * 1000), CHANNEL, f"votes {vote.code}",
        ]  # fmt: skip
        return str(await self._call(self._scripts["vote"](keys=keys, args=args)))

    async def votes(self, code: str, round_no: int) -> dict[str, float]:
        prefix = f"{round_no}:"
        found = await self._call(self._redis.hgetall(room_keys(code)[1]))
        return {k[len(prefix) :]: float(v) for k, v in found.items() if k.startswith(prefix)}

    async def vote_of(self, code: str, round_no: int, learner: str) -> float | None:
        value = await self._call(
            self._redis.hget(room_keys(code)[1], vote_field(round_no, learner))
        )
        return None if value is None else float(value)

    async def mark_seen(self, code: str, learners: Collection[str], now: float, ttl: float) -> None:
        if not learners:
            return
        key = room_keys(code)[2]

        async def mark() -> None:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.zadd(key, dict.fromkeys(learners, now))
                pipe.expire(key, _seconds(ttl))
                await pipe.execute()

        await self._call(mark())

    async def forget_seen(self, code: str, learner: str) -> None:
        await self._call(self._redis.zrem(room_keys(code)[2], learner))

    async def connected(self, code: str, since: float) -> int:
        return int(await self._call(self._redis.zcount(room_keys(code)[2], since, "+inf")))

    async def hit(self, bucket: str, limit: int, window: float) -> bool:
        n = await self._call(
            self._scripts["hit"](keys=[_rate_key(bucket)], args=[int(window * 1000)])
        )
        return int(n) <= limit

    async def delete_room(self, code: str) -> None:
        await self._call(self._redis.delete(*room_keys(code)))

    async def publish(self, code: str, kind: str) -> None:
        await self._call(self._redis.publish(CHANNEL, f"{kind} {code}"))


async def appendonly(client) -> bool | None:
    """Whether Redis keeps every write in its append-only file; None if it will not say."""
    try:
        return _durable(await client.config_get("appendonly"))
    except (RedisConnectionError, RedisTimeoutError):
        raise
    except RedisError:  # CONFIG renamed, or not allowed to this user
        return None


def _durable(config: Mapping[str, str]) -> bool:
    return config.get("appendonly") == "yes"


def persistence_warning(url: str) -> str | None:
    """What an operator must hear at start about Redis at ``url`` losing classes, or None."""
    import redis

    client = redis.Redis.from_url(
        url, socket_timeout=STORE_TIMEOUT, socket_connect_timeout=STORE_TIMEOUT,
        decode_responses=True,
    )  # fmt: skip
    try:
        with client:
            durable = _durable(client.config_get("appendonly"))
    except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
        return f"Redis did not answer at start ({type(exc).__name__}): classes wait for it."
    except RedisError:
        return "Redis would not say whether it keeps an append-only file (CONFIG GET appendonly)."
    return None if durable else NOT_DURABLE
