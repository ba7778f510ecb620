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
