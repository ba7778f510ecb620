"""In-process micro-benchmark: one ``tools/call`` through ``Engine.post``, both eras.

Run: ``.venv/bin/python benchmarks/engine_micro.py [N]``. The same ``calc add``
call goes through the engine at 2026-07-28 (``_meta`` and mirrored headers) and
in a 2025-11-25 session (opened once); prints best-of-5 microseconds per call,
wall clock and process CPU (a busy neighbour inflates the first, not the second).
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from bench_wymcp_tools import Calc
from wymcp.core.server import MODERN, Engine, Exchange, Headers

SESSION = "2025-11-25"
ARGUMENTS = {"action": "add", "data": {"a": 1, "b": 2}}


class _Sink:
    """A stream nothing is written to (the calls answer plain JSON)."""

    opened = False

    async def open(self, headers: Any = None) -> None:
        del headers

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        del message, event_id


def modern_exchange() -> Exchange:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "calc",
            "arguments": ARGUMENTS,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "calc"),
    ]
    return Exchange(method="POST", headers=Headers.of(headers), body=body)


async def session_exchange(engine: Engine, sink: _Sink) -> Exchange:
    opened = await engine.post(
        Exchange(
            method="POST",
            headers=Headers.of([]),
            body={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": SESSION,
                    "capabilities": {},
                    "clientInfo": {"name": "micro", "version": "1"},
                },
            },
        ),
        sink,
    )
    sid = opened.headers["Mcp-Session-Id"]
    headers = Headers.of([("Mcp-Session-Id", sid), ("MCP-Protocol-Version", SESSION)])
    await engine.post(
        Exchange(
            method="POST",
            headers=headers,
            body={"jsonrpc": "2.0", "method": "notifications/initialized"},
        ),
        sink,
    )
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "calc", "arguments": ARGUMENTS},
    }
    return Exchange(method="POST", headers=headers, body=body)


async def measure(
    engine: Engine, exchange: Exchange, sink: _Sink, number: int
) -> tuple[float, float]:
    """Best-of-5 (wall, CPU) microseconds per call over `number` calls."""
    reply = await engine.post(exchange, sink)
    assert reply.body["result"]["content"][0]["text"] == "3", reply.body  # noqa: S101 - a sanity check
    best_wall = best_cpu = float("inf")
    for _ in range(5):
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(number):
            await engine.post(exchange, sink)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall / number * 1e6, best_cpu / number * 1e6


async def main(number: int) -> None:
    sink = _Sink()
    engine = Engine(tools=[Calc])
    runs = [
        (f"{MODERN} tools/call", modern_exchange()),
        (f"{SESSION} tools/call", await session_exchange(engine, sink)),
    ]
    for label, exchange in runs:
        wall, cpu = await measure(engine, exchange, sink, number)
        print(f"{label:24} {wall:7.1f} us/call wall  {cpu:7.1f} us/call CPU")
    await engine.aclose()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000))
