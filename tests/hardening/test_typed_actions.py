"""Typed actions under a hostile client: large data is read off the loop.

A 4 MiB body of small objects for an ``@action`` whose data is an attrs class:
cattrs builds half a million objects, which held the event loop over a second
when it ran on the loop. The loop watchdog (autouse here) and a valid client
pinging alongside must not notice.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import attrs
import pytest

from wymcp.core.schema import Context, Tool, action

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
    print(f"{count} items; longest stall: {loop_watchdog.longest * 1000:.0f} ms")  # noqa: T201
