"""Run a CPU-bound step in a worker thread that lets the event loop run meanwhile.

A thread in C code (the `json` scanner building lists) keeps the GIL until it
returns: the loop waits for all of it. Python code run at each collection lets
the GIL pass to the loop; `OffLoopLane` runs such steps one at a time, clients
in turn.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import gc
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

import attrs

T = TypeVar("T")


def yielding(work: Callable[[], T]) -> T:
    """Return `work()`, letting the GIL go to other threads at each collection."""

    def hook(phase: str, info: dict[str, Any]) -> None:  # its own: removed exactly
        """Runs (as Python code) at each collection: a point where the GIL can pass."""
        del phase, info

    gc.callbacks.append(hook)
    try:
        return work()
    finally:
        gc.callbacks.remove(hook)


class OffLoopLane:
    """Runs a call's large CPU-bound jobs in a worker thread, one at a time.

    A large body's decoding, the gates' full walk and the reading of typed
    data: each such thread competes with the event loop for the GIL, and
    eight at once held other clients' answers about twice as long as one did.
    Jobs queue for the lane instead (a queued call holds only its data); a
    call cancelled while its job runs leaves the lane held until the thread
    ends, so never more than one thread runs. One per engine (and one per
    HTTP endpoint, for bodies).

    Waiting jobs are served by client in turn (`Turns`), not first come
    first served: `of(client)` is the lane as one client's jobs take it. A
    client with many jobs waiting gets one, then waits for every other
    waiting client's next job; a client that comes while another's jobs
    run waits for the running one only. A client's job so waits for at most
    one job of each other client, however many they queued.
    """

    def __init__(self) -> None:
        self._turns = _LoopTurns()
        self._client: str | Callable[[], str] = ""

    def of(self, client: str | Callable[[], str]) -> OffLoopLane:
        """This lane, taking the jobs of `client` (a `client_key`) in their turn.

        `client` may be a function giving the key: called only when a job
        comes (most calls have none, and a key costs a few microseconds).
        """
        lane = object.__new__(OffLoopLane)
        lane._turns = self._turns  # shared by every view
        lane._client = client
        return lane

    async def run(self, work: Callable[[], T]) -> T:
        """Return `work()` run in a worker thread, once its turn came."""
        return await asyncio.shield(await self.start(work))

    async def start(self, work: Callable[[], T]) -> asyncio.Future[T]:
        """Start `work()` in a worker thread once its turn came.

        The lane is held until the returned future is done, whoever awaits it.
        """
        loop = asyncio.get_running_loop()
        turns = self._turns.on(loop)
        client = self._client
        await turns.take(client if isinstance(client, str) else client())
        try:
            job = loop.run_in_executor(
                None, functools.partial(contextvars.copy_context().run, yielding, work)
            )
        except BaseException:
            turns.give_back()
            raise
        job.add_done_callback(functools.partial(_release, turns))
        return job


class _LoopTurns:
    """The turns of one lane and its client views, on the loop it serves."""

    def __init__(self) -> None:
        self._turns: Turns | None = None

    def on(self, loop: asyncio.AbstractEventLoop) -> Turns:
        """The turns on `loop` (new ones when the lane moved to another loop)."""
        turns = self._turns
        if turns is None or turns.loop is not loop:  # futures serve one loop
            turns = self._turns = Turns(loop)
        return turns


@attrs.define
class _Queue:
    """One client's waiting jobs, and the turn it last had (-1: none of late)."""

    last: int
    jobs: deque[asyncio.Future[None]] = attrs.field(factory=deque)


class Turns:
    """Whose job runs next: one at a time, the waiting clients in turn.

    Each waiting client has its queue of jobs. A turn goes to the first job
    of the client whose last turn is the oldest: a client that had none
    while it waited (or holds none now) first, in the order they came, then
    the one served longest ago. So a client that comes while another's jobs
    run and wait is served right after the running job, and a client with
    many jobs gets one turn in each round of the waiting clients.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.busy = False
        self.holder: str | None = None
        """The client whose job holds the lane (None: free)."""
        self.turns = 0
        """Turns handed out: each client's `last` is one of them."""
        self.waiting: dict[str, _Queue] = {}

    async def take(self, client: str) -> None:
        """Return once `client` holds the lane (give it back with `give_back`)."""
        if not self.busy:  # a free lane has nobody waiting: give_back hands on
            self._hand(client)
            return
        queue = self.waiting.get(client)
        if queue is None:  # the holder's own job waits for a full round
            last = self.turns if client == self.holder else -1
            queue = self.waiting[client] = _Queue(last)
        turn = self.loop.create_future()
        queue.jobs.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.give_back()  # handed the lane as it was cancelled: pass it on
            elif turn in queue.jobs:
                queue.jobs.remove(turn)
                if not queue.jobs and self.waiting.get(client) is queue:
                    del self.waiting[client]
            raise

    def give_back(self) -> None:
        """Hand the lane to the next client's next job, or free it."""
        waiting = self.waiting
        while waiting:
            # the first (in the order they came) of those served longest ago
            client = min(waiting, key=lambda name: waiting[name].last)
            queue = waiting.pop(client)
            turn = queue.jobs.popleft()
            if turn.done():  # cancelled as it was handed over: the next one
                if queue.jobs:
                    waiting[client] = queue
                continue
            self._hand(client)
            if queue.jobs:  # its next job waits for the others' turns
                queue.last = self.turns
                waiting[client] = queue
            turn.set_result(None)
            return
        self.busy = False
        self.holder = None

    def _hand(self, client: str) -> None:
        self.busy = True
        self.holder = client
        self.turns += 1


def _release(turns: Turns, job: asyncio.Future[Any]) -> None:
    """Free the lane once the thread ended; its outcome is the caller's to read."""
    turns.give_back()
    if not job.cancelled():
        job.exception()  # read, so an abandoned job's error is not logged later
