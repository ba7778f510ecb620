"""Where a client's answer or cancel for a call on another worker goes (`BROKER`).

An answer goes only to the worker whose registered question it answers, a
short cancel to all; a session, and a client's cancels, relay at most
`RELAY_BUDGET` bytes in any `RELAY_WINDOW_MS` span (counted in 1 s slices).
"""

from __future__ import annotations

import asyncio
import enum
import logging
import secrets
from typing import TYPE_CHECKING, Final

import attrs
from redis.exceptions import RedisError

from wymcp.broker.redis._maxmemory_share import share_of_maxmemory
from wymcp.broker.redis._sessions import RELAY_CHANNEL

if TYPE_CHECKING:
    import redis.asyncio as aioredis

logger = logging.getLogger("wymcp.broker.redis")

ASKED_PREFIX: Final = "wymcp:asked:"
"""`wymcp:asked:{<session>}:<question id>` -> the id of the worker waiting."""
BODY_PREFIX: Final = "wymcp:relayed:"
"""`wymcp:relayed:{<session>}:<token>.<window>` -> an answer's body, until taken."""
BUDGET_PREFIX: Final = "wymcp:relay-spent:"
"""`wymcp:relay-spent:{<session>}` -> a hash: slice number -> bytes the session
relayed in that `RELAY_SLICE_MS` slice (the last `RELAY_SLICES` + 1 kept)."""
CLIENT_BUDGET_PREFIX: Final = "wymcp:relay-client-spent:"
"""`wymcp:relay-client-spent:<client>` -> the same, of the client's cancels."""
STORED_PREFIX: Final = "wymcp:relay-stored:"
"""`wymcp:relay-stored:<window>` -> bytes of bodies stored in that window, not taken."""
RELAY_BUDGET: Final = 8 * 1024 * 1024
"""Most bytes of answers and cancels one session relays in any `RELAY_WINDOW_MS`."""
MIN_CHARGE: Final = 4096
"""Bytes a relayed message costs its session's budget at least (a cancel: all
workers read it), so a session relays at most 2,048 messages in any window."""
RELAY_WINDOW_MS: Final = 10_000
"""The span of time any `RELAY_BUDGET` holds over, wherever it starts."""
RELAY_SLICE_MS: Final = 1000
RELAY_SLICES: Final = RELAY_WINDOW_MS // RELAY_SLICE_MS
"""A charge counts in its slice and the `RELAY_SLICES` after it: for 10-11 s.
Any 10 s span lies within `RELAY_SLICES` + 1 slices, all counted when its
last message was charged: no 10 s span, at a window edge or not, holds more
than `RELAY_BUDGET` (a fixed window held twice it around its edge)."""
BODY_TTL_MS: Final = 10_000
"""Milliseconds a relayed body waits for its worker (gone: it expires)."""
RELAY_SHARE: Final = 8
"""Relayed bodies kept, all sessions together, stay within `maxmemory` // this."""
RELAY_TOTAL: Final = 64 * 1024 * 1024
"""Most bytes of relayed bodies kept at once when Redis sets no `maxmemory`."""
_CLOSE_WAIT: Final = 3.0
"""Seconds the close waits for the last records' DEL."""
_FORGET_BATCH: Final = 512
"""Most question records deleted by one DEL."""

