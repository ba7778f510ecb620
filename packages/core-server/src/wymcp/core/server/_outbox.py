"""The bounded queue of messages waiting for one long-lived stream's reader.

A reader that falls `OUTBOX_LIMIT` messages behind loses its stream (the
client reconnects) instead of the server buffering without end.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any, Final

_log = logging.getLogger("wymcp.core.server")

END: Final[Any] = object()
"""What `Outbox.get` returns once the stream is to end."""

OUTBOX_LIMIT: Final = 1000
"""Messages one stream may have waiting; one more closes the stream."""


class Outbox:
    """Messages for one stream, read by the task that serves it.

    `put` never blocks and never grows past `limit`: on overflow the waiting
    messages are dropped, the stream ends, and a reader stuck writing (the
    client does not read) is cancelled, as if the client had left.
    """

    def __init__(self, *, limit: int = OUTBOX_LIMIT, name: str = "stream") -> None:
        self._items: deque[Any] = deque()
        self._limit = limit
        self._name = name
        self._waiter: asyncio.Future[None] | None = None
        self._reader: asyncio.Task[Any] | None = asyncio.current_task()
        self.ended = False
        self.overflowed = False

    def __len__(self) -> int:
        return len(self._items)

    def put(self, message: Any) -> None:
        """Queue `message`; end the stream if its reader is too far behind."""
        if self.ended:
            return
        if len(self._items) >= self._limit:
            self._overflow()
            return
        self._items.append(message)
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
        return self._items.popleft()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _overflow(self) -> None:
        _log.warning(
            "a %s fell %d messages behind and was closed; the client reconnects",
            self._name,
            self._limit,
        )
        waiting = self._waiter is not None  # in get(): not stuck writing
        self._items.clear()
        self.overflowed = True
        self.end()
        reader = self._reader
        if reader is not None and not waiting and not reader.done():
            reader.cancel()  # stuck writing to a client that does not read
