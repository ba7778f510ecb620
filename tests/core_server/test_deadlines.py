"""Deadlines: CALL_TIMEOUT for many calls with one timer."""

from __future__ import annotations

import asyncio

import pytest

from wymcp.core.server._deadlines import DeadlineError, Deadlines


async def finishes(after: float, value: str) -> str:
    await asyncio.sleep(after)
    return value


async def test_a_call_that_finishes_in_time_returns_its_value():
    deadlines = Deadlines()
    assert await deadlines.run(finishes(0, "done"), 5) == "done"
    assert len(deadlines) == 0


async def test_a_late_call_is_stopped_and_says_so():
    deadlines = Deadlines()
    started = asyncio.get_running_loop().time()
    with pytest.raises(DeadlineError):
        await deadlines.run(finishes(30, "never"), 0.05)
    assert asyncio.get_running_loop().time() - started < 5
    assert len(deadlines) == 0
    current = asyncio.current_task()
    assert current is not None
    assert current.cancelling() == 0  # the cancellation was taken back


async def test_only_the_late_call_among_many_is_stopped():
    deadlines = Deadlines()

    async def one(seconds: float, sleep: float) -> str:
        try:
            return await deadlines.run(finishes(sleep, "ok"), seconds)
        except DeadlineError:
            return "stopped"

    answers = await asyncio.gather(one(5, 0.01), one(0.05, 30), one(5, 0.1), one(5, 0))
    assert answers == ["ok", "stopped", "ok", "ok"]


async def test_a_shorter_deadline_after_a_longer_one_is_kept():
    """The timer is armed for the longer deadline first, then moved earlier."""
    deadlines = Deadlines()
    long_call = asyncio.create_task(deadlines.run(finishes(0.3, "long"), 30))
    await asyncio.sleep(0)
    started = asyncio.get_running_loop().time()
    with pytest.raises(DeadlineError):
        await deadlines.run(finishes(30, "never"), 0.05)
    assert asyncio.get_running_loop().time() - started < 0.25
    assert await long_call == "long"


async def test_later_calls_are_stopped_after_the_timer_fired_for_an_early_one():
    deadlines = Deadlines()
    assert await deadlines.run(finishes(0, "a"), 0.02) == "a"
    await asyncio.sleep(0.05)  # the timer fires with nothing late
    with pytest.raises(DeadlineError):
        await deadlines.run(finishes(30, "never"), 0.05)


async def test_a_cancellation_from_elsewhere_stays_a_cancellation():
    deadlines = Deadlines()
    task = asyncio.create_task(deadlines.run(finishes(30, "never"), 30))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(deadlines) == 0


async def test_work_that_swallows_the_cancellation_returns_and_is_uncancelled():
    deadlines = Deadlines()

    async def stubborn() -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            return "kept going"
        return "slept"

    assert await deadlines.run(stubborn(), 0.05) == "kept going"
    current = asyncio.current_task()
    assert current is not None
    assert current.cancelling() == 0


def test_deadlines_outlive_the_loop_that_armed_them():
    """An engine kept across event loops still stops late calls in the new one."""
    deadlines = Deadlines()

    async def early() -> None:
        # arms the timer for 10 ms from now; the loop closes before it fires
        assert await deadlines.run(finishes(0, "a"), 0.01) == "a"

    async def late() -> str:
        try:
            return await deadlines.run(finishes(30, "never"), 0.2)
        except DeadlineError:
            return "stopped"

    asyncio.run(early())
    assert asyncio.run(late()) == "stopped"
