"""In-process micro-benchmark: a trivial task against a plain ``tools/call``.

Run: ``.venv/bin/python benchmarks/tasks_micro.py [--redis] [--rounds N]``.
Every case goes through ``Engine.post`` at 2026-07-28 with the mirrored
headers, timed in CPU time of this process (steadier than wall time on a
shared machine), in ``--rounds`` pairs of back-to-back rounds of 500 calls:
the figure is the median over the pairs of task time / plain time.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
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
TARGET = 3.0
"""The task case may cost at most this many plain calls."""
COUNTED = (
    "What is counted. plain: one tools/call of a tool that answers 'ok' at once,"
    " its result checked.\n"
    "task: one tools/call of the same tool declared task_support='required'"
    " (the CreateTaskResult),\n"
    "      one turn of the event loop (asyncio.sleep(0)) in which the task runs"
    " to `completed`,\n"
    "      and one tasks/get that answers `completed` with the result inlined"
    " (checked).\n"
    "The target: task <= 3x plain, as the median over pairs of back-to-back"
    " rounds.\nEnded tasks stay in the store until their TTL, as served."
)


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


async def created(engine: Engine, sink: _Sink) -> str:
    reply = await engine.post(
        exchange("tools/call", {"name": "as_task"}, "as_task"), sink
    )
    assert reply.body is not None  # noqa: S101 - a sanity check
    assert reply.body["result"]["status"] == "working"  # noqa: S101 - a sanity check
    task_id: str = reply.body["result"]["taskId"]
    return task_id


async def task_call(engine: Engine, sink: _Sink) -> None:
    task_id = await created(engine, sink)
    await asyncio.sleep(0)  # one turn of the loop: the task runs to its end
    got = await engine.post(exchange("tasks/get", {"taskId": task_id}, task_id), sink)
    assert got.body is not None  # noqa: S101 - a sanity check
    assert got.body["result"]["status"] == "completed", got.body  # noqa: S101 - a sanity check
    kept = got.body["result"]["result"].data  # the result's JSON, written once
    assert b'"text":"ok"' in kept  # noqa: S101 - a sanity check (not decoded)


POLLS: list[int] = []
"""How many tasks/get each task on Redis took until it showed `completed`."""


async def redis_task_call(engine: Engine, sink: _Sink) -> None:
    """The same with the Redis store: poll until the background end is written."""
    task_id = await created(engine, sink)
    for poll in range(1, 1001):
        got = await engine.post(
            exchange("tasks/get", {"taskId": task_id}, task_id), sink
        )
        assert got.body is not None  # noqa: S101 - a sanity check
        if got.body["result"]["status"] == "completed":
            POLLS.append(poll)
            return
    raise AssertionError(got.body)


async def one_round(run: Any, engine: Engine, sink: _Sink, number: int) -> float:
    start = time.process_time()
    for _ in range(number):
        await run(engine, sink)
    return (time.process_time() - start) / number


def engine_of(task_store: Any = None) -> Engine:
    # Ended tasks stay until their TTL: the caps must hold every run.
    options = EngineOptions(
        max_tasks=1_000_000, max_tasks_per_principal=1_000_000, task_store=task_store
    )
    return Engine(tools=[Plain, AsTask], options=options)


async def in_memory(rounds: int) -> float:
    engine = engine_of()
    sink = _Sink()
    for run in (plain_call, task_call):
        await one_round(run, engine, sink, 300)
    plain: list[float] = []
    task: list[float] = []
    for number in range(rounds):
        # back to back, the order alternating: each pair meets the same load
        pair = (plain_call, task_call) if number % 2 == 0 else (task_call, plain_call)
        first = await one_round(pair[0], engine, sink, 500)
        second = await one_round(pair[1], engine, sink, 500)
        plain.append(first if number % 2 == 0 else second)
        task.append(second if number % 2 == 0 else first)
    await engine.aclose()
    ratios = sorted(t / p for t, p in zip(task, plain, strict=True))
    for name, values in (("plain tools/call", plain), ("task", task)):
        print(
            f"{name:18} best {min(values) * 1e6:7.1f} us  median"
            f" {statistics.median(values) * 1e6:7.1f} us CPU per call"
        )
    print(
        f"task / plain, per pair of rounds: median {statistics.median(ratios):.2f}x"
        f" (lowest {ratios[0]:.2f}x, highest {ratios[-1]:.2f}x, {rounds} pairs);"
        f" best / best {min(task) / min(plain):.2f}x"
    )
    return statistics.median(ratios)


async def on_redis(url: str, rounds: int) -> None:
    from wymcp.broker.redis._task_store import (  # noqa: PLC0415 - redis only for this case
        RedisTaskStore,
    )

    store = RedisTaskStore(
        url, max_tasks=1_000_000, max_per_principal=1_000_000, lease=10.0
    )
    engine = engine_of(store)
    sink = _Sink()
    await one_round(redis_task_call, engine, sink, 100)
    cpu: list[float] = []
    wall: list[float] = []
    for _ in range(rounds):
        began = time.perf_counter()
        cpu.append(await one_round(redis_task_call, engine, sink, 300))
        wall.append((time.perf_counter() - began) / 300)
    await engine.aclose()
    print(
        f"task on Redis (informational): best {min(cpu) * 1e6:.1f} us CPU,"
        f" {min(wall) * 1e6:.1f} us wall per task, polling tasks/get until"
        f" completed ({statistics.mean(POLLS):.2f} tasks/get per task)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--redis", action="store_true", help="also the Redis store")
    args = parser.parse_args()
    print(COUNTED)
    ratio = asyncio.run(in_memory(args.rounds))
    verdict = "PASS" if ratio <= TARGET else "MISS"
    print(f"task / plain (median of pairs) {ratio:.2f}x, target {TARGET}x: {verdict}")
    if args.redis:
        tests = str(Path(__file__).resolve().parent.parent / "tests")
        if tests not in sys.path:
            sys.path.insert(0, tests)
        from redis_server import server_binary, start_server, stop_server  # noqa: PLC0415 - a test helper, only when run

        with tempfile.TemporaryDirectory() as workdir:
            server = start_server(server_binary(), Path(workdir))
            try:
                asyncio.run(on_redis(server.url, args.rounds))
            finally:
                stop_server(server)


if __name__ == "__main__":
    main()
