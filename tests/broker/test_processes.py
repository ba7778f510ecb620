"""Two `wymcp serve` processes sharing one Redis behind a round-robin proxy.

The official SDK client in legacy (2025-11-25) mode runs whole sessions
through the proxy, each request landing on the other process than the one
before; with `BROKER` none of them fails.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from mcp import Client

from redis_server import free_port
from sse_events import next_event

_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}
)


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _serve(command: Path, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # noqa: S603 - our own command, fixed arguments
        [str(command), "serve", "--settings", "brokered_settings", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


SETTINGS = """
from wymcp.core.schema import Tool
from wymcp_conformance.settings import *  # noqa: F403 - extends it

class Touch(Tool):
    name = "touch"
    description = "Tell subscribers the watched resource changed."
    input_schema = {"type": "object", "properties": {}}

    async def run(self, arguments, ctx):
        ctx.server.resource_updated("test://watched-resource")
        return "touched"

class Pid(Tool):
    name = "pid"
    description = "Answer the serving process id."
    input_schema = {"type": "object", "properties": {}}

    async def run(self, arguments, ctx):
        import os
        return str(os.getpid())

class Linger(Tool):
    name = "linger"
    description = "End the POST stream early, then work for a minute."
    input_schema = {"type": "object", "properties": {}}

    async def run(self, arguments, ctx):
        import asyncio
        await ctx.close_stream()
        await asyncio.sleep(60)
        return "done"

