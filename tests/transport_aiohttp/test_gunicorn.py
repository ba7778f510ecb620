"""create_app() as a gunicorn factory under aiohttp's worker, two workers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

import aiohttp

from gunicorn_process import (
    AIOHTTP_WORKER,
    WYMCP_WORKER,
    free_port,
    gunicorn_argv,
    start_gunicorn,
)

MODERN = "2026-07-28"


async def test_two_gunicorn_workers_serve_the_endpoint(tmp_path: Path):
    (tmp_path / "gunicorn_wymcp_settings.py").write_text(
        'SERVER_NAME = "under-gunicorn"\nSTATE_SECRET = "s" * 32\n', encoding="utf-8"
    )
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
        "WYMCP_SETTINGS_MODULE": "gunicorn_wymcp_settings",
    }
    process = await start_gunicorn(
        port,
        worker=AIOHTTP_WORKER,
        workers=2,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"}
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(400):
                try:
                    async with http.post(url, json=body, headers=headers) as response:
                        status = response.status
                        answer = await response.json()
                    break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
            assert status == 200
            assert "under-gunicorn" in json.dumps(answer)
            statuses = set()
            for _ in range(20):
                async with http.post(url, json=body, headers=headers) as response:
                    statuses.add(response.status)
            assert statuses == {200}
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 60)
    assert process.returncode == 0


HANG_TOOL = """
import asyncio
import os
from pathlib import Path
from wymcp.core.schema import Tool

class Hang(Tool):
    name = "hang"
    description = "Wait until cancelled."
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    async def run(self, arguments, ctx):
        Path(os.environ["HANG_DIR"], "started").touch()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            Path(os.environ["HANG_DIR"], "cancelled").touch()
            raise
"""


async def wait_for_file(path: Path) -> bool:
    for _ in range(400):  # up to 20 s on a loaded machine
        if path.exists():  # noqa: ASYNC240 - another process writes it
            return True
        await asyncio.sleep(0.05)
    return False


async def test_the_wymcp_worker_cancels_calls_and_applies_the_connection_settings(
    tmp_path: Path,
):
    (tmp_path / "gunicorn_hang_tools.py").write_text(HANG_TOOL, encoding="utf-8")
    (tmp_path / "gunicorn_hang_settings.py").write_text(
        'TOOLS = ["gunicorn_hang_tools.Hang"]\nSTATE_SECRET = "s" * 32\n'
        "HEADER_TIMEOUT = 1\n",
        encoding="utf-8",
    )
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
        "WYMCP_SETTINGS_MODULE": "gunicorn_hang_settings",
        "HANG_DIR": str(tmp_path),
    }
    process = await start_gunicorn(
        port,
        worker=WYMCP_WORKER,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "hang",
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        }
    ).encode()
    request = (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"MCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/call\r\n"
        f"Mcp-Name: hang\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    try:
        for _ in range(400):
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        # a plain-JSON call is cancelled when its client leaves
        writer.write(request)
        await writer.drain()
        assert await wait_for_file(tmp_path / "started")
        writer.close()
        assert await wait_for_file(tmp_path / "cancelled")
        # a connection that never finishes its request head is closed
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        await writer.drain()
        assert await asyncio.wait_for(reader.read(100), 30) == b""
        writer.close()
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 60)
    assert process.returncode == 0


async def test_the_wymcp_worker_logs_the_check_warnings(tmp_path: Path):
    # no STATE_SECRET: `wymcp serve` logs W002, and so must every worker
    (tmp_path / "gunicorn_w002_settings.py").write_text(
        'SERVER_NAME = "warned"\n', encoding="utf-8"
    )
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
        "WYMCP_SETTINGS_MODULE": "gunicorn_w002_settings",
    }
    process = await start_gunicorn(
        port,
        worker=WYMCP_WORKER,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        for _ in range(400):
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.05)
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0
    assert b"wymcp.W002" in err


async def test_the_wymcp_worker_honours_the_access_log_format(tmp_path: Path):
    (tmp_path / "gunicorn_access_settings.py").write_text(
        'STATE_SECRET = "s" * 32\n', encoding="utf-8"
    )
    access = tmp_path / "access.log"
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
        "WYMCP_SETTINGS_MODULE": "gunicorn_access_settings",
    }
    process = await asyncio.create_subprocess_exec(
        *gunicorn_argv(port),
        "--access-logfile",
        str(access),
        "--access-logformat",
        "WYMCP-ACCESS %r %s",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"}
    status = None
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(400):
                try:
                    url = f"http://127.0.0.1:{port}/mcp"
                    async with http.post(url, json=body, headers=headers) as response:
                        status = response.status
                    break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err[-2000:]
    assert status == 200
    lines = access.read_text(encoding="utf-8").splitlines()
    assert lines == ["WYMCP-ACCESS POST /mcp HTTP/1.1 200"], lines


async def _endless_chunks(port: int, head: bytes) -> tuple[bytes, float]:
    """Send `head` and 1-byte chunks without end; the answer's head, and how long
    the connection stayed open after it (EOF or reset), the client still sending."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    piece = b"1\r\nx\r\n" * 16384

    async def pump() -> None:
        with contextlib.suppress(ConnectionError):
            writer.write(head)
            for _ in range(256):  # 4 MiB of body, 24 MiB on the wire
                writer.write(piece)
                await writer.drain()

    pumping = asyncio.ensure_future(pump())
    try:
        answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        answered = time.monotonic()
        with contextlib.suppress(ConnectionError):
            async with asyncio.timeout(30):
                while await reader.read(65536):
                    pass
        return answer, time.monotonic() - answered
    finally:
        pumping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pumping
        writer.close()


async def test_the_wymcp_worker_drops_the_body_a_404_leaves_unread(tmp_path: Path):
    """aiohttp's 404 for an unknown path, then a body in 1-byte chunks: the worker
    closes the connection 2 s after the answer, parsing none of it (aiohttp's
    worker parses on for 10 s), and a valid call alongside is answered."""
    (tmp_path / "gunicorn_linger_settings.py").write_text(
        'STATE_SECRET = "s" * 32\n', encoding="utf-8"
    )
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
        "WYMCP_SETTINGS_MODULE": "gunicorn_linger_settings",
    }
    process = await start_gunicorn(
        port,
        worker=WYMCP_WORKER,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    head = (
        b"POST /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"}
    try:
        async with aiohttp.ClientSession() as client:
            for _ in range(400):
                try:
                    async with client.post(
                        f"http://127.0.0.1:{port}/mcp", json=body, headers=headers
                    ) as response:
                        assert response.status == 200
                    break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
            attack = asyncio.gather(*(_endless_chunks(port, head) for _ in range(4)))
            slowest = 0.0
            while not attack.done():
                started = time.monotonic()
                async with client.post(
                    f"http://127.0.0.1:{port}/mcp", json=body, headers=headers
                ) as response:
                    assert response.status == 200
                    await response.read()
                slowest = max(slowest, time.monotonic() - started)
                await asyncio.sleep(0.01)
            for answer, open_after in await attack:
                assert answer.startswith(b"HTTP/1.1 404"), answer
                assert b"Connection: close" in answer, answer
                assert open_after < 6.0, open_after  # lingering: 2 s, not 10
            assert slowest < 1.0, slowest
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 60)
    assert process.returncode == 0
