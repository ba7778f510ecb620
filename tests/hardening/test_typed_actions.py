"""Typed actions under a hostile client: large data is read off the loop.

A 4 MiB body of small objects for an ``@action`` whose data is an attrs class:
cattrs builds half a million objects, which held the event loop over a second
when it ran on the loop. The loop watchdog (autouse here) and a valid client
pinging alongside must not notice.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import gc
import itertools
import json
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import attrs
import pytest

from hardening.test_linearity import assert_linear
from wymcp.core.schema import (
    Context,
    Tool,
    UnreadableDataError,
    action,
    action_reader,
    prepare,
)

if TYPE_CHECKING:
    from conftest import Serve
    from loop_watchdog import LoopWatchdog

BODY = 4 * 1024 * 1024
"""The default BODY_LIMIT."""


@attrs.frozen
class Item:
    s: str


@attrs.frozen
class Batch:
    items: list[Item]


@attrs.frozen
class Day:
    on: dt.date
    weight: float = 1.0


@attrs.frozen
class Days:
    days: list[Day]


class Diary(Tool):
    name = "diary"
    description = "Keep days."

    @action(description="Keep the days")
    async def keep(self, data: Days, ctx: Context) -> None:
        del data, ctx


class Bulk(Tool):
    name = "bulk"
    description = "Take many items."

    @action(description="Count the items")
    async def take(self, data: Batch, ctx: Context) -> dict[str, int]:
        del ctx
        assert all(type(item) is Item for item in data.items)
        return {"count": len(data.items)}


@pytest.fixture
def frozen_heap() -> Iterator[None]:
    """The test process's own heap out of the collector's way (`gc.freeze`).

    A full collection walks every object of the process: after many tests that
    is the suite's heap, not a server's (see test_linearity.py's fixture).
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


async def test_structuring_a_large_typed_body_does_not_hold_the_loop(
    serve: Serve, loop_watchdog: LoopWatchdog, frozen_heap: None
) -> None:
    wire = await serve(TOOLS=[Bulk], BODY_LIMIT=BODY, BODY_MEMORY_BUDGET=4 * BODY)
    item = b'{"s":""}'
    count = (BODY - 400) // (len(item) + 1)
    params = {"name": "bulk", "arguments": {"action": "take", "data": {"items": []}}}
    head, tail = json.dumps(wire.body("tools/call", params)).encode().split(b"[]")
    body = head + b"[" + b",".join([item] * count) + b"]" + tail
    assert len(body) <= BODY
    answer = await wire.alongside(wire.post(body, wire.headers("tools/call", "bulk")))
    assert answer.status == 200, answer
    result = answer.json()["result"]
    assert result["isError"] is False, result
    assert json.loads(result["content"][0]["text"]) == {"count": count}
    print(f"{count} items; longest stall: {loop_watchdog.longest * 1000:.0f} ms")  # noqa: T201 - the measured figure


def test_reading_typed_data_is_linear() -> None:
    read = action_reader(prepare(Bulk).tool, "take")
    assert read is not None
    assert_linear(read, lambda n: {"items": [{"s": "x"}] * n}, 256)


def test_refusing_unreadable_typed_data_is_linear() -> None:
    read = action_reader(prepare(Diary).tool, "keep")
    assert read is not None

    def refuse(data: Any) -> None:
        with pytest.raises(UnreadableDataError):
            read(data)

    bad = {"on": "0000-01-01", "weight": 10**400}
    assert_linear(refuse, lambda n: {"days": [{"on": "2026-01-01"}, bad] * n}, 64)


async def test_refusing_a_large_unreadable_typed_body_does_not_hold_the_loop(
    serve: Serve, loop_watchdog: LoopWatchdog, frozen_heap: None
) -> None:
    wire = await serve(TOOLS=[Diary], BODY_LIMIT=BODY, BODY_MEMORY_BUDGET=4 * BODY)
    item = b'{"on":"0000-01-01"}'
    count = (BODY - 400) // (len(item) + 1)
    params = {"name": "diary", "arguments": {"action": "keep", "data": {"days": []}}}
    head, tail = json.dumps(wire.body("tools/call", params)).encode().split(b"[]")
    body = head + b"[" + b",".join([item] * count) + b"]" + tail
    answer = await wire.alongside(wire.post(body, wire.headers("tools/call", "diary")))
    assert answer.status == 200, answer
    result = answer.json()["result"]
    assert result["isError"] is True
    refusal = json.loads(result["content"][0]["text"])
    assert refusal["error"] == "invalid_values"
    assert refusal["error_count"] == count
    assert len(refusal["errors"]) == 10
    assert refusal["errors"][0]["path"] == "data.days[0].on"
    assert len(answer.body) < 8 * 1024
    print(f"{count} refused; longest stall: {loop_watchdog.longest * 1000:.0f} ms")  # noqa: T201 - the measured figure


OPEN: dict[int, list[float]] = {}
"""Per thread: when it built the first and the last item of the batch it reads."""
READS: list[list[float]] = []
"""When each batch read began and ended (its first item, the batch)."""


@attrs.frozen
class Traced:
    s: str

    def __attrs_post_init__(self) -> None:
        now = time.perf_counter()
        OPEN.setdefault(threading.get_ident(), [now, now])[1] = now


@attrs.frozen
class TracedBatch:
    items: list[Traced]

    def __attrs_post_init__(self) -> None:
        span = OPEN.pop(threading.get_ident(), None)
        if span is not None:
            READS.append([span[0], time.perf_counter()])


class TracedBulk(Tool):
    name = "traced"
    description = "Take many items, noting which thread built them."

    @action(description="Count the items")
    async def take(self, data: TracedBatch, ctx: Context) -> dict[str, int]:
        del ctx
        return {"count": len(data.items)}


CONCURRENT = 8
"""Calls sent at once (the attack: 8 x 0.47 MiB typed calls)."""


async def test_concurrent_large_typed_calls_are_read_one_at_a_time(
    serve: Serve, loop_watchdog: LoopWatchdog, frozen_heap: None
) -> None:
    # Each structuring thread competes with the loop for the GIL: eight at once
    # held a valid client 922 ms (one: 297 ms). The engine reads them in turn.
    wire = await serve(
        TOOLS=[TracedBulk], BODY_LIMIT=BODY, BODY_MEMORY_BUDGET=CONCURRENT * BODY
    )
    item = b'{"s":""}'
    count = (BODY // CONCURRENT - 400) // (len(item) + 1)
    params = {"name": "traced", "arguments": {"action": "take", "data": {"items": []}}}
    head, tail = json.dumps(wire.body("tools/call", params)).encode().split(b"[]")
    body = head + b"[" + b",".join([item] * count) + b"]" + tail
    headers = wire.headers("tools/call", "traced")
    OPEN.clear()
    READS.clear()
    started = time.perf_counter()
    answers = await wire.alongside(
        asyncio.gather(*(wire.post(body, headers) for _ in range(CONCURRENT)))
    )
    took = time.perf_counter() - started
    for answer in answers:
        assert answer.status == 200, answer
        result = answer.json()["result"]
        assert json.loads(result["content"][0]["text"]) == {"count": count}
    print(  # noqa: T201 - the measured figure
        f"{CONCURRENT} x {len(body) / 2**20:.2f} MiB at once: {took:.2f} s;"
        f" longest stall: {loop_watchdog.longest * 1000:.0f} ms"
    )
    reads = sorted(READS)
    assert len(reads) == CONCURRENT
    overlaps = [
        (first, second)
        for first, second in itertools.pairwise(reads)
        if second[0] < first[1]
    ]
    assert overlaps == [], f"{len(overlaps) + 1} typed data read at once"
