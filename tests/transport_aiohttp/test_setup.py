"""setup() and create_app() with the real engine, embedded and stand-alone."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp import web

from modern_post import MODERN, modern_post
from wymcp.conf import ImproperlyConfigured, Settings
from wymcp.core.schema import Action, ConfigurationError, Tool
from wymcp.transport.aiohttp import create_app, setup
from wymcp.transport.aiohttp._setup import get_endpoint, mount


class Greeter(Tool):
    name = "greeter"
    description = "Greet people."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "hello": Action(
            description="Say hello to someone",
            properties={"name": {"type": "string", "minLength": 1}},
            required=["name"],
        )
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        return {"greeting": f"Hello, {data['name']}!"}


async def test_create_app_serves_the_modern_revision(aiohttp_client):
    client = await aiohttp_client(create_app(TOOLS=[Greeter]))
    data, headers = modern_post("server/discover")
    response = await client.post("/mcp", data=data, headers=headers)
    assert response.status == 200
    assert MODERN in (await response.json())["result"]["supportedVersions"]
    data, headers = modern_post(
        "tools/call",
        {"name": "greeter", "arguments": {"action": "hello", "data": {"name": "Ada"}}},
    )
    response = await client.post("/mcp", data=data, headers=headers)
    assert response.status == 200
    result = (await response.json())["result"]
    assert result.get("isError") is not True
    assert "Hello, Ada!" in json.dumps(result)


async def test_create_app_serves_a_session_revision_end_to_end(aiohttp_client):
    client = await aiohttp_client(create_app(TOOLS=[Greeter]))
    json_headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    response = await client.post("/mcp", json=init, headers=json_headers)
    assert response.status == 200
    session = response.headers["Mcp-Session-Id"]
    headers = {
        **json_headers,
        "Mcp-Session-Id": session,
        "MCP-Protocol-Version": "2025-11-25",
    }
    response = await client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers=headers,
    )
    assert response.status in {200, 202}
    response = await client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        headers=headers,
    )
    names = [tool["name"] for tool in (await response.json())["result"]["tools"]]
    assert names == ["greeter", "help"]
    response = await client.delete("/mcp", headers=headers)
    assert response.status == 200
    response = await client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
        headers=headers,
    )
    assert response.status == 404


async def test_a_batch_and_a_foreign_origin_with_the_real_engine(aiohttp_client):
    client = await aiohttp_client(create_app(TOOLS=[Greeter]))
    response = await client.post(
        "/mcp", data=b"[]", headers={"Content-Type": "application/json"}
    )
    assert response.status == 400
    data, headers = modern_post("server/discover")
    response = await client.post(
        "/mcp", data=data, headers={**headers, "Origin": "http://evil.example.com"}
    )
    assert response.status == 403


async def test_setup_leaves_the_host_routes_and_middlewares_alone(aiohttp_client):
    seen: list[str] = []

    @web.middleware
    async def tag(request: web.Request, handler: Any) -> web.StreamResponse:
        seen.append(request.path)
        return await handler(request)

    async def health(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app = web.Application(middlewares=[tag])
    app.router.add_get("/health", health)
    setup(app, Settings(), TOOLS=[Greeter], PATH="/tools/mcp")
    assert list(app.middlewares) == [tag]
    client = await aiohttp_client(app)
    assert (await (await client.get("/health")).json()) == {"ok": True}
    data, headers = modern_post("server/discover")
    assert (await client.post("/tools/mcp", data=data, headers=headers)).status == 200
    assert (await client.post("/mcp", data=data, headers=headers)).status == 404
    assert seen == ["/health", "/tools/mcp", "/mcp"]


def test_setup_twice_is_refused():
    app = web.Application()
    setup(app)
    with pytest.raises(RuntimeError, match="already set up"):
        setup(app)


def test_get_endpoint_explains_a_missing_setup():
    with pytest.raises(RuntimeError, match=r"call wymcp\.transport\.aiohttp\.setup"):
        get_endpoint(web.Application())


def test_settings_problems_surface_at_setup():
    with pytest.raises(ImproperlyConfigured, match="Did you mean BODY_LIMIT"):
        create_app(BODY_LIMT=3)
    with pytest.raises(ImproperlyConfigured, match="no attribute 'Nope'"):
        create_app(TOOLS=["wymcp.core.schema.Nope"])


def test_a_broken_tool_surfaces_at_setup():
    class NoActions(Tool):
        name = "broken"
        description = "Broken."

    with pytest.raises(ConfigurationError):
        create_app(TOOLS=[NoActions])


async def test_setup_reads_the_settings_module_named_by_the_environment(
    aiohttp_client, monkeypatch, tmp_path
):
    (tmp_path / "wymcp_env_settings_x.py").write_text("PATH = '/from-env'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("WYMCP_SETTINGS_MODULE", "wymcp_env_settings_x")
    app = create_app()
    assert get_endpoint(app).settings.PATH == "/from-env"


async def test_cleanup_closes_the_engine(aiohttp_client):
    closed: list[bool] = []

    class Engine:
        async def post(self, exchange, stream):
            raise AssertionError

        get = delete = post

        async def aclose(self) -> None:
            closed.append(True)

    app = web.Application()
    mount(app, Settings(), Engine())
    client = await aiohttp_client(app)
    await client.close()
    assert closed


def call_with_extra_key() -> tuple[str, dict[str, str]]:
    return modern_post(
        "tools/call",
        {
            "name": "greeter",
            "arguments": {"action": "hello", "data": {"name": "Ada", "shout": True}},
        },
    )


async def test_strict_refuses_an_unknown_key(aiohttp_client):
    client = await aiohttp_client(create_app(TOOLS=[Greeter]))
    data, headers = call_with_extra_key()
    result = (await (await client.post("/mcp", data=data, headers=headers)).json())[
        "result"
    ]
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"])["error"] == "unknown_params"


async def test_lenient_drops_an_unknown_key_and_says_so(aiohttp_client):
    client = await aiohttp_client(create_app(TOOLS=[Greeter], STRICT=False))
    data, headers = call_with_extra_key()
    result = (await (await client.post("/mcp", data=data, headers=headers)).json())[
        "result"
    ]
    assert result.get("isError") is not True
    assert "Hello, Ada!" in json.dumps(result)
    assert result["_meta"]["wymcp/dropped"] == ["data.shout"]


class Stuck(Tool):
    name = "stuck"
    description = "Never finishes."
    input_schema = {"type": "object", "properties": {}}  # noqa: RUF012 - the pinned declaration style

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        await asyncio.Event().wait()
        return None


async def test_a_hanging_tool_answers_is_error_after_call_timeout(aiohttp_client):
    client = await aiohttp_client(create_app(TOOLS=[Stuck], CALL_TIMEOUT=0.1))
    data, headers = modern_post("tools/call", {"name": "stuck", "arguments": {}})
    response = await client.post("/mcp", data=data, headers=headers)
    assert response.status == 200
    result = (await response.json())["result"]
    assert result["isError"] is True
    shown = json.loads(result["content"][0]["text"])
    assert shown["errorType"] == "call_timeout"
    assert "did not finish within 0.1 seconds (CALL_TIMEOUT)" in shown["message"]


async def test_sessions_beyond_max_sessions_get_503_and_retry_after(aiohttp_client):
    client = await aiohttp_client(create_app(TOOLS=[Greeter], MAX_SESSIONS=1))
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    first = await client.post("/mcp", json=init, headers=headers)
    assert first.status == 200
    second = await client.post("/mcp", json=init, headers=headers)
    assert second.status == 503
    assert int(second.headers["Retry-After"]) > 0
    assert (await second.json())["id"] == 1
