"""The tasks every worker shares through Redis (`BROKER`): a `TaskStore`.

Each change of a task is one Lua script; a lease key, renewed by the worker
running the task, tells readers that worker is alive; two channels carry a
cancel or an answer made elsewhere to it; ended tasks are kept within a byte
budget counted in Redis. `docs/tasks.md` has the rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import re
import secrets
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

import redis.asyncio as aioredis
from redis.exceptions import OutOfMemoryError, RedisError, ResponseError

from wymcp.broker.redis._encoding import encode
from wymcp.broker.redis._maxmemory_share import share_of_maxmemory
from wymcp.broker.redis._probe import ProbedRedis
from wymcp.core.server import (
    INTERNAL_ERROR,
    EncodedJSON,
    TaskEvents,
    TaskLimitError,
    TaskRecord,
    TaskStoreUnavailableError,
    task_charge,
    task_too_large,
)

logger = logging.getLogger("wymcp.broker.redis")

TASK_PREFIX: Final = "wymcp:task:"
"""A hash per task: its state, open questions (`q:`) and answers (`a:`)."""
LEASE_PREFIX: Final = "wymcp:task-lease:"
"""A key per running task, alive while the worker running it renews it."""
ALL_TASKS: Final = "wymcp:tasks"
"""A sorted set of every running task id, scored by its lease's expiry (the
MAX_TASKS count): a task whose worker died leaves it with its lease."""
PRINCIPAL_PREFIX: Final = "wymcp:tasks-of:"
"""A sorted set per caller (a digest of `counted_as`) of its running tasks:
MAX_TASKS_PER_PRINCIPAL."""
KEPT: Final = "wymcp:tasks-kept"
"""A sorted set of every ended task kept, scored by expiry (oldest first)."""
KEPT_PREFIX: Final = "wymcp:tasks-kept-of:"
"""A sorted set per caller (the same digest) of its ended tasks kept."""
KEPT_SIZE: Final = "wymcp:tasks-kept-size"
"""A hash: each ended task kept -> `<bytes charged>:<its caller's digest>`."""
KEPT_BYTES: Final = "wymcp:tasks-kept-bytes"
"""A hash: `*` -> the bytes of every ended task kept and of the answers waiting
for running tasks; a caller's digest -> its."""
WAITING: Final = "wymcp:tasks-waiting"
"""A sorted set of running tasks holding answers not yet taken, scored by the
task's expiry: an expired one's answers are uncounted at the next answer."""
WAITING_SIZE: Final = "wymcp:tasks-waiting-size"
"""A hash: each task in `WAITING` -> `<bytes of its answers>:<caller's digest>`."""
STOPPED_CHANNEL: Final = "wymcp:task-stopped"
"""A task ended away from the worker running it (cancelled, lease lost)."""
ANSWERED_CHANNEL: Final = "wymcp:task-answered"
"""Answers to a task's questions came in away from the worker running it."""

LOST: Final = (
    "The worker running the task stopped before it finished (its lease ran "
    "out); start the task again."
)
"""The error message of a task whose worker died or was restarted."""

_MIB: Final = 1024 * 1024
_UNWRITABLE: Final = "Internal error: the task's error could not be written as JSON."
_FULL: Final = (
    "The task's result could not be kept: the task store (Redis) is out of "
    "memory (maxmemory). Run the task again later."
)
_TASK_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""Ids the store looks up; any other is unknown without asking Redis."""
_TIMEOUT: Final = 2.0
"""Seconds a Redis command or connection may take before it counts as down."""
_RENEW_BATCH: Final = 200
"""Leases renewed per script call: a long renewal never holds Redis long."""
_OFF_LOOP: Final = 64 * 1024
"""A stored JSON text larger than this is decoded in a worker thread."""
_RECONNECT: Final = 1.0
"""Seconds between attempts to listen while Redis is down."""
BIG_END: Final = 64 * 1024
"""An end whose result is larger goes to Redis alone (one per worker at a time),
after a check that Redis has room for it: the arguments of scripts waiting to
run sit in Redis's query buffers, counted in `used_memory` but never refused."""

