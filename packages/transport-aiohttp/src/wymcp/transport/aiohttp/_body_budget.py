"""The bytes of large request bodies the process holds at once (BODY_MEMORY_BUDGET).

A body over `COUNTED_FROM` bytes is counted, under its client's key, while it
is read, decoded and served. One that does not fit waits its turn (one body
per client, clients in the order they came) or is refused (503).
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import attrs

COUNTED_FROM: Final = 4 * 1024
"""Bodies of at most this many bytes are never counted (nor refused by the budget):
the usual call, whose worst case `MAX_CONNECTIONS` already bounds."""


@attrs.define
class _Waiter:
    """A body waiting for its turn: the bytes it asks and the turn it awaits."""

    reservation: Reservation
    wants: int
    turn: asyncio.Future[None]


class BodyBudget:
    """Counts the bytes of the large bodies held now against one budget.

    A body holds all it may be from its first counted bytes (its
    `Content-Length`; one of unknown size the most it may be, till read:
    `Reservation.shrink_to`). The share per client: a body that does not
    fit, of a client that holds none of the budget, waits for the bytes to
    free, one waiting body per client and the clients in the order they
    came; no other client's body is admitted ahead of a waiting one. It
    waits up to `wait` seconds for each body holding or waiting ahead of it
    when it came, and one more (`wait_bound`): each of those holds at most
    `wait` (BODY_TIMEOUT and CALL_TIMEOUT), and a client coming back lands
    behind it, so bodies that time out in turn, or slow calls, cannot run its
    own time out first. A
    client that already holds bytes is refused at once instead, so the
    bytes one client's body frees go to the clients that were waiting
    before its next body.
    The bytes the waiting bodies have read stay within the budget too.
    """

    def __init__(self, budget: int | None, *, wait: float = 0.0) -> None:
        self.budget = budget
        self.held = 0
        self.wait = wait
        self.holding: dict[str, int] = {}
        """The bytes each client holds now (no entry: none)."""
        self.bodies = 0
        """How many bodies hold bytes now."""
        self.waiting: dict[str, _Waiter] = {}
        """The body each waiting client waits with, in their turns' order."""
        self.waiting_read = 0
        """Bytes the waiting bodies have read: at most the budget between them."""

    def reserve(self, client: str = "") -> Reservation:
        """A reservation of nothing yet, for one request's body from `client`."""
        return Reservation(self, client)

    def fits(self, more: int) -> bool:
        """Whether `more` bytes fit in what the budget has left."""
        return self.budget is None or self.held + more <= self.budget

    def wait_bound(self) -> float:
        """How long a body that starts waiting now may wait for its turn.

        `wait` for each body holding bytes or waiting now, and one more.
        """
        return self.wait * (1 + self.bodies + len(self.waiting))

    async def admit(self, reservation: Reservation, size: int, expected: int) -> bool:
        """Hold `size` bytes for a body holding none yet; False: refuse it.

        At once when it fits and nobody waits; else after its turn (when its
        client holds nothing, has no body waiting, and the bytes come within
        `wait_bound()` seconds). Either way it holds `expected` bytes (its whole
        size when known) at once, and is let in only when they fit: it is
        never refused part way for bytes another body took since, so the
        bodies let in at once cannot crowd out one another or a waiting
        one. Without `expected` (0) it holds what arrived.
        """
        wants = max(size, expected)
        if not self.waiting and self.fits(wants):
            reservation.take(wants)
            return True
        client = reservation.client
        if (
            self.wait <= 0
            or (self.budget is not None and wants > self.budget)
            or client in self.holding
            or client in self.waiting
            or (self.budget is not None and self.waiting_read + size > self.budget)
        ):
            return False
        waiter = _Waiter(reservation, wants, asyncio.get_running_loop().create_future())
        bound = self.wait_bound()
        self.waiting[client] = waiter
        self.waiting_read += size
        try:
            async with asyncio.timeout(bound):
                await waiter.turn
        except TimeoutError:
            pass  # refused below, unless the turn came as the time ran out
        finally:
            self.waiting_read -= size
            if self.waiting.get(client) is waiter:  # never served: its turn is lost
                del self.waiting[client]
                self.serve()
        return reservation.holds

    def serve(self) -> None:
        """Give the freed bytes to the waiting bodies, in their turns' order.

        The first waiting body blocks the ones behind it until it fits: a
        large body is never passed over for ever by small ones.
        """
        waiting = self.waiting
        while waiting:
            client, waiter = next(iter(waiting.items()))
            if not self.fits(waiter.wants):
                return
            del waiting[client]
            if not waiter.turn.done():  # else it was cancelled: the next one
                waiter.reservation.take(waiter.wants)
                waiter.turn.set_result(None)

    def _count(self, client: str, had: int, more: int) -> None:
        """Add `more` bytes (negative: give back) to the count and `client`'s.

        `had`: the bytes the body held before, to count the bodies holding.
        """
        self.held += more
        self.bodies += (had + more > 0) - (had > 0)
        left = self.holding.get(client, 0) + more
        if left:
            self.holding[client] = left
        else:
            self.holding.pop(client, None)


class Reservation:
    """The bytes one request's body holds of the budget, until `release()`."""

    def __init__(self, budget: BodyBudget, client: str = "") -> None:
        self._budget = budget
        self.client = client
        self._held = 0
        self._pinned: asyncio.Future[Any] | None = None

    @property
    def holds(self) -> bool:
        """Whether the body holds bytes of the budget now."""
        return self._held > 0

    def grow_to(self, size: int) -> bool:
        """Hold `size` bytes in all for this body; False past the budget.

        Never waits: a body holding none yet is admitted only when it fits
        and no other body waits its turn (`hold` may wait for it).
        """
        if size <= COUNTED_FROM or size <= self._held:
            return True
        budget = self._budget
        more = size - self._held
        if not budget.fits(more) or (not self._held and budget.waiting):
            return False
        self.take(size)
        return True

    async def hold(self, size: int, expected: int = 0) -> bool:
        """`grow_to(size)`, the first counted bytes waiting their turn if need be.

        `expected`: the body's whole size when known (its `Content-Length`),
        held at once by a body let in (`BodyBudget.admit`).
        """
        if size <= COUNTED_FROM or size <= self._held or self._held:
            return self.grow_to(size)
        return await self._budget.admit(self, size, expected)

    def shrink_to(self, size: int) -> None:
        """Hold only `size` bytes of what the body holds (its size now known).

        A body of unknown size is let in holding the most it may be; once
        read, the rest goes to the bodies waiting their turn.
        """
        if size < self._held:
            self.take(size if size > COUNTED_FROM else 0)
            self._budget.serve()

    def take(self, size: int) -> None:
        """Hold `size` bytes in all (the budget checked they fit)."""
        self._budget._count(self.client, self._held, size - self._held)  # noqa: SLF001 - its budget
        self._held = size

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
        if self._pinned is None and self._held:
            self._budget._count(self.client, self._held, -self._held)  # noqa: SLF001 - its budget
            self._held = 0
            self._budget.serve()
