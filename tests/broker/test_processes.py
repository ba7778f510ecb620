"""Two `wymcp serve` processes sharing one Redis behind a round-robin proxy.

The official SDK client in legacy (2025-11-25) mode runs whole sessions
through the proxy, each request landing on the other process than the one
before; with `BROKER` none of them fails.
"""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from mcp import Client

from redis_server import free_port

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


@pytest.fixture
def workers(tmp_path: Path, redis_url: str) -> Iterator[list[str]]:
    """Two `wymcp serve` processes of the conformance fixture with BROKER."""
    (tmp_path / "brokered_settings.py").write_text(
        textwrap.dedent(f"""
            from wymcp_conformance.settings import *  # noqa: F403
            BROKER = {redis_url!r}
        """),
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
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
        yield [f"http://127.0.0.1:{port}" for port in ports]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


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