_ENDED = f"""
local function ended(s)
  return s == 'completed' or s == 'failed' or s == 'cancelled'
end
local function unwait(id, who, bytes)
  redis.call('HINCRBY', '{KEPT_BYTES}', '*', -bytes)
  if redis.call('HINCRBY', '{KEPT_BYTES}', who, -bytes) <= 0 then
    redis.call('HDEL', '{KEPT_BYTES}', who)
  end
  redis.call('HDEL', '{WAITING_SIZE}', id)
  redis.call('ZREM', '{WAITING}', id)
end
local function unwait_expired(ms)
  local due = redis.call('ZRANGEBYSCORE', '{WAITING}', '-inf', ms, 'LIMIT', 0, 100)
  for _, id in ipairs(due) do
    local entry = redis.call('HGET', '{WAITING_SIZE}', id)
    if entry then
      local cut = string.find(entry, ':', 1, true)
      unwait(id, string.sub(entry, cut + 1), tonumber(string.sub(entry, 1, cut - 1)))
    else
      redis.call('ZREM', '{WAITING}', id)
    end
  end
end
local function clear(key)
  for _, name in ipairs(redis.call('HKEYS', key)) do
    local head = string.sub(name, 1, 2)
    if head == 'q:' or head == 'a:' then redis.call('HDEL', key, name) end
  end
  local waiting = tonumber(redis.call('HGET', key, 'w') or '0')
  if waiting > 0 then
    local id = string.sub(key, {len(TASK_PREFIX) + 1})
    unwait(id, redis.call('HGET', key, 'k') or '', waiting)
  end
  redis.call('HDEL', key, 'n', 'm', 'w')
end
"""

_WHILE_RUNNING = (
    _ENDED
    + """
local s = redis.call('HGET', KEYS[1], 's')
if not s or ended(s) then return 0 end
"""
)
"""The head of a script that changes a task still running (KEYS[1]): `s` is
its status; a task gone or ended answers 0, unchanged."""

_CREATE = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ms)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ms)
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[3]) then return 1 end
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[4]) then return 2 end
local ttl = tonumber(ARGV[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 8))
redis.call('HSET', KEYS[1], 'k', ARGV[7])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('SET', KEYS[2], ARGV[5], 'PX', ARGV[2])
local counted = ms + math.min(tonumber(ARGV[2]), ttl)
redis.call('ZADD', KEYS[3], counted, ARGV[6])
redis.call('ZADD', KEYS[4], counted, ARGV[6])
if redis.call('PTTL', KEYS[4]) < ttl then redis.call('PEXPIRE', KEYS[4], ttl) end
return 0
"""
"""KEYS: task, lease, all running, the caller's running. ARGV: ttl ms, lease
ms, caps (2), owner, task id, the caller's digest, then the hash's fields and
values. 0, or which cap is full. Only running tasks are counted, each until
its lease runs out (renewals push it on) or its TTL, whichever comes first:
a dead worker's tasks free their slots with their leases."""

_GET = (
    _ENDED
    + """
local seen = redis.call('HMGET', KEYS[1], 'p', 's')
if not seen[1] or seen[1] ~= ARGV[1] then return false end
if not ended(seen[2]) and redis.call('EXISTS', KEYS[2]) == 0 then
  clear(KEYS[1])
  redis.call('HSET', KEYS[1], 's', 'failed', 'e', ARGV[2], 'u', ARGV[3])
  redis.call('ZREM', KEYS[3], ARGV[5])
  local who = redis.call('HGET', KEYS[1], 'k')
  if who then redis.call('ZREM', ARGV[6] .. who, ARGV[5]) end
  redis.call('PUBLISH', ARGV[4], ARGV[5])
end
local flat = redis.call('HGETALL', KEYS[1])
if ARGV[7] == '1' then
  for i = 1, #flat, 2 do
    if flat[i] == 'r' then flat[i + 1] = '' end
  end
end
return {redis.call('PTTL', KEYS[1]), flat}
"""
)
"""KEYS: task, lease, all running. ARGV: principal, lost error, now, stopped
channel, id, running prefix, '1' to leave the result out (sent as ''). A
task still running whose lease is gone is failed first (and no longer
counted as running)."""

