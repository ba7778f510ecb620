"""A session's GET stream events kept in a Redis stream, for `Last-Event-ID`.

With `BROKER`, each event a worker writes on a session's GET stream is first
added to `wymcp:events:<session id>` (at most `EVENTS_MAXLEN` entries, expiring
with the session), and its SSE id is `r-<Redis entry id>`: a client that
reconnects to any worker with that id gets the entries after it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import Any, Final

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from wymcp.core.server import Stream

logger = logging.getLogger("wymcp.transport.aiohttp")

EVENTS_PREFIX: Final = "wymcp:events:"
EVENTS_MAXLEN: Final = 100
"""Events kept per session (notifications: about 2.2 KiB each at most)."""
_REDIS_ID = re.compile(r"r-([0-9]{1,20})-([0-9]{1,20})")
_MAX_ID: Final = 64


def redis_event_id(text: str | None) -> str | None:
    """The Redis entry id a `Last-Event-ID` names (`r-<ms>-<n>`), or None."""
    if text is None or len(text) > _MAX_ID:
        return None
    match = _REDIS_ID.fullmatch(text.strip())
    return None if match is None else f"{match.group(1)}-{match.group(2)}"


class RedisEvents:
    """The kept GET stream events of every session, in Redis streams."""

    def __init__(self, client: aioredis.Redis, *, ttl_ms: int) -> None:
        self._client = client
        self._ttl_ms = ttl_ms

    async def append(self, session_id: str, message: Any) -> str:
        """Keep one event (None: a priming event); its SSE id."""
        data = b"" if message is None else json.dumps(message).encode()
        key = EVENTS_PREFIX + session_id
        async with self._client.pipeline(transaction=False) as pipe:
            _ = pipe.xadd(key, {"d": data}, maxlen=EVENTS_MAXLEN, approximate=False)
            _ = pipe.pexpire(key, self._ttl_ms)
            added, _ = await pipe.execute()
        entry = added.decode() if isinstance(added, bytes) else str(added)
        return f"r-{entry}"

    async def after(self, session_id: str, entry: str) -> list[tuple[str, Any]] | None:
        """The kept events after `entry`; None when `entry` is no longer kept."""
        key = EVENTS_PREFIX + session_id
        async with self._client.pipeline(transaction=False) as pipe:
            _ = pipe.xrange(key, entry, entry, count=1)
            _ = pipe.xrange(key, f"({entry}", "+", count=EVENTS_MAXLEN)
            found, rest = await pipe.execute()
        if not found:
            return None
        missed: list[tuple[str, Any]] = []
        for raw_id, fields in rest:
            data = fields.get(b"d", b"")
            if data and b"s" not in fields and b"p" not in fields:  # GET's only
                sid = raw_id.decode() if isinstance(raw_id, bytes) else str(raw_id)
                missed.append((f"r-{sid}", json.loads(data)))
        return missed

    async def start_post(self, session_id: str) -> str:
        """Keep the priming event of a POST stream closed early; its entry id."""
        key = EVENTS_PREFIX + session_id
        async with self._client.pipeline(transaction=False) as pipe:
            _ = pipe.xadd(key, {"p": b""}, maxlen=EVENTS_MAXLEN, approximate=False)
            _ = pipe.pexpire(key, self._ttl_ms)
            added, _ = await pipe.execute()
        return added.decode() if isinstance(added, bytes) else str(added)

    async def keep(
        self, session_id: str, post: str, message: Any, *, last: bool
    ) -> None:
        """Keep one event of the POST stream `post` (its priming entry id)."""
        fields: dict[Any, Any] = {
            "s": post,
            "d": b"" if message is None else json.dumps(message).encode(),
        }
        if last:
            fields["l"] = b"1"
        key = EVENTS_PREFIX + session_id
        async with self._client.pipeline(transaction=False) as pipe:
            _ = pipe.xadd(key, fields, maxlen=EVENTS_MAXLEN, approximate=False)
            _ = pipe.pexpire(key, self._ttl_ms)
            await pipe.execute()

    async def post_of(self, session_id: str, entry: str) -> str | None:
        """The POST stream a kept entry belongs to, or None (a GET's, or gone)."""
        found: Any = await self._client.xrange(EVENTS_PREFIX + session_id, entry, entry)
        if not found:
            return None
        fields = found[0][1]
        if b"p" in fields:
            return entry
        post = fields.get(b"s")
        return None if post is None else post.decode()

    async def follow(
        self, session_id: str, post: str, entry: str, *, block_ms: int
    ) -> tuple[str, list[tuple[str, Any, bool]]]:
        """The POST stream's events after `entry` (waiting up to `block_ms`).

        Returns the last entry id read and (SSE id, message, last) of each event.
        """
        found: Any = await self._client.xread(
            {EVENTS_PREFIX + session_id: entry}, count=EVENTS_MAXLEN, block=block_ms
        )
        events: list[tuple[str, Any, bool]] = []
        for _name, entries in found or ():
            for raw_id, fields in entries:
                entry = raw_id.decode() if isinstance(raw_id, bytes) else str(raw_id)
                if fields.get(b"s", b"").decode() != post:
                    continue
                data = fields.get(b"d", b"")
                message = json.loads(data) if data else None
                events.append((f"r-{entry}", message, fields.get(b"l") == b"1"))
        return entry, events


class _SessionStream:
    """A session's stream in front of `inner`: opening it is `inner`'s own."""

    def __init__(self, inner: Stream, events: RedisEvents, session_id: str) -> None:
        self._inner = inner
        self._events = events
        self._session_id = session_id

    @property
    def opened(self) -> bool:
        """Whether the SSE response has been committed."""
        return self._inner.opened

    async def open(self, headers: Mapping[str, str] | None = None) -> None:
        """Commit the SSE response."""
        await self._inner.open(headers)


class KeptPostStream(_SessionStream):
    """A session call's POST stream whose events, once closed early, go to Redis.

    So the client's GET with `Last-Event-ID` continues it on any worker.
    """

    def __init__(self, inner: Stream, events: RedisEvents, session_id: str) -> None:
        super().__init__(inner, events, session_id)
        self._post: str | None = None

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        """Write one event."""
        await self._inner.send(message, event_id=event_id)

    async def end_early(self, event_id: str, retry_ms: int) -> None:
        """End the response with a priming event whose id Redis gave."""
        end = getattr(self._inner, "end_early", None)
        if end is None:
            raise RuntimeError("this stream cannot end early")
        try:
            self._post = await self._events.start_post(self._session_id)
            event_id = f"r-{self._post}"
        except RedisError:
            logger.warning("wymcp: BROKER cannot keep a closed stream", exc_info=True)
        await end(event_id, retry_ms)

    async def keep(self, message: Any, *, last: bool) -> None:
        """Keep one event of the closed stream in Redis."""
        if self._post is None:
            return
        try:
            await self._events.keep(self._session_id, self._post, message, last=last)
        except RedisError:
            logger.warning("wymcp: BROKER cannot keep a stream event", exc_info=True)


class LoggedStream(_SessionStream):
    """A session's GET stream whose events are kept in Redis as they are sent.

    When the client resumed from `resume_from`, the events it missed are sent
    first, just before the stream's own first event (the engine has accepted
    the GET by then).
    """

    def __init__(
        self,
        inner: Stream,
        events: RedisEvents,
        session_id: str,
        resume_from: str | None = None,
    ) -> None:
        super().__init__(inner, events, session_id)
        self._resume_from = resume_from

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        """Keep the event in Redis, then write it with its Redis id."""
        if self._resume_from is not None:
            entry, self._resume_from = self._resume_from, None
            await self._replay(entry)
        try:
            event_id = await self._events.append(self._session_id, message)
        except RedisError:
            logger.warning("wymcp: BROKER cannot keep a stream event", exc_info=True)
        await self._inner.send(message, event_id=event_id)

    async def _replay(self, entry: str) -> None:
        try:
            missed = await self._events.after(self._session_id, entry)
        except (RedisError, ValueError):
            logger.warning("wymcp: BROKER cannot replay a stream", exc_info=True)
            return
        for missed_id, message in missed or ():
            await self._inner.send(message, event_id=missed_id)
