"""Deadlines: CALL_TIMEOUT for many calls with one timer."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable

import pytest

from wymcp.core.server import _call_deadlines as deadlines_module
from wymcp.core.server._call_deadlines import DeadlineError, Deadlines


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


async def stubborn(release: asyncio.Event, log: list[str]) -> str:
    """Work that ignores every cancellation until `release` is set."""
    while not release.is_set():
        try:
            await release.wait()
        except asyncio.CancelledError:
            log.append("cancelled")
    log.append("ended")
    return "kept going"


async def test_work_that_swallows_its_cancellation_is_answered_at_the_deadline():
    """The caller gets DeadlineError while the work still runs (it is overdue)."""
    deadlines = Deadlines()
    release, log = asyncio.Event(), []
    with pytest.raises(DeadlineError):
        await deadlines.run(stubborn(release, log), 0.05)
    assert log == ["cancelled"]  # cancelled, swallowed it, still running
    assert deadlines.overdue == 1
    assert len(deadlines) == 0
    current = asyncio.current_task()
    assert current is not None
    assert current.cancelling() == 0  # the caller was never cancelled
    release.set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert log == ["cancelled", "ended"]
    assert deadlines.overdue == 0


async def test_a_cancelled_caller_waits_for_work_that_ignores_it_until_the_deadline():
    """The caller's cancellation is the work's to handle, as without a deadline.

    Work that ignores it holds its caller no longer than the deadline, then
    runs on as overdue, and the caller's cancellation goes on.
    """
    deadlines = Deadlines()
    release, log = asyncio.Event(), []
    caller = asyncio.create_task(deadlines.run(stubborn(release, log), 0.2))
    await asyncio.sleep(0.01)
    caller.cancel()
    await asyncio.sleep(0.01)
    assert not caller.done()  # held by the work, which swallowed it
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert log == ["cancelled", "cancelled"]  # the caller's, then the deadline's
    assert deadlines.overdue == 1
    release.set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert deadlines.overdue == 0


async def test_a_task_group_whose_child_fails_works_under_a_deadline():
    """A cancellation the work's TaskGroup makes is its own, not its caller's."""
    deadlines = Deadlines()

    async def fails() -> None:
        await asyncio.sleep(0)
        raise ValueError("child failed")

    async def cleans_up_slowly() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(0.01)  # its cleanup waits: the group waits on
            raise

    async def group() -> str:
        outcome = "not handled"
        try:
            async with asyncio.TaskGroup() as tasks:
                tasks.create_task(fails())
                tasks.create_task(cleans_up_slowly())
        except* ValueError:
            outcome = "handled"
        return outcome

    assert await deadlines.run(group(), 5) == "handled"
    assert deadlines.overdue == 0


async def test_the_record_of_overdue_work_is_bounded_and_logged(monkeypatch, caplog):
    monkeypatch.setattr(deadlines_module, "OVERDUE_RECORD", 3)
    monkeypatch.setattr(deadlines_module, "LATE_END", 0.0)
    deadlines = Deadlines()
    release, log = asyncio.Event(), []

    async def one() -> None:
        with pytest.raises(DeadlineError):
            await deadlines.run(stubborn(release, log), 0.01, label="tool t")

    with caplog.at_level(logging.WARNING, logger="wymcp.core.server"):
        await asyncio.gather(*(one() for _ in range(5)))
        assert (deadlines.overdue, deadlines.unrecorded) == (3, 2)
        assert "3 stopped calls are still running; 1 more are not recorded" in (
            caplog.text
        )
        release.set()
        for _ in range(5):
            await asyncio.sleep(0)
    assert deadlines.overdue == 0
    assert "tool t ended" in caplog.text
    assert "ignored its cancellation" in caplog.text


async def test_a_stopped_call_that_raises_as_it_ends_is_not_reported_unretrieved():
    deadlines = Deadlines()
    release = asyncio.Event()
    reported: list[str] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(
        lambda _loop, context: reported.append(context["message"])
    )

    async def raises_late() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await release.wait()
            raise RuntimeError("late") from None

    with pytest.raises(DeadlineError):
        await deadlines.run(raises_late(), 0.01)
    release.set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert deadlines.overdue == 0
    gc.collect()
    loop.set_exception_handler(None)
    assert reported == []


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


async def test_stop_all_cancels_overdue_work_once_more():
    """At shutdown the engine cancels calls that ignored their first cancellation."""
    deadlines = Deadlines()
    seen: list[str] = []

    async def ignores_one() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("first")
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("second")
            raise

    with pytest.raises(DeadlineError):
        await deadlines.run(ignores_one(), 0.01)
    await asyncio.sleep(0)
    assert (seen, deadlines.overdue) == (["first"], 1)
    deadlines.stop_all()
    for _ in range(3):
        await asyncio.sleep(0)
    assert (seen, deadlines.overdue) == (["first", "second"], 0)


async def test_work_done_when_its_deadline_fires_keeps_its_value():
    """The timer may run after the work ended but before its caller woke."""
    deadlines = Deadlines()

    async def instant() -> str:
        return "done"

    assert await deadlines.run(instant(), 0) == "done"
    assert deadlines.overdue == 0


async def test_work_runs_in_its_callers_task_and_arms_no_timer_unless_it_waits():
    """No task per call: the work is stepped in its caller's task."""
    deadlines = Deadlines()
    seen: list[asyncio.Task[object] | None] = []

    async def instant() -> str:
        seen.append(asyncio.current_task())
        return "done"

    async def waits() -> str:
        seen.append(asyncio.current_task())
        await asyncio.sleep(0)
        seen.append(asyncio.current_task())
        return "waited"

    tasks_before = len(asyncio.all_tasks())
    assert await deadlines.run(instant(), 5) == "done"
    assert deadlines._timer is None  # it never waited: nothing to arm
    assert await deadlines.run(waits(), 5) == "waited"
    assert deadlines._timer is not None
    assert seen == [asyncio.current_task()] * 3
    assert len(asyncio.all_tasks()) == tasks_before
    assert len(deadlines) == 0


