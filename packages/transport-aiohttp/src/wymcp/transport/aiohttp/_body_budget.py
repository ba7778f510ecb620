"""The bytes of large request bodies the process holds at once (BODY_MEMORY_BUDGET).

A body over `COUNTED_FROM` bytes is counted while it is read, decoded and
served; one that would take the count past the budget is refused (503).
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

COUNTED_FROM: Final = 4 * 1024
"""Bodies of at most this many bytes are never counted (nor refused by the budget):
the usual call, whose worst case `MAX_CONNECTIONS` already bounds."""


class BodyBudget:
    """Counts the bytes of the large bodies held now against one budget."""

    def __init__(self, budget: int | None) -> None:
        self.budget = budget
        self.held = 0

    def reserve(self) -> Reservation:
        """A reservation of nothing yet, for one request's body."""
        return Reservation(self)


class Reservation:
    """The bytes one request's body holds of the budget, until `release()`."""

    def __init__(self, budget: BodyBudget) -> None:
        self._budget = budget
        self._held = 0
        self._pinned: asyncio.Future[Any] | None = None

    def grow_to(self, size: int) -> bool:
        """Hold `size` bytes in all for this body; False past the budget."""
        if size <= COUNTED_FROM or size <= self._held:
            return True
        budget = self._budget
        more = size - self._held
        if budget.budget is not None and budget.held + more > budget.budget:
            return False
        budget.held += more
        self._held = size
        return True

    def release_after(self, work: asyncio.Future[Any]) -> None:
        """Keep the bytes held until `work` (a decode left running in a thread) ends."""
        self._pinned = work
        work.add_done_callback(self._unpin)

    def _unpin(self, work: asyncio.Future[Any]) -> None:
        if not work.cancelled():
            work.exception()  # retrieved: nobody awaits it any more
        self._pinned = None
        self.release()

    def release(self) -> None:
        """Give the bytes back (at once, or when the pinned decode ends)."""
        if self._pinned is None:
            self._budget.held -= self._held
            self._held = 0
