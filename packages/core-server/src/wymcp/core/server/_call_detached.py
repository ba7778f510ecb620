"""Calls that ended their POST response early and run on without their request.

The engine keeps them until they end (at most `MAX_DETACHED`) and cancels them
at shutdown; past the bound a call whose client leaves is cancelled, as before.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

_log = logging.getLogger("wymcp.core.server")

MAX_DETACHED: Final = 1000
"""Most calls one engine keeps running after their request was cancelled (as
many as `MAX_CONNECTIONS` lets run while their clients stay connected)."""


class DetachedCalls:
    """The calls an engine keeps running for the streams that will resume them."""

    def __init__(self, limit: int = MAX_DETACHED) -> None:
        self._calls: set[asyncio.Task[Any]] = set()
        self._limit = limit
        self.refused = 0
        """Calls cancelled with their request because the bound was reached."""

    def __len__(self) -> int:
        return len(self._calls)

    def keep(self, call: asyncio.Task[Any]) -> bool:
        """Keep `call` running until it ends; False (not kept) at the bound."""
        if len(self._calls) >= self._limit:
            self.refused += 1
            if self.refused == 1 or self.refused % self._limit == 0:
                _log.warning(
                    "%d calls run on after their clients closed the connection; "
                    "%d more were cancelled with it",
                    len(self._calls),
                    self.refused,
                )
            return False
        self._calls.add(call)
        call.add_done_callback(self._calls.discard)
        return True

    def cancel_all(self) -> None:
        """Cancel every kept call (at shutdown)."""
        for call in list(self._calls):
            call.cancel()
