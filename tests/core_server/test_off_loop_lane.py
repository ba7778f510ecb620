"""`OffLoopLane`: a server's large jobs run in a worker thread one at a time."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from wymcp.core.server import OffLoopLane


class Recorder:
    """Jobs that note when they ran, and how many ran at once."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0
        self.ended: list[str] = []
        self._guard = threading.Lock()

    def job(self, name: str, seconds: float = 0.05) -> str:
        with self._guard:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(seconds)
        with self._guard:
            self.running -= 1
            self.ended.append(name)
        return name


async def test_jobs_run_one_at_a_time_in_the_order_they_came() -> None:
    lane, recorder = OffLoopLane(), Recorder()
    names = [f"job{n}" for n in range(6)]
    results = await asyncio.gather(
        *(lane.run(lambda name=name: recorder.job(name)) for name in names)
    )
    assert results == names
    assert recorder.most == 1
    assert recorder.ended == names


async def test_a_cancelled_caller_keeps_the_lane_until_its_thread_ends() -> None:
    lane, recorder = OffLoopLane(), Recorder()
    first = asyncio.ensure_future(lane.run(lambda: recorder.job("first", 0.2)))
    await asyncio.sleep(0.05)  # its thread runs
    first.cancel()
    second = await lane.run(lambda: recorder.job("second"))
    assert second == "second"
    assert first.cancelled()
    assert recorder.most == 1
    assert recorder.ended == ["first", "second"]


async def test_a_job_s_error_reaches_its_caller_and_frees_the_lane() -> None:
    lane = OffLoopLane()

    def fails() -> None:
        raise ValueError("unreadable")

    with pytest.raises(ValueError, match="unreadable"):
        await lane.run(fails)
    assert await lane.run(lambda: "next") == "next"


def test_a_lane_serves_each_loop_it_is_used_on() -> None:
    lane, recorder = OffLoopLane(), Recorder()

    async def two_at_once() -> list[str]:  # the second waits: the lock takes a loop
        return await asyncio.gather(
            lane.run(lambda: recorder.job("a")), lane.run(lambda: recorder.job("b"))
        )

    for _ in range(2):
        assert asyncio.run(two_at_once()) == ["a", "b"]
    assert recorder.most == 1
