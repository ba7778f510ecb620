"""BODY_MEMORY_BUDGET's count: what a reservation holds, refuses and gives back."""

from __future__ import annotations

import asyncio
import gc
import threading

from wymcp.core.server import yielding
from wymcp.transport.aiohttp._body_budget import COUNTED_FROM, BodyBudget


def test_a_body_is_counted_as_it_grows_and_given_back_once() -> None:
    budget = BodyBudget(100_000)
    one = budget.reserve()
    assert one.grow_to(40_000)
    assert one.grow_to(60_000)
    assert budget.held == 60_000
    assert one.grow_to(50_000)  # never shrinks while held
    one.release()
    one.release()
    assert budget.held == 0


def test_a_body_that_would_pass_the_budget_is_refused_and_holds_nothing() -> None:
    budget = BodyBudget(100_000)
    first, second = budget.reserve(), budget.reserve()
    assert first.grow_to(70_000)
    assert not second.grow_to(40_000)
    assert budget.held == 70_000
    second.release()
    assert budget.held == 70_000
    first.release()
    assert second.grow_to(100_000)  # the whole budget, once it is free


def test_small_bodies_are_never_counted_nor_refused() -> None:
    budget = BodyBudget(1)
    assert budget.reserve().grow_to(COUNTED_FROM)
    assert budget.held == 0
    assert not budget.reserve().grow_to(COUNTED_FROM + 1)


def test_no_budget_counts_but_never_refuses() -> None:
    budget = BodyBudget(None)
    one = budget.reserve()
    assert one.grow_to(10**12)
    assert budget.held == 10**12
    one.release()
    assert budget.held == 0


async def test_a_decode_left_running_in_a_thread_holds_its_bytes_till_it_ends() -> None:
    budget = BodyBudget(100_000)
    held = budget.reserve()
    assert held.grow_to(80_000)
    go = threading.Event()
    work = asyncio.get_running_loop().run_in_executor(None, go.wait)
    held.release_after(work)  # its request was cancelled: the thread runs on
    held.release()
    assert budget.held == 80_000
    go.set()
    await work
    await asyncio.sleep(0)  # done callbacks run on the next loop step
    assert budget.held == 0


async def test_a_failed_decode_left_running_is_retrieved_and_given_back() -> None:
    budget = BodyBudget(100_000)
    held = budget.reserve()
    assert held.grow_to(80_000)
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    held.release_after(future)
    future.set_exception(ValueError("refused body"))
    await asyncio.sleep(0)
    assert budget.held == 0


def test_yielding_returns_the_work_and_removes_its_hook() -> None:
    before = list(gc.callbacks)
    assert yielding(lambda: [[] for _ in range(10_000)])[:1] == [[]]
    assert gc.callbacks == before


async def test_a_body_that_does_not_fit_waits_its_turn_instead_of_a_503() -> None:
    budget = BodyBudget(100_000, wait=5.0)
    hostile = budget.reserve("addr:10.0.0.66")
    assert hostile.grow_to(90_000)
    honest = budget.reserve("addr:10.0.0.1")
    waiting = asyncio.ensure_future(honest.hold(30_000))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    assert budget.held == 90_000
    # the hostile client's next body may not pass the waiting one
    again = budget.reserve("addr:10.0.0.66")
    assert not await again.hold(5_000)
    hostile.release()
    assert await waiting
    assert budget.held == 30_000
    assert budget.holding == {"addr:10.0.0.1": 30_000}
    honest.release()
    assert budget.held == 0
    assert budget.holding == {}


async def test_waiting_clients_are_served_in_the_order_they_came() -> None:
    budget = BodyBudget(100_000, wait=5.0)
    full = budget.reserve("addr:10.0.0.66")
    assert full.grow_to(100_000)
    served: list[str] = []

    async def wait(client: str, size: int) -> None:
        reservation = budget.reserve(client)
        assert await reservation.hold(size)
        served.append(client)

    # the first one asks more than what frees first: those behind it wait too
    waiting = [
        asyncio.ensure_future(wait(client, size))
        for client, size in (("b", 80_000), ("c", 10_000), ("d", 10_000))
    ]
    await asyncio.sleep(0.01)
    assert budget.waiting.keys() == {"b", "c", "d"}
    full.release()
    await asyncio.gather(*waiting)
    assert served == ["b", "c", "d"]
    assert budget.held == 100_000


