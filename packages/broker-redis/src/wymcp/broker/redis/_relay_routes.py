"""Where a client's answer or cancel for a call on another worker goes (`BROKER`).

An answer goes only to the worker whose registered question it answers: its
body in a short-lived key, a head on that worker's own channel. A short
cancel goes to every worker. A session relays at most `RELAY_BUDGET` bytes
per `RELAY_WINDOW_MS`.
"""

from __future__ import annotations

import enum
import secrets
from typing import TYPE_CHECKING, Final

import attrs

from wymcp.broker.redis._sessions import RELAY_CHANNEL

if TYPE_CHECKING:
    import redis.asyncio as aioredis

ASKED_PREFIX: Final = "wymcp:asked:"
"""`wymcp:asked:{<session>}:<question id>` -> the id of the worker waiting."""
BODY_PREFIX: Final = "wymcp:relayed:"
"""`wymcp:relayed:{<session>}:<token>` -> an answer's body, until taken."""
BUDGET_PREFIX: Final = "wymcp:relay-budget:"
"""`wymcp:relay-budget:{<session>}` -> bytes the session relayed in this window."""
RELAY_BUDGET: Final = 8 * 1024 * 1024
"""Most bytes of answers and cancels one session relays per `RELAY_WINDOW_MS`."""
RELAY_WINDOW_MS: Final = 10_000
BODY_TTL_MS: Final = 10_000
"""Milliseconds a relayed body waits for its worker (gone: it expires)."""

# KEYS: asked, budget, body; ARGV: body, head, budget, window, body ttl, channel
_ANSWER: Final = """
local owner = redis.call('GET', KEYS[1])
if not owner then return 0 end
local size = string.len(ARGV[1])
local used = redis.call('INCRBY', KEYS[2], size)
if redis.call('PTTL', KEYS[2]) < 0 then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
if used > tonumber(ARGV[3]) then
  redis.call('DECRBY', KEYS[2], size)
  return -1 - math.max(redis.call('PTTL', KEYS[2]), 0)
end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[5])
redis.call('PUBLISH', ARGV[6] .. owner, ARGV[2] .. KEYS[3])
return 1
"""
# KEYS: budget; ARGV: payload, budget, window, channel
_CANCEL: Final = """
local size = string.len(ARGV[1])
local used = redis.call('INCRBY', KEYS[1], size)
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
if used > tonumber(ARGV[2]) then
  redis.call('DECRBY', KEYS[1], size)
  return -1 - math.max(redis.call('PTTL', KEYS[1]), 0)
end
redis.call('PUBLISH', ARGV[4], ARGV[1])
return 1
"""


class Sent(enum.Enum):
    """What became of a message handed to `RelayRoutes`."""

    RELAYED = "relayed"
    UNASKED = "unasked"
    """An answer to no question outstanding on any worker: nothing relayed."""


@attrs.frozen
class OverBudget:
    """Refused: the session relayed its `RELAY_BUDGET` in this window."""

    retry_after: int
    """Seconds until the window ends."""


def asked_key(session_id: str, rid: str) -> str:
    """The key naming the worker waiting for the answer to question `rid`."""
    return f"{ASKED_PREFIX}{{{session_id}}}:{rid}"


def worker_channel(worker: str) -> str:
    """The channel only `worker` listens to: heads of answers to its questions."""
    return f"{RELAY_CHANNEL}:{worker}"


def _budget_key(session_id: str) -> str:
    return f"{BUDGET_PREFIX}{{{session_id}}}"


def _refusal(code: int) -> OverBudget:
    """The refusal a script's `-1 - <ms left in the window>` stands for."""
    ms_left = -code - 1
    return OverBudget(retry_after=max(1, -(-ms_left // 1000)))


class RelayRoutes:
    """Registers this worker's questions; routes answers and cancels in Redis."""

    def __init__(self, client: aioredis.Redis, worker: str, asked_ttl_ms: int) -> None:
        self._client = client
        self.worker = worker
        self.channel = worker_channel(worker)
        self._asked_ttl_ms = asked_ttl_ms
        self._answer = client.register_script(_ANSWER)
        self._cancel = client.register_script(_CANCEL)

    async def asked_here(self, session_id: str, rid: str) -> None:
        """Record that this worker waits for the answer to question `rid`."""
        await self._client.set(
            asked_key(session_id, rid), self.worker, px=self._asked_ttl_ms
        )

    async def outstanding(self, session_id: str, rid: str) -> bool:
        """Whether a worker waits for an answer to `rid` (read before encoding)."""
        return bool(await self._client.exists(asked_key(session_id, rid)))

    async def answer(
        self, session_id: str, rid: str, head: bytes, body: bytes
    ) -> Sent | OverBudget:
        """Keep `body` for the worker that asked `rid`, and tell it (`head`)."""
        body_key = f"{BODY_PREFIX}{{{session_id}}}:{secrets.token_hex(8)}"
        code = int(
            await self._answer(
                keys=[asked_key(session_id, rid), _budget_key(session_id), body_key],
                args=[
                    body,
                    head,
                    RELAY_BUDGET,
                    RELAY_WINDOW_MS,
                    BODY_TTL_MS,
                    f"{RELAY_CHANNEL}:",
                ],
            )
        )
        if code < 0:
            return _refusal(code)
        return Sent.RELAYED if code else Sent.UNASKED

    async def cancel(self, session_id: str, payload: bytes) -> Sent | OverBudget:
        """Publish a (small) cancel to every worker."""
        code = int(
            await self._cancel(
                keys=[_budget_key(session_id)],
                args=[payload, RELAY_BUDGET, RELAY_WINDOW_MS, RELAY_CHANNEL],
            )
        )
        return _refusal(code) if code < 0 else Sent.RELAYED

    async def take(self, body_key: str) -> bytes | None:
        """The body kept under `body_key`, removed; None if gone (expired)."""
        if not body_key.startswith(BODY_PREFIX):
            return None
        data = await self._client.getdel(body_key)
        return data if isinstance(data, bytes) else None

    async def discard(self, body_key: str) -> None:
        """Free a kept body nobody here waits for any more."""
        if body_key.startswith(BODY_PREFIX):
            await self._client.delete(body_key)
