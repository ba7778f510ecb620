"""Leases that say the call of a POST stream closed early still runs (`BROKER`).

The worker running it renews `wymcp:post-running:<session id>:<entry>` until
the call keeps its last event; a stream resuming it on any worker ends once
the lease is gone (its worker died), instead of waiting for the idle timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Final

import redis.asyncio as aioredis
from redis.exceptions import RedisError

logger = logging.getLogger("wymcp.broker.redis")

LEASE_PREFIX: Final = "wymcp:post-running:"
LEASE_MS: Final = 10_000
"""How long a lease lasts unrenewed: a dead worker's calls are known gone then."""
RENEW_EVERY: Final = 3.0
"""Seconds between two renewals of every lease a worker holds."""
_BATCH: Final = 500
"""Leases renewed per pipeline."""


def lease_key(session_id: str, post: str) -> str:
    """The lease of the call of the POST stream `post` of a session."""
    return f"{LEASE_PREFIX}{session_id}:{post}"


class PostLeases:
    """The leases of the calls this worker runs whose POST stream ended early."""

    def __init__(self, client: aioredis.Redis) -> None:
        self._client = client
        self._held: set[str] = set()
        self._renewer: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    def __len__(self) -> int:
        return len(self._held)

    async def take(self, session_id: str, post: str) -> None:
        """Say the call of `post` runs here, and keep saying it until `give_back`."""
        key = lease_key(session_id, post)
        await self._client.set(key, b"1", px=LEASE_MS)
        self._held.add(key)
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(self._renew())

    async def give_back(self, session_id: str, post: str) -> None:
        """The call has kept its last event: its lease ends."""
        key = lease_key(session_id, post)
        self._held.discard(key)
        await self._client.delete(key)

    async def running(self, session_id: str, post: str) -> bool:
        """Whether some worker still runs the call of `post`."""
        return bool(await self._client.exists(lease_key(session_id, post)))

    async def aclose(self) -> None:
        """Stop renewing (after a renewal under way: none is cut mid-command)."""
        self._stop.set()
        renewer, self._renewer = self._renewer, None
        if renewer is not None:
            await renewer

    async def _renew(self) -> None:
        """Renew every lease held, every `RENEW_EVERY` seconds, while any is."""
        while self._held and not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), RENEW_EVERY)
            if self._stop.is_set():
                return
            keys = list(self._held)
            for start in range(0, len(keys), _BATCH):
                try:
                    async with self._client.pipeline(transaction=False) as pipe:
                        for key in keys[start : start + _BATCH]:
                            # SET, not PEXPIRE: a lease lost while Redis was
                            # away comes back with the next renewal
                            _ = pipe.set(key, b"1", px=LEASE_MS)
                        await pipe.execute()
                except RedisError:
                    logger.debug("wymcp: BROKER cannot renew running calls' leases")
