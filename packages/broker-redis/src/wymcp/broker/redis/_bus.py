"""The change notifications every worker hears through Redis pub/sub (`BROKER`).

A list change or resource update made on one worker is delivered to its own
streams at once and published; every other worker delivers it to the GET and
`subscriptions/listen` streams it holds. Publishing never blocks the emitter:
at most `BACKLOG` notifications wait, and with Redis down they are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections import deque
from typing import TYPE_CHECKING, Final

from redis.exceptions import RedisError

if TYPE_CHECKING:
    import redis.asyncio as aioredis

    from wymcp.core.server import Engine

logger = logging.getLogger("wymcp.broker.redis")

NOTIFY_CHANNEL: Final = "wymcp:notify"
BACKLOG: Final = 1000
"""Notifications that may wait to be published; more are dropped."""
_KINDS: Final = frozenset({"tools", "prompts", "resources"})
_MAX_URI: Final = 2048


class NotificationBus:
    """Publishes this worker's changes; delivers the other workers' here."""

    def __init__(self, client: aioredis.Redis, engine: Engine) -> None:
        self._client = client
        self._engine = engine
        self._origin = secrets.token_hex(8)
        self._waiting: deque[bytes] = deque()
        self._publisher: asyncio.Task[None] | None = None
        self.dropped = 0

    def emit(self, kind: str, value: str) -> None:
        """Queue a change for the other workers (the engine's `broadcast`)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a change made before serving: nobody listens yet
            return
        if len(self._waiting) >= BACKLOG:
            self.dropped += 1
            logger.warning("wymcp: a change notification for other workers dropped")
            return
        self._waiting.append(
            json.dumps({"o": self._origin, "k": kind, "v": value}).encode()
        )
        if self._publisher is None or self._publisher.done():
            self._publisher = loop.create_task(self._publish())

    async def _publish(self) -> None:
        while self._waiting:
            payload = self._waiting.popleft()
            try:
                await self._client.publish(NOTIFY_CHANNEL, payload)
            except RedisError:
                self.dropped += 1 + len(self._waiting)
                self._waiting.clear()
                logger.warning(
                    "wymcp: BROKER cannot be reached; change notifications "
                    "reached this worker's streams only"
                )

    def received(self, payload: bytes) -> None:
        """Deliver a change another worker published to this worker's streams."""
        try:
            message = json.loads(payload)
            origin, kind, value = message["o"], message["k"], message["v"]
        except (ValueError, KeyError, TypeError):
            return
        if origin == self._origin or not isinstance(value, str):
            return
        if kind == "list" and value in _KINDS:
            self._engine.deliver_changed(value)
        elif kind == "updated" and len(value) <= _MAX_URI:
            self._engine.deliver_updated(value)

    async def aclose(self) -> None:
        """Stop publishing."""
        publisher, self._publisher = self._publisher, None
        if publisher is not None and not publisher.done():
            publisher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await publisher
