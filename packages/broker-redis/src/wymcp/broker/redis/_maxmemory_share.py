"""The share of Redis's `maxmemory` one kind of stored value may take.

Tasks' ended results keep within half of it, relayed answers within an
eighth: sessions, events and leases keep the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import redis.asyncio as aioredis


async def share_of_maxmemory(client: aioredis.Redis, part: int) -> int:
    """`maxmemory` // `part`; 0 when Redis sets no `maxmemory` (no limit).

    Raises redis-py's `RedisError` when Redis cannot say.
    """
    memory = await client.info("memory")
    return int(memory.get("maxmemory", 0) or 0) // part