# the bodies kept now: those stored in this window and the last, not taken
# (a body lives at most BODY_TTL_MS = one window)
_STORED = """
local function stored_now(prefix, window)
  local t = redis.call('TIME')
  local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local win = math.floor(ms / window)
  local kept = tonumber(redis.call('GET', prefix .. win) or '0')
    + tonumber(redis.call('GET', prefix .. (win - 1)) or '0')
  return kept, win, (win + 1) * window - ms
end
"""
# a budget: a hash of slice number -> bytes charged in it; the slices counted
# now are this one and the `count` before it
_SPENT = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function spent(key, ms, slice, count)
  local cur = math.floor(ms / slice)
  local flat = redis.call('HGETALL', key)
  local used, held, stale = 0, {}, {}
  for i = 1, #flat, 2 do
    local n = tonumber(flat[i])
    if n and n >= cur - count then
      local bytes = tonumber(flat[i + 1]) or 0
      used = used + bytes
      held[#held + 1] = {n, bytes}
    else
      stale[#stale + 1] = flat[i]
    end
  end
  table.sort(held, function(a, b) return a[1] < b[1] end)
  return {used = used, held = held, stale = stale, cur = cur}
end
local function wait_ms(s, need, ms, slice, count)
  local freed = 0
  for _, h in ipairs(s.held) do
    freed = freed + h[2]
    if freed >= need then return (h[1] + count + 1) * slice - ms end
  end
  return (s.cur + count + 1) * slice - ms
end
local function charge(key, s, bytes, slice, count)
  if #s.stale > 0 then redis.call('HDEL', key, unpack(s.stale)) end
  redis.call('HINCRBY', key, s.cur, bytes)
  redis.call('PEXPIRE', key, (count + 1) * slice)
end
"""
# KEYS: asked, budget; ARGV: budget, min charge, total, stored prefix, window,
# slice, slices. Answers {1, 0, budget room, share room, ms the share's oldest
# window still counts, then per slice counted: ms until it stops, its bytes}
_CHECK: Final = (
    _STORED
    + _SPENT
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0} end
local ms, slice, count = now_ms(), tonumber(ARGV[6]), tonumber(ARGV[7])
local s = spent(KEYS[2], ms, slice, count)
local least = tonumber(ARGV[2])
if s.used + least > tonumber(ARGV[1]) then
  return {2, wait_ms(s, s.used + least - tonumber(ARGV[1]), ms, slice, count)}
end
local kept, win, left = stored_now(ARGV[4], tonumber(ARGV[5]))
if kept + least > tonumber(ARGV[3]) then return {3, left} end
local room = {1, 0, tonumber(ARGV[1]) - s.used, tonumber(ARGV[3]) - kept, left}
for _, h in ipairs(s.held) do
  room[#room + 1] = (h[1] + count + 1) * slice - ms
  room[#room + 1] = h[2]
end
return room
"""
)
# KEYS: asked, budget; ARGV: body, head, budget, slice, body ttl, channel,
# min charge, total, stored prefix, body key (the window is appended), slices
_ANSWER: Final = (
    _STORED
    + _SPENT
    + """
local owner = redis.call('GET', KEYS[1])
if not owner then return {0, 0} end
local size = string.len(ARGV[1])
local charged = math.max(size, tonumber(ARGV[7]))
local ms, slice, count = now_ms(), tonumber(ARGV[4]), tonumber(ARGV[11])
local s = spent(KEYS[2], ms, slice, count)
if s.used + charged > tonumber(ARGV[3]) then
  return {2, wait_ms(s, s.used + charged - tonumber(ARGV[3]), ms, slice, count)}
end
local kept, win, left = stored_now(ARGV[9], tonumber(ARGV[5]))
if kept + size > tonumber(ARGV[8]) then return {3, left} end
charge(KEYS[2], s, charged, slice, count)
local counter = ARGV[9] .. win
redis.call('INCRBY', counter, size)
redis.call('PEXPIRE', counter, 3 * tonumber(ARGV[5]))
local body = ARGV[10] .. '.' .. win
redis.call('DEL', KEYS[1])
redis.call('SET', body, ARGV[1], 'PX', ARGV[5])
redis.call('PUBLISH', ARGV[6] .. owner, ARGV[2] .. body)
return {1, 0}
"""
)
# KEYS: body; ARGV: stored prefix
_TAKE: Final = """
local data = redis.call('GETDEL', KEYS[1])
if not data then return false end
local win = string.match(KEYS[1], '%.(%d+)$')
if win then
  local counter = ARGV[1] .. win
  if redis.call('EXISTS', counter) == 1 then
    if redis.call('DECRBY', counter, string.len(data)) < 0 then
      redis.call('SET', counter, 0, 'KEEPTTL')
    end
  end
end
return data
"""
# KEYS: session's budget, client's budget; ARGV: payload, budget, slice,
# channel, min charge, slices (a new session is no new budget: its client's is
# shared). 1, or -1 - the ms until both budgets have room
_CANCEL: Final = (
    _SPENT
    + """
local charged = math.max(string.len(ARGV[1]), tonumber(ARGV[5]))
local budget, slice, count = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[6])
local ms = now_ms()
local seen, wait = {}, -1
for i, key in ipairs(KEYS) do
  local s = spent(key, ms, slice, count)
  seen[i] = s
  if s.used + charged > budget then
    wait = math.max(wait, wait_ms(s, s.used + charged - budget, ms, slice, count))
  end
end
if wait >= 0 then return -1 - wait end
for i, key in ipairs(KEYS) do charge(key, seen[i], charged, slice, count) end
redis.call('PUBLISH', ARGV[4], ARGV[1])
return 1
"""
)


class Sent(enum.Enum):
    """What became of a message handed to `RelayRoutes`."""

    RELAYED = "relayed"
    UNASKED = "unasked"
    """An answer to no question outstanding on any worker: nothing relayed."""


@attrs.frozen
class OverBudget:
    """Refused: the session relayed its `RELAY_BUDGET` in the last window."""

    retry_after: int
    """Seconds until enough of the bytes counted stop counting."""


@attrs.frozen
class StoreFull:
    """Refused: relayed bodies take their whole share of Redis (all sessions)."""

    retry_after: int
    """Seconds until the bodies of the oldest window counted are gone."""


Refusal = OverBudget | StoreFull


@attrs.frozen
class Room:
    """What an answer may take now: the session's budget, the bodies' share."""

    budget: int
    share: int
    share_ms: int
    """Milliseconds until the oldest window's bodies stop counting."""
    frees: tuple[tuple[int, int], ...] = ()
    """Per slice of the budget counted, oldest first: the milliseconds until
    it stops counting, and its bytes."""

    def refusal(self, size: int) -> Refusal | None:
        """Why a body of `size` bytes would be refused; None if it fits."""
        need = max(size, MIN_CHARGE) - self.budget
        if need > 0:
            return OverBudget(retry_after=_seconds(self._freed_in(need)))
        if size > self.share:
            return StoreFull(retry_after=_seconds(self.share_ms))
        return None

    def _freed_in(self, need: int) -> int:
        """Milliseconds until `need` more bytes of the budget are back."""
        freed = 0
        for ms, size in self.frees:
            freed += size
            if freed >= need:
                return ms
        return RELAY_WINDOW_MS + RELAY_SLICE_MS  # never: a body ≤ the budget


def asked_key(session_id: str, rid: str) -> str:
    """The key naming the worker waiting for the answer to question `rid`."""
    return f"{ASKED_PREFIX}{{{session_id}}}:{rid}"


def worker_channel(worker: str) -> str:
    """The channel only `worker` listens to: heads of answers to its questions."""
    return f"{RELAY_CHANNEL}:{worker}"


def _budget_key(session_id: str) -> str:
    return f"{BUDGET_PREFIX}{{{session_id}}}"


def _seconds(ms_left: int) -> int:
    return max(1, -(-ms_left // 1000))


def _refusal(code: int) -> OverBudget:
    """The refusal a script's `-1 - <ms until there is room>` stands for."""
    return OverBudget(retry_after=_seconds(-code - 1))


def _outcome(answer: list[int]) -> Sent | Refusal:
    """What a script's `{code, ms left}` stands for (`_CHECK`, `_ANSWER`)."""
    code, ms_left = int(answer[0]), int(answer[1])
    if code == 2:  # noqa: PLR2004 - the scripts' "over the session's budget"
        return OverBudget(retry_after=_seconds(ms_left))
    if code == 3:  # noqa: PLR2004 - the scripts' "over the share of Redis"
        return StoreFull(retry_after=_seconds(ms_left))
    return Sent.RELAYED if code else Sent.UNASKED


class RelayRoutes:
    """Registers this worker's questions; routes answers and cancels in Redis.

    Relayed bodies kept at once, all sessions together, stay within
    `total` bytes; `fit` lowers it to `maxmemory` // `RELAY_SHARE`.
    """

    def __init__(
        self,
        client: aioredis.Redis,
        worker: str,
        asked_ttl_ms: int,
        *,
        total: int = RELAY_TOTAL,
    ) -> None:
        self._client = client
        self.worker = worker
        self.channel = worker_channel(worker)
        self._asked_ttl_ms = asked_ttl_ms
        self.total = total
        self._sized = False
        self._check = client.register_script(_CHECK)
        self._answer = client.register_script(_ANSWER)
        self._take = client.register_script(_TAKE)
        self._cancel = client.register_script(_CANCEL)
        self._forgotten: list[str] = []
        self._forgetting: asyncio.Task[None] | None = None

    async def fit(self) -> None:
        """Keep the bodies within `maxmemory` // `RELAY_SHARE` (asked once)."""
        if self._sized:
            return
        limit = await share_of_maxmemory(self._client, RELAY_SHARE)
        self._sized = True
        if 0 < limit < self.total:
            self.total = limit

    async def asked_here(self, session_id: str, rid: str) -> None:
        """Record that this worker waits for the answer to question `rid`."""
        await self._client.set(
            asked_key(session_id, rid), self.worker, px=self._asked_ttl_ms
        )

    def forget(self, session_id: str, rid: str) -> None:
        """Delete the record of question `rid`: answered or given up here.

        The deletes are batched in the background, one DEL per batch.
        """
        self._forgotten.append(asked_key(session_id, rid))
        if self._forgetting is None or self._forgetting.done():
            self._forgetting = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        while self._forgotten:
            batch = self._forgotten[:_FORGET_BATCH]
            del self._forgotten[:_FORGET_BATCH]
            try:
                await self._client.delete(*batch)
            except RedisError:
                logger.warning(
                    "wymcp: BROKER cannot be reached; %d answered questions keep "
                    "their records until they expire",
                    len(batch),
                    exc_info=True,
                )

    async def aclose(self) -> None:
        """Finish deleting the records of questions answered here."""
        if self._forgetting is not None:
            await asyncio.wait({self._forgetting}, timeout=_CLOSE_WAIT)

    async def outstanding(self, session_id: str, rid: str) -> Sent | Refusal | Room:
        """Whether an answer to `rid` would be relayed, asked before encoding it.

        `UNASKED` when no worker waits; a refusal when the session's budget or
        the bodies' share of Redis has no room for even `MIN_CHARGE` bytes;
        else the room there is (a larger body is refused without being sent).
        """
        await self.fit()
        answer = await self._check(
            keys=[asked_key(session_id, rid), _budget_key(session_id)],
            args=[
                RELAY_BUDGET,
                MIN_CHARGE,
                self.total,
                STORED_PREFIX,
                RELAY_WINDOW_MS,
                RELAY_SLICE_MS,
                RELAY_SLICES,
            ],
        )
        if len(answer) > 2:  # noqa: PLR2004 - `{1, the room}`, else `{code, ms}`
            numbers = [int(n) for n in answer]
            frees = numbers[5:]
            return Room(
                budget=numbers[2],
                share=numbers[3],
                share_ms=numbers[4],
                frees=tuple(zip(frees[::2], frees[1::2], strict=True)),
            )
        return _outcome(answer)

    async def answer(
        self, session_id: str, rid: str, head: bytes, body: bytes
    ) -> Sent | Refusal:
        """Keep `body` for the worker that asked `rid`, and tell it (`head`)."""
        body_key = f"{BODY_PREFIX}{{{session_id}}}:{secrets.token_hex(8)}"
        return _outcome(
            await self._answer(
                keys=[asked_key(session_id, rid), _budget_key(session_id)],
                args=[
                    body,
                    head,
                    RELAY_BUDGET,
                    RELAY_SLICE_MS,
                    BODY_TTL_MS,
                    f"{RELAY_CHANNEL}:",
                    MIN_CHARGE,
                    self.total,
                    STORED_PREFIX,
                    body_key,
                    RELAY_SLICES,
                ],
            )
        )

    async def cancel(
        self, session_id: str, client: str, payload: bytes
    ) -> Sent | OverBudget:
        """Publish a (small) cancel to every worker, within both budgets.

        `client` (`_sessions.client_of`) is whom the session counts against:
        all its sessions' cancels share one `RELAY_BUDGET` in any window.
        """
        code = int(
            await self._cancel(
                keys=[_budget_key(session_id), CLIENT_BUDGET_PREFIX + client],
                args=[
                    payload,
                    RELAY_BUDGET,
                    RELAY_SLICE_MS,
                    RELAY_CHANNEL,
                    MIN_CHARGE,
                    RELAY_SLICES,
                ],
            )
        )
        return _refusal(code) if code < 0 else Sent.RELAYED

    async def take(self, body_key: str) -> bytes | None:
        """The body kept under `body_key`, removed; None if gone (expired)."""
        if not body_key.startswith(BODY_PREFIX):
            return None
        data = await self._take(keys=[body_key], args=[STORED_PREFIX])
        return data if isinstance(data, bytes) else None

    async def discard(self, body_key: str) -> None:
        """Free a kept body nobody here waits for any more."""
        await self.take(body_key)
