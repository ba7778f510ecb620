"""Tasks with BROKER inside one process: two apps (two workers) on one Redis,
a worker that stops cleanly, and Redis out of reach.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest
import redis.asyncio as aioredis

from redis_server import free_port
from task_wire import create, get, send, until
from wymcp.core.schema import Tool
from wymcp.transport.aiohttp import create_app

SECRET = "s" * 32


class Waiting(Tool):
    name = "waiting"
    description = "Waits until cancelled, as a task."
    task_support = "required"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        await ctx.report_progress(1, 3, "Counting")
        await asyncio.Event().wait()
        return None


class Echo(Tool):
    name = "echo"
    description = "Echoes, in the request."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return "echo"


def app(broker: str, **overrides: Any):
    return create_app(
        TOOLS=[Waiting, Echo], BROKER=broker, STATE_SECRETS=[SECRET], **overrides
    )


@pytest.fixture
async def db(redis_url: str) -> str:
    """Database 3, emptied: ended tasks of other tests count until their TTL."""
    url = redis_url.rsplit("/", 1)[0] + "/3"
    client = aioredis.Redis.from_url(url)
    try:
        await client.flushdb()
    finally:
        await client.aclose()
    return url


async def test_progress_shows_on_the_other_worker(aiohttp_client, db):
    one = await aiohttp_client(app(db))
    two = await aiohttp_client(app(db))
    task_id = await create(one, "/mcp", "waiting", {})
    shown = await until(two, "/mcp", task_id, {"working"})
    for _ in range(100):
        if "statusMessage" in shown:
            break
        await asyncio.sleep(0.02)
        shown = await get(two, "/mcp", task_id)
    assert shown["statusMessage"] == "Counting (1 of 3)"
    await send(two, "/mcp", "tasks/cancel", {"taskId": task_id})


async def test_a_worker_that_stops_fails_its_tasks_for_the_others(aiohttp_client, db):
    one = await aiohttp_client(app(db))
    two = await aiohttp_client(app(db))
    task_id = await create(one, "/mcp", "waiting", {})
    await one.close()  # a clean stop: the engine ends its tasks in Redis
    failed = await get(two, "/mcp", task_id)
    assert failed["status"] == "failed"
    assert "server stopped" in failed["error"]["message"]


async def test_the_caps_count_tasks_on_every_worker(aiohttp_client, db):
    caps = {"MAX_TASKS": 1000, "MAX_TASKS_PER_PRINCIPAL": 2}
    one = await aiohttp_client(app(db, **caps))
    two = await aiohttp_client(app(db, **caps))
    first = await create(one, "/mcp", "waiting", {})
    second = await create(two, "/mcp", "waiting", {})
    status, headers, body = await send(
        one, "/mcp", "tools/call", {"name": "waiting", "arguments": {}}
    )
    assert (status, headers["Retry-After"]) == (503, "5")
    assert "Too many tasks" in body["error"]["message"]
    for task_id in (first, second):
        await send(two, "/mcp", "tasks/cancel", {"taskId": task_id})


async def test_redis_down_answers_task_requests_503_and_serves_the_rest(
    aiohttp_client,
):
    client = await aiohttp_client(app(f"redis://127.0.0.1:{free_port()}/0"))
    status, headers, body = await send(
        client, "/mcp", "tools/call", {"name": "waiting", "arguments": {}}, rid=4
    )
    assert (status, headers["Retry-After"], body["id"]) == (503, "5", 4)
    assert "task store cannot be reached" in body["error"]["message"]
    for method in ("tasks/get", "tasks/cancel", "tasks/update"):
        params = {"taskId": "a" * 32, "inputResponses": {}}
        status, headers, body = await send(client, "/mcp", method, params)
        assert (status, headers["Retry-After"]) == (503, "5"), body
    status, _, body = await send(
        client, "/mcp", "tools/call", {"name": "echo", "arguments": {}}
    )
    assert status == 200
    assert body["result"]["content"][0]["text"] == "echo"
