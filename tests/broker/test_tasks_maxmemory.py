"""Task results and Redis `maxmemory` (issue 29, item 11), on a Valkey of its own.

Redis checks `maxmemory` only at a script's first write: a script that wrote
small keys first could write a result of any size past it. The result is now
each end script's first write, and the ended tasks are bound by
TASK_MEMORY_BUDGET before any write, so Redis stays within `maxmemory` and
other writes (a new session) still succeed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

import pytest
import redis.asyncio as aioredis

from loop_watchdog import LoopWatchdog
from redis_server import RedisServer, server_binary, start_server, stop_server
from task_store_contract import blob, record
from task_wire import create, until
from wymcp.broker.redis._task_store import KEPT_BYTES, RedisTaskStore
from wymcp.core.schema import Tool
from wymcp.transport.aiohttp import create_app

MIB = 1024 * 1024
MAXMEMORY = 16 * MIB
RESULT = MIB
TASKS = 30
"""30 results of 1 MiB: almost twice `MAXMEMORY`."""


@pytest.fixture(scope="module")
def small_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A server of this module's own, its `maxmemory` set low per test."""
    server = start_server(server_binary(), tmp_path_factory.mktemp("small-redis"))
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture
async def raw(small_redis: RedisServer) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(small_redis.url)
    await client.config_set("maxmemory", 0)
    await client.flushall()
    await client.config_set("maxmemory-policy", "noeviction")
    try:
        yield client
    finally:
        await client.config_set("maxmemory", 0)
        await client.flushall()
        await client.aclose()


async def used(raw: aioredis.Redis) -> int:
    info = await raw.info("memory")
    return int(info["used_memory"])


async def run_tasks(store: RedisTaskStore, count: int) -> list[str]:
    """`count` tasks of one caller, each ending with a 1 MiB result; their ends."""
    statuses = []
    for _ in range(count):
        task = record("sub:exporter")
        await store.create(task)
        await store.finish(task.task_id, "completed", at=1.0, result=blob(RESULT))
        shown = await store.get(task.task_id, "sub:exporter")
        assert shown is not None
        statuses.append(shown.status)
    return statuses


async def test_results_never_take_redis_past_maxmemory(small_redis, raw):
    """Other data fills Redis before the budget is reached: Redis's own
    `maxmemory` check must stop the results."""
    await raw.config_set("maxmemory", MAXMEMORY)
    for n in range(10):  # 10 MiB of sessions and the like
        await raw.set(f"other:{n}", b"x" * MIB)
    store = RedisTaskStore(
        small_redis.url,
        max_tasks=1000,
        max_per_principal=1000,
        lease=10.0,
        memory=1024 * MIB,
        memory_per_principal=1024 * MIB,
    )
    try:
        ends = await run_tasks(store, TASKS)
        peak = await used(raw)
        print(f"used_memory after {TASKS} results: {peak / MIB:.1f} MiB")  # noqa: T201 - the measured figure
        assert peak <= MAXMEMORY + 2 * RESULT  # one result past it, at most
        assert "failed" in ends  # the ones Redis refused end saying why
        failed = [
            await store.get(task_id, "sub:exporter")
            for task_id in await _failed_ids(raw)
        ]
        assert failed
        for task in failed:
            assert task is not None
            assert task.error is not None
            assert "out of memory (maxmemory)" in task.error["message"]
    finally:
        await store.aclose()


async def _failed_ids(raw: aioredis.Redis) -> list[str]:
    return [
        key.decode().removeprefix("wymcp:task:")
        async for key in raw.scan_iter(match="wymcp:task:*")
        if await raw.hget(key, "s") == b"failed"
    ]


