"""An engine whose 2025 sessions live in Redis, so any worker serves any session.

Before a request naming a session, the session's record is fetched (its idle
timer restarted) into the engine's own store; after it, a new or changed
session is written back, and a client's answer or cancel for a call running
elsewhere is relayed. A 2026-07-28 request touches Redis for tasks only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from redis.exceptions import RedisError

from wymcp.conf import Settings, build_engine
from wymcp.core.server import (
    INTERNAL_ERROR,
    RETRY_AFTER,
    SESSION_HEADER,
    Exchange,
    Headers,
    MemorySessionStore,
    Reply,
    Session,
    Stream,
    error_message,
    principal_key,
)
from wymcp.transport.aiohttp._answers import echoable_id
from wymcp.transport.aiohttp._broker_bus import NOTIFY_CHANNEL, NotificationBus
from wymcp.transport.aiohttp._redis_events import (
    KeptPostStream,
    LoggedStream,
    RedisEvents,
    redis_event_id,
)
from wymcp.transport.aiohttp._redis_sessions import (
    CHANGED_CHANNEL,
    ENDED_CHANNEL,
    RELAY_CHANNEL,
    RedisSessions,
    is_session_id,
)
from wymcp.transport.aiohttp._redis_task_store import RedisTaskStore

if TYPE_CHECKING:
    from wymcp.core.schema import ToolSpec
    from wymcp.core.server import Engine

logger = logging.getLogger("wymcp.transport.aiohttp")

_RECONNECT: Final = 1.0
_SUBSCRIBE_WAIT: Final = 2.0
"""Seconds a session request waits for this worker's channels to be heard."""
"""Seconds between attempts to listen for ended sessions while Redis is down."""
FRESH: Final = 1.0
"""Seconds an initialized session fetched from Redis is served from this
worker's copy without asking Redis again (a quarter of the idle timeout when
that is shorter), while this worker listens for ended and changed sessions."""
_FOLLOW_MS: Final = 1000
"""How long one read of a resumed POST stream waits for its next events."""
_FRESH_LIMIT: Final = 100_000
"""Most sessions remembered as fresh; past it, every one is fetched again."""


class _BrokerDown(Exception):  # noqa: N818 - an answer, not a failure
    """Redis could not be reached for a request that needs a session."""


def _unavailable(body: Any) -> Reply:
    return Reply(
        503,
        error_message(
            echoable_id(body),
            INTERNAL_ERROR,
            "Service unavailable: the session store (BROKER) cannot be reached. "
            "Retry later.",
        ),
        {"Retry-After": str(RETRY_AFTER)},
    )


class _NoStream:
    """The stream of a relayed message: an answer or a cancel never opens one."""

    opened = False

    async def open(self, headers: Any = None) -> None:
        del headers
        raise RuntimeError("a relayed client message has no stream")

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        del message, event_id
        raise RuntimeError("a relayed client message has no stream")


def _runs_here(session: Session, body: Any) -> bool | None:
    """Whether the call `body` answers or cancels runs on this worker.

    None when `body` is neither a client's answer nor a cancel.
    """
    if not isinstance(body, dict):
        return None
    if "method" not in body:
        rid = body.get("id")
        return rid in session.pending if isinstance(rid, str) else None
    if body.get("method") == "notifications/cancelled":
        params = body.get("params")
        rid = params.get("requestId") if isinstance(params, dict) else None
        if isinstance(rid, str | int) and not isinstance(rid, bool):
            return rid in session.in_flight
    return None


def _for_another_worker(session: Session, body: Any) -> bool:
    """Whether `body` answers or cancels a call this worker is not running."""
    return _runs_here(session, body) is False


def _wanted_here(session: Session, message: Any) -> bool:
    """Whether a relayed message answers or cancels a call running here."""
    return _runs_here(session, message) is True


def _fields(session: Session) -> tuple[object, ...]:
    return (
        session.initialized,
        session.log_level,
        frozenset(session.subscriptions),
        frozenset(session.dirty),
    )


