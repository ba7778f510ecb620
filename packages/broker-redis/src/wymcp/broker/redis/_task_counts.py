"""The broker's tasks counted in Redis for the metrics: running and ended kept.

Two sorted-set counts on Redis's clock in one script (O(log n), whatever the
number of tasks): running tasks whose lease is alive, ended tasks still kept.
"""

from __future__ import annotations

from typing import Any, Final

from wymcp.broker.redis._task_store import ALL_TASKS, KEPT

_COUNT: Final = """
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local after = '(' .. ms
return {
  redis.call('ZCOUNT', KEYS[1], after, '+inf'),
  redis.call('ZCOUNT', KEYS[2], after, '+inf'),
}
"""


class RedisTaskCounts:
    """`await counts()`: `{"running": n, "ended": m}` over every worker."""

    def __init__(self, client: Any) -> None:
        self._script = client.register_script(_COUNT)

    async def __call__(self) -> dict[str, int]:
        running, ended = await self._script(keys=[ALL_TASKS, KEPT])
        return {"running": int(running), "ended": int(ended)}
