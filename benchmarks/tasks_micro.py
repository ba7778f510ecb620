"""In-process micro-benchmark: a trivial task against a plain ``tools/call``.

Run: ``.venv/bin/python benchmarks/tasks_micro.py``. Both go through
``Engine.post`` at 2026-07-28 with the mirrored headers. The task figure is
one ``tools/call`` that creates the task, the background run to completion,
and one ``tasks/get`` that reads the result; the plain figure is one
``tools/call`` of the same tool declared without task support. Prints the
best-of-N microseconds per call and the ratio (the target is at most 3x).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from wymcp.core.schema import Tool
from wymcp.core.server import (
    MODERN,
    TASKS_EXTENSION,
    Engine,
    EngineOptions,
    Exchange,
    Headers,
)

CAPS = {"extensions": {TASKS_EXTENSION: {}}}


class Plain(Tool):
    name = "plain"
    description = "Echo, in the request."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        del arguments, ctx
        return "ok"


class AsTask(Tool):
    name = "as_task"
    description = "Echo, as a task."
    task_support = "required"

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        del arguments, ctx
        return "ok"


class _Sink:
    async def open(self, headers: Any = None) -> None:
        del headers

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        del message, event_id


def exchange(method: str, params: dict[str, Any], name: str) -> Exchange:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": CAPS,
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {**params, "_meta": meta},
    }
    headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", method),
        ("Mcp-Name", name),
    ]
    return Exchange(method="POST", headers=Headers.of(headers), body=body)


async def plain_call(engine: Engine, sink: _Sink) -> None:
    reply = await engine.post(exchange("tools/call", {"name": "plain"}, "plain"), sink)
    assert reply.body is not None  # noqa: S101 - a sanity check
    assert reply.body["result"]["content"][0]["text"] == "ok"  # noqa: S101 - a sanity check


async def task_call(engine: Engine, sink: _Sink) -> None:
    reply = await engine.post(
        exchange("tools/call", {"name": "as_task"}, "as_task"), sink
    )
    assert reply.body is not None  # noqa: S101 - a sanity check
    task_id = reply.body["result"]["taskId"]
    await asyncio.sleep(0)  # one turn of the loop: the task's run starts and ends
    got = await engine.post(exchange("tasks/get", {"taskId": task_id}, task_id), sink)
    assert got.body is not None  # noqa: S101 - a sanity check
    assert got.body["result"]["status"] == "completed", got.body  # noqa: S101 - a sanity check
    assert got.body["result"]["result"]["content"][0]["text"] == "ok"  # noqa: S101 - a sanity check


async def task_created_and_completed(engine: Engine, sink: _Sink) -> None:
    reply = await engine.post(
        exchange("tools/call", {"name": "as_task"}, "as_task"), sink
    )
    assert reply.body is not None  # noqa: S101 - a sanity check
    task_id = reply.body["result"]["taskId"]
    await asyncio.sleep(0)  # one turn of the loop: the task's run starts and ends
    record = await engine._tasks.store.get(task_id, None)  # noqa: SLF001 - checks the end
    assert record is not None  # noqa: S101 - a sanity check
    assert record.status == "completed"  # noqa: S101 - a sanity check


async def best_of(
    run: Any, engine: Engine, *, repeat: int, number: int
) -> tuple[float, float]:
    sink = _Sink()
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            await run(engine, sink)
        rounds.append((time.perf_counter() - start) / number)
    return min(rounds), statistics.median(rounds)


async def main() -> None:
    # Finished tasks stay until their TTL: the caps must hold every run.
    options = EngineOptions(max_tasks=100_000, max_tasks_per_principal=100_000)
    engine = Engine(tools=[Plain, AsTask], options=options)
    runs = {
        "plain tools/call": plain_call,
        "task: create + run to completed": task_created_and_completed,
        "task: create + run + tasks/get": task_call,
    }
    for run in runs.values():
        await best_of(run, engine, repeat=2, number=200)
    best: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(5):  # interleaved, so a busy moment hits every case alike
        for name, run in runs.items():
            best[name].append((await best_of(run, engine, repeat=1, number=1000))[0])
    plain = min(best["plain tools/call"])
    for name, figures in best.items():
        low, mid = min(figures), statistics.median(figures)
        print(
            f"{name:34} best {low * 1e6:7.1f} us  median {mid * 1e6:7.1f} us"
            f"  {low / plain:4.2f}x plain"
        )
    await engine.aclose()


if __name__ == "__main__":
    asyncio.run(main())
