"""The one loop that drains an `Outbox` into a long-lived stream until it ends.

The 2025 GET stream and the 2026 `subscriptions/listen` stream both run it;
a client that leaves (a failed write) ends the loop quietly.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from wymcp.core.server._stream_outbox import END, Outbox

_log = logging.getLogger("wymcp.core.server")


async def pump(
    outbox: Outbox,
    write: Callable[[Any], Awaitable[None]],
    *,
    first: Callable[[], Awaitable[None]] | None = None,
    what: str = "stream",
) -> None:
    """Run `first`, then `write` each message of `outbox` until it ends.

    A failed write (the client is gone) ends the pump; it is logged at debug
    level, never raised.
    """
    try:
        if first is not None:
            await first()
        while (message := await outbox.get()) is not END:
            await write(message)
    except Exception:  # noqa: BLE001 - a gone client ends its stream
        _log.debug("a %s ended: the client is gone", what)
