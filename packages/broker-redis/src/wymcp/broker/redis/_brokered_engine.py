"""An engine whose 2025 sessions live in Redis, so any worker serves any session.

Before a request naming a session, the session's record is fetched (its idle
timer restarted) into the engine's own store; after it, a new or changed
session is written back, and a client's answer or cancel for a call running
elsewhere is relayed. A 2026-07-28 request touches Redis for tasks only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from redis.exceptions import OutOfMemoryError, RedisError

from wymcp.broker.redis._asking_stream import AskingPostStream
from wymcp.broker.redis._bus import NOTIFY_CHANNEL, NotificationBus
from wymcp.broker.redis._encoding import encode
from wymcp.broker.redis._events import (
    EVENTS_PREFIX,
    LoggedStream,
    RedisEvents,
    redis_event_id,
)
from wymcp.broker.redis._probe import BrokerObserver, observe_broker
from wymcp.broker.redis._rates import RedisRates, lease_for
from wymcp.broker.redis._relay import (
    RELAY_LIMIT,
    Kind,
    body_of,
    cancel_of,
    decode,
    head_of,
    pack,
    unpack,
)
from wymcp.broker.redis._relay_routes import (
    RELAY_BUDGET,
    RELAY_WINDOW_MS,
    Refusal,
    RelayRoutes,
    Room,
    Sent,
    StoreFull,
)
from wymcp.broker.redis._session_cache import SessionCache
from wymcp.broker.redis._sessions import (
    CHANGED_CHANNEL,
    ENDED_CHANNEL,
    RELAY_CHANNEL,
    RedisSessions,
    TooMany,
    client_of,
    is_session_id,
)
from wymcp.broker.redis._stream_waits import StreamWaits
from wymcp.broker.redis._task_counts import RedisTaskCounts
from wymcp.broker.redis._task_store import RedisTaskStore
from wymcp.conf import Settings, build_engine
from wymcp.core.server import (
    HANDSHAKE,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    META_CAPABILITIES,
    META_VERSION,
    RETRY_AFTER,
    SESSION_HEADER,
    VERSION_HEADER,
    Exchange,
    Headers,
    Reply,
    Session,
    Stream,
    answered_or_cancelled,
    echoable_id,
    error_message,
    principal_key,
)

if TYPE_CHECKING:
    from wymcp.core.schema import ToolSpec
    from wymcp.core.server import Engine

logger = logging.getLogger("wymcp.broker.redis")

_RECONNECT: Final = 1.0
"""Seconds between attempts to listen for ended sessions while Redis is down."""
_CLOSE_WAIT: Final = 2.0
"""Seconds `aclose` waits for the listener, before and after closing its connection."""
_SUBSCRIBE_WAIT: Final = 2.0
"""Seconds a session request waits for this worker's channels to be heard."""
FRESH: Final = 1.0
"""Seconds an initialized session fetched from Redis is served from this
worker's copy without asking Redis again (a quarter of the idle timeout when
that is shorter), while this worker listens for ended and changed sessions."""
_FOLLOW_WAIT: Final = 1.0
"""Seconds a resumed POST stream waits for news before it looks at its session."""
_LEASE_CHECK: Final = 5.0
"""Seconds without news after which a resumed POST stream asks if its call runs."""
_CHANNELS: Final = (ENDED_CHANNEL, RELAY_CHANNEL, NOTIFY_CHANNEL, CHANGED_CHANNEL)
_REREADS: Final = 3
"""Most times a session's record is read again, changed while it was read."""
_FRESH_LIMIT: Final = 100_000
"""Most sessions remembered as fresh; past it, every one is fetched again."""
_ASKED_SLACK: Final = 5.0
"""Seconds a question stays registered in Redis past the client's time to answer."""


class _BrokerDown(Exception):  # noqa: N818 - an answer, not a failure
    """Redis could not be reached for a request that needs a session."""

    reason = "the session store (BROKER) cannot be reached"


class _Full(_BrokerDown):
    """Every session copy this worker holds is busy: no room for one more."""

    reason = "this worker's sessions are all busy (MAX_SESSIONS)"


