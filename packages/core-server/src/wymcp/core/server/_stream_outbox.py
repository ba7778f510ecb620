"""The bounded queue of messages waiting for one long-lived stream's reader.

A notification already waiting is not queued twice; a reader that lets
`OUTBOX_LIMIT` messages arrive while it is stuck writing loses its stream
(the client reconnects) instead of the server buffering without end.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Hashable
from typing import Any, Final

_log = logging.getLogger("wymcp.core.server")

END: Final[Any] = object()
"""What `Outbox.get` returns once the stream is to end."""

OUTBOX_LIMIT: Final = 1000
"""Messages that may arrive while a stream's reader is stuck writing one."""


class Outbox:
    """Messages for one stream, read by the task that serves it.

    `put` never blocks. A message with a `key` equal to one still waiting is
    merged into it (a second "resource X changed" says nothing new), so the
    queue holds at most one message per key. When `limit` messages arrive
    while the reader is busy writing (or `limit` are waiting), the waiting
    messages are dropped, the stream ends, and a reader stuck writing (its
    client does not read) is cancelled, as if the client had left.
    """

    def __init__(self, *, limit: int = OUTBOX_LIMIT, name: str = "stream") -> None:
        self._items: deque[tuple[Hashable | None, Any]] = deque()
        self._keys: set[Hashable] = set()
        self._limit = limit
        self._name = name
        self._unread = 0
        self._waiter: asyncio.Future[None] | None = None
        self._reader = _current_task()
        self.ended = False
        self.overflowed = False

    def __len__(self) -> int:
        return len(self._items)

    def put(self, message: Any, key: Hashable | None = None) -> None:
        """Queue `message`; end the stream if its reader is too far behind."""
        if self.ended:
            return
        if self._waiter is None:  # the reader is busy writing: it falls behind
            self._unread += 1
        if self._unread > self._limit or len(self._items) >= self._limit:
            self._overflow()
            return
        if key is not None:
            if key in self._keys:
                return
            self._keys.add(key)
        self._items.append((key, message))
        self._wake()

    def end(self) -> None:
        """End the stream once the messages already queued are read."""
        self.ended = True
        self._wake()

    async def get(self) -> Any:
        """The next message, or `END`."""
        while not self._items:
            if self.ended:
                return END
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        key, message = self._items.popleft()
        if key is not None:
            self._keys.discard(key)
        self._unread = len(self._items)
        return message

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _overflow(self) -> None:
        _log.warning(
            "a %s let %d messages arrive unread and was closed; the client reconnects",
            self._name,
            self._limit,
        )
        waiting = self._waiter is not None  # in get(): not stuck writing
        self._items.clear()
        self._keys.clear()
        self.overflowed = True
        self.end()
        reader = self._reader
        if reader is not None and not waiting and not reader.done():
            reader.cancel()  # stuck writing to a client that does not read


def _current_task() -> asyncio.Task[Any] | None:
    """The task making the outbox (its reader), if any loop is running."""
    try:
        return asyncio.current_task()
    except RuntimeError:  # made outside a loop: nobody to cancel
        return None
