"""The event-loop watchdog and the ping alongside catch a loop held on purpose.

A tool that calls `time.sleep` on the loop must trip both; a tool that awaits
must trip neither. The pytester run shows the fixture fails the test itself.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from loop_watchdog import STALL_BOUND, LoopWatchdog, watching
from wymcp.core.schema import Tool

if TYPE_CHECKING:
    from conftest import Serve

pytest_plugins = ("pytester",)

TESTS = Path(__file__).resolve().parent.parent
HELD = 3 * STALL_BOUND
"""Seconds the blocking tool holds the loop: well past every bound."""


class Block(Tool):
    """Holds the event loop with a blocking sleep (the defect the watchdog finds)."""

    name = "block"
    description = "Sleep without yielding."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Block the loop for HELD seconds."""
        del arguments, ctx
        time.sleep(HELD)  # noqa: ASYNC251 - the defect under test
        return "held"


class Wait(Tool):
    """Waits as long as `Block`, but yields to the loop."""

    name = "wait"
    description = "Sleep, yielding."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Await HELD seconds."""
        del arguments, ctx
        await asyncio.sleep(HELD)
        return "waited"


async def test_a_tool_blocking_the_loop_is_measured(
    serve: Serve, loop_watchdog: LoopWatchdog
) -> None:
    wire = await serve(TOOLS=[Block, Wait])
    answer = await wire.call("block", {})
    assert answer.json()["result"]["content"][0]["text"] == "held", answer
    assert loop_watchdog.verdict() is not None
    assert loop_watchdog.excuse() >= HELD * 0.9


async def test_a_tool_that_awaits_is_not_a_stall(
    serve: Serve, loop_watchdog: LoopWatchdog
) -> None:
    wire = await serve(TOOLS=[Block, Wait])
    assert (await wire.alongside(wire.call("wait", {}))).status == 200
    assert loop_watchdog.beats > 0
    assert loop_watchdog.verdict() is None


async def test_a_ping_alongside_a_blocking_call_fails(
    serve: Serve, loop_watchdog: LoopWatchdog
) -> None:
    wire = await serve(TOOLS=[Block, Wait])
    with pytest.raises(AssertionError, match="a ping sent alongside took"):
        await wire.alongside(wire.call("block", {}))
    assert loop_watchdog.excuse() >= HELD * 0.9


def _hold_the_gil(seconds: float) -> None:
    """Block in one C call that keeps the GIL (a regex backtracking on 'a'*n)."""
    pattern = re.compile(r"(a|aa)*c")
    size = 16
    while True:
        started = time.monotonic()
        pattern.match("a" * size)
        if time.monotonic() - started >= seconds:
            return
        size += 1


@pytest.mark.parametrize("block", [time.sleep, _hold_the_gil], ids=["sleep", "gil"])
def test_a_loop_in_another_thread_is_watched(block: Callable[[float], None]) -> None:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        with watching(loop) as watchdog:
            time.sleep(0.1)
            quiet = watchdog.longest
            finished = threading.Event()
            loop.call_soon_threadsafe(lambda: (block(HELD), finished.set()))
            assert finished.wait(60)
            time.sleep(0.1)
        assert watchdog.beats > 0
        assert quiet < STALL_BOUND
        assert watchdog.longest >= HELD * 0.9
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def test_the_fixture_fails_a_test_that_blocks_the_loop(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from loop_watchdog import loop_watchdog, pytest_configure, pytest_runtest_call
"""
    )
    pytester.makepyfile(
        f"""
import asyncio, time
import pytest

async def test_blocks(loop_watchdog):
    time.sleep({HELD})

async def test_awaits(loop_watchdog):
    await asyncio.sleep({HELD})

@pytest.mark.loop_stall_bound({HELD * 3})
async def test_blocks_within_its_own_bound(loop_watchdog):
    time.sleep({HELD})

@pytest.fixture
def slow_setup():
    time.sleep({HELD})

async def test_a_slow_sync_fixture_is_not_a_stall(loop_watchdog, slow_setup):
    await asyncio.sleep(0.05)
"""
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-o",
        "asyncio_mode=auto",
        "-o",
        "asyncio_default_fixture_loop_scope=function",
        "-q",
    )
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_blocks _*",
            "the event loop was blocked for *",
            "FAILED *test_blocks*",
        ]
    )
