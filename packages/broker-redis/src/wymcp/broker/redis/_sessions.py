"""The 2025 sessions every worker shares through Redis (`BROKER`).

One key per session holds what a worker needs to serve it (revision, client
declarations, principal key, log level, initialized); its TTL is the idle
timeout, renewed on each use. Channels tell every worker of ends and cancels.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError  # noqa: A004 - redis-py's own

from wymcp.broker.redis._probe import ProbedRedis
from wymcp.core.server import Session

KEY_PREFIX: Final = "wymcp:session:"
ENDED_CHANNEL: Final = "wymcp:session-ended"
RELAY_CHANNEL: Final = "wymcp:session-relay"
"""Cancels for a call running on another worker; `<it>:<worker>` heads of answers."""
CHANGED_CHANNEL: Final = "wymcp:session-changed"
"""Ids of sessions whose record changed (e.g. resources subscribed)."""
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{43}")
"""The shape of the ids the engine makes; any other id is never looked up."""
_TIMEOUT: Final = 2.0
"""Seconds a Redis command or connection may take before it counts as down."""


def is_session_id(text: str) -> bool:
    """Whether `text` has the shape of an id the engine makes (43 base64url)."""
    return _SESSION_ID.fullmatch(text) is not None


def record(session: Session) -> bytes:
    """The session's shared fields (`Session.shared`) as compact JSON."""
    return json.dumps(
        session.shared(), separators=(",", ":"), ensure_ascii=False
    ).encode()


def session_of(session_id: str, raw: bytes | str) -> Session:
    """A local Session from its shared record (`Session.from_shared`)."""
    data: dict[str, Any] = json.loads(raw)
    return Session.from_shared(session_id, data)


class RedisSessions:
    """Session records in Redis, expiring after `idle_timeout` seconds unused."""

    def __init__(self, url: str, *, idle_timeout: float) -> None:
        self.client: aioredis.Redis = ProbedRedis.from_url(
            url,
            socket_timeout=_TIMEOUT,
            socket_connect_timeout=_TIMEOUT,
            health_check_interval=30,
            # a pooled connection Redis dropped (a restart) fails once: retry
            # it once on a fresh connection rather than answer 503; a timeout
            # is not retried (a stalled Redis answers 503 within _TIMEOUT)
            retry=Retry(NoBackoff(), 1, supported_errors=(ConnectionError,)),
        )
        self._ttl_ms = max(1, round(idle_timeout * 1000))
        self.ttl_ms = self._ttl_ms
        """Milliseconds an unused session (and its kept events) lives."""

    async def create(self, session: Session) -> None:
        """Record a new session."""
        await self.client.set(
            KEY_PREFIX + session.id, record(session), px=self._ttl_ms, nx=True
        )

    async def fetch(self, session_id: str) -> Session | None:
        """The recorded session, its idle timer restarted; None when gone."""
        raw = await self.client.getex(KEY_PREFIX + session_id, px=self._ttl_ms)
        return None if raw is None else session_of(session_id, raw)

    async def update(self, session: Session) -> None:
        """Rewrite a live session's record (a field changed); tell every worker."""
        async with self.client.pipeline(transaction=False) as pipe:
            _ = pipe.set(
                KEY_PREFIX + session.id, record(session), px=self._ttl_ms, xx=True
            )
            _ = pipe.publish(CHANGED_CHANNEL, session.id)
            await pipe.execute()

    async def peek(self, session_id: str) -> Session | None:
        """The recorded session, its idle timer left as it is; None when gone."""
        raw = await self.client.get(KEY_PREFIX + session_id)
        return None if raw is None else session_of(session_id, raw)

    async def end(self, session_id: str) -> None:
        """Forget the session and tell every worker it ended."""
        await self.client.delete(KEY_PREFIX + session_id)
        await self.client.publish(ENDED_CHANNEL, session_id)

    async def aclose(self) -> None:
        """Close the connections."""
        await self.client.aclose()