async def test_one_waiting_body_per_client_none_for_a_client_holding_bytes() -> None:
    budget = BodyBudget(100_000, wait=5.0)
    first = budget.reserve("addr:10.0.0.66")
    assert first.grow_to(70_000)
    # the client holding bytes is refused at once: its own bodies free them
    assert not await budget.reserve("addr:10.0.0.66").hold(40_000)
    waiting = asyncio.ensure_future(budget.reserve("addr:10.0.0.1").hold(40_000))
    await asyncio.sleep(0)
    assert not await budget.reserve("addr:10.0.0.1").hold(40_000)  # one waits
    assert not await budget.reserve("x").hold(200_000)  # never fits: at once
    first.release()
    assert await waiting


async def test_a_body_waits_at_most_its_bound_then_the_next_one_is_served() -> None:
    budget = BodyBudget(100_000, wait=0.1)
    held = budget.reserve("a")
    assert held.grow_to(60_000)
    late = budget.reserve("b")
    assert not await late.hold(50_000)  # nothing freed within `wait`: a 503
    assert not late.holds
    assert not budget.waiting
    assert await budget.reserve("c").hold(40_000)  # what fits is let in at once


async def test_a_body_waits_one_bound_per_body_ahead_of_it_and_one_more() -> None:
    # attack 10 MEDIUM 3: bodies ahead of it that each hold their `wait`
    # (BODY_TIMEOUT), in turn, ran a body's single `wait` out one turn before
    # its own. Each body holding or waiting when it came adds one `wait`.
    loop = asyncio.get_running_loop()
    budget = BodyBudget(100_000, wait=0.2)
    assert budget.wait_bound() == 0.2  # nobody ahead: one `wait`
    holder = budget.reserve("a")
    assert holder.grow_to(60_000)
    assert budget.bodies == 1
    ahead = asyncio.ensure_future(budget.reserve("b").hold(50_000))
    await asyncio.sleep(0)
    assert budget.wait_bound() == 0.2 * 3  # the holder, the waiter, its own turn
    started = loop.time()
    late = budget.reserve("c")
    waiting = asyncio.ensure_future(late.hold(50_000))
    await asyncio.sleep(0.3)  # past one `wait`: "b" gave up, "c" still waits
    assert not await ahead
    assert not waiting.done()
    assert list(budget.waiting) == ["c"]
    assert not await waiting  # nothing freed: refused once its bound ran out
    assert loop.time() - started >= 0.2 * 3 - 0.01  # timers may fire a tick early
    assert not late.holds
    assert not budget.waiting
    holder.release()
    assert budget.bodies == 0
    assert budget.wait_bound() == 0.2


async def test_a_body_whose_turn_comes_within_its_bound_is_let_in() -> None:
    budget = BodyBudget(100_000, wait=0.2)
    holder = budget.reserve("a")
    assert holder.grow_to(100_000)
    ahead = budget.reserve("b")
    waiting_ahead = asyncio.ensure_future(ahead.hold(5_000, expected=100_000))
    await asyncio.sleep(0)
    late = budget.reserve("c")
    waiting = asyncio.ensure_future(late.hold(5_000, expected=100_000))
    await asyncio.sleep(0.15)
    holder.release()  # the holder's time: "b" in, "c" waits on past one `wait`
    assert await waiting_ahead
    await asyncio.sleep(0.15)
    assert not waiting.done()
    ahead.release()  # the next holder's time: "c" in, 0.3 s after it came
    assert await waiting
    assert budget.holding == {"c": 100_000}


async def test_a_cancelled_waiting_body_holds_nothing_and_passes_its_turn() -> None:
    budget = BodyBudget(100_000, wait=5.0)
    full = budget.reserve("a")
    assert full.grow_to(100_000)
    gone = asyncio.ensure_future(budget.reserve("b").hold(5_000, expected=90_000))
    behind = budget.reserve("c")
    after = asyncio.ensure_future(behind.hold(20_000))
    await asyncio.sleep(0)
    gone.cancel()
    await asyncio.sleep(0)
    full.release()
    assert await after
    assert budget.holding == {"c": 20_000}


