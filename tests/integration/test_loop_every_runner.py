"""`LOOP` picks the event loop of every runner: `wymcp serve`, the gunicorn worker
and `wymcp stdio` each serve a tool that reports its running loop's module.

`asyncio` (the default) gives the standard library's loop (`asyncio.unix_events`);
`uvloop` gives uvloop's. A runner that ignored the setting would answer the other.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from gunicorn_process import WYMCP_WORKER, free_port, start_gunicorn
from modern_post import MODERN, modern_post

TESTS = Path(__file__).resolve().parents[1]
WAIT = 60.0
BIN = Path(sys.executable).parent
LOOPS = {"asyncio": "asyncio.unix_events", "uvloop": "uvloop"}


def _env(loop: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), *sys.path])
    env["WYMCP_SETTINGS_MODULE"] = "loop_probe"
    env["WYMCP_LOOP"] = loop
    return env


async def _loop_over_http(url: str) -> str:
    body, headers = modern_post("tools/call", {"name": "which_loop", "arguments": {}})
    async with (
        aiohttp.ClientSession() as http,
        http.post(url, data=body, headers=headers) as response,
    ):
        assert response.status == 200, await response.text()
        result = (await response.json())["result"]
    assert not result.get("isError"), result
    return str(json.loads(result["content"][0]["text"])["loop"])


@pytest.mark.parametrize("loop", LOOPS)
async def test_wymcp_serve_runs_on_the_loop_named(
    loop: str, stopped: list[asyncio.subprocess.Process]
) -> None:
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        str(BIN / "wymcp"),
        "serve",
        "--port",
        str(port),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=_env(loop),
    )
    stopped.append(process)
    assert process.stdout is not None
    banner = await asyncio.wait_for(process.stdout.readline(), WAIT)
    assert banner.startswith(b"wymcp serving"), banner
    assert await _loop_over_http(f"http://127.0.0.1:{port}/mcp") == LOOPS[loop]
    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), WAIT) == 0


@pytest.mark.parametrize("loop", LOOPS)
async def test_the_gunicorn_worker_runs_on_the_loop_named(
    loop: str, stopped: list[asyncio.subprocess.Process]
) -> None:
    port = free_port()
    process = await start_gunicorn(
        port,
        worker=WYMCP_WORKER,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        env=_env(loop),
    )
    stopped.append(process)
    url = f"http://127.0.0.1:{port}/mcp"
    for _ in range(int(WAIT / 0.05)):
        try:
            answered = await _loop_over_http(url)
            break
        except aiohttp.ClientConnectionError:
            await asyncio.sleep(0.05)
    else:
        pytest.fail("gunicorn never answered")
    assert answered == LOOPS[loop]
    # the swapped loop still carries the worker's signal handlers: a clean stop
    process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(process.wait(), WAIT) == 0


@pytest.mark.parametrize("loop", LOOPS)
async def test_wymcp_stdio_runs_on_the_loop_named(
    loop: str, stopped: list[asyncio.subprocess.Process]
) -> None:
    process = await asyncio.create_subprocess_exec(
        str(BIN / "wymcp"),
        "stdio",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_env(loop),
    )
    stopped.append(process)
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "which_loop", "arguments": {}, "_meta": meta},
    }
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(json.dumps(request).encode() + b"\n")
    await process.stdin.drain()
    answer = json.loads(await asyncio.wait_for(process.stdout.readline(), WAIT))
    result = answer["result"]
    assert not result.get("isError"), result
    assert json.loads(result["content"][0]["text"])["loop"] == LOOPS[loop]
    process.stdin.close()
    assert process.stderr is not None
    _, err = await asyncio.wait_for(
        asyncio.gather(process.wait(), process.stderr.read()), WAIT
    )
    assert process.returncode == 0, err[-2000:]