async def test_a_timeout_inside_the_work_stays_the_works_own():
    """The work's own `asyncio.timeout` cancels and is taken back inside it."""
    deadlines = Deadlines()

    async def own_timeout() -> str:
        try:
            async with asyncio.timeout(0.01):
                await asyncio.sleep(30)
        except TimeoutError:
            pass
        await asyncio.sleep(0)  # waits again after its own cancellation
        return "went on"

    assert await deadlines.run(own_timeout(), 5) == "went on"
    assert deadlines.overdue == 0
    current = asyncio.current_task()
    assert current is not None
    assert current.cancelling() == 0


async def test_work_that_raises_as_its_deadline_stops_it_answers_the_deadline():
    deadlines = Deadlines()

    async def raises_when_stopped() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            raise ValueError("cleanup failed") from None

    with pytest.raises(DeadlineError):
        await deadlines.run(raises_when_stopped(), 0.01)
    assert deadlines.overdue == 0
    current = asyncio.current_task()
    assert current is not None
    assert current.cancelling() == 0


async def test_work_that_returns_as_its_deadline_stops_it_answers_the_deadline():
    deadlines = Deadlines()

    async def returns_when_stopped() -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            return "too late"
        return "never"

    with pytest.raises(DeadlineError):
        await deadlines.run(returns_when_stopped(), 0.01)
    current = asyncio.current_task()
    assert current is not None
    assert current.cancelling() == 0


async def test_a_caller_cancelled_while_the_work_waits_keeps_its_cancellation():
    deadlines = Deadlines()
    ended: list[str] = []

    async def cleans_up() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            ended.append("cleaned")

    caller = asyncio.create_task(deadlines.run(cleans_up(), 30))
    await asyncio.sleep(0.01)
    caller.cancel("client left")
    with pytest.raises(asyncio.CancelledError, match="client left"):
        await caller
    assert ended == ["cleaned"]
    assert (deadlines.overdue, len(deadlines)) == (0, 0)


async def test_an_error_from_work_that_waited_reaches_the_caller():
    deadlines = Deadlines()

    async def fails_later() -> None:
        await asyncio.sleep(0)
        raise KeyError("missing")

    with pytest.raises(KeyError):
        await deadlines.run(fails_later(), 5)
    assert len(deadlines) == 0


async def test_start_answers_work_that_ends_on_its_first_step_at_once():
    """`start` takes the first step now: no timer, no entry, the value itself."""
    deadlines = Deadlines()

    async def instant() -> str:
        return "done"

    assert deadlines.start(instant(), 5, ("tool", "calc")) == (True, "done")
    assert (deadlines._timer, len(deadlines)) == (None, 0)


async def test_start_raises_the_error_of_a_first_step_itself():
    deadlines = Deadlines()

    async def fails_at_once() -> None:
        raise KeyError("missing")

    with pytest.raises(KeyError):
        deadlines.start(fails_at_once(), 5)
    assert (deadlines._timer, len(deadlines)) == (None, 0)


async def test_the_rest_of_a_started_call_is_bound_by_the_same_deadline():
    deadlines = Deadlines()
    done, rest = deadlines.start(finishes(30, "never"), 0.05, ("tool", "slow", "run"))
    assert not done
    assert len(deadlines) == 1
    with pytest.raises(DeadlineError, match=r"^tool slow run ran past its deadline"):
        await rest
    assert (len(deadlines), deadlines.overdue) == (0, 0)


class _AheadLoop(asyncio.SelectorEventLoop):
    """A loop whose clock reads 1,000 s ahead of `time.monotonic()`."""

    def time(self) -> float:
        return super().time() + 1000


def _behind_loop() -> asyncio.AbstractEventLoop:
    """A plain loop whose clock is set on the instance, 1,000 s behind.

    A virtual-clock fixture does this: found by review, reading
    `time.monotonic` for every asyncio loop class put the deadline on another
    clock than its timer, so a hanging call never stopped.
    """
    loop = asyncio.new_event_loop()
    base = loop.time
    loop.time = lambda: base() - 1000.0  # type: ignore[method-assign]
    return loop


@pytest.mark.parametrize(
    "make_loop", [_AheadLoop, _behind_loop], ids=["class clock", "instance clock"]
)
def test_a_deadline_counts_on_the_loops_own_clock(
    make_loop: Callable[[], asyncio.AbstractEventLoop],
) -> None:
    """A loop with a clock of its own: the deadline is on that clock, not monotonic."""
    deadlines = Deadlines()
    loop = make_loop()
    try:
        # on the wrong clock the deadline is 1,000 s off: stopped at once, or never
        assert loop.run_until_complete(deadlines.run(finishes(0.05, "ok"), 5)) == "ok"
        with pytest.raises(DeadlineError):
            loop.run_until_complete(deadlines.run(finishes(30, "never"), 0.05))
    finally:
        loop.close()
