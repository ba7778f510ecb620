"""A session's stream events kept in a Redis stream, for `Last-Event-ID`.

With `BROKER`, each event is added to `wymcp:events:<session id>` (at most
`EVENTS_MAXLEN` entries and `REPLAY_BYTES` of JSON, expiring with the session);
its SSE id `r-<entry id>` resumes the stream on any worker.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import Any, Final

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from wymcp.broker.redis._post_leases import PostLeases
from wymcp.core.server import REPLAY_BYTES, Stream

logger = logging.getLogger("wymcp.broker.redis")

EVENTS_PREFIX: Final = "wymcp:events:"
EVENTS_MAXLEN: Final = 100
"""Events kept per session (notifications: about 2.2 KiB each at most)."""
BYTES_PREFIX: Final = "wymcp:events-bytes:"
"""The key prefix of a session's count of the JSON its kept events hold
(`REPLAY_BYTES` at most, counted as the replay counts it: characters of
compact JSON)."""
_ADD = """
local size = tonumber(ARGV[4])
local budget = tonumber(ARGV[2])
if size > budget then
  return false
end
local id = redis.call('XADD', KEYS[1], '*', unpack(ARGV, 5))
local total = redis.call('INCRBY', KEYS[2], size)
local maxlen = tonumber(ARGV[1])
while total > budget or redis.call('XLEN', KEYS[1]) > maxlen do
  local oldest = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1]
  if oldest == nil then
    break
  end
  local fields = oldest[2]
  local dropped = 0
  for i = 1, #fields, 2 do
    if fields[i] == 'n' then
      dropped = tonumber(fields[i + 1])
    end
  end
  redis.call('XDEL', KEYS[1], oldest[1])
  total = redis.call('DECRBY', KEYS[2], dropped)
end
if total < 0 then
  redis.call('SET', KEYS[2], 0)
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return id
"""
"""Keep one event (KEYS[1] the session's stream, KEYS[2] its size count):
ARGV is maxlen, the budget, the TTL in ms, the event's JSON size (its `n`
field), then its fields. Larger than the budget alone: not kept (false). Else
added (the large write first), then the oldest dropped until both bounds hold."""
_REDIS_ID = re.compile(r"r-([0-9]{1,20})-([0-9]{1,20})")
_MAX_ID: Final = 64


def _compact(message: Any) -> tuple[bytes, int]:
    """`message` as compact JSON, and its size as the replay counts it.

    A text holding a lone surrogate (no UTF-8 for it) is written escaped.
    """
    if message is None:
        return b"", 0
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode(), len(text)
    except UnicodeEncodeError:
        text = json.dumps(message, separators=(",", ":"))
        return text.encode(), len(text)


def redis_event_id(text: str | None) -> str | None:
    """The Redis entry id a `Last-Event-ID` names (`r-<ms>-<n>`), or None."""
    if text is None or len(text) > _MAX_ID:
        return None
    match = _REDIS_ID.fullmatch(text.strip())
    return None if match is None else f"{match.group(1)}-{match.group(2)}"


class RedisEvents:
    """The kept GET stream events of every session, in Redis streams."""

    def __init__(self, client: aioredis.Redis, *, ttl_ms: int) -> None:
        self._client = client
        self._ttl_ms = ttl_ms
        self._script = client.register_script(_ADD)
        self.leases = PostLeases(client)
        """The leases of the calls running here whose POST stream ended early."""

    async def append(self, session_id: str, message: Any) -> str | None:
        """Keep one event (None: a priming event); its SSE id, None if too large."""
        data, size = _compact(message)
        added = await self._add(session_id, size, {"d": data})
        return None if added is None else f"r-{added}"

    async def _add(
        self, session_id: str, size: int, fields: dict[str, bytes | str]
    ) -> str | None:
        """Keep one entry under the session's bounds; its id, None if too large."""
        flat: list[bytes | str | int] = ["n", size]
        for name, value in fields.items():
            flat += (name, value)
        added: Any = await self._script(
            keys=[EVENTS_PREFIX + session_id, BYTES_PREFIX + session_id],
            args=[EVENTS_MAXLEN, REPLAY_BYTES, self._ttl_ms, size, *flat],
        )
        if added is None:
            return None
        return added.decode() if isinstance(added, bytes) else str(added)

    async def after(self, session_id: str, entry: str) -> list[tuple[str, Any]] | None:
        """The kept events after `entry`; None when `entry` is no longer kept."""
        key = EVENTS_PREFIX + session_id
        async with self._client.pipeline(transaction=False) as pipe:
            _ = pipe.xrange(key, entry, entry, count=1)
            _ = pipe.xrange(key, f"({entry}", "+", count=EVENTS_MAXLEN)
            found, rest = await pipe.execute()
        if not found:
            return None
        missed: list[tuple[str, Any]] = []
        for raw_id, fields in rest:
            data = fields.get(b"d", b"")
            if data and b"s" not in fields and b"p" not in fields:  # GET's only
                sid = raw_id.decode() if isinstance(raw_id, bytes) else str(raw_id)
                missed.append((f"r-{sid}", json.loads(data)))
        return missed

    async def start_post(self, session_id: str) -> str:
        """Keep the priming event of a POST stream closed early; its entry id."""
        added = await self._add(session_id, 0, {"p": b""})
        assert added is not None  # noqa: S101 - an empty event always fits
        await self.leases.take(session_id, added)
        return added

    async def keep(
        self, session_id: str, post: str, message: Any, *, last: bool
    ) -> None:
        """Keep one event of the POST stream `post` (its priming entry id).

        An event larger than `REPLAY_BYTES` alone is not kept (the engine
        replaced an answer that large with a short error already); a last
        one is kept empty, so that the resumed stream still ends.
        """
        data, size = _compact(message)
        fields: dict[str, bytes | str] = {"s": post, "d": data}
        if last:
            fields["l"] = b"1"
        if await self._add(session_id, size, fields) is None and last:
            await self._add(session_id, 0, {"s": post, "d": b"", "l": b"1"})
        if last:
            await self.leases.give_back(session_id, post)

    async def post_of(self, session_id: str, entry: str) -> tuple[str, bool] | None:
        """The POST stream a kept entry belongs to, and whether the entry ends it.

        None when the entry is a GET stream's, or no longer kept.
        """
        found: Any = await self._client.xrange(EVENTS_PREFIX + session_id, entry, entry)
        if not found:
            return None
        fields = found[0][1]
        if b"p" in fields:
            return entry, False
        post = fields.get(b"s")
        return None if post is None else (post.decode(), fields.get(b"l") == b"1")

    async def rest_of(
        self, session_id: str, post: str, entry: str
    ) -> tuple[str, list[tuple[str, Any, bool]]]:
        """The POST stream's kept events after `entry` (the next `EVENTS_MAXLEN`).

        Returns the last entry id read (of any stream) and (SSE id, message,
        last) of each event of `post`.
        """
        found: Any = await self._client.xrange(
            EVENTS_PREFIX + session_id, f"({entry}", "+", count=EVENTS_MAXLEN
        )
        events: list[tuple[str, Any, bool]] = []
        for raw_id, fields in found or ():
            entry = raw_id.decode() if isinstance(raw_id, bytes) else str(raw_id)
            if fields.get(b"s", b"").decode() != post:
                continue
            data = fields.get(b"d", b"")
            message = json.loads(data) if data else None
            events.append((f"r-{entry}", message, fields.get(b"l") == b"1"))
        return entry, events


