"""The events a 2025 session keeps so a client can resume with `Last-Event-ID`.

Every event of the session's GET stream, and of a POST stream the server closed
early (SEP-1699 polling), is kept in order: at most `REPLAY_EVENTS` events and
`REPLAY_BYTES` bytes of JSON per session, the oldest dropped first.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from typing import Any, Final

import attrs

REPLAY_EVENTS: Final = 64
"""Most events one session keeps for resumption."""
REPLAY_BYTES: Final = 64 * 1024
"""Most bytes (compact JSON) of kept events per session."""
GET_STREAM: Final = "get"
"""The stream key of a session's GET stream (a POST stream's is `post-<seq>`)."""
MAX_EVENT_ID: Final = 64
"""Longest `Last-Event-ID` read; a longer one is unknown."""
_EVENT_ID = re.compile(r"evt-([0-9]{1,18})")


def event_id(seq: int) -> str:
    """The SSE id of the session's event number `seq`."""
    return f"evt-{seq}"


def event_seq(text: str | None) -> int | None:
    """The event number a `Last-Event-ID` names, or None (absent or not ours)."""
    if text is None or len(text) > MAX_EVENT_ID:
        return None
    match = _EVENT_ID.fullmatch(text.strip())
    return None if match is None else int(match.group(1))


def json_size(message: Any) -> int:
    """The compact JSON size of `message` (0 for None, a priming event)."""
    if message is None:
        return 0
    return len(json.dumps(message, separators=(",", ":"), ensure_ascii=False))


@attrs.frozen
class Event:
    """One kept event: its number, stream, message (None: priming), whether last."""

    seq: int
    stream: str
    message: Any
    size: int
    last: bool = False


class Replay:
    """The kept events of one session, bounded by count and bytes."""

    def __init__(
        self, *, events: int = REPLAY_EVENTS, budget: int = REPLAY_BYTES
    ) -> None:
        self._events: deque[Event] = deque()
        self._limit = events
        self._budget = budget
        self._bytes = 0
        self._changed: asyncio.Future[None] | None = None
        self.running: set[str] = set()
        """POST streams closed early whose call still runs."""
        self.closed = False

    def __len__(self) -> int:
        return len(self._events)

    @property
    def size(self) -> int:
        """Bytes of JSON kept."""
        return self._bytes

    def fits(self, size: int) -> bool:
        """Whether an event of `size` bytes can be kept at all."""
        return size <= self._budget

    def record(
        self, seq: int, stream: str, message: Any, *, last: bool = False
    ) -> bool:
        """Keep an event, dropping the oldest past the bounds; False if too big."""
        size = json_size(message)
        if not self.fits(size):
            return False
        self._events.append(Event(seq, stream, message, size, last))
        self._bytes += size
        while len(self._events) > self._limit or self._bytes > self._budget:
            self._bytes -= self._events.popleft().size
        if last:
            self.running.discard(stream)
        self._wake()
        return True

    def find(self, seq: int) -> Event | None:
        """The kept event number `seq`, or None (never sent, or dropped)."""
        for event in self._events:
            if event.seq == seq:
                return event
        return None

    def after(self, stream: str, seq: int) -> list[Event]:
        """The kept events of `stream` numbered after `seq`, in order."""
        return [e for e in self._events if e.stream == stream and e.seq > seq]

    async def changed(self) -> None:
        """Wait for the next event kept, or for the session to end."""
        if self.closed:
            return
        if self._changed is None or self._changed.done():
            self._changed = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._changed)

    def close(self) -> None:
        """The session ended: wake every reader waiting for events."""
        self.closed = True
        self.running.clear()
        self._wake()

    def _wake(self) -> None:
        if self._changed is not None and not self._changed.done():
            self._changed.set_result(None)
