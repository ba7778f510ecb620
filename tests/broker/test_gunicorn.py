"""BROKER under gunicorn: two `GunicornWorker` processes, the official SDK client.

The demo's gunicorn command (docs/deployment.md) serves the conformance
fixture with a real Redis; the SDK client in legacy (2025-11-25) mode runs
many sessions with calls, none ends in "Session terminated", both workers
serve them, and after Redis is stopped and restarted the service resumes
without restarting gunicorn.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest
from mcp import Client

from broker.test_processes import write_settings
from gunicorn_process import gunicorn_argv
from redis_server import free_port, server_binary, start_server, stop_server

SESSIONS_PER_ROUND = 12
CALLS_PER_SESSION = 3


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[list]:
    """A Redis server this test may stop and restart (in a one-item list)."""
    folder = tmp_path / "redis"
    folder.mkdir()
    server = [start_server(server_binary(), folder)]
    try:
        yield server
    finally:
        stop_server(server[0])


def start_gunicorn(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    """The demo's command: `GunicornWorker`, two workers."""
    return subprocess.Popen(  # noqa: S603 - our own command, fixed arguments
        gunicorn_argv(port, workers=2),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.fixture
async def gunicorn(tmp_path: Path, own_redis: list) -> AsyncIterator[str]:
    port = free_port()
    process = start_gunicorn(write_settings(tmp_path, own_redis[0].url), port)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(600):
                assert process.poll() is None, "gunicorn exited"
                try:
                    async with http.get(url) as response:
                        await response.read()
                    break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def one_session(url: str, index: int) -> set[str]:
    """A whole SDK session with calls; the pids of the workers that ran them."""
    pids: set[str] = set()
    async with Client(url, mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        listed = await client.list_tools()
        assert "calc" in [tool.name for tool in listed.tools]
        for value in range(CALLS_PER_SESSION):
            result = await client.call_tool(
                "calc", {"action": "add", "data": {"a": index, "b": value}}
            )
            assert result.is_error is False, result
            assert str(index + value) in result.content[0].text
            pid = await client.call_tool("pid", {})
            pids.add(pid.content[0].text)
    return pids


async def a_round(url: str) -> set[str]:
    """Sessions four at a time; every one must end well."""
    limit = asyncio.Semaphore(4)

    async def limited(index: int) -> set[str]:
        async with limit:
            return await one_session(url, index)

    results = await asyncio.gather(*(limited(i) for i in range(SESSIONS_PER_ROUND)))
    return set().union(*results)


async def test_the_sdk_client_runs_many_sessions_on_two_gunicorn_workers(
    gunicorn, own_redis, tmp_path
):
    pids = await a_round(gunicorn)
    assert len(pids) == 2  # both workers served calls of these sessions

    port = own_redis[0].port
    stop_server(own_redis[0])
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
    }
    async with aiohttp.ClientSession() as http:
        for _ in range(4):  # each worker answers, neither hangs
            async with http.post(
                gunicorn,
                json=initialize,
                headers={"Accept": "application/json, text/event-stream"},
                timeout=aiohttp.ClientTimeout(total=30),
            ) as response:
                assert response.status == 503
                assert response.headers["Retry-After"] == "5"
    own_redis[0] = start_server(server_binary(), tmp_path / "redis", port=port)

    assert len(await a_round(gunicorn)) == 2  # the service resumed, both workers
