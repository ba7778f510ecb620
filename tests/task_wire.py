"""Tasks (SEP-2663) on the wire for HTTP tests: one request, its status and JSON.

`poster` is anything with aiohttp's `post(url, data=, headers=)`: a
`ClientSession` (with a full URL) or an aiohttp test client (with `/mcp`).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

MODERN = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
CAPABILITIES: dict[str, Any] = {"extensions": {TASKS: {}}, "elicitation": {}}


def task_request(
    method: str,
    params: dict[str, Any],
    *,
    rid: int = 1,
    token: str | None = None,
    capabilities: dict[str, Any] | None = None,
) -> tuple[str, dict[str, str]]:
    """The body and headers of a 2026-07-28 request declaring the extension."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": CAPABILITIES
        if capabilities is None
        else capabilities,
    }
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": method,
        "params": {**params, "_meta": meta},
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
        "Mcp-Name": str(params.get("taskId", params.get("name", ""))),
    }
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return json.dumps(body), headers


async def send(
    poster: Any, url: str, method: str, params: dict[str, Any], **kw: Any
) -> tuple[int, dict[str, Any], Any]:
    """POST one request: the HTTP status, the response headers and its JSON."""
    data, headers = task_request(method, params, **kw)
    async with poster.post(url, data=data, headers=headers) as response:
        return response.status, dict(response.headers), await response.json()


async def create(
    poster: Any, url: str, tool: str, arguments: dict[str, Any], **kw: Any
) -> str:
    """Call `tool` as a task; its id."""
    status, _, body = await send(
        poster, url, "tools/call", {"name": tool, "arguments": arguments}, **kw
    )
    assert status == 200, body
    assert body["result"]["resultType"] == "task", body
    return str(body["result"]["taskId"])


async def get(poster: Any, url: str, task_id: str, **kw: Any) -> dict[str, Any]:
    """`tasks/get`: the task (an error fails the test)."""
    status, _, body = await send(poster, url, "tasks/get", {"taskId": task_id}, **kw)
    assert status == 200, body
    assert "result" in body, body
    result: dict[str, Any] = body["result"]
    return result


async def until(
    poster: Any, url: str, task_id: str, statuses: set[str], **kw: Any
) -> dict[str, Any]:
    """Poll `tasks/get` until the task is in one of `statuses` (30 s at most)."""
    deadline = time.monotonic() + 30
    while True:
        task = await get(poster, url, task_id, **kw)
        if task["status"] in statuses or time.monotonic() > deadline:
            assert task["status"] in statuses, task
            return task
        await asyncio.sleep(0.05)
