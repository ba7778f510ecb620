"""How long a call's work really runs: its own task, plus its worker threads.

A thread started with `asyncio.to_thread` cannot be stopped: a call stopped by
CALL_TIMEOUT or left by its client is answered while the thread runs on. A
`WorkHold` counts the threads a call's context submits to the loop's default
executor, so a concurrency slot is freed when the last one returns.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import weakref
from collections.abc import Callable
from typing import Any, Final

_HOLD: Final[contextvars.ContextVar[WorkHold | None]] = contextvars.ContextVar(
    "wymcp_work_hold", default=None
)
_COUNTED_LOOPS: Final[weakref.WeakSet[asyncio.AbstractEventLoop]] = weakref.WeakSet()


class WorkHold:
    """The worker threads a call's work still runs; `idle` once none is left."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, parent: WorkHold | None = None
    ) -> None:
        self._loop = loop
        self._parent = parent
        self.threads = 0
        self._on_idle: Callable[[], None] | None = None

    def started(self) -> None:
        """A thread was submitted from the call's context (any thread)."""
        self.threads += 1
        if self._parent is not None:  # a hold inside another counts for both
            self._parent.started()

    def returned(self) -> None:
        """A thread of the call returned (called on the loop)."""
        self.threads -= 1
        if self._parent is not None:
            self._parent.returned()
        if self.threads == 0 and self._on_idle is not None:
            on_idle, self._on_idle = self._on_idle, None
            on_idle()

    def when_idle(self, on_idle: Callable[[], None]) -> bool:
        """Call `on_idle` once no thread is left; False: none is left now."""
        if self.threads == 0:
            return False
        self._on_idle = on_idle
        return True

    def finished(self, _future: concurrent.futures.Future[Any]) -> None:
        """A done callback (in the worker thread): count the return on the loop."""
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits
            self._loop.call_soon_threadsafe(self.returned)


class CountingExecutor(concurrent.futures.ThreadPoolExecutor):
    """The default executor, counting each job a held call submits."""

    def submit(
        self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[Any]:
        """Submit `fn` as ThreadPoolExecutor does; a held call counts it."""
        hold = _HOLD.get()
        future = super().submit(fn, *args, **kwargs)
        if hold is not None:
            hold.started()
            future.add_done_callback(hold.finished)
        return future


def hold_work() -> tuple[WorkHold, contextvars.Token[WorkHold | None]]:
    """Start counting the threads the current context submits (`release_work`).

    The running loop's default executor becomes a `CountingExecutor` the
    first time (a default executor made before keeps its threads until exit).
    """
    loop = asyncio.get_running_loop()
    if loop not in _COUNTED_LOOPS:
        loop.set_default_executor(CountingExecutor(thread_name_prefix="asyncio"))
        _COUNTED_LOOPS.add(loop)
    hold = WorkHold(loop, _HOLD.get())
    return hold, _HOLD.set(hold)


def release_work(token: contextvars.Token[WorkHold | None]) -> None:
    """Stop marking new threads of the current context as the hold's."""
    _HOLD.reset(token)