class _OutOfMemory(_BrokerDown):
    """Redis answered but refused the write: it is at its `maxmemory`."""

    reason = "the session store (BROKER) is out of memory (Redis maxmemory)"


class _AtCap(_BrokerDown):
    """The live sessions in Redis are at `BROKER_MAX_SESSIONS` or the client's cap."""

    def __init__(self, refused: TooMany) -> None:
        super().__init__()
        self.retry_after = refused.retry_after
        whose = (
            "every client's"
            if refused.setting == "BROKER_MAX_SESSIONS"
            else "this client's (its principal, else its address; IPv6 by /64)"
        )
        self.reason = (
            f"{whose} live sessions are at their cap ({refused.setting}); one "
            "frees when a session ends (DELETE) or idles out"
        )


def _down(error: RedisError) -> _BrokerDown:
    """What a failed Redis command tells the client: full, or not reached."""
    if isinstance(error, OutOfMemoryError):
        logger.warning("wymcp: BROKER is out of memory (maxmemory)")
        return _OutOfMemory()
    logger.warning("wymcp: BROKER cannot be reached", exc_info=error)
    return _BrokerDown()


def _unavailable(body: Any, down: _BrokerDown | None = None) -> Reply:
    down = down or _BrokerDown()
    retry_after = down.retry_after if isinstance(down, _AtCap) else RETRY_AFTER
    return Reply(
        503,
        error_message(
            echoable_id(body),
            INTERNAL_ERROR,
            f"Service unavailable: {down.reason}. Retry later.",
        ),
        {"Retry-After": str(retry_after)},
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


def _too_large(body: Any) -> Reply:
    return Reply(
        413,
        error_message(
            echoable_id(body),
            INVALID_REQUEST,
            "Payload too large: an answer or cancel for a call running on "
            f"another worker may take at most {RELAY_LIMIT} bytes.",
        ),
    )


def _refused(body: Any, refused: Refusal) -> Reply:
    if isinstance(refused, StoreFull):
        return _relay_full(body, refused)
    return Reply(
        429,
        error_message(
            echoable_id(body),
            INTERNAL_ERROR,
            "Too many bytes relayed: a session (and the cancels of all one "
            f"client's sessions together) may send at most {RELAY_BUDGET} bytes "
            "of answers and cancels for calls running on other workers in any "
            f"{RELAY_WINDOW_MS // 1000} s. Retry after the time Retry-After gives.",
        ),
        {"Retry-After": str(refused.retry_after)},
    )


def _relay_full(body: Any, refused: StoreFull) -> Reply:
    return Reply(
        503,
        error_message(
            echoable_id(body),
            INTERNAL_ERROR,
            "Service unavailable: answers relayed to other workers take their "
            "whole share of the session store (BROKER) now. Retry later.",
        ),
        {"Retry-After": str(refused.retry_after)},
    )


def _stateless(exchange: Exchange) -> bool:
    """Whether the engine serves `exchange` the 2026-07-28 way, without a session.

    As the engine's ladder decides: a POST whose `_meta` carries the 2026
    fields, or whose `MCP-Protocol-Version` names no handshake revision.
    """
    if exchange.method != "POST":
        return False
    body = exchange.body
    params = body.get("params") if isinstance(body, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and (META_VERSION in meta or META_CAPABILITIES in meta):
        return True
    versions = exchange.headers.getall(VERSION_HEADER)
    return bool(versions) and versions[0].strip() not in HANDSHAKE


def _named_session(exchange: Exchange) -> str | None:
    """The id of the session a request names, if it is one to look up."""
    if _stateless(exchange):
        return None  # it names no session, whatever its headers say
    sids = exchange.headers.getall(SESSION_HEADER)
    sid = sids[0].strip() if len(sids) == 1 else ""
    return sid if is_session_id(sid) else None


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
    worker serves, filled from Redis on each request that names one (least
    recently used idle copies evicted when full).
    """

    def __init__(
        self,
        engine: Engine,
        store: SessionCache,
        sessions: RedisSessions,
        rates: RedisRates | None = None,
    ) -> None:
        self.engine = engine
        self._rates = rates
        self._store = store
        self._sessions = sessions
        self._listener: asyncio.Task[None] | None = None
        self._closed = False
        self._pubsub: Any = None
        self._listening = False  # subscribed: ends and changes reach us
        self._subscribed = asyncio.Event()  # set while `_listening`
        self._fresh: dict[str, float] = {}  # session id -> trusted until
        # session id -> [its reads in flight, changes to it heard meanwhile]
        self._reading: dict[str, list[int]] = {}
        self._validity = min(FRESH, sessions.ttl_ms / 4000)
        self._bus = NotificationBus(sessions.client, engine)
        self._events = RedisEvents(sessions.client, ttl_ms=sessions.ttl_ms)
        self._waits = StreamWaits(sessions.client)
        asked_ttl = engine.options.client_request_timeout + _ASKED_SLACK
        self._routes = RelayRoutes(
            sessions.client, secrets.token_hex(8), round(asked_ttl * 1000)
        )
        self._channels = (*_CHANNELS, self._routes.channel)
        self.resubscriptions = 0
        self._subscribed_once = False
        """Times the pub/sub connection was cut and subscribed again."""
        engine.broadcast = self._bus.emit
        self.redis_clients: dict[str, object] = {}
        """The broker's clients, by store; METRICS times their round trips."""
        self.task_counts: Callable[[], Awaitable[dict[str, int]]] | None = None
        """Counts the tasks in Redis by state, for METRICS."""

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
                stream = AskingPostStream(stream, self._events, local, self._routes)
            target = None if local is None else answered_or_cancelled(exchange.body)
            if local is not None and target is not None and local.holds(*target):
                target = None
            reply = await self.engine.post(exchange, stream)
            client = client_of(exchange.principal, exchange.peer)
            await self._write_back(reply, local, before, client)
            if local is not None and target is not None:
                refusal = await self._relay(local.id, client, *target, exchange.body)
                if refusal is not None:
                    return refusal
        except _BrokerDown as down:
            return _unavailable(exchange.body, down)
        return reply

    async def get(self, exchange: Exchange, stream: Stream) -> Reply:
        """Serve a session's SSE stream, its events kept in Redis for resumption.

        A `Last-Event-ID` that names a kept event (`r-...`) replays the events
        after it, whichever worker sent them; any other goes to the engine.
        Either way the stream is held as the engine holds a GET stream:
        counted under `MAX_STREAMS` and `MAX_STREAMS_PER_CLIENT`, and ended
        when the token that opened it expires.
        """
        try:
            local = await self._hydrate(exchange)
        except _BrokerDown as down:
            return _unavailable(None, down)
        if local is None:
            return await self.engine.get(exchange, stream)
        entry = redis_event_id(exchange.headers.get("Last-Event-ID"))
        if entry is not None:
            exchange = _without_last_event_id(exchange)
            try:
                kept = await self._events.post_of(local.id, entry)
            except RedisError:
                kept = None
            if kept is not None and principal_key(local.principal) == principal_key(
                exchange.principal
            ):
                post, ended = kept
                session = local

                async def resume(exchange: Exchange, stream: Stream) -> Reply:
                    del exchange
                    if ended:  # the id named the call's answer: nothing follows
                        await stream.open()
                    else:
                        await self._continue_post(session, post, entry, stream)
                    return Reply(200, None)

                return await self.engine.hold_stream(exchange, stream, resume)
        logged = LoggedStream(stream, self._events, local.id, entry)
        return await self.engine.get(exchange, logged)

    async def _continue_post(
        self, session: Session, post: str, entry: str, stream: Stream
    ) -> None:
        """Send the rest of a POST stream closed early (on any worker), to its end.

        It ends with the call's answer (or the call's end without one), the
        session's end, the call's lease gone (its worker died), or after the
        idle timeout without news. Between reads it waits on this worker's
        one blocking reader (`StreamWaits`).
        """
        await stream.open()
        idle = 0.0
        orphaned = False  # the call's worker is gone: send what is kept, end
        while not session.closed and idle < self._sessions.ttl_ms / 1000:
            try:
                async with self._waits.reads:
                    read, events = await self._events.rest_of(session.id, post, entry)
                if read == entry:
                    if orphaned:
                        return
                    idle, orphaned = await self._quiet(session.id, post, entry, idle)
                    continue
            except RedisError:
                return
            entry = read
            if events:
                idle = 0.0
            for event_id, message, last in events:
                if message is not None:
                    await stream.send(message, event_id=event_id)
                if last:
                    return

    async def _quiet(
        self, session_id: str, post: str, entry: str, idle: float
    ) -> tuple[float, bool]:
        """Wait for news after `entry`; the idle time then, whether the call is gone.

        Every `_LEASE_CHECK` seconds without news the call's lease is asked.
        """
        if await self._waits.wait(EVENTS_PREFIX + session_id, entry, _FOLLOW_WAIT):
            return idle, False
        idle += _FOLLOW_WAIT
        if idle % _LEASE_CHECK:
            return idle, False
        return idle, not await self._events.leases.running(session_id, post)

    async def delete(self, exchange: Exchange) -> Reply:
        """End a session on every worker."""
        try:
            local = await self._hydrate(exchange)
        except _BrokerDown as down:
            return _unavailable(None, down)
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

    def observe_round_trips(self, observer: BrokerObserver) -> None:
        """Tell `observer` of every Redis round trip of the broker (`METRICS`)."""
        observe_broker(self.redis_clients, observer)

    async def aclose(self) -> None:
        """Stop listening, end the local sessions, close the connections.

        The wait for the listener is bounded: redis-py (8.2) can swallow the
        cancel of a task reading pub/sub; closing the client breaks its
        connection, and the loop sees `_closed` and ends.
        """
        self._closed = True
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            await asyncio.wait({listener}, timeout=_CLOSE_WAIT)
        await self._bus.aclose()
        await self._waits.aclose()
        await self._events.leases.aclose()
        await self.engine.aclose()
        await self._routes.aclose()
        await self._sessions.aclose()
        if self._rates is not None:
            await self._rates.aclose()
        if listener is not None and not listener.done():
            if self._pubsub is not None:  # its own connection, not the pool's
                with contextlib.suppress(RedisError, OSError):
                    await self._pubsub.aclose()
            await asyncio.wait({listener}, timeout=_CLOSE_WAIT)
            if not listener.done():
                logger.warning("wymcp: the BROKER listener did not stop at close")

    # ------------------------------------------------------------ sessions

    async def _hydrate(self, exchange: Exchange) -> Session | None:
        """The session the request names, fetched into the local store."""
        self._listen()
        sid = _named_session(exchange)
        if sid is None:
            return None  # the engine answers these
        await self._heard()
        local = self._store.get(sid)
        now = time.monotonic()
        if local is not None and self._listening and self._fresh.get(sid, 0.0) > now:
            return local  # fetched a moment ago; an end or change would be heard
        shared = await self._read(sid)
        if shared is not None and shared.initialized:
            self._trust(sid, now)
        return self._place(sid, shared)

    async def _read(self, sid: str) -> Session | None:
        """The session's record, its idle timer restarted; None when gone.

        A change to it heard while it was read may be newer than what was
        read (the copy was not yet here to refresh, or is refreshed before
        this older read lands): it is read again, so no change is undone.
        """
        watch = self._reading.setdefault(sid, [0, 0])
        watch[0] += 1
        try:
            heard = watch[1]
            shared = await self._sessions.fetch(sid)
            for _ in range(_REREADS):
                if watch[1] == heard:
                    break
                heard = watch[1]
                shared = await self._sessions.peek(sid)
        except RedisError as error:
            raise _down(error) from None
        finally:
            watch[0] -= 1
            if not watch[0]:
                del self._reading[sid]
        return shared

    def _place(self, sid: str, shared: Session | None) -> Session | None:
        """This worker's copy of the session, brought up to its record `shared`.

        The copy is looked up again: another request may have placed one
        while the record was read, and a stream may hold it already.
        """
        local = self._store.get(sid)
        if shared is None:
            if local is not None:  # ended or expired elsewhere
                self._drop(sid)
            return None
        if local is None:
            if not self._store.add(shared):
                raise _Full
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
        self,
        reply: Reply,
        local: Session | None,
        before: tuple[object, ...] | None,
        client: str,
    ) -> None:
        """Record a session `initialize` made (refused over a cap), or a change."""
        try:
            new_id = reply.headers.get(SESSION_HEADER)
            if new_id is not None:
                created = self._store.get(new_id)
                if created is not None:
                    try:
                        refused = await self._sessions.create(created, client)
                    except RedisError:
                        self._drop(new_id)
                        raise
                    if refused is not None:
                        self._drop(new_id)
                        raise _AtCap(refused)
            elif local is not None and not local.closed and _fields(local) != before:
                await self._sessions.update(local)
        except RedisError as error:
            raise _down(error) from None

    async def _relay(
        self, session_id: str, client: str, kind: Kind, key: str | int, body: Any
    ) -> Reply | None:
        """Relay an answer or cancel held elsewhere; the refusal, if refused.

        An answer goes only to the worker that asked its question, and only
        while it waits (an answer to nothing is dropped, as on one worker):
        whether one waits, and whether the budgets have room, is asked before
        the body is encoded and sent to Redis.
        """
        sent: Sent | Refusal
        try:
            if kind == "c":
                payload = pack(session_id, kind, key, cancel_of(key, body))
                if payload is None:  # never: a cancel_of is a few KiB
                    return _too_large(body)
                sent = await self._routes.cancel(session_id, client, payload)
            else:
                rid = str(key)
                room = await self._routes.outstanding(session_id, rid)
                if isinstance(room, Sent):  # unasked: dropped, as on one worker
                    return None
                if not isinstance(room, Room):
                    return _refused(body, room)
                data = encode(body)
                if len(data) > RELAY_LIMIT:
                    return _too_large(body)
                refusal = room.refusal(len(data))
                if refusal is not None:  # refused before it is sent to Redis
                    return _refused(body, refusal)
                head = head_of(session_id, kind, key)
                sent = await self._routes.answer(session_id, rid, head, data)
        except RedisError as error:
            raise _down(error) from None
        return None if isinstance(sent, Sent) else _refused(body, sent)

    async def _relayed(self, payload: bytes) -> None:
        """Serve a client message relayed by another worker, if ours to serve.

        Only its head is read unless the question or call it names is here.
        """
        head = unpack(payload)
        session = None if head is None else self._store.get(head.session_id)
        if head is None or session is None or not head.wanted_by(session):
            return
        message = await body_of(payload, head)
        if answered_or_cancelled(message) != (head.kind, head.key):
            return  # not the message its head names
        exchange = Exchange(
            "POST",
            Headers.of([(SESSION_HEADER, session.id)]),
            message,
            session.principal,
        )
        await self.engine.post(exchange, _NoStream())

    async def _answered_here(self, payload: bytes) -> None:
        """Serve an answer to a question of this worker, its body taken from Redis.

        The head names the session and question, then the key of the body.
        """
        head = unpack(payload)
        if head is None:
            return
        body_key = payload[head.start :].decode("ascii", "replace")
        session = self._store.get(head.session_id)
        if session is None or not head.wanted_by(session):
            await self._routes.discard(body_key)  # its question timed out
            return
        data = await self._routes.take(body_key)
        message = None if data is None else await decode(data)
        if message is None or answered_or_cancelled(message) != (head.kind, head.key):
            return  # gone, or not the message its head names
        exchange = Exchange(
            "POST",
            Headers.of([(SESSION_HEADER, session.id)]),
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
        watch = self._reading.get(sid)
        if watch is not None:
            watch[1] += 1  # a read of it in flight may predate the change
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

    async def _catch_up(self) -> None:
        """Bring each copy serving a stream up to its record, once subscribed.

        While this worker was not subscribed, a change or an end made
        elsewhere went unheard, and a copy serving a stream gets no request
        that would read it again: its subscriptions would stay stale.
        """
        for local in self._store.sessions():
            if local.stream is None:
                continue
            try:
                shared = await self._sessions.peek(local.id)
            except RedisError:
                return  # deaf again: the next subscription catches up
            if shared is None:
                self._drop(local.id)
            elif principal_key(local.principal) == principal_key(shared.principal):
                _refresh(local, shared)

    # ------------------------------------------------------------ ended

    def _listen(self) -> None:
        if self._listener is None:
            self._listener = asyncio.get_running_loop().create_task(self._ended())

    async def _ended(self) -> None:
        """Drop each session another worker ended, for as long as we serve.

        Serving from fresh copies starts once Redis confirmed every channel.
        redis-py reconnects a dropped pub/sub connection by itself and
        subscribes again: each new confirmation of every channel means
        messages may have been missed meanwhile, so it catches up again.
        """
        while not self._closed:
            try:
                pubsub = self._sessions.client.pubsub()
                self._pubsub = pubsub
                try:
                    await pubsub.subscribe(*self._channels)
                    confirmed: set[object] = set()
                    async for message in pubsub.listen():
                        if message.get("type") == "subscribe":
                            confirmed.add(message.get("channel"))
                            if len(confirmed) == len(self._channels):
                                confirmed.clear()
                                await self._resubscribed()
                        else:
                            await self._heard_message(message)
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

    async def _resubscribed(self) -> None:
        """Every channel is heard (again): catch up on what went unheard.

        Heard again after a cut, messages published meanwhile are lost
        (change notifications, answers' heads): it is counted and logged.
        """
        if self._subscribed_once:
            self.resubscriptions += 1
            logger.warning(
                "wymcp: the BROKER pub/sub connection was cut and is subscribed "
                "again; notifications and relayed messages sent meanwhile were lost"
            )
        self._subscribed_once = True
        self._fresh.clear()  # what was missed while deaf is unknown
        await self._catch_up()
        self._listening = True
        self._subscribed.set()

    async def _heard_message(self, message: dict[str, Any]) -> None:
        """Act on one message of the session channels."""
        data = message.get("data")
        if message.get("type") != "message" or not isinstance(data, bytes):
            return
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
        elif channel == self._routes.channel.encode():
            try:
                await self._answered_here(data)
            except Exception:
                logger.exception("wymcp: a relayed answer failed")
        else:
            self._drop(data.decode("ascii", "replace"))


def brokered_engine(settings: Settings, broker: str) -> tuple[Engine, BrokeredEngine]:
    """The engine for `settings`, and it with its sessions shared via `broker`."""
    store = SessionCache(
        idle_timeout=settings.SESSION_IDLE_TIMEOUT,
        max_sessions=settings.MAX_SESSIONS,
        clock=time.monotonic,
    )
    tasks = RedisTaskStore(
        broker,
        max_tasks=settings.MAX_TASKS,
        max_per_principal=settings.MAX_TASKS_PER_PRINCIPAL,
        lease=settings.TASK_LEASE,
        memory=settings.TASK_MEMORY_BUDGET,
        memory_per_principal=settings.TASK_MEMORY_BUDGET_PER_PRINCIPAL,
    )
    rates = None
    if settings.RATE_LIMITS:
        rates = RedisRates(
            broker,
            lease=lease_for(settings.CALL_TIMEOUT),
            on_error=settings.RATE_LIMIT_ON_REDIS_ERROR,
        )
    engine = build_engine(
        settings, session_store=store, task_store=tasks, rate_store=rates
    )
    sessions = RedisSessions(
        broker,
        idle_timeout=settings.SESSION_IDLE_TIMEOUT,
        max_sessions=settings.BROKER_MAX_SESSIONS,
        max_per_client=settings.MAX_SESSIONS_PER_CLIENT,
    )
    brokered = BrokeredEngine(engine, store, sessions, rates)
    brokered.redis_clients = {"sessions": sessions.client, "tasks": tasks.client}
    if rates is not None:
        brokered.redis_clients["rates"] = rates.client
    brokered.task_counts = RedisTaskCounts(tasks.client)
    return engine, brokered
