"""`OffLoopLane`: a server's large jobs run in a worker thread one at a time."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from wymcp.core.server import OffLoopLane
from wymcp.core.server._off_loop import Turns


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


async def queue_behind_a_running_job(
    lane: OffLoopLane, jobs: list[tuple[str, str]]
) -> list[str]:
    """Run `jobs` ((client, name) in the order they come) while a job runs.

    Returns the names in the order their jobs started.
    """
    started: list[str] = []
    go, ready = threading.Event(), threading.Event()

    def first() -> None:
        ready.set()
        go.wait()

    running = asyncio.ensure_future(lane.of("first").run(first))
    assert await asyncio.to_thread(ready.wait, 5)  # the lane is held
    waiting = []
    for client, name in jobs:
        waiting.append(
            asyncio.ensure_future(lane.of(client).run(lambda n=name: started.append(n)))
        )
        await asyncio.sleep(0)  # each reaches the lane in this order
    go.set()
    await asyncio.gather(running, *waiting)
    return started


async def test_waiting_jobs_are_served_by_client_in_turn() -> None:
    # one client's queue of jobs no longer runs ahead of another client's one
    order = await queue_behind_a_running_job(
        OffLoopLane(),
        [
            ("addr:10.0.0.1", "a1"),
            ("addr:10.0.0.1", "a2"),
            ("addr:10.0.0.1", "a3"),
            ("addr:10.0.0.2", "b1"),
            ("addr:10.0.0.2", "b2"),
            ("sub:carol", "c1"),
        ],
    )
    assert order == ["a1", "b1", "c1", "a2", "b2", "a3"]


async def test_one_client_s_jobs_keep_their_order() -> None:
    names = [f"job{n}" for n in range(5)]
    order = await queue_behind_a_running_job(
        OffLoopLane(), [("addr:10.0.0.1", name) for name in names]
    )
    assert order == names


async def test_a_client_coming_later_waits_for_the_running_job_only() -> None:
    lane = OffLoopLane()
    started: list[str] = []
    go = threading.Event()
    running = asyncio.ensure_future(lane.of("a").run(go.wait))
    await asyncio.sleep(0.05)
    hostile = [
        asyncio.ensure_future(lane.of("a").run(lambda n=n: started.append(f"a{n}")))
        for n in range(10)
    ]
    await asyncio.sleep(0)
    honest = asyncio.ensure_future(lane.of("b").run(lambda: started.append("b")))
    await asyncio.sleep(0)
    go.set()
    await asyncio.gather(running, honest, *hostile)
    # a's ten jobs came first, but a holds the lane: b is next
    assert started == ["b"] + [f"a{n}" for n in range(10)]


async def test_a_cancelled_waiting_job_takes_no_turn() -> None:
    lane = OffLoopLane()
    started: list[str] = []
    go = threading.Event()
    running = asyncio.ensure_future(lane.of("a").run(go.wait))
    await asyncio.sleep(0.05)
    gone = asyncio.ensure_future(lane.of("b").run(lambda: started.append("b")))
    stays = asyncio.ensure_future(lane.of("c").run(lambda: started.append("c")))
    await asyncio.sleep(0)
    gone.cancel()
    go.set()
    await asyncio.gather(running, stays)
    assert gone.cancelled()
    assert started == ["c"]
    assert await lane.of("b").run(lambda: "free") == "free"


async def test_a_job_cancelled_as_its_turn_comes_hands_the_lane_on() -> None:
    turns = Turns(asyncio.get_running_loop())
    await turns.take("a")
    handed = asyncio.ensure_future(turns.take("b"))
    after = asyncio.ensure_future(turns.take("c"))
    await asyncio.sleep(0)
    turns.give_back()  # the lane goes to b's turn ...
    handed.cancel()  # ... which is cancelled before it could run
    await asyncio.wait_for(after, 5)  # c got the lane b could not use
    assert handed.cancelled()
    assert turns.busy
    assert not turns.waiting
    turns.give_back()
    assert not turns.busy
