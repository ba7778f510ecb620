"""RATE_LIMITS concurrency: a slot is held until the call's work really ends.

A call stopped by CALL_TIMEOUT (or left by its client) is answered while its
`asyncio.to_thread` runs on; the slot stays taken until that thread returns,
so a cap of 1 never lets two of the tool's threads run at once (issue 27).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

from ops_tools import Jobs
from wymcp.core.schema import Tool
from wymcp.testing import Client
from wymcp.transport.aiohttp import create_app

RELEASE = threading.Event()
RUNNING = [0, 0]
"""Threads of `Blocking` running now, and the most at once."""
_LOCK = threading.Lock()


def _block() -> str:
    with _LOCK:
        RUNNING[0] += 1
        RUNNING[1] = max(RUNNING[1], RUNNING[0])
    try:
        RELEASE.wait(10)
        return "done"
    finally:
        with _LOCK:
            RUNNING[0] -= 1


class Blocking(Tool):
    """Waits in a worker thread until the test releases it."""

    name = "blocking"
    description = "Block in a thread."
    input_schema = {"type": "object", "properties": {}}  # noqa: RUF012 - the pinned declaration style

    async def run(self, arguments: dict[str, Any], ctx: Any) -> str:
        return await asyncio.to_thread(_block)


async def test_a_timed_out_call_keeps_its_slot_until_its_thread_returns():
    RELEASE.clear()
    RUNNING[:] = [0, 0]
    app = create_app(
        TOOLS=[Blocking, Jobs],
        CALL_TIMEOUT=0.2,
        RATE_LIMITS=[{"tool": "blocking", "concurrency": 1}],
    )
    try:
        async with Client(app) as client:
            answers = [await client.call("blocking") for _ in range(4)]
            # a valid client beside it is answered meanwhile
            start = time.monotonic()
            assert not (await client.call("jobs", "run", {"size": 1})).is_error
            assert time.monotonic() - start < 2.0
            assert RUNNING == [1, 1]
            RELEASE.set()
            for _ in range(200):  # the thread returns, then its slot is freed
                await asyncio.sleep(0.01)
                if RUNNING[0] == 0:
                    break
            await asyncio.sleep(0.05)
            after = await client.call("blocking")
    finally:
        RELEASE.set()
    first, *refused = [json.loads(answer.text) for answer in answers]
    assert first["errorType"] == "call_timeout"
    assert [r["error"] for r in refused] == ["rate_limited"] * 3
    assert RUNNING[1] == 1
    assert after.value == "done"
