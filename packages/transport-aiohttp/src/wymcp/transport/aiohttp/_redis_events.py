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
            if data:
                sid = raw_id.decode() if isinstance(raw_id, bytes) else str(raw_id)
                missed.append((f"r-{sid}", json.loads(data)))
        return missed


class LoggedStream:
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
        self._inner = inner
        self._events = events
        self._session_id = session_id
        self._resume_from = resume_from

    @property
    def opened(self) -> bool:
        """Whether the SSE response has been committed."""
        return self._inner.opened

    async def open(self, headers: Mapping[str, str] | None = None) -> None:
        """Commit the SSE response."""
        await self._inner.open(headers)

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
