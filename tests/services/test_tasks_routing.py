"""The demo's `projects` tool routes by header: 2026-07-28 calls mirror `data.project`.

Served in process from the demo's own settings module, as `wymcp serve` would,
with fresh tool instances on a temporary database (a tool class named in TOOLS
is instantiated once per process, and this process runs many servers).
"""

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from wymcp.conf import load_settings
from wymcp.transport.aiohttp import create_app
from wymcp_tasks import Projects, Todos

MODERN = "2026-07-28"
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "projects",
}


@pytest.fixture
async def client(
    tmp_path: Path, aiohttp_client: Any, monkeypatch: pytest.MonkeyPatch
) -> TestClient:
    database = tmp_path / "tasks.sqlite3"
    # The settings' LIFESPAN opens this same file (not one in the working dir).
    monkeypatch.setenv("TASKS_DEMO_DB", str(database))
    tools = [Todos(database=database), Projects(database=database)]
    settings = load_settings("wymcp_tasks.settings", TOOLS=tools)
    return await aiohttp_client(create_app(settings))


def projects_call(action: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "projects",
            "arguments": {"action": action, "data": data},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }


async def test_a_call_whose_header_carries_the_project_is_served(
    client: TestClient,
) -> None:
    response = await client.post(
        "/mcp",
        json=projects_call("create", {"project": "home"}),
        headers={**HEADERS, "Mcp-Param-Project": "home"},
    )
    assert response.status == 200
    result = (await response.json())["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["project"]["name"] == "home"


@pytest.mark.parametrize("header", [{"Mcp-Param-Project": "elsewhere"}, {}])
async def test_a_missing_or_different_header_is_refused_before_the_tool_runs(
    client: TestClient, header: dict[str, str]
) -> None:
    response = await client.post(
        "/mcp",
        json=projects_call("create", {"project": "home"}),
        headers={**HEADERS, **header},
    )
    assert response.status == 400
    assert (await response.json())["error"]["code"] == -32020
    listed = await client.post(
        "/mcp",
        json=projects_call("list", {}),
        headers=HEADERS,
    )
    assert listed.status == 200
    assert (
        json.loads((await listed.json())["result"]["content"][0]["text"])["count"] == 0
    )


async def test_the_published_schema_carries_the_annotation(client: TestClient) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/list",
        "params": {"_meta": projects_call("list", {})["params"]["_meta"]},
    }
    response = await client.post(
        "/mcp",
        json=body,
        headers={**HEADERS, "Mcp-Method": "tools/list"} | {"Mcp-Name": ""},
    )
    assert response.status == 200, await response.text()
    tools = {tool["name"]: tool for tool in (await response.json())["result"]["tools"]}
    data = tools["projects"]["inputSchema"]["properties"]["data"]
    assert data["properties"]["project"]["x-mcp-header"] == "Project"
    assert "x-mcp-header" not in json.dumps(tools["tasks"]["inputSchema"])
    assert tools["tasks"]["annotations"]["destructiveHint"] is True
    assert tools["projects"]["annotations"]["destructiveHint"] is False
    one_task = tools["tasks"]["outputSchema"]["anyOf"][0]
    assert one_task["properties"]["task"]["required"][0] == "id"