TOOLS = [  # noqa: F405 - names from the star import
    *TOOLS,
    "brokered_settings.Touch",
    "brokered_settings.Pid",
    "brokered_settings.Linger",
]
BROKER = %r
"""


def write_settings(folder: Path, redis_url: str) -> dict[str, str]:
    """The conformance fixture plus `touch`, with BROKER; the env that finds it."""
    (folder / "brokered_settings.py").write_text(SETTINGS % redis_url, "utf-8")
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(folder), *sys.path]),
        "WYMCP_SETTINGS_MODULE": "brokered_settings",
    }


@pytest.fixture
def fleet(
    tmp_path: Path, redis_url: str
) -> Iterator[tuple[list[str], list[subprocess.Popen[bytes]]]]:
    """Two `wymcp serve` processes of the conformance fixture with BROKER."""
    env = write_settings(tmp_path, redis_url)
    command = Path(sys.executable).parent / "wymcp"
    processes: list[subprocess.Popen[bytes]] = []
    ports = [free_port(), free_port()]
    try:
        processes.extend(_serve(command, port, env) for port in ports)
        for port, process in zip(ports, processes, strict=True):
            for _ in range(3000):
                if _listening(port) or process.poll() is not None:
                    break
                time.sleep(0.01)
            assert process.poll() is None, "wymcp serve exited"
        yield [f"http://127.0.0.1:{port}" for port in ports], processes
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def workers(fleet: tuple[list[str], list[subprocess.Popen[bytes]]]) -> list[str]:
    """The base URLs of the two processes."""
    return fleet[0]


@pytest.fixture
async def proxy(workers: list[str]) -> AsyncIterator[tuple[str, list[int]]]:
    """A round-robin reverse proxy: each request goes to the next worker."""
    turn = itertools.cycle(range(len(workers)))
    served = [0] * len(workers)
    session = aiohttp.ClientSession(auto_decompress=False)

    async def forward(request: web.Request) -> web.StreamResponse:
        index = next(turn)
        served[index] += 1
        headers = {
            k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP
        }
        async with session.request(
            request.method,
            workers[index] + request.rel_url.path,
            headers=headers,
            data=await request.read(),
        ) as answer:
            response = web.StreamResponse(status=answer.status)
            for name, value in answer.headers.items():
                if name.lower() not in _HOP_BY_HOP:
                    response.headers[name] = value
            await response.prepare(request)
            async for chunk in answer.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response

    app = web.Application()
    app.router.add_route("*", "/mcp", forward)
    runner = web.AppRunner(app, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        yield f"http://{host}:{port}/mcp", served
    finally:
        await runner.cleanup()
        await session.close()


async def test_the_sdk_client_runs_sessions_across_two_processes(proxy):
    url, served = proxy
    for round_ in range(6):
        async with Client(url, mode="legacy") as client:
            assert client.protocol_version == "2025-11-25"
            listed = await client.list_tools()
            assert "calc" in [tool.name for tool in listed.tools]
            for value in range(3):
                result = await client.call_tool(
                    "calc", {"action": "add", "data": {"a": round_, "b": value}}
                )
                assert result.is_error is False, result
                assert str(round_ + value) in result.content[0].text
    assert min(served) > 10  # both processes served a share of every session


# ------------------------------------------------- streams across processes

LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


class RawSession:
    """A 2025-11-25 session over plain HTTP, each request to the URL it names."""

    def __init__(self, http: aiohttp.ClientSession) -> None:
        self.http = http
        self.sid = ""
        self.rid = 0

    def headers(self, **extra: str) -> dict[str, str]:
        return {
            "Accept": ACCEPT,
            "Mcp-Session-Id": self.sid,
            "MCP-Protocol-Version": LEGACY,
            **extra,
        }

    async def start(self, base: str) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}},
        }
        async with self.http.post(
            base + "/mcp", json=body, headers={"Accept": ACCEPT}
        ) as response:
            assert response.status == 200
            self.sid = response.headers["Mcp-Session-Id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with self.http.post(
            base + "/mcp", json=note, headers=self.headers()
        ) as response:
            assert response.status == 202

    async def request(self, base: str, method: str, params: dict[str, Any]) -> Any:
        self.rid += 1
        body = {"jsonrpc": "2.0", "id": self.rid, "method": method, "params": params}
        async with self.http.post(
            base + "/mcp", json=body, headers=self.headers()
        ) as response:
            assert response.status == 200, await response.text()
            text = await response.text()
        if response.content_type == "text/event-stream":
            text = [line for line in text.splitlines() if line.startswith("data: ")][
                -1
            ].removeprefix("data: ")
        return json.loads(text)

    async def get(self, base: str, last: str | None = None) -> Any:
        headers = self.headers(Accept="text/event-stream")
        if last is not None:
            headers["Last-Event-ID"] = last
        response = await self.http.get(base + "/mcp", headers=headers)
        assert response.status == 200
        return response


def method_of(event: dict[str, str]) -> str:
    return str(json.loads(event["data"])["method"])


async def test_changes_made_on_one_process_reach_the_get_stream_on_the_other(
    workers,
):
    one, two = workers
    async with aiohttp.ClientSession() as http:
        session = RawSession(http)
        await session.start(one)
        subscribed = await session.request(
            two, "resources/subscribe", {"uri": "test://watched-resource"}
        )
        assert "result" in subscribed
        stream = await session.get(one)
        assert (await next_event(stream))["data"] == ""
        await asyncio.sleep(0.3)  # process one listens to Redis by now
        await session.request(two, "tools/call", {"name": "test_trigger_tool_change"})
        assert method_of(await next_event(stream)) == (
            "notifications/tools/list_changed"
        )
        await session.request(two, "tools/call", {"name": "touch"})
        updated = json.loads((await next_event(stream))["data"])
        assert updated["method"] == "notifications/resources/updated"
        assert updated["params"]["uri"] == "test://watched-resource"
        stream.close()


async def test_a_stream_resumes_on_the_other_process_after_its_process_dies(
    fleet,
):
    (one, two), processes = fleet
    async with aiohttp.ClientSession() as http:
        session = RawSession(http)
        await session.start(one)
        stream = await session.get(two)
        priming = await next_event(stream)
        await asyncio.sleep(0.3)
        for _ in range(2):  # two changes, tools/list between: two events
            await session.request(
                one, "tools/call", {"name": "test_trigger_tool_change"}
            )
            await session.request(one, "tools/list", {})
        # wait until process two has written both (into Redis, then the socket)
        missed = [await next_event(stream), await next_event(stream)]
        processes[1].kill()  # mid-stream: the client saw only the priming event
        processes[1].wait()
        stream.close()

        resumed = await session.get(one, last=priming["id"])
        replayed = [await next_event(resumed), await next_event(resumed)]
        assert replayed == missed
        assert [method_of(e) for e in replayed] == [
            "notifications/tools/list_changed"
        ] * 2
        resumed.close()


async def test_a_resumed_post_stream_ends_when_the_process_running_its_call_dies(
    fleet,
):
    """Issue 29: every resumed stream ends with its call, even a killed one.

    The call's lease lapses with its process; the stream resuming it on the
    other process ends within the lease and a check (about 15 s), not after
    the 30 min idle timeout.
    """
    (one, two), processes = fleet
    async with aiohttp.ClientSession() as http, aiohttp.ClientSession() as side:
        session = RawSession(http)
        await session.start(one)
        body = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "linger", "arguments": {}},
        }
        response = await side.post(one + "/mcp", json=body, headers=session.headers())
        priming = await next_event(response)
        assert priming["id"].startswith("r-")
        assert await response.content.read() == b""  # ended; the call goes on

        resumed = await session.get(two, last=priming["id"])
        processes[0].kill()  # the process running the call dies
        processes[0].wait()
        started = time.monotonic()
        rest = await asyncio.wait_for(resumed.content.read(), 40)
        assert b'"id":5' not in rest  # no answer: the call died with its process
        assert time.monotonic() - started < 30
