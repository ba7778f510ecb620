"""CALL_TIMEOUT for every running tool call, kept with one timer per engine.

`asyncio.timeout` arms and cancels a loop timer per call; under load that is
a heap push per call and a heap of cancelled handles. Here each call is an
entry in a dict, and one timer, armed for the earliest deadline, cancels the
calls that outlived theirs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


class DeadlineError(TimeoutError):
    """The call ran past its deadline and was stopped."""


class _Entry:
    __slots__ = ("deadline", "expired", "task")

    def __init__(self, task: asyncio.Task[object], deadline: float) -> None:
        self.task = task
        self.deadline = deadline
        self.expired = False


class Deadlines:
    """Runs awaitables under a deadline; cancels late ones with one timer."""

    def __init__(self) -> None:
        self._live: dict[_Entry, None] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self._armed_for = 0.0

    def __len__(self) -> int:
        return len(self._live)

    async def run(self, work: Awaitable[T], seconds: float) -> T:
        """Await `work`; raise `DeadlineError` if it runs past `seconds`.

        The late call's task is cancelled, as `asyncio.timeout` does, and the
        cancellation becomes `DeadlineError`; a cancellation from elsewhere
        (the client left) stays a cancellation.
        """
        task = asyncio.current_task()
        if task is None:  # pragma: no cover - always called from a task
            raise RuntimeError("Deadlines.run needs a running task.")
        loop = asyncio.get_running_loop()
        entry = _Entry(task, loop.time() + seconds)
        cancelling = task.cancelling()
        self._live[entry] = None
        if (
            self._timer is None
            or entry.deadline < self._armed_for
            or self._timer_loop is not loop  # an engine outliving its first loop
        ):
            self._arm(loop, entry.deadline)
        try:
            value = await work
        except asyncio.CancelledError as cancelled:
            if entry.expired and task.uncancel() <= cancelling:
                raise DeadlineError from cancelled
            raise
        finally:
            del self._live[entry]
        if entry.expired:  # the work swallowed the cancellation and returned
            task.uncancel()
        return value

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._armed_for = when
        self._timer_loop = loop
        self._timer = loop.call_at(when, self._expire, loop)

    def _expire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        now = loop.time()
        earliest: float | None = None
        for entry in self._live:
            if entry.expired:
                continue
            if entry.deadline <= now:
                entry.expired = True
                entry.task.cancel()
            elif earliest is None or entry.deadline < earliest:
                earliest = entry.deadline
        if earliest is not None:
            self._arm(loop, earliest)