async def test_the_budget_keeps_room_for_everything_else(small_redis, raw):
    """TASK_MEMORY_BUDGET below `maxmemory`: results stay in it, sessions fit."""
    await raw.config_set("maxmemory", MAXMEMORY)
    store = RedisTaskStore(
        small_redis.url,
        max_tasks=1000,
        max_per_principal=1000,
        lease=10.0,
        memory=8 * MIB,
        memory_per_principal=4 * MIB,
    )
    try:
        before = await used(raw)
        ends = await run_tasks(store, TASKS)
        grown = await used(raw) - before
        print(f"{TASKS} results of 1 MiB grew Redis by {grown / MIB:.1f} MiB")  # noqa: T201 - the measured figure
        assert ends == ["completed"] * TASKS  # the oldest made room
        assert int(await raw.hget(KEPT_BYTES, "*") or 0) <= 4 * MIB
        assert grown <= 4 * MIB + 2 * RESULT
        assert await raw.set("wymcp:session:other", b"x" * 1024)  # still writable
        tasks = await run_tasks(store, 2 * TASKS)  # twice as many: no more memory
        assert tasks == ["completed"] * 2 * TASKS
        assert await used(raw) - before <= 4 * MIB + 2 * RESULT
    finally:
        await store.aclose()


class Export(Tool):
    name = "export"
    description = "Returns RESULT bytes of text, as a task."
    task_support = "required"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return str(arguments.get("n", 0) % 10) * RESULT


async def test_exports_leave_room_for_new_sessions(
    small_redis, raw, aiohttp_client, loop_watchdog: LoopWatchdog
):
    """The issue's run, scaled down: after 30 exports, `initialize` still works.

    The default TASK_MEMORY_BUDGET is far above this `maxmemory`: the store
    keeps the ended tasks within half of it.
    """
    del loop_watchdog  # on: nothing here may hold the loop
    await raw.config_set("maxmemory", MAXMEMORY)
    client = await aiohttp_client(
        create_app(
            TOOLS=[Export],
            BROKER=small_redis.url,
            STATE_SECRETS=["s" * 32],
            RESULT_LIMIT=2 * MIB,
        )  # the default budgets (256 MiB): fitted to half of maxmemory
    )
    for n in range(TASKS):
        task_id = await create(client, "/mcp", "export", {"n": n})
        await until(client, "/mcp", task_id, {"completed"})
    assert await used(raw) <= MAXMEMORY
    response = await client.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert response.status == 200, await response.text()
    assert response.headers["Mcp-Session-Id"]


async def test_concurrent_ends_stay_within_maxmemory(small_redis, raw):
    """Issue 29, attack F3: many tasks ending at once on one worker.

    Each end script's result argument sat in a Redis query buffer before
    any script ran: 32 ends of 8 MiB took Redis to 298 MiB against 64 MB and
    new sessions failed. Large ends now go to Redis one at a time per
    worker, each checked against `maxmemory` before its bytes are sent.
    """
    await raw.config_set("maxmemory", MAXMEMORY)
    store = RedisTaskStore(
        small_redis.url,
        max_tasks=1000,
        max_per_principal=1000,
        lease=10.0,
    )  # the default budgets, fitted to half of maxmemory (8 MiB)
    size = 2 * RESULT
    try:
        tasks = [record("sub:exporter") for _ in range(16)]  # 32 MiB at once
        for task in tasks:
            await store.create(task)
        await raw.config_resetstat()
        base = int((await raw.info("memory"))["used_memory_peak"])
        await asyncio.gather(
            *(
                store.finish(task.task_id, "completed", at=1.0, result=blob(size))
                for task in tasks
            )
        )
        peak = int((await raw.info("memory"))["used_memory_peak"])
        shown = [await store.get(task.task_id, "sub:exporter") for task in tasks]
        figure = f"peak {peak / MIB:.1f} MiB (from {base / MIB:.1f})"
        print(f"16 concurrent ends of 2 MiB: {figure}")  # noqa: T201 - the measured figure
        assert peak <= MAXMEMORY + 2 * size
        assert await raw.set("wymcp:session:other", b"x" * 1024)  # still writable
        kept = [task for task in shown if task is not None]
        assert kept  # the newest ended tasks are kept, the oldest made room
        assert {task.status for task in kept} == {"completed"}
    finally:
        await store.aclose()