_FINISH = (
    _WHILE_RUNNING
    + """
local size, each, all = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
if size > each or size > all then return -1 end
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'r', ARGV[3]) end
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local who = redis.call('HGET', KEYS[1], 'k') or ''
local function held(field)
  return tonumber(redis.call('HGET', KEYS[6], field) or '0')
end
local function forget(id)
  redis.call('ZREM', KEYS[4], id)
  local entry = redis.call('HGET', KEYS[5], id)
  if not entry then return end
  local cut = string.find(entry, ':', 1, true)
  local bytes = tonumber(string.sub(entry, 1, cut - 1))
  local owner = string.sub(entry, cut + 1)
  redis.call('HDEL', KEYS[5], id)
  redis.call('ZREM', ARGV[10] .. owner, id)
  redis.call('HINCRBY', KEYS[6], '*', -bytes)
  if redis.call('HINCRBY', KEYS[6], owner, -bytes) <= 0 then
    redis.call('HDEL', KEYS[6], owner)
  end
end
local function evict(set, field)
  while held(field) + size > (field == '*' and all or each) do
    local oldest = redis.call('ZRANGE', set, 0, 0)[1]
    if not oldest then return end
    redis.call('DEL', ARGV[11] .. oldest)
    forget(oldest)
  end
end
local expired = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ms, 'LIMIT', 0, 500)
for _, id in ipairs(expired) do forget(id) end
unwait_expired(ms)
local mine = ARGV[10] .. who
evict(mine, who)
evict(KEYS[4], '*')
clear(KEYS[1])
redis.call('HSET', KEYS[1], 's', ARGV[1], 'u', ARGV[2])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'e', ARGV[4]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'm', ARGV[5]) end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[12])
redis.call('ZREM', ARGV[9] .. who, ARGV[12])
local until_ms = ms + math.max(redis.call('PTTL', KEYS[1]), 0)
redis.call('ZADD', KEYS[4], until_ms, ARGV[12])
redis.call('ZADD', mine, until_ms, ARGV[12])
if redis.call('PTTL', mine) < until_ms - ms then
  redis.call('PEXPIRE', mine, until_ms - ms)
end
redis.call('HSET', KEYS[5], ARGV[12], size .. ':' .. who)
redis.call('HINCRBY', KEYS[6], '*', size)
redis.call('HINCRBY', KEYS[6], who, size)
return 1
"""
)
"""KEYS: task, lease, all running, kept, kept sizes, kept bytes. ARGV: status,
at, result, error, message ('' = none), bytes charged, the budgets (a
caller's, all), running prefix, kept prefix, task prefix, task id.

Before any write, the charge is checked against the budgets (-1: it can never
fit). The result, the one large value, is the script's first write: Redis
refuses a script's first write over `maxmemory`, but none after it. Then
the expired ended tasks are uncounted and the oldest ended tasks of the
caller, then of all, are forgotten until the charge fits."""

_ASK = (
    _WHILE_RUNNING
    + """
local opened = 0
for i = 2, #ARGV, 2 do
  opened = opened + redis.call('HSET', KEYS[1], 'q:' .. ARGV[i], ARGV[i + 1])
end
redis.call('HINCRBY', KEYS[1], 'n', opened)
redis.call('HSET', KEYS[1], 's', 'input_required', 'u', ARGV[1])
return 1
"""
)
"""KEYS: task. ARGV: at, then each key and its request."""

_ANSWER = (
    _WHILE_RUNNING
    + """
local asked = {}
local size = 0
for i = 5, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], 'q:' .. ARGV[i]) == 1 then
    asked[#asked + 1] = i
    size = size + #ARGV[i + 1]
  end
end
local taken = #asked
if taken == 0 then return 0 end
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local who = redis.call('HGET', KEYS[1], 'k') or ''
local function held(field)
  return tonumber(redis.call('HGET', KEYS[2], field) or '0')
end
unwait_expired(ms)
if held(who) + size > tonumber(ARGV[1]) or held('*') + size > tonumber(ARGV[2]) then
  return -1
end
for _, i in ipairs(asked) do
  redis.call('HSET', KEYS[1], 'a:' .. ARGV[i], ARGV[i + 1])
end
for _, i in ipairs(asked) do redis.call('HDEL', KEYS[1], 'q:' .. ARGV[i]) end
local waiting = redis.call('HINCRBY', KEYS[1], 'w', size)
redis.call('HINCRBY', KEYS[2], '*', size)
redis.call('HINCRBY', KEYS[2], who, size)
redis.call('HSET', KEYS[4], ARGV[3], waiting .. ':' .. who)
redis.call('ZADD', KEYS[3], ms + math.max(redis.call('PTTL', KEYS[1]), 0), ARGV[3])
local open = redis.call('HINCRBY', KEYS[1], 'n', -taken)
if open <= 0 and s == 'input_required' then
  redis.call('HSET', KEYS[1], 's', 'working')
end
redis.call('HSET', KEYS[1], 'u', ARGV[4])
return taken
"""
)
"""KEYS: task, kept bytes, waiting, waiting sizes. ARGV: the budgets (a
caller's, all), task id, at, then each key and its answer. The answers are
charged to the budgets with the ended tasks until taken (-1: they do not
fit; nothing is written). The expired tasks' waiting answers are uncounted
first, a small write: Redis's `maxmemory` check applies to the script."""

