"""The 2025 sessions every worker shares through Redis (`BROKER`).

One key per session holds what a worker needs to serve it; its TTL is the idle
timeout, renewed on each use. Sorted sets scored by expiry count the live
sessions (all, each client's) for the caps. Channels tell every worker of ends.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Final

import attrs
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError  # noqa: A004 - redis-py's own

from wymcp.broker.redis._probe import ProbedRedis
from wymcp.core.server import Session, peer_group, principal_key

KEY_PREFIX: Final = "wymcp:session:"
LIVE_KEY: Final = "wymcp:sessions"
"""Sorted set: every live session's id, scored by its expiry (ms)."""
CLIENT_PREFIX: Final = "wymcp:sessions:"
"""`wymcp:sessions:<client>` -> sorted set of that client's live sessions."""
ENDED_CHANNEL: Final = "wymcp:session-ended"
RELAY_CHANNEL: Final = "wymcp:session-relay"
"""Cancels for a call running on another worker; `<it>:<worker>` heads of answers."""
CHANGED_CHANNEL: Final = "wymcp:session-changed"
"""Ids of sessions whose record changed (e.g. resources subscribed)."""
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{43}")
"""The shape of the ids the engine makes; any other id is never looked up."""
_TIMEOUT: Final = 2.0
"""Seconds a Redis command or connection may take before it counts as down."""


# the session's client (64 hex) is the record's first field, `"g"`
_GROUP = """
local function group_of(raw)
  return string.match(raw, '^{"g": ?"(%x+)"')
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
"""
# KEYS: record, live, client; ARGV: record, ttl, most live, most per client, id.
# The caps are read first (no write); the record is the first write, so
# Redis's `maxmemory` check applies to the script; then the expired drop out.
_CREATE: Final = (
    _GROUP
    + """
local now = now_ms()
local function wait(key)
  local first = redis.call('ZRANGEBYSCORE', key, '(' .. now, '+inf',
    'WITHSCORES', 'LIMIT', 0, 1)
  return math.max(tonumber(first[2] or now) - now, 0)
end
local function live(key) return redis.call('ZCOUNT', key, '(' .. now, '+inf') end
if live(KEYS[2]) >= tonumber(ARGV[3]) then return {1, wait(KEYS[2])} end
if live(KEYS[3]) >= tonumber(ARGV[4]) then return {2, wait(KEYS[3])} end
local ends = now + tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX')
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZADD', KEYS[2], ends, ARGV[5])
redis.call('ZADD', KEYS[3], ends, ARGV[5])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return {0, 0}
"""
)
# KEYS: record, live; ARGV: ttl, id, client prefix
_FETCH: Final = (
    _GROUP
    + """
local raw = redis.call('GETEX', KEYS[1], 'PX', ARGV[1])
if not raw then return false end
local ends = now_ms() + tonumber(ARGV[1])
redis.call('ZADD', KEYS[2], 'XX', ends, ARGV[2])
local group = group_of(raw)
if group then
  local client = ARGV[3] .. group
  redis.call('ZADD', client, 'XX', ends, ARGV[2])
  redis.call('PEXPIRE', client, ARGV[1])
end
return raw
"""
)
# KEYS: record; ARGV: record (without its client), ttl
_UPDATE: Final = (
    _GROUP
    + """
local old = redis.call('GET', KEYS[1])
if not old then return 0 end
local group = group_of(old)
local new = ARGV[1]
if group then new = '{"g":"' .. group .. '",' .. string.sub(ARGV[1], 2) end
redis.call('SET', KEYS[1], new, 'PX', ARGV[2], 'XX')
return 1
"""
)
# KEYS: record, live; ARGV: id, client prefix
_END: Final = (
    _GROUP
    + """
local raw = redis.call('GET', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local group = raw and group_of(raw)
if group then redis.call('ZREM', ARGV[2] .. group, ARGV[1]) end
return 1
"""
)


