"""`wymcp serve` with LOG_FORMAT = "json": every line it logs is one JSON object."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path

import aiohttp

TESTS = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_serve_writes_json_lines_and_an_access_line_per_request(tmp_path: Path):
    (tmp_path / "json_log_settings.py").write_text(
        'TOOLS = ["ops_tools.Jobs"]\nLOG_FORMAT = "json"\nACCESS_LOG = True\n',
        encoding="utf-8",
    )
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from wymcp.cli import main; raise SystemExit(main())",
        "serve",
        "--settings",
        "json_log_settings",
        "--port",
        str(port),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(tmp_path), str(TESTS), *sys.path]),
        },
    )
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(400):
                try:
                    async with http.get(f"{base}/healthz") as probe:
                        assert probe.status == 200
                    break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
            body = {
                "jsonrpc": "2.0",
                "id": "call\r\n1",
                "method": "tools/call",
                "params": {
                    "name": "jobs",
                    "arguments": {"action": "crash"},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    },
                },
            }
            headers = {
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "jobs",
            }
            async with http.post(f"{base}/mcp", json=body, headers=headers) as response:
                assert response.status == 200
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 60) == 0
        assert process.stderr is not None
        logged = (await process.stderr.read()).decode().splitlines()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    documents = [json.loads(line) for line in logged]  # every line is JSON
    access = [d for d in documents if d["logger"] == "wymcp.access"]
    # one line per MCP request (the probe of /healthz is not one)
    assert [d["outcome"] for d in access] == ["tool_raised"]
    crash = access[0]
    assert crash["rpc_id"] == "call\\r\\n1"
    assert (crash["tool"], crash["action"], crash["status"]) == ("jobs", "crash", 200)
    # the tool's traceback is in the same stream, as one JSON object
    raised = next(d for d in documents if "raised RuntimeError" in d["message"])
    assert "Traceback" in raised["exception"]