_TAKE = (
    _ENDED
    + """
local found = {}
local size = 0
for i = 2, #ARGV do
  local answer = redis.call('HGET', KEYS[1], 'a:' .. ARGV[i])
  if not answer then return false end
  found[#found + 1] = answer
  size = size + #answer
end
for i = 2, #ARGV do redis.call('HDEL', KEYS[1], 'a:' .. ARGV[i]) end
local waiting = tonumber(redis.call('HGET', KEYS[1], 'w') or '0')
local charged = math.min(size, waiting)
if charged > 0 then
  local who = redis.call('HGET', KEYS[1], 'k') or ''
  unwait(ARGV[1], who, charged)
  if waiting > charged then
    redis.call('HSET', KEYS[1], 'w', waiting - charged)
    redis.call('HSET', KEYS[3], ARGV[1], (waiting - charged) .. ':' .. who)
    local expires = redis.call('PTTL', KEYS[1])
    local now = redis.call('TIME')
    local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
    redis.call('ZADD', KEYS[2], ms + math.max(expires, 0), ARGV[1])
  else
    redis.call('HDEL', KEYS[1], 'w')
  end
end
return found
"""
)
"""KEYS: task, waiting, waiting sizes. ARGV: task id, then the keys whose
answers to take, all or none; their bytes are uncharged."""

_PROGRESS = (
    _WHILE_RUNNING
    + """
redis.call('HSET', KEYS[1], 'm', ARGV[1], 'u', ARGV[2])
return 1
"""
)
"""KEYS: task. ARGV: message, at."""

_RENEW = (
    _ENDED
    + """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local alive = {}
for i = 1, #KEYS, 2 do
  local s = redis.call('HGET', KEYS[i], 's')
  if s and not ended(s) then
    local id = ARGV[4 + (i - 1) / 2]
    local left = math.max(redis.call('PTTL', KEYS[i]), 0)
    local until_ms = ms + math.min(tonumber(ARGV[1]), left)
    redis.call('SET', KEYS[i + 1], ARGV[2], 'PX', ARGV[1])
    redis.call('ZADD', ARGV[3], until_ms, id)
    local who = redis.call('HGET', KEYS[i], 'k')
    if who then
      local mine = ARGV[4 + #KEYS / 2] .. who
      redis.call('ZADD', mine, until_ms, id)
      if redis.call('PTTL', mine) < tonumber(ARGV[1]) then
        redis.call('PEXPIRE', mine, ARGV[1])
      end
    end
    alive[#alive + 1] = 1
  else
    alive[#alive + 1] = 0
  end
end
return alive
"""
)
"""KEYS: task and lease, per task. ARGV: lease ms, owner, the all-running
set, each task id, then the running prefix. 1 per task still running (its
lease set again, even one that ran out unread, and counted as running until
the new lease runs out), else 0."""

T = TypeVar("T")


def principal_field(principal: str | None) -> str:
    """How a principal key is kept in a task's hash (JSON: null or a string)."""
    return json.dumps(principal, ensure_ascii=False)


def _digest(counted_as: str | None) -> str:
    """The caller a task counts against, as its Redis keys name it."""
    return hashlib.sha256(principal_field(counted_as).encode()).hexdigest()[:32]


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("utf-8", "replace")


async def _decoded(raw: bytes | None) -> Any:
    """A stored JSON text's value; a large one decoded off the loop."""
    if raw is None:
        return None
    if len(raw) > _OFF_LOOP:
        return await asyncio.to_thread(json.loads, raw)
    return json.loads(raw)


def _keyed_args(at: float, messages: Mapping[str, dict[str, Any]]) -> list[str]:
    """ARGV of `_ASK` and `_ANSWER`: `at`, then each key and its message's JSON."""
    args = [repr(at)]
    for key, message in messages.items():
        args += [key, encode(message).decode()]
    return args