async def test_a_body_let_in_after_its_turn_holds_its_declared_size() -> None:
    # never refused part way for bytes another body took since its turn came
    budget = BodyBudget(100_000, wait=5.0)
    full = budget.reserve("a")
    assert full.grow_to(100_000)
    body = budget.reserve("b")
    waiting = asyncio.ensure_future(body.hold(COUNTED_FROM + 1, expected=60_000))
    await asyncio.sleep(0)
    full.release()
    assert await waiting
    assert budget.held == 60_000
    assert await body.hold(60_000)  # the rest of it arrives: already held
    assert budget.held == 60_000


async def test_a_body_let_in_at_once_holds_its_declared_size() -> None:
    # before, it held what arrived and grew: another client's body, let in
    # beside it, was refused (503) part way once the first one's bytes came
    budget = BodyBudget(100_000, wait=5.0)
    first = budget.reserve("a")
    assert await first.hold(COUNTED_FROM + 1, expected=60_000)
    assert budget.held == 60_000
    second = budget.reserve("b")
    waiting = asyncio.ensure_future(second.hold(COUNTED_FROM + 1, expected=60_000))
    await asyncio.sleep(0)
    assert not waiting.done()  # 120,000 do not fit: it waits, not let in to fail
    assert first.grow_to(60_000)  # the rest of the first body: already held
    first.release()
    assert await waiting
    assert budget.holding == {"b": 60_000}


async def test_a_body_of_unknown_size_let_in_at_once_holds_what_arrived() -> None:
    budget = BodyBudget(100_000, wait=5.0)
    body = budget.reserve("a")
    assert await body.hold(COUNTED_FROM + 1)
    assert budget.held == COUNTED_FROM + 1


async def test_the_bytes_waiting_bodies_have_read_stay_within_the_budget() -> None:
    budget = BodyBudget(100_000, wait=5.0)
    full = budget.reserve("a")
    assert full.grow_to(100_000)
    first = asyncio.ensure_future(budget.reserve("b").hold(60_000))
    await asyncio.sleep(0)
    assert budget.waiting_read == 60_000
    assert not await budget.reserve("c").hold(50_000)  # 110,000 read: at once
    second = asyncio.ensure_future(budget.reserve("d").hold(40_000))
    await asyncio.sleep(0)
    assert budget.waiting_read == 100_000
    full.release()
    assert await first
    assert await second
    assert budget.waiting_read == 0


async def test_a_body_read_holds_its_size_and_gives_the_rest_to_a_waiting_one() -> None:
    budget = BodyBudget(100_000, wait=5.0)
    unknown = budget.reserve("a")
    assert await unknown.hold(COUNTED_FROM + 1, expected=100_000)  # the most
    waiting = asyncio.ensure_future(budget.reserve("b").hold(50_000))
    await asyncio.sleep(0)
    assert not waiting.done()
    unknown.shrink_to(30_000)  # read: 30,000 bytes
    assert await waiting
    assert budget.holding == {"a": 30_000, "b": 50_000}
    unknown.shrink_to(COUNTED_FROM)  # a body that small is not counted
    assert budget.holding == {"b": 50_000}


def test_a_body_ahead_is_waited_for_while_it_is_read_and_while_its_call_runs() -> None:
    # attack 11: valid large calls to a slow tool held the budget past the
    # waiter's BODY_TIMEOUT per body ahead, so an honest large call got 503
    from wymcp.conf import Settings
    from wymcp.transport.aiohttp._body_reader import BodyReader

    timed = Settings().evolve(BODY_TIMEOUT=4.0, CALL_TIMEOUT=20.0)
    assert BodyReader(timed).bodies.wait == 24.0
    untimed = Settings().evolve(BODY_TIMEOUT=4.0, CALL_TIMEOUT=None)
    assert BodyReader(untimed).bodies.wait == 4.0
