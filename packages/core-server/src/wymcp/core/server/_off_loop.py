"""Run a CPU-bound step in a worker thread that lets the event loop run meanwhile.

A thread in C code (the `json` scanner building lists) keeps the GIL until it
returns: the loop waits for all of it. Python code run at each collection lets
the GIL pass to the loop; `OffLoopLane` runs such steps one at a time.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import gc
from collections.abc import Callable
from typing import Any, TypeVar

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
    """

    def __init__(self) -> None:
        self._lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def run(self, work: Callable[[], T]) -> T:
        """Return `work()` run in a worker thread, after the jobs queued before."""
        return await asyncio.shield(await self.start(work))

    async def start(self, work: Callable[[], T]) -> asyncio.Future[T]:
        """Start `work()` in a worker thread once the jobs before it ended.

        The lane is held until the returned future is done, whoever awaits it.
        """
        loop = asyncio.get_running_loop()
        if self._lock is None or self._loop is not loop:  # a lock serves one loop
            self._lock, self._loop = asyncio.Lock(), loop
        lock = self._lock
        await lock.acquire()
        try:
            job = loop.run_in_executor(
                None, functools.partial(contextvars.copy_context().run, yielding, work)
            )
        except BaseException:
            lock.release()
            raise
        job.add_done_callback(functools.partial(_release, lock))
        return job


def _release(lock: asyncio.Lock, job: asyncio.Future[Any]) -> None:
    """Free the lane once the thread ended; its outcome is the caller's to read."""
    lock.release()
    if not job.cancelled():
        job.exception()  # read, so an abandoned job's error is not logged later
