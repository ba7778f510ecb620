"""CALL_TIMEOUT for every running tool call, kept with one timer per engine.

A call runs in its caller's task; one timer, armed for the earliest deadline,
cancels the late ones. A call that ignores its cancellation is handed to a
task of its own and its caller answered at once: nothing holds it past the bound.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import types
from collections.abc import Callable, Coroutine, Generator
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
    __slots__ = ("cancelling", "deadline", "expired", "label", "task")

    def __init__(self, task: asyncio.Task[Any], deadline: float, label: str) -> None:
        self.task = task
        self.deadline = deadline
        self.label = label
        self.cancelling = task.cancelling()
        self.expired = False


class Deadlines:
    """Runs calls under a deadline; answers late ones without waiting for them.

    A call runs in its caller's task, stepped by `run` (no task of its own:
    most calls never wait, and those that do pay nothing per wait), so its
    `asyncio.timeout` and `TaskGroup` work as without a deadline. At the
    deadline the caller's task is cancelled; when the call ignores that and
    waits on, it is handed to a task of its own, *overdue*: kept (up to
    `OVERDUE_RECORD` of them, a count beyond) until it ends, and logged.
    """

    def __init__(self) -> None:
        self._live: dict[_Entry, None] = {}
        self._overdue: dict[asyncio.Task[Any], _Entry] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self._armed_for = 0.0
        self._clock: Callable[[], float] = time.monotonic
        self._clock_loop: asyncio.AbstractEventLoop | None = None
        self.unrecorded = 0
        """Overdue calls past the record's bound (they run on, uncounted)."""

    def __len__(self) -> int:
        return len(self._live)

    @property
    def overdue(self) -> int:
        """Stopped calls whose task has not ended yet (as recorded)."""
        return len(self._overdue)

    async def run(
        self,
        work: Coroutine[Any, Any, T],
        seconds: float,
        label: str | tuple[str, ...] = "call",
    ) -> T:
        """Run `work`; raise `DeadlineError` at `seconds`.

        At the deadline the work is cancelled and `DeadlineError` raised at
        once, whether or not it honours its cancellation. When the caller is
        cancelled (the client left), the work hears it as if it ran without a
        deadline: the caller goes on when the work ends, at the deadline at
        the latest. `label` names the call in messages (parts joined by a
        space, only once the call waits).
        """
        done, value = self.start(work, seconds, label)
        if done:
            return value  # type: ignore[no-any-return]
        return await value  # type: ignore[no-any-return]

    def start(
        self,
        work: Coroutine[Any, Any, Any],
        seconds: float,
        label: str | tuple[str, ...] = "call",
    ) -> tuple[bool, Any]:
        """`run`'s first step, taken now: (True, the value) or (False, the rest).

        Work that ends on its first step (most calls never wait) arms no timer
        and needs no coroutine of `run`'s; its error is raised here. Else the
        rest is a coroutine the caller awaits at once, in the same task, as
        `run` does (the deadline counts from now).
        """
        loop = asyncio.get_running_loop()
        clock = self._clock if loop is self._clock_loop else self._clock_of(loop)
        deadline = clock() + seconds
        try:
            pending = work.send(None)
        except StopIteration as done:  # it never waited: no timer to arm
            return True, done.value
        task = asyncio.current_task()
        if task is None:  # pragma: no cover - always called from a task
            work.close()
            raise RuntimeError("Deadlines.run needs a running task.")
        named = label if isinstance(label, str) else " ".join(label)
        entry = _Entry(task, deadline, named)
        self._live[entry] = None
        if (
            self._timer is None
            or deadline < self._armed_for
            or self._timer_loop is not loop  # an engine outliving its first loop
        ):
            self._arm(loop, deadline)
        return False, self._rest(work, pending, entry, seconds)

    def _clock_of(self, loop: asyncio.AbstractEventLoop) -> Callable[[], float]:
        """`loop.time`, or the very function it calls (asyncio's own loops).

        asyncio's `BaseEventLoop.time` is `time.monotonic()`: called directly
        it reads the same clock without a method frame per call. A loop whose
        class or instance puts a clock of its own there (a test's virtual
        clock) keeps it: the timers it arms read `loop.time` too.
        """
        clock = (
            time.monotonic
            if type(loop).time is asyncio.BaseEventLoop.time
            and "time" not in vars(loop)
            else loop.time
        )
        self._clock, self._clock_loop = clock, loop
        return clock

    async def _rest(
        self,
        work: Coroutine[Any, Any, Any],
        pending: Any,
        entry: _Entry,
        seconds: float,
    ) -> Any:
        """The work from where its first step left it, its entry kept meanwhile."""
        try:
            return await self._drive(work, pending, entry, seconds)
        finally:
            del self._live[entry]

    @types.coroutine
    def _drive(
        self,
        work: Coroutine[Any, Any, Any],
        pending: Any,
        entry: _Entry,
        seconds: float,
    ) -> Generator[Any, Any, Any]:
        """Step `work` inside the caller's task, passing on what it waits for.

        What the task throws in (a cancellation) goes to the work (`_throw`).
        """
        while True:
            try:
                sent = yield pending
            except GeneratorExit:
                work.close()
                raise
            except BaseException as thrown:  # noqa: BLE001 - passed on to the work
                ended, pending = self._throw(work, thrown, entry, seconds)
                if ended:
                    return pending
                continue
            try:
                pending = work.send(sent)
            except StopIteration as done:
                return done.value

    def _throw(
        self,
        work: Coroutine[Any, Any, Any],
        thrown: BaseException,
        entry: _Entry,
        seconds: float,
    ) -> tuple[bool, Any]:
        """Throw `thrown` into `work`: (True, its value) or (False, what it waits on).

        Once the deadline stopped the call, its caller is answered as soon as
        the work ends or waits again; work that waits again is handed to a
        task of its own. Any other cancellation is the work's to handle, as if
        it ran without a deadline: its caller's (the client left), or one of
        its own (`asyncio.timeout`, a `TaskGroup` whose child failed).
        """
        try:
            pending = work.throw(thrown)
        except StopIteration as done:
            if entry.expired:
                self._answer_stopped(entry, seconds)
            return True, done.value
        except BaseException as raised:
            if entry.expired:
                if raised is not thrown:
                    _log.debug("stopped %s raised as it ended", entry.label)
                self._answer_stopped(entry, seconds)
            raise
        if entry.expired:
            self._hand_over(work, pending, entry)
            self._answer_stopped(entry, seconds)
        return False, pending

    @staticmethod
    def _answer_stopped(entry: _Entry, seconds: float) -> None:
        """Raise what the caller of a call its deadline stopped sees.

        `DeadlineError`, the deadline's cancellation taken back; the caller's
        own cancellation when it was cancelled from elsewhere as well.
        """
        if entry.task.uncancel() <= entry.cancelling:
            message = f"{entry.label} ran past its deadline of {seconds:g}s"
            raise DeadlineError(message)
        raise asyncio.CancelledError

    def _hand_over(
        self, work: Coroutine[Any, Any, Any], pending: Any, entry: _Entry
    ) -> None:
        """Let `work`, which ignored its cancellation, run on in a task of its own."""
        loop = entry.task.get_loop()
        task = loop.create_task(
            _go_on(work, pending),
            name=f"wymcp {entry.label}",
            context=contextvars.copy_context(),
        )
        stopped_at = loop.time()
        task.add_done_callback(self._ended(entry.label, stopped_at))
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

    def _ended(self, label: str, stopped_at: float) -> Any:
        def ended(task: asyncio.Task[Any]) -> None:
            self._overdue.pop(task, None)
            if not task.cancelled() and task.exception() is not None:
                _log.debug("stopped %s raised as it ended", label)
            late = task.get_loop().time() - stopped_at
            if late > LATE_END:
                _log.warning(
                    "%s ended %.1fs after it was stopped (it ignored its "
                    "cancellation); %d stopped calls still running",
                    label,
                    late,
                    len(self._overdue),
                )

        return ended

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
                entry.task.cancel()  # the caller waits in `_drive`: the work hears it
            elif earliest is None or entry.deadline < earliest:
                earliest = entry.deadline
        if earliest is not None:
            self._arm(loop, earliest)

    def stop_all(self) -> None:
        """Cancel every recorded overdue task once more (at shutdown)."""
        for task in list(self._overdue):
            task.cancel()


@types.coroutine
def _pass_on(work: Coroutine[Any, Any, Any], pending: Any) -> Generator[Any, Any, Any]:
    """Step `work` from where it waits on `pending`, as the awaiting task would."""
    while True:
        try:
            sent = yield pending
        except GeneratorExit:
            work.close()
            raise
        except BaseException as thrown:  # noqa: BLE001 - passed on to the work
            try:
                pending = work.throw(thrown)
            except StopIteration as done:
                return done.value
        else:
            try:
                pending = work.send(sent)
            except StopIteration as done:
                return done.value


async def _go_on(work: Coroutine[Any, Any, Any], pending: Any) -> Any:
    """The rest of a call handed to a task of its own."""
    return await _pass_on(work, pending)
