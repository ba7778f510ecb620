"""An event-loop watchdog: fails a test in which the loop was blocked too long.

`LoopWatchdog` measures, from inside the loop, how late a beat every few
milliseconds wakes; `ThreadLoopWatchdog` arms the same beats on a loop running
in another thread. The `loop_watchdog` fixture and the `pytest_runtest_call` hook
(imported by `tests/conftest.py`) fail a test whose call blocked the loop longer
than `STALL_BOUND` seconds (a bound on blocking, not a speed claim).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any, Self

import pytest

STALL_BOUND = float(os.environ.get("WYMCP_LOOP_STALL_BOUND", "0.5"))
"""Seconds the loop may go without running a ready callback (the machine is shared)."""
BEAT = 0.005
"""Seconds between two beats of the monitor."""
MARKER = "loop_stall_bound"
"""`@pytest.mark.loop_stall_bound(seconds)` sets another bound for one test."""
_KEY = pytest.StashKey["LoopWatchdog"]()


class LoopWatchdog:
    """The longest stall of the running loop, measured by a task that beats.

    A beat sleeps `BEAT` seconds and measures how much later it woke: that lag
    is time the loop spent running something else without yielding. `begin()`
    (called while the loop is not running, between a fixture's setup and the
    test) starts a fresh beat task, so a beat that spans a time the loop was
    stopped is never counted as a stall; after `end()` nothing is counted.
    """

    def __init__(self, bound: float = STALL_BOUND) -> None:
        self.bound = bound
        self.longest = 0.0
        self.beats = 0
        self.measuring = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._due: float | None = None

    def start(self) -> None:
        """Start beating on the running loop, measuring at once."""
        self._loop = asyncio.get_running_loop()
        self.begin()

    async def stop(self) -> None:
        """Stop beating."""
        self.measuring = False
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()

    def begin(self) -> None:
        """Forget what was measured and measure from now on, with a fresh beat."""
        assert self._loop is not None, "start() first"
        for task in self._tasks:
            task.cancel()
        self._due = self._loop.time() + BEAT
        self._tasks.append(self._loop.create_task(self._beat(self._due)))
        self.longest = 0.0
        self.measuring = True

    def end(self) -> None:
        """Count the beat still due (a stall up to the test's end), then stop counting.

        A test whose last step blocks ends the loop's run before the late beat
        can wake, so its lateness is read here, right after the test returns.
        """
        if self.measuring and self._due is not None and self._loop is not None:
            self.longest = max(self.longest, self._loop.time() - self._due)
        self.measuring = False

    def excuse(self) -> float:
        """Forget a stall the test caused on purpose; return the longest seen."""
        longest, self.longest = self.longest, 0.0
        return longest

    def verdict(self) -> str | None:
        """Why the test fails (the loop was blocked past the bound), or None."""
        if self.longest <= self.bound:
            return None
        return (
            f"the event loop was blocked for {self.longest * 1000:.0f} ms "
            f"(bound {self.bound * 1000:.0f} ms): some code held the loop while "
            "serving; make it linear, bound it, or move it off the loop"
        )

    async def _beat(self, due: float) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(max(0.0, due - loop.time()))
            lag = loop.time() - due
            self.beats += 1
            if self.measuring and lag > self.longest:
                self.longest = lag
            due = self._due = loop.time() + BEAT


class ThreadLoopWatchdog:
    """The longest stall of a loop that runs forever in another thread.

    A chain of `call_later` beats runs on the watched loop itself (armed with
    `call_soon_threadsafe`), each measuring how late it ran. Nothing is
    measured from another thread: a loop blocked in C code that holds the GIL
    (a regex, a JSON parse) would keep such a thread from noticing.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, bound: float = STALL_BOUND):
        self.loop = loop
        self.bound = bound
        self.longest = 0.0
        self.beats = 0
        self._stopped = False

    def __enter__(self) -> Self:
        self.loop.call_soon_threadsafe(self._arm)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped = True

    def excuse(self) -> float:
        """Forget what was measured; return the longest stall seen."""
        longest, self.longest = self.longest, 0.0
        return longest

    def _arm(self) -> None:
        self.loop.call_later(BEAT, self._beat, self.loop.time() + BEAT)

    def _beat(self, due: float) -> None:
        self.beats += 1
        self.longest = max(self.longest, self.loop.time() - due)
        if not self._stopped:
            self._arm()


@contextlib.contextmanager
def watching(loop: asyncio.AbstractEventLoop) -> Iterator[ThreadLoopWatchdog]:
    """Watch `loop` (running in another thread) for the duration of the block."""
    with ThreadLoopWatchdog(loop) as watchdog:
        yield watchdog


def _bound(node: Any) -> float:
    marker = node.get_closest_marker(MARKER)
    return float(marker.args[0]) if marker is not None else STALL_BOUND


@pytest.fixture
async def loop_watchdog(request: pytest.FixtureRequest) -> AsyncIterator[LoopWatchdog]:
    """Measure the longest event-loop stall while the test runs; fail past the bound.

    The verdict is given by `pytest_runtest_call`, so a blocked loop fails the
    test itself (not its teardown).
    """
    watchdog = LoopWatchdog(_bound(request.node))
    watchdog.start()
    request.node.stash[_KEY] = watchdog
    try:
        yield watchdog
    finally:
        await watchdog.stop()


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker that sets a test's own stall bound."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(seconds): the longest event-loop stall the watchdog allows here",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Measure the call phase only, then fail the test if the loop was blocked.

    A synchronous test does not run the loop, so there is nothing to measure.
    """
    watchdog = item.stash.get(_KEY, None)
    if not inspect.iscoroutinefunction(getattr(item, "function", None)):
        watchdog = None
    if watchdog is not None:
        watchdog.begin()
    try:
        yield
    finally:
        if watchdog is not None:
            watchdog.end()
    if watchdog is not None and (reason := watchdog.verdict()) is not None:
        pytest.fail(reason, pytrace=False)