@attrs.frozen
class TooMany:
    """Refused: the live sessions are at a cap (`setting`) until one ends."""

    setting: str
    """`BROKER_MAX_SESSIONS` (all clients) or `MAX_SESSIONS_PER_CLIENT`."""
    retry_after: int
    """Seconds until the oldest session counted idles out, if none ends sooner."""


def client_of(principal: object | None, peer: str | None) -> str:
    """Whom a session counts against: its principal, else its address (IPv6: /64).

    As the tasks' caps and `RATE_LIMITS` count a caller; hashed, so the key
    is short and safe whatever the principal's key holds.
    """
    key = principal_key(principal)
    if key is not None:
        counted = "principal:" + key
    else:
        counted = "anonymous" if peer is None else "peer:" + peer_group(peer)
    return hashlib.sha256(counted.encode("utf-8", "surrogatepass")).hexdigest()


def is_session_id(text: str) -> bool:
    """Whether `text` has the shape of an id the engine makes (43 base64url)."""
    return _SESSION_ID.fullmatch(text) is not None


def record(session: Session, client: str | None = None) -> bytes:
    """The session's shared fields (`Session.shared`) as compact JSON.

    `client` (the key its caps count it by) comes first, if given.
    """
    head = {} if client is None else {"g": client}
    return json.dumps(
        {**head, **session.shared()}, separators=(",", ":"), ensure_ascii=False
    ).encode()


def session_of(session_id: str, raw: bytes | str) -> Session:
    """A local Session from its shared record (`Session.from_shared`)."""
    data: dict[str, Any] = json.loads(raw)
    return Session.from_shared(session_id, data)


class RedisSessions:
    """Session records in Redis, expiring after `idle_timeout` seconds unused."""

    def __init__(
        self,
        url: str,
        *,
        idle_timeout: float,
        max_sessions: int,
        max_per_client: int,
    ) -> None:
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
        self._max = max_sessions
        self._max_per_client = max_per_client
        self._create = self.client.register_script(_CREATE)
        self._fetch = self.client.register_script(_FETCH)
        self._update = self.client.register_script(_UPDATE)
        self._end = self.client.register_script(_END)

    async def create(self, session: Session, client: str) -> TooMany | None:
        """Record a new session of `client` (`client_of`); refused over a cap."""
        code, wait_ms = await self._create(
            keys=[KEY_PREFIX + session.id, LIVE_KEY, CLIENT_PREFIX + client],
            args=[
                record(session, client),
                self._ttl_ms,
                self._max,
                self._max_per_client,
                session.id,
            ],
        )
        if not int(code):
            return None
        setting = "BROKER_MAX_SESSIONS" if int(code) == 1 else "MAX_SESSIONS_PER_CLIENT"
        return TooMany(setting, max(1, -(-int(wait_ms) // 1000)))

    async def fetch(self, session_id: str) -> Session | None:
        """The recorded session, its idle timer (and counted expiry) restarted."""
        raw = await self._fetch(
            keys=[KEY_PREFIX + session_id, LIVE_KEY],
            args=[self._ttl_ms, session_id, CLIENT_PREFIX],
        )
        return None if raw is None else session_of(session_id, raw)

    async def update(self, session: Session) -> None:
        """Rewrite a live session's record (a field changed); tell every worker."""
        async with self.client.pipeline(transaction=False) as pipe:
            _ = await self._update(
                keys=[KEY_PREFIX + session.id],
                args=[record(session), self._ttl_ms],
                client=pipe,
            )
            _ = pipe.publish(CHANGED_CHANNEL, session.id)
            await pipe.execute()

    async def peek(self, session_id: str) -> Session | None:
        """The recorded session, its idle timer left as it is; None when gone."""
        raw = await self.client.get(KEY_PREFIX + session_id)
        return None if raw is None else session_of(session_id, raw)

    async def end(self, session_id: str) -> None:
        """Forget the session and tell every worker it ended."""
        await self._end(
            keys=[KEY_PREFIX + session_id, LIVE_KEY], args=[session_id, CLIENT_PREFIX]
        )
        await self.client.publish(ENDED_CHANNEL, session_id)

    async def aclose(self) -> None:
        """Close the connections."""
        await self.client.aclose()
