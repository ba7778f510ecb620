"""CALL_TIMEOUT for every running tool call, kept with one timer per engine.

Each call runs in its own task and is an entry in a dict; one timer, armed for
the earliest deadline, cancels the late ones and answers their callers at once,
so a tool that ignores its cancellation cannot hold its caller past the bound.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, Final, TypeVar

T = TypeVar("T")

_log = logging.getLogger("wymcp.core.server")

OVERDUE_RECORD: Final = 1000
"""Most stopped calls still running that a `Deadlines` keeps a record of."""
LATE_END: Final = 1.0
"""Seconds a stopped call may take to end before its end is logged as late."""


class DeadlineError(TimeoutError):
    """The call ran past its deadline and was stopped."""


class _Entry:
    __slots__ = (
        "deadline",
        "expired",
        "label",
        "stopped",
        "stopped_at",
        "task",
        "waiter",
    )

    def __init__(
        self,
        task: asyncio.Task[Any],
        waiter: asyncio.Future[None],
        deadline: float,
        label: str,
    ) -> None:
        self.task = task
        self.waiter = waiter
        self.deadline = deadline
        self.label = label
        self.expired = False
        self.stopped = False
        self.stopped_at = 0.0


class Deadlines:
    """Runs calls under a deadline; answers late ones without waiting for them.

    A stopped call whose task is still running is *overdue*: it is kept (up to
    `OVERDUE_RECORD` of them, a count beyond) until it ends, and logged.
    """

    def __init__(self) -> None:
        self._live: dict[_Entry, None] = {}
        self._overdue: dict[asyncio.Task[Any], _Entry] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self._armed_for = 0.0
        self.unrecorded = 0
        """Overdue calls past the record's bound (they run on, uncounted)."""

    def __len__(self) -> int:
        return len(self._live)

    @property
    def overdue(self) -> int:
        """Stopped calls whose task has not ended yet (as recorded)."""
        return len(self._overdue)

    async def run(
        self, work: Coroutine[Any, Any, T], seconds: float, label: str = "call"
    ) -> T:
        """Run `work` in its own task; raise `DeadlineError` at `seconds`.

        At the deadline the task is cancelled and `DeadlineError` raised at
        once, whether or not the task honours its cancellation. When the
        caller is cancelled (the client left), the task is cancelled and the
        caller's cancellation goes on without waiting for it.
        """
        loop = asyncio.get_running_loop()
        task = loop.create_task(work, name=f"wymcp {label}")
        waiter: asyncio.Future[None] = loop.create_future()
        entry = _Entry(task, waiter, loop.time() + seconds, label)
        task.add_done_callback(self._ended(entry))
        self._live[entry] = None
        if (
            self._timer is None
            or entry.deadline < self._armed_for
            or self._timer_loop is not loop  # an engine outliving its first loop
        ):
            self._arm(loop, entry.deadline)
        try:
            await waiter
        except asyncio.CancelledError:
            self._stop(entry, loop)
            raise
        finally:
            del self._live[entry]
        if entry.expired:
            raise DeadlineError(f"{label} ran past its deadline of {seconds:g}s")
        return task.result()

    def _ended(self, entry: _Entry) -> Any:
        def ended(task: asyncio.Task[Any]) -> None:
            if not entry.waiter.done():
                entry.waiter.set_result(None)
            if not entry.stopped:  # the caller reads the outcome
                return
            self._overdue.pop(task, None)
            if not task.cancelled() and task.exception() is not None:
                _log.debug("stopped %s raised as it ended", entry.label)
            late = task.get_loop().time() - entry.stopped_at
            if late > LATE_END:
                _log.warning(
                    "%s ended %.1fs after it was stopped (it ignored its "
                    "cancellation); %d stopped calls still running",
                    entry.label,
                    late,
                    len(self._overdue),
                )

        return ended

    def _stop(self, entry: _Entry, loop: asyncio.AbstractEventLoop) -> None:
        """Cancel the entry's task and record it while it still runs."""
        task = entry.task
        if task.done():
            return
        task.cancel()
        entry.stopped = True
        entry.stopped_at = loop.time()
        if len(self._overdue) >= OVERDUE_RECORD:
            self.unrecorded += 1
            if self.unrecorded == 1 or self.unrecorded % OVERDUE_RECORD == 0:
                _log.warning(
                    "%d stopped calls are still running; %d more are not recorded",
                    len(self._overdue),
                    self.unrecorded,
                )
            return
        self._overdue[task] = entry

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
            if entry.expired or entry.task.done():  # done: its caller wakes next
                continue
            if entry.deadline <= now:
                entry.expired = True
                self._stop(entry, loop)
                if not entry.waiter.done():
                    entry.waiter.set_result(None)
            elif earliest is None or entry.deadline < earliest:
                earliest = entry.deadline
        if earliest is not None:
            self._arm(loop, earliest)

    def stop_all(self) -> None:
        """Cancel every recorded overdue task once more (at shutdown)."""
        for task in list(self._overdue):
            task.cancel()