def _refresh(local: Session, shared: Session) -> None:
    """Bring this worker's copy of a session up to its shared record."""
    local.initialized = shared.initialized
    local.log_level = shared.log_level
    local.subscriptions = shared.subscriptions
    local.watched_bytes = shared.watched_bytes
    # a list the client read again elsewhere is owed no more; one owed here
    # but not recorded is told again (a repeat, never a loss)
    local.dirty &= shared.dirty


def _without_last_event_id(exchange: Exchange) -> Exchange:
    headers = Headers(
        {k: v for k, v in exchange.headers.index.items() if k != "last-event-id"}
    )
    return Exchange(exchange.method, headers, exchange.body, exchange.principal)


class BrokeredEngine:
    """Serves `engine` with its sessions shared through `sessions` (Redis).

    `store` is the engine's own session store: a cache of the sessions this
    worker serves, filled from Redis on each request that names one.
    """

    def __init__(
        self, engine: Engine, store: MemorySessionStore, sessions: RedisSessions
    ) -> None:
        self.engine = engine
        self._store = store
        self._sessions = sessions
        self._listener: asyncio.Task[None] | None = None
        self._listening = False  # subscribed: ends and changes reach us
        self._subscribed = asyncio.Event()  # set while `_listening`
        self._fresh: dict[str, float] = {}  # session id -> trusted until
        self._validity = min(FRESH, sessions.ttl_ms / 4000)
        self._bus = NotificationBus(sessions.client, engine)
        self._events = RedisEvents(sessions.client, ttl_ms=sessions.ttl_ms)
        engine.broadcast = self._bus.emit

    @property
    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """The served tools (the engine's)."""
        return self.engine.tool_specs

    @property
    def state(self) -> Any:
        """What LIFESPAN yielded (the engine's `state`)."""
        return self.engine.state

    @state.setter
    def state(self, value: Any) -> None:
        self.engine.state = value

    # ------------------------------------------------------------ requests

    async def post(self, exchange: Exchange, stream: Stream) -> Reply:
        """Answer one POSTed message, the session fetched first."""
        try:
            local = await self._hydrate(exchange)
            before = None if local is None else _fields(local)
            if local is not None:
                stream = KeptPostStream(stream, self._events, local.id)
            reply = await self.engine.post(exchange, stream)
            await self._write_back(reply, local, before)
            if local is not None and _for_another_worker(local, exchange.body):
                await self._relay(local.id, exchange.body)
        except _BrokerDown:
            return _unavailable(exchange.body)
        return reply

    async def get(self, exchange: Exchange, stream: Stream) -> Reply:
        """Serve a session's SSE stream, its events kept in Redis for resumption.

        A `Last-Event-ID` that names a kept event (`r-...`) replays the events
        after it, whichever worker sent them; any other goes to the engine.
        """
        try:
            local = await self._hydrate(exchange)
        except _BrokerDown:
            return _unavailable(None)
        if local is None:
            return await self.engine.get(exchange, stream)
        entry = redis_event_id(exchange.headers.get("Last-Event-ID"))
        if entry is not None:
            exchange = _without_last_event_id(exchange)
            try:
                post = await self._events.post_of(local.id, entry)
            except RedisError:
                post = None
            if post is not None and principal_key(local.principal) == principal_key(
                exchange.principal
            ):
                await self._continue_post(local, post, entry, stream)
                return Reply(200, None)
        logged = LoggedStream(stream, self._events, local.id, entry)
        return await self.engine.get(exchange, logged)

    async def _continue_post(
        self, session: Session, post: str, entry: str, stream: Stream
    ) -> None:
        """Send the rest of a POST stream closed early (on any worker), to its end.

        It ends with the call's answer, the session's end, or after the idle
        timeout without news.
        """
        await stream.open()
        waited = 0.0
        while not session.closed and waited < self._sessions.ttl_ms / 1000:
            try:
                entry, events = await self._events.follow(
                    session.id, post, entry, block_ms=_FOLLOW_MS
                )
            except RedisError:
                return
            waited = 0.0 if events else waited + _FOLLOW_MS / 1000
            for event_id, message, last in events:
                if message is not None:
                    await stream.send(message, event_id=event_id)
                if last:
                    return

    async def delete(self, exchange: Exchange) -> Reply:
        """End a session on every worker."""
        try:
            local = await self._hydrate(exchange)
        except _BrokerDown:
            return _unavailable(None)
        reply = await self.engine.delete(exchange)
        if local is not None and reply.status == 200:  # noqa: PLR2004 - HTTP OK
            try:
                await self._sessions.end(local.id)
            except RedisError:
                logger.warning("wymcp: a session ended here but not in BROKER")
                return _unavailable(None)
        return reply

    async def ping(self) -> None:
        """Raise unless the broker answers a PING (`/readyz`)."""
        await self._sessions.client.ping()

    async def aclose(self) -> None:
        """Stop listening, end the local sessions, close the connections."""
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        await self._bus.aclose()
        await self.engine.aclose()
        await self._sessions.aclose()

    # ------------------------------------------------------------ sessions

    async def _hydrate(self, exchange: Exchange) -> Session | None:
        """The session the request names, fetched into the local store."""
        self._listen()
        sids = exchange.headers.getall(SESSION_HEADER)
        if len(sids) != 1 or not is_session_id(sids[0].strip()):
            return None  # the engine answers these
        sid = sids[0].strip()
        await self._heard()
        local = self._store.get(sid)
        now = time.monotonic()
        if local is not None and self._listening and self._fresh.get(sid, 0.0) > now:
            return local  # fetched a moment ago; an end or change would be heard
        try:
            shared = await self._sessions.fetch(sid)
        except RedisError:
            logger.warning("wymcp: BROKER cannot be reached", exc_info=True)
            raise _BrokerDown from None
        if shared is not None and shared.initialized:
            self._trust(sid, now)
        if shared is None:
            if local is not None:  # ended or expired elsewhere
                self._drop(sid)
            return None
        if local is None:
            if not self._store.add(shared):
                return None  # this worker is full: the engine answers 404
            return shared
        if principal_key(local.principal) == principal_key(shared.principal):
            _refresh(local, shared)
        return local

    async def _heard(self) -> None:
        """Wait until ends, changes, notifications and relayed answers reach us.

        A session served earlier would miss what another worker sends
        meanwhile (a GET stream opened before the subscription loses it).
        """
        if self._listening:
            return
        try:
            await asyncio.wait_for(self._subscribed.wait(), _SUBSCRIBE_WAIT)
        except TimeoutError:
            raise _BrokerDown from None

    async def _write_back(
        self, reply: Reply, local: Session | None, before: tuple[object, ...] | None
    ) -> None:
        try:
            new_id = reply.headers.get(SESSION_HEADER)
            if new_id is not None:
                created = self._store.get(new_id)
                if created is not None:
                    try:
                        await self._sessions.create(created)
                    except RedisError:
                        self._drop(new_id)
                        raise
            elif local is not None and not local.closed and _fields(local) != before:
                await self._sessions.update(local)
        except RedisError:
            logger.warning("wymcp: BROKER cannot be reached", exc_info=True)
            raise _BrokerDown from None

    async def _relay(self, sid: str, body: Any) -> None:
        try:
            await self._sessions.relay(sid, body)
        except RedisError:
            logger.warning("wymcp: BROKER cannot be reached", exc_info=True)
            raise _BrokerDown from None

    async def _relayed(self, payload: bytes) -> None:
        """Serve a client message relayed by another worker, if ours to serve."""
        try:
            relayed = json.loads(payload)
            sid, message = relayed["s"], relayed["m"]
        except (ValueError, KeyError, TypeError):
            return
        session = self._store.get(sid) if isinstance(sid, str) else None
        if session is None or not _wanted_here(session, message):
            return
        exchange = Exchange(
            "POST",
            Headers.of([(SESSION_HEADER, sid)]),
            message,
            session.principal,
        )
        await self.engine.post(exchange, _NoStream())

    def _trust(self, sid: str, now: float) -> None:
        """Serve this session from the local copy for a moment."""
        if len(self._fresh) >= _FRESH_LIMIT:
            self._fresh.clear()
        self._fresh[sid] = now + self._validity

    def _drop(self, sid: str) -> None:
        """End this worker's copy of a session that ended elsewhere."""
        self._fresh.pop(sid, None)
        session = self._store.remove(sid)
        if session is None:
            return
        session.close()
        for task in list(session.in_flight.values()):
            task.cancel()

    async def _changed(self, sid: str) -> None:
        """Refresh this worker's copy of a session another worker changed."""
        local = self._store.get(sid) if is_session_id(sid) else None
        if local is None:
            return
        self._fresh.pop(sid, None)  # if the read below fails, the next request reads
        try:
            shared = await self._sessions.peek(sid)
        except RedisError:
            return
        if shared is not None and principal_key(local.principal) == principal_key(
            shared.principal
        ):
            _refresh(local, shared)

    # ------------------------------------------------------------ ended

    def _listen(self) -> None:
        if self._listener is None:
            self._listener = asyncio.get_running_loop().create_task(self._ended())

    async def _ended(self) -> None:
        """Drop each session another worker ended, for as long as we serve."""
        while True:
            try:
                pubsub = self._sessions.client.pubsub()
                try:
                    await pubsub.subscribe(
                        ENDED_CHANNEL, RELAY_CHANNEL, NOTIFY_CHANNEL, CHANGED_CHANNEL
                    )
                    self._fresh.clear()  # what was missed while deaf is unknown
                    self._listening = True
                    self._subscribed.set()
                    async for message in pubsub.listen():
                        data = message.get("data")
                        if message.get("type") != "message" or not isinstance(
                            data, bytes
                        ):
                            continue
                        channel = message.get("channel")
                        if channel == NOTIFY_CHANNEL.encode():
                            self._bus.received(data)
                        elif channel == CHANGED_CHANNEL.encode():
                            await self._changed(data.decode("ascii", "replace"))
                        elif channel == RELAY_CHANNEL.encode():
                            try:
                                await self._relayed(data)
                            except Exception:
                                logger.exception("wymcp: a relayed message failed")
                        else:
                            self._drop(data.decode("ascii", "replace"))
                finally:
                    self._listening = False
                    self._subscribed.clear()
                    self._fresh.clear()
                    # typed from redis-py 8.2 on, untyped before: bound to a
                    # typed name, it type-checks at every version the range allows
                    close: Callable[[], Awaitable[None]] = pubsub.aclose
                    await close()
            except (RedisError, OSError):
                logger.debug("wymcp: listening for ended sessions failed; retrying")
            await asyncio.sleep(_RECONNECT)


def brokered_engine(settings: Settings, broker: str) -> tuple[Engine, BrokeredEngine]:
    """The engine for `settings`, and it with its sessions shared via `broker`."""
    store = MemorySessionStore(
        idle_timeout=settings.SESSION_IDLE_TIMEOUT,
        max_sessions=settings.MAX_SESSIONS,
        clock=time.monotonic,
    )
    tasks = RedisTaskStore(
        broker,
        max_tasks=settings.MAX_TASKS,
        max_per_principal=settings.MAX_TASKS_PER_PRINCIPAL,
        lease=settings.TASK_LEASE,
    )
    engine = build_engine(settings, session_store=store, task_store=tasks)
    sessions = RedisSessions(broker, idle_timeout=settings.SESSION_IDLE_TIMEOUT)
    return engine, BrokeredEngine(engine, store, sessions)
