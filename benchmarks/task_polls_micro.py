"""In-process micro-benchmark: polls of one task with a large result.

Run: ``.venv/bin/python benchmarks/task_polls_micro.py [--polls N]``.
One task returns ~6.5 MB of JSON rows (with nulls, so `json` decides the
encoding); then ``--polls`` ``tasks/get`` go through ``Engine.post`` and are
encoded as the HTTP transport encodes answers. It prints the time the polls
held this loop in all and the slowest one (issue 29 item 10: each poll used
to encode the whole result again).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from wymcp.broker.redis._encoding import encode
from wymcp.core.schema import Tool
from wymcp.core.server import (
    MODERN,
    TASKS_EXTENSION,
    Engine,
    EngineOptions,
    Exchange,
    Headers,
)

ROWS = 60_000


class Export(Tool):
    name = "export"
    description = "Rows of an export, as a task."
    task_support = "required"

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        del arguments, ctx
        title = "é" * 20
        return {
            "rows": [
                {"id": n, "title": f"task {n} {title}", "due": None, "done": n % 2 == 0}
                for n in range(ROWS)
            ]
        }


class _Sink:
    async def open(self, headers: Any = None) -> None:
        del headers

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        del message, event_id


def exchange(method: str, params: dict[str, Any], rid: int) -> Exchange:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {TASKS_EXTENSION: {}}
        },
    }
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": method,
        "params": {**params, "_meta": meta},
    }
    name = str(params.get("taskId", params.get("name")))
    headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", method),
        ("Mcp-Name", name),
    ]
    return Exchange(method="POST", headers=Headers.of(headers), body=body)


async def main(polls: int) -> None:
    engine = Engine(tools=[Export], options=EngineOptions(result_limit=64 << 20))
    sink = _Sink()
    created = await engine.post(
        exchange("tools/call", {"name": "export", "arguments": {}}, 1), sink
    )
    task_id = created.body["result"]["taskId"]
    got = created
    for _ in range(500):
        await asyncio.sleep(0.01)
        got = await engine.post(exchange("tasks/get", {"taskId": task_id}, 2), sink)
        if got.body["result"]["status"] == "completed":
            break
    size = len(encode(got.body))
    slowest = 0.0
    began = time.perf_counter()
    for n in range(polls):
        start = time.perf_counter()
        got = await engine.post(exchange("tasks/get", {"taskId": task_id}, n), sink)
        encode(got.body)
        slowest = max(slowest, time.perf_counter() - start)
    held = time.perf_counter() - began
    print(
        f"answer {size / 1e6:.1f} MB; {polls} polls held the loop {held:.2f} s, "
        f"the slowest {slowest * 1000:.0f} ms"
    )
    await engine.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--polls", type=int, default=120)
    asyncio.run(main(parser.parse_args().polls))
