"""The demo under gunicorn with two aiohttp workers sharing one SQLite file."""

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import aiohttp

from gunicorn_process import AIOHTTP_WORKER, free_port, start_gunicorn

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def tasks_call(request_id: int, action: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": "tasks",
            "arguments": {"action": action, "data": data},
            "_meta": META,
        },
    }


HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "tasks",
}


async def test_two_workers_write_to_one_database(tmp_path: Path) -> None:
    port = free_port()
    environment = {
        **os.environ,
        "WYMCP_SETTINGS_MODULE": "wymcp_tasks.settings",
        "TASKS_DEMO_DB": str(tmp_path / "tasks.sqlite3"),
    }
    process = await start_gunicorn(
        port,
        worker=AIOHTTP_WORKER,
        workers=2,
        cwd=tmp_path,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        env=environment,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        async with aiohttp.ClientSession() as http:

            async def post(body: dict[str, Any]) -> dict[str, Any]:
                async with http.post(url, json=body, headers=HEADERS) as response:
                    assert response.status == 200
                    result = (await response.json())["result"]
                    assert result["isError"] is False, result
                    return dict(json.loads(result["content"][0]["text"]))

            for _ in range(600):
                try:
                    await post(tasks_call(0, "list", {}))
                    break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
            created = await asyncio.gather(
                *(
                    post(tasks_call(i, "create", {"title": f"t{i}"}))
                    for i in range(1, 21)
                )
            )
            ids = sorted(answer["task"]["id"] for answer in created)
            assert ids == list(range(1, 21))
            listed = await post(tasks_call(99, "list", {"limit": 100}))
            assert listed["count"] == 20
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 60)
    assert process.returncode == 0
