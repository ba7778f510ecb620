"""One blocking Redis read per worker that wakes every resumed stream waiting.

Resumed POST streams (`BROKER`) read with short `XRANGE`s, `READS` at once,
and wait here between them: one `XREAD` over every key waited on, so streams
hold at most `READS` + 1 of the pool's connections (100), however many wait.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

import redis.asyncio as aioredis
from redis.exceptions import RedisError

logger = logging.getLogger("wymcp.broker.redis")

BLOCK_MS: Final = 200
"""How long one `XREAD` blocks: a key first waited on during a read is read
from the next one, so a new waiter hears of its next entry within this."""

READS: Final = 8
"""Most reads of kept events that resumed streams run at once (the rest queue)."""


def entry_order(entry: str) -> tuple[int, int]:
    """A Redis stream entry id (`<ms>-<n>`) as a pair that sorts as Redis does."""
    ms, _, seq = entry.partition("-")
    return int(ms), int(seq or 0)


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


class StreamWaits:
    """Waits for new entries in Redis streams, every wait served by one reader."""

    def __init__(self, client: aioredis.Redis, *, block_ms: int = BLOCK_MS) -> None:
        self._client = client
        self._block_ms = block_ms
        self._waiting: dict[str, dict[asyncio.Future[None], str]] = {}
        """Each key waited on: each waiter and the entry it waits to pass."""
        self._reader: asyncio.Task[None] | None = None
        self._closed = False
        self.reads = asyncio.Semaphore(READS)
        """Held around each read of kept events: woken together, streams queue."""

    @property
    def waiting(self) -> int:
        """How many waits are open now."""
        return sum(len(waiters) for waiters in self._waiting.values())

    async def wait(self, key: str, after: str, seconds: float) -> bool:
        """Wait until the stream `key` holds an entry after `after`.

        True when one does (or may: wake-ups can be early), False after
        `seconds` without one; a failed read raises its `RedisError`.
        """
        if self._closed:
            raise RedisError("the worker is closing")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiters = self._waiting.setdefault(key, {})
        waiters[future] = after
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_task(self._read())
        try:
            async with asyncio.timeout(seconds):
                await future
        except TimeoutError:
            return False
        finally:
            waiters.pop(future, None)
            if not waiters and self._waiting.get(key) is waiters:
                del self._waiting[key]
        return True

    async def aclose(self) -> None:
        """Fail the waits and let the read under way end (at most `BLOCK_MS`).

        A read cancelled mid-command would leave its connection to be closed
        after the loop has stopped.
        """
        self._closed = True
        self._fail(RedisError("the worker is closing"))
        reader, self._reader = self._reader, None
        if reader is not None:
            await reader

    async def _read(self) -> None:
        """Read every key waited on, waking its waiters, while any waits."""
        while self._waiting:
            streams = {
                key: min(waiters.values(), key=entry_order)
                for key, waiters in self._waiting.items()
            }
            try:
                found: Any = await self._client.xread(
                    streams,  # type: ignore[arg-type]
                    count=1,
                    block=self._block_ms,
                )
            except (RedisError, OSError) as error:
                logger.warning("wymcp: BROKER cannot be read for resumed streams")
                self._fail(RedisError(str(error)))
                continue
            for name, entries in found or ():
                if entries:
                    self._wake(_text(name), entry_order(_text(entries[0][0])))

    def _wake(self, key: str, newest: tuple[int, int]) -> None:
        """Wake (and forget) the waiters of `key` that `newest` passes."""
        waiters = self._waiting.get(key, {})
        for future, after in list(waiters.items()):
            if entry_order(after) < newest:
                del waiters[future]
                if not future.done():
                    future.set_result(None)
        if not waiters:
            self._waiting.pop(key, None)

    def _fail(self, error: RedisError) -> None:
        """Fail every wait open now: its stream ends; its client resumes later."""
        for waiters in self._waiting.values():
            for future in waiters:
                if not future.done():
                    future.set_exception(error)
        self._waiting.clear()
