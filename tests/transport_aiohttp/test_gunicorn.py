"""create_app() as a gunicorn factory under aiohttp's worker, two workers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path

import aiohttp

MODERN = "2026-07-28"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "gunicorn",
        "wymcp.transport.aiohttp:create_app()",
        "--worker-class",
        "aiohttp.GunicornWebWorker",
        "--workers",
        "2",
        "--bind",
        f"127.0.0.1:{port}",
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
