"""The demo served from its settings: LIFESPAN opens one store every part shares.

The tools, the resource and the prompt are built from dotted paths (no explicit
database), so each call reads `ctx.state`; their own stores are never opened.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wymcp.conf import load_settings
from wymcp.transport.aiohttp import create_app
from wymcp.transport.aiohttp._setup import get_endpoint

MODERN = "2026-07-28"


async def _rpc(client: Any, method: str, params: dict[str, Any], name: str) -> Any:
    response = await client.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": method,
            "params": {
                **params,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        },
        headers={
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": method,
            "Mcp-Name": name,
        },
    )
    assert response.status == 200, await response.text()
    return (await response.json())["result"]


async def test_one_store_serves_every_tool_resource_and_prompt(
    tmp_path: Path, aiohttp_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "served.sqlite3"
    monkeypatch.setenv("TASKS_DEMO_DB", str(database))
    app = create_app(load_settings("wymcp_tasks.settings"))
    client = await aiohttp_client(app)
    engine: Any = get_endpoint(app).engine
    store = engine.state
    assert store is not None
    assert store.path == database
    created = await _rpc(
        client,
        "tools/call",
        {"name": "tasks", "arguments": {"action": "create", "data": {"title": "One"}}},
        "tasks",
    )
    task = created["structuredContent"]["task"]
    uri = f"task://{task['id']}"
    read = await _rpc(client, "resources/read", {"uri": uri}, uri)
    assert json.loads(read["contents"][0]["text"])["title"] == "One"
    plan = await _rpc(client, "prompts/get", {"name": "plan"}, "plan")
    assert '"title": "One"' in plan["messages"][0]["content"]["text"]
    page = await _rpc(
        client,
        "tools/call",
        {"name": "projects", "arguments": {"action": "list", "data": {"limit": 1}}},
        "projects",
    )
    assert page["structuredContent"] == {"projects": [], "count": 0, "next_after": None}
    # Every part used the lifespan's store: none opened its own.
    for spec in engine._catalogue.tools:
        own = getattr(spec.tool, "store", None)
        if own is not None:
            assert own._ready is False, spec.name
    await client.close()
    assert engine.state is None
    assert store._reader is None