class RedisTaskStore:
    """Task records in Redis, shared by every worker; see the module docstring.

    `max_tasks` and `max_per_principal` cap the running tasks over all
    workers (per caller: `TaskRecord.counted_as`). Ended tasks are kept
    within `memory` bytes in all and `memory_per_principal` per caller,
    counted in Redis as the memory store counts them (`task_charge`), and
    never above half of Redis's `maxmemory` (read at the first task). `lease` is
    how many seconds a running task's lease lives unrenewed; this worker
    renews the leases of the tasks it runs every third of it.
    """

    def __init__(
        self,
        url: str,
        *,
        max_tasks: int,
        max_per_principal: int,
        lease: float,
        memory: int = 256 * _MIB,
        memory_per_principal: int = 32 * _MIB,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.client: aioredis.Redis = ProbedRedis.from_url(
            url,
            socket_timeout=_TIMEOUT,
            socket_connect_timeout=_TIMEOUT,
            health_check_interval=30,
        )
        self._max_tasks = max_tasks
        self._max_per_principal = max_per_principal
        self._memory = memory
        self._memory_per_principal = memory_per_principal
        self._sized = False
        """Whether the budgets were fitted to Redis's `maxmemory` yet."""
        self._lease = lease
        self._lease_ms = max(1, round(lease * 1000))
        self._wall_clock = wall_clock
        self._owner = secrets.token_hex(8)
        """This worker, as its leases name it."""
        self._events: TaskEvents | None = None
        self._leased: set[str] = set()
        """Tasks created here whose end is not written yet."""
        self._unsaved: dict[str, tuple[Any, ...]] = {}
        """Ends of tasks run here that Redis could not take yet (retried)."""
        self._background: list[asyncio.Task[None]] = []
        self._closed = False
        self._big_ends = asyncio.Semaphore(1)
        """Held while a result larger than `BIG_END` is sent (see there)."""
        self._shown: weakref.WeakValueDictionary[str, EncodedJSON] = (
            weakref.WeakValueDictionary()
        )
        """Results read and still held by an answer: a poll meanwhile shares them."""
        self._reading: dict[str, asyncio.Future[EncodedJSON | None]] = {}
        """Tasks whose result is being read: a poll meanwhile waits to share it."""
        register = self.client.register_script
        self._create = register(_CREATE)
        self._get = register(_GET)
        self._finish = register(_FINISH)
        self._ask = register(_ASK)
        self._answer = register(_ANSWER)
        self._take = register(_TAKE)
        self._progress = register(_PROGRESS)
        self._renew = register(_RENEW)

    def attach(self, events: TaskEvents) -> None:
        """Tell `events` of tasks stopped or answered on another worker."""
        self._events = events

    async def _call(self, command: Awaitable[T]) -> T:
        try:
            return await command
        except (RedisError, OSError) as error:
            logger.warning(
                "wymcp: BROKER cannot be reached (tasks): %s", type(error).__name__
            )
            raise TaskStoreUnavailableError from None

    # ---------------------------------------------------------------- steps

    async def create(self, record: TaskRecord) -> None:
        """Keep a new task and its lease; `TaskLimitError` when a cap is full."""
        self._start()
        if not self._sized:
            await self._fit_maxmemory()
        principal = principal_field(record.principal)
        fields: list[str | int | float] = [
            "p",
            principal,
            "s",
            record.status,
            "c",
            repr(record.created_at),
            "u",
            repr(record.updated_at),
            "t",
            record.ttl_ms,
            "i",
            record.poll_interval_ms,
            "n",
            0,
        ]
        digest = _digest(record.counted_as)
        full = await self._call(
            self._create(
                keys=[
                    TASK_PREFIX + record.task_id,
                    LEASE_PREFIX + record.task_id,
                    ALL_TASKS,
                    PRINCIPAL_PREFIX + digest,
                ],
                args=[
                    record.ttl_ms,
                    self._lease_ms,
                    self._max_tasks,
                    self._max_per_principal,
                    self._owner,
                    record.task_id,
                    digest,
                    *fields,
                ],
            )
        )
        if full == 1:
            raise TaskLimitError("the server runs as many tasks as it may")
        if full == 2:  # noqa: PLR2004 - the script's "per principal" answer
            raise TaskLimitError("this caller runs as many tasks as it may")
        self._leased.add(record.task_id)

    async def _fit_maxmemory(self) -> None:
        """Keep the ended tasks within half of Redis's `maxmemory`, if it has one.

        Asked once, at the first task: a budget above it would let results
        fill what sessions need. Redis that cannot say keeps the budgets.
        """
        try:
            limit = await self._call(share_of_maxmemory(self.client, 2))
        except TaskStoreUnavailableError:
            return  # asked again at the next task
        self._sized = True
        if 0 < limit < self._memory:
            logger.warning(
                "wymcp: TASK_MEMORY_BUDGET (%d) is above half of Redis's maxmemory "
                "(%d); ended tasks are kept within %d bytes",
                self._memory,
                limit * 2,
                limit,
            )
            self._memory = limit
            self._memory_per_principal = min(self._memory_per_principal, limit)

    async def get(self, task_id: str, principal: str | None) -> TaskRecord | None:
        """The task as stored now, or None.

        A running task whose lease ran out is failed first: its worker is gone.
        """
        if _TASK_ID.fullmatch(task_id) is None:
            return None
        reading = self._reading.get(task_id)
        if task_id in self._shown or reading is not None:
            found = await self._get_fields(task_id, principal, with_result=False)
            if found is None:
                return None
            if found[1].get(b"r") != b"":
                return await self._record(task_id, principal, *found)
            shared = self._shown.get(task_id)
            if shared is None and reading is not None:
                shared = await asyncio.shield(reading)
            if shared is not None:
                return await self._record(task_id, principal, *found, shared=shared)
        return await self._read_once(task_id, principal)

    async def _read_once(
        self, task_id: str, principal: str | None
    ) -> TaskRecord | None:
        """Read the task with its result, telling polls meanwhile to share it."""
        reading = self._reading.get(task_id)
        if reading is None:
            reading = self._reading[task_id] = (
                asyncio.get_running_loop().create_future()
            )
            mine = True
        else:
            mine = False
        kept: EncodedJSON | None = None
        try:
            found = await self._get_fields(task_id, principal, with_result=True)
            if found is None:
                return None
            record = await self._record(task_id, principal, *found)
            kept = record.result
            return record
        finally:
            if mine:
                del self._reading[task_id]
                reading.set_result(kept)

    async def _get_fields(
        self, task_id: str, principal: str | None, *, with_result: bool
    ) -> tuple[int, dict[bytes, bytes]] | None:
        lost = encode({"code": INTERNAL_ERROR, "message": LOST}).decode()
        found = await self._call(
            self._get(
                keys=[TASK_PREFIX + task_id, LEASE_PREFIX + task_id, ALL_TASKS],
                args=[
                    principal_field(principal),
                    lost,
                    repr(self._wall_clock()),
                    STOPPED_CHANNEL,
                    task_id,
                    PRINCIPAL_PREFIX,
                    "" if with_result else "1",
                ],
            )
        )
        if found is None:
            return None
        pttl, flat = found
        return pttl, dict(zip(flat[::2], flat[1::2], strict=True))

    async def _record(
        self,
        task_id: str,
        principal: str | None,
        pttl: int,
        fields: dict[bytes, bytes],
        *,
        shared: EncodedJSON | None = None,
    ) -> TaskRecord:
        requests = {
            name[2:].decode("utf-8", "replace"): json.loads(value)
            for name, value in fields.items()
            if name.startswith(b"q:")
        }
        created = float(fields[b"c"])
        kept = fields.get(b"r")
        if shared is not None:
            result: EncodedJSON | None = shared
        else:
            result = None if kept is None else self._shared(task_id, kept)
        return TaskRecord(
            task_id=task_id,
            principal=principal,
            created_at=created,
            updated_at=float(fields.get(b"u", created)),
            expires_at=time.monotonic() + max(pttl, 0) / 1000,
            ttl_ms=int(fields[b"t"]),
            poll_interval_ms=int(fields[b"i"]),
            status=fields[b"s"].decode("ascii", "replace"),
            status_message=_text(fields.get(b"m")),
            result=result,
            error=await _decoded(fields.get(b"e")),
            input_requests=requests,
        )

    def _shared(self, task_id: str, kept: bytes) -> EncodedJSON:
        """The result read, as the one an answer still writes if it is the same.

        An ended task's result never changes: polls of it while earlier
        answers still wait for their client share one copy (the bytes just
        read are freed at once), so N unread polls hold one result, not N
        (issue 29, attack F1).
        """
        shown = self._shown.get(task_id)
        if shown is not None and shown.data == kept:
            return shown
        result = EncodedJSON(kept)
        self._shown[task_id] = result
        return result

    async def ask(
        self, task_id: str, requests: Mapping[str, dict[str, Any]], at: float
    ) -> bool:
        """Open questions, the task `input_required`; False if it has ended."""
        args = _keyed_args(at, requests)
        opened = await self._call(self._ask(keys=[TASK_PREFIX + task_id], args=args))
        return bool(opened)

    async def answer(
        self, task_id: str, responses: Mapping[str, dict[str, Any]], at: float
    ) -> bool:
        """Answer open questions; the worker running the task is woken."""
        budgets: list[str | int] = [self._memory_per_principal, self._memory, task_id]
        taken = await self._call(
            self._answer(
                keys=[TASK_PREFIX + task_id, KEPT_BYTES, WAITING, WAITING_SIZE],
                args=[*budgets, *_keyed_args(at, responses)],
            )
        )
        if taken == -1:
            raise TaskLimitError(
                "the answers waiting for this caller's tasks fill its budget "
                "(TASK_MEMORY_BUDGET_PER_PRINCIPAL)"
            )
        if taken and task_id not in self._leased:
            await self._call(self.client.publish(ANSWERED_CHANNEL, task_id))
        return bool(taken)

    async def take(
        self, task_id: str, keys: Sequence[str]
    ) -> dict[str, dict[str, Any]] | None:
        """Remove and return the answers to `keys`, or None until all are in."""
        found = await self._call(
            self._take(
                keys=[TASK_PREFIX + task_id, WAITING, WAITING_SIZE],
                args=[task_id, *keys],
            )
        )
        if found is None:
            return None
        return {key: json.loads(raw) for key, raw in zip(keys, found, strict=True)}

    async def progress(self, task_id: str, message: str, at: float) -> None:
        """Set a running task's `statusMessage`."""
        await self._call(
            self._progress(keys=[TASK_PREFIX + task_id], args=[message, repr(at)])
        )

    async def finish(
        self,
        task_id: str,
        status: str,
        *,
        at: float,
        result: EncodedJSON | None = None,
        error: dict[str, Any] | None = None,
        message: str | None = None,
    ) -> bool:
        """End a task that has not ended, kept within the byte budgets.

        A result that can never fit, or that Redis refuses (`maxmemory`),
        ends the task `failed` with an error saying so. The end of a task
        running here that Redis cannot take now is kept and written again on
        each renewal; an end made on another worker (a cancel) is published
        to the worker running the task.
        """
        try:
            written = "" if error is None else encode(error).decode()
        except (TypeError, ValueError, OverflowError, RecursionError):
            logger.exception("wymcp: task %s ended with what JSON cannot hold", task_id)
            error = {"code": INTERNAL_ERROR, "message": _UNWRITABLE}
            written = encode(error).decode()
        size = task_charge(result, error)
        args = (
            status,
            repr(at),
            b"" if result is None else result.data,
            written,
            message or "",
            size,
        )
        if task_id in self._leased:
            try:
                ended = await self._write_end(task_id, args)
            except TaskStoreUnavailableError:
                self._unsaved[task_id] = args
                return True
            return ended
        ended = await self._write_end(task_id, args)
        if ended:
            await self._call(self.client.publish(STOPPED_CHANNEL, task_id))
        return ended

    async def _write_end(self, task_id: str, args: tuple[Any, ...]) -> bool:
        result: bytes = args[2]
        if len(result) <= BIG_END:
            return await self._write_end_now(task_id, args)
        async with self._big_ends:
            if await self._room_for(len(result)):
                return await self._write_end_now(task_id, args)
            logger.warning("wymcp: task %s's result is over Redis maxmemory", task_id)
            return await self._write_failed(task_id, args, _FULL)

    async def _room_for(self, size: int) -> bool:
        """Whether Redis has `size` bytes below its `maxmemory` (or no limit).

        Asked before the bytes are sent: Redis refuses a script's first write
        only once its arguments are in, counted in `used_memory`.
        """
        memory = await self._call(self.client.info("memory"))
        limit = int(memory.get("maxmemory", 0) or 0)
        return not limit or int(memory.get("used_memory", 0)) + size <= limit

    async def _write_failed(
        self, task_id: str, args: tuple[Any, ...], message: str
    ) -> bool:
        """End the task `failed` saying why its result is not kept."""
        why = {"code": INTERNAL_ERROR, "message": message}
        failed = (
            "failed",
            args[1],
            b"",
            encode(why).decode(),
            "",
            task_charge(None, why),
        )
        return await self._write_end_now(task_id, failed)

    async def _write_end_now(self, task_id: str, args: tuple[Any, ...]) -> bool:
        result: bytes = args[2]
        why: dict[str, Any] | None = None
        ended = 0
        try:
            ended = await self._finish_script(task_id, args)
        except ResponseError as refused:
            if not result or not isinstance(refused, OutOfMemoryError):
                raise self._unreachable(refused) from None
            logger.warning("wymcp: task %s's result is over Redis maxmemory", task_id)
            why = {"code": INTERNAL_ERROR, "message": _FULL}
        else:
            if ended == -1:  # it can never fit in the budgets
                budget = min(self._memory, self._memory_per_principal)
                why = task_too_large(len(result), budget)
        if why is not None:  # the result is not kept: the task fails saying why
            error = encode(why).decode()
            failed = ("failed", args[1], b"", error, "", task_charge(None, why))
            try:
                ended = await self._finish_script(task_id, failed)
            except ResponseError as refused:
                raise self._unreachable(refused) from None
        self._leased.discard(task_id)
        self._unsaved.pop(task_id, None)
        return ended == 1

    async def _finish_script(self, task_id: str, args: tuple[Any, ...]) -> int:
        """Run `_FINISH`; a refusal of Redis's is raised as `ResponseError`."""
        try:
            ended: int = await self._finish(
                keys=[
                    TASK_PREFIX + task_id,
                    LEASE_PREFIX + task_id,
                    ALL_TASKS,
                    KEPT,
                    KEPT_SIZE,
                    KEPT_BYTES,
                ],
                args=[
                    *args,
                    self._memory_per_principal,
                    self._memory,
                    PRINCIPAL_PREFIX,
                    KEPT_PREFIX,
                    TASK_PREFIX,
                    task_id,
                ],
            )
        except ResponseError:
            raise  # Redis answered: the caller decides (`maxmemory`)
        except (RedisError, OSError) as error:
            raise self._unreachable(error) from None
        return ended

    @staticmethod
    def _unreachable(error: Exception) -> TaskStoreUnavailableError:
        logger.warning(
            "wymcp: BROKER cannot be reached (tasks): %s", type(error).__name__
        )
        return TaskStoreUnavailableError()

    # ------------------------------------------------------------ background

    def _start(self) -> None:
        """Renew leases and listen, once this worker runs a task."""
        if self._background or self._closed:
            return
        loop = asyncio.get_running_loop()
        self._background = [
            loop.create_task(self._renewing()),
            loop.create_task(self._listening()),
        ]

    async def renew(self) -> None:
        """Write the ends kept back, then renew the leases of the tasks run here.

        A task whose lease cannot be renewed has ended elsewhere or expired:
        its work is stopped. Every task still parked on questions is woken to
        look for answers, in case their message was missed.
        """
        for task_id, args in list(self._unsaved.items()):
            with contextlib.suppress(TaskStoreUnavailableError):
                await self._write_end(task_id, args)
        leased = list(self._leased)
        for start in range(0, len(leased), _RENEW_BATCH):
            batch = leased[start : start + _RENEW_BATCH]
            keys = [k for t in batch for k in (TASK_PREFIX + t, LEASE_PREFIX + t)]
            renewal: list[str | int] = [self._lease_ms, self._owner, ALL_TASKS]
            renewal += [*batch, PRINCIPAL_PREFIX]
            alive = await self._call(self._renew(keys=keys, args=renewal))
            for task_id, running in zip(batch, alive, strict=True):
                if running:
                    self._tell("answered", task_id)
                elif task_id in self._leased and task_id not in self._unsaved:
                    self._leased.discard(task_id)  # not already heard of
                    self._tell("stopped", task_id)

    def _tell(self, what: str, task_id: str) -> None:
        if self._events is None:
            return
        if what == "stopped":
            self._events.stopped(task_id)
        else:
            self._events.answered(task_id)

    async def _renewing(self) -> None:
        while not self._closed:
            await asyncio.sleep(self._lease / 3)
            try:
                await self.renew()
            except TaskStoreUnavailableError:
                pass  # logged; the next beat tries again
            except Exception:
                logger.exception("wymcp: renewing task leases failed")

    async def _listening(self) -> None:
        """Hear of cancels and answers made on other workers, while serving.

        It stops once the store is closed even if redis-py swallowed the
        cancel (8.2 turns one into a connection error in `listen`).
        """
        while not self._closed:
            try:
                pubsub = self.client.pubsub()
                try:
                    await pubsub.subscribe(STOPPED_CHANNEL, ANSWERED_CHANNEL)
                    async for message in pubsub.listen():
                        self._heard(message)
                finally:
                    # typed from redis-py 8.2 on, untyped before: bound to a
                    # typed name, it type-checks at every version the range allows
                    close: Callable[[], Awaitable[None]] = pubsub.aclose
                    await close()
            except (RedisError, OSError):
                logger.debug("wymcp: listening for task changes failed; retrying")
            except Exception:
                logger.exception("wymcp: listening for task changes failed")
            if not self._closed:
                await asyncio.sleep(_RECONNECT)

    def _heard(self, message: Mapping[str, Any]) -> None:
        data = message.get("data")
        if message.get("type") != "message" or not isinstance(data, bytes):
            return
        task_id = data.decode("ascii", "replace")
        if task_id not in self._leased:
            return
        if message.get("channel") == STOPPED_CHANNEL.encode():
            self._leased.discard(task_id)
            self._tell("stopped", task_id)
        else:
            self._tell("answered", task_id)

    async def aclose(self) -> None:
        """Stop renewing and listening, then close the connections."""
        if self._closed:
            return
        self._closed = True
        for job in self._background:
            job.cancel()
        if self._background:
            # bounded: redis-py (8.2) can swallow the cancel of a listener
            # cancelled just as it subscribed; closing the client below
            # breaks its connection, and the loop sees `_closed`
            await asyncio.wait(self._background, timeout=_TIMEOUT)
        if self._unsaved:
            logger.warning(
                "wymcp: %d task ends could not be written to BROKER; readers will "
                "see those tasks failed once their leases run out",
                len(self._unsaved),
            )
        await self.client.aclose()
        if any(not job.done() for job in self._background):
            await asyncio.wait(self._background, timeout=_TIMEOUT)
        self._background = []