class _SessionStream:
    """A session's stream in front of `inner`: opening it is `inner`'s own."""

    def __init__(self, inner: Stream, events: RedisEvents, session_id: str) -> None:
        self._inner = inner
        self._events = events
        self._session_id = session_id

    @property
    def opened(self) -> bool:
        """Whether the SSE response has been committed."""
        return self._inner.opened

    async def open(self, headers: Mapping[str, str] | None = None) -> None:
        """Commit the SSE response."""
        await self._inner.open(headers)


class KeptPostStream(_SessionStream):
    """A session call's POST stream whose events, once closed early, go to Redis.

    So the client's GET with `Last-Event-ID` continues it on any worker.
    """

    def __init__(self, inner: Stream, events: RedisEvents, session_id: str) -> None:
        super().__init__(inner, events, session_id)
        self._post: str | None = None

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        """Write one event."""
        await self._inner.send(message, event_id=event_id)

    async def end_early(self, event_id: str, retry_ms: int) -> None:
        """End the response with a priming event whose id Redis gave."""
        end = getattr(self._inner, "end_early", None)
        if end is None:
            raise RuntimeError("this stream cannot end early")
        try:
            self._post = await self._events.start_post(self._session_id)
            event_id = f"r-{self._post}"
        except RedisError:
            logger.warning("wymcp: BROKER cannot keep a closed stream", exc_info=True)
        await end(event_id, retry_ms)

    async def keep(self, message: Any, *, last: bool) -> None:
        """Keep one event of the closed stream in Redis."""
        if self._post is None:
            return
        try:
            await self._events.keep(self._session_id, self._post, message, last=last)
        except RedisError:
            logger.warning("wymcp: BROKER cannot keep a stream event", exc_info=True)


class LoggedStream(_SessionStream):
    """A session's GET stream whose events are kept in Redis as they are sent.

    When the client resumed from `resume_from`, the events it missed are sent
    first, just before the stream's own first event (the engine has accepted
    the GET by then).
    """

    def __init__(
        self,
        inner: Stream,
        events: RedisEvents,
        session_id: str,
        resume_from: str | None = None,
    ) -> None:
        super().__init__(inner, events, session_id)
        self._resume_from = resume_from

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        """Keep the event in Redis, then write it with its Redis id."""
        if self._resume_from is not None:
            entry, self._resume_from = self._resume_from, None
            await self._replay(entry)
        try:
            kept = await self._events.append(self._session_id, message)
        except RedisError:
            logger.warning("wymcp: BROKER cannot keep a stream event", exc_info=True)
        else:
            event_id = kept or event_id  # one too large to keep keeps its own id
        await self._inner.send(message, event_id=event_id)

    async def _replay(self, entry: str) -> None:
        try:
            missed = await self._events.after(self._session_id, entry)
        except (RedisError, ValueError):
            logger.warning("wymcp: BROKER cannot replay a stream", exc_info=True)
            return
        for missed_id, message in missed or ():
            await self._inner.send(message, event_id=missed_id)
