"""One anonymous client floods the tasks extension beside a valid client.

Issue 29, items 10 and 12: instantly cancelled task calls, large results and
many polls of them from one address must not lock another address out of
tasks, grow memory past the budgets, or hold the loop (the watchdog is on).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import socket
import time
import tracemalloc
from collections.abc import AsyncIterator
from typing import Any, ClassVar
from urllib.parse import urlsplit

import aiohttp
import pytest

from served import ServeApp
from task_wire import create, get, send, task_request, until
from wymcp.core.schema import Tool
from wymcp.transport.aiohttp import create_app

MIB = 1024 * 1024
RESULT = MIB
"""The text of each export: results of about 1 MiB of JSON."""
LATENCY_BOUND = 2.0
"""Seconds the valid client's call may take while the flood runs (generous)."""


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


class Waiting(Tool):
    name = "waiting"
    description = "Runs until cancelled, as a task."
    task_support = "required"

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        await asyncio.Event().wait()
        return None


class Echo(Tool):
    name = "echo"
    description = "Answers in the request."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return "echo"


@pytest.fixture
async def url(serve_app: ServeApp) -> str:
    app = create_app(
        TOOLS=[Export, Waiting, Echo],
        STATE_SECRETS=["s" * 32],
        MAX_TASKS_PER_PRINCIPAL=5,
        RESULT_LIMIT=2 * MIB,
        TASK_MEMORY_BUDGET=16 * MIB,
        TASK_MEMORY_BUDGET_PER_PRINCIPAL=4 * MIB,
    )
    return await serve_app(app)


@pytest.fixture
async def clients() -> AsyncIterator[tuple[aiohttp.ClientSession, ...]]:
    """The flooder (from 127.0.0.2) and the valid client (from 127.0.0.1)."""
    flooder = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(local_addr=("127.0.0.2", 0), limit=64)
    )
    valid = aiohttp.ClientSession()
    try:
        yield flooder, valid
    finally:
        await flooder.close()
        await valid.close()


async def flood(flooder: aiohttp.ClientSession, url: str) -> list[int]:
    """100 cancelled calls, 12 exports, then 60 polls at once of the newest."""
    statuses = []
    for _ in range(100):
        task_id = await create(flooder, url, "waiting", {})
        status, _, _ = await send(flooder, url, "tasks/cancel", {"taskId": task_id})
        statuses.append(status)
    newest = ""
    for n in range(12):
        newest = await create(flooder, url, "export", {"n": n})
        await until(flooder, url, newest, {"completed"})
    polls = await asyncio.gather(*(get(flooder, url, newest) for _ in range(60)))
    assert {poll["status"] for poll in polls} == {"completed"}
    return statuses


async def serve_valid(valid: aiohttp.ClientSession, url: str, done: asyncio.Event):
    """Call and run tasks until the flood is done; the slowest call's seconds."""
    slowest = 0.0
    while not done.is_set():
        began = time.perf_counter()
        status, _, body = await send(
            valid, url, "tools/call", {"name": "echo", "arguments": {}}
        )
        assert status == 200, body
        task_id = await create(valid, url, "export", {"n": 7})
        shown = await until(valid, url, task_id, {"completed"})
        assert shown["result"]["content"][0]["text"] == "7" * RESULT
        slowest = max(slowest, time.perf_counter() - began)
        await asyncio.sleep(0.02)
    return slowest


async def test_a_task_flood_from_one_address_leaves_another_served(url, clients):
    flooder, valid = clients
    done = asyncio.Event()
    beside = asyncio.ensure_future(serve_valid(valid, url, done))
    try:
        statuses = await flood(flooder, url)
    finally:
        done.set()
    slowest = await beside
    print(f"the valid client's slowest call and task: {slowest:.3f} s")  # noqa: T201 - the measured figure
    assert statuses == [200] * 100  # cancelled tasks do not hold the caller's slots
    assert slowest < LATENCY_BOUND
    # the flooder's five running tasks fill its own cap, not the valid client's
    held = [await create(flooder, url, "waiting", {}) for _ in range(5)]
    status, headers, body = await send(
        flooder, url, "tools/call", {"name": "waiting", "arguments": {}}
    )
    assert status == 503, body
    assert headers["Retry-After"] == "5"
    assert "this caller runs as many tasks" in body["error"]["message"]
    assert await create(valid, url, "waiting", {})
    for task_id in held:
        await send(flooder, url, "tasks/cancel", {"taskId": task_id})


async def unread_poll(url: str, task_id: str) -> asyncio.StreamWriter:
    """`tasks/get` on a connection with a 4 KiB receive buffer that never reads."""
    address = urlsplit(url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    port = address.port
    assert port is not None
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    _, writer = await asyncio.open_connection(sock=sock)
    body, headers = task_request("tasks/get", {"taskId": task_id})
    head = [f"POST {address.path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    head += [f"{name}: {value}" for name, value in headers.items()]
    head.append(f"Content-Length: {len(body.encode())}")
    writer.write(("\r\n".join(head) + "\r\n\r\n" + body).encode())
    await writer.drain()
    return writer


def traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def settled() -> int:
    """The traced memory once the polls' answers are written and wait."""
    last = -1
    for _ in range(100):
        await asyncio.sleep(0.05)
        now = traced()
        if abs(now - last) < 64 * 1024:
            return now
        last = now
    return last


async def test_unread_polls_of_one_result_share_its_bytes(url, clients):
    """Issue 29, attack F1: each unread poll held a copy of the kept result.

    A 1 MiB result polled by 8, then 16 connections that never read: each
    answer hands the connection slices of the kept bytes, so the polls add
    a few slices each, not a result each (before: ~2 MiB per poll). A valid
    client is served beside them.
    """
    _, valid = clients
    task_id = await create(valid, url, "export", {"n": 3})
    await until(valid, url, task_id, {"completed"})
    writers: list[asyncio.StreamWriter] = []
    tracemalloc.start()
    try:
        before = traced()
        writers += [await unread_poll(url, task_id) for _ in range(8)]
        once = await settled() - before
        writers += [await unread_poll(url, task_id) for _ in range(8)]
        twice = await settled() - before
        began = time.perf_counter()
        shown = await get(valid, url, task_id)
        latency = time.perf_counter() - began
    finally:
        tracemalloc.stop()
        for writer in writers:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
    print(f"8 unread polls of 1 MiB: +{once / MIB:.2f} MiB; 16: +{twice / MIB:.2f} MiB")  # noqa: T201 - the measured figure
    assert shown["result"]["content"][0]["text"] == "3" * RESULT
    assert latency < LATENCY_BOUND
    assert once < 8 * 256 * 1024
    assert twice - once < 8 * 256 * 1024
