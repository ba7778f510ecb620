"""The official MCP SDK client with a bearer token against an authenticated server."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from served import ServeApp
from wymcp.transport.aiohttp import create_app

ISSUER = "https://auth.example.com"
RESOURCE = "http://127.0.0.1/mcp"


@pytest.fixture
async def server_url(issuer: Any, serve_app: ServeApp) -> str:
    """A served app with AUTH, on an OS-chosen port."""
    from wymcp.core.schema import Tool

    class Whoami(Tool):
        name = "whoami"
        description = "Say who is calling."
        input_schema = {"type": "object", "properties": {}}  # noqa: RUF012 - the pinned declaration style
        scopes = ["tasks:read"]  # noqa: RUF012 - the pinned declaration style

        async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
            return {"subject": ctx.principal.subject}

    app = create_app(
        TOOLS=[Whoami],
        AUTH=issuer.validator(),
        AUTH_AUTHORIZATION_SERVERS=[ISSUER],
        AUTH_RESOURCE=RESOURCE,
    )
    return await serve_app(app)


@pytest.mark.parametrize(
    ("mode", "revision"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")]
)
async def test_the_sdk_client_calls_a_scoped_tool_with_its_token(
    server_url, issuer, mode, revision
):
    token = issuer.token("ann", "tasks:read")
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with Client(
        streamable_http_client(server_url, http_client=http), mode=mode
    ) as client:
        assert client.protocol_version == revision
        result = await client.call_tool("whoami", {})
        assert result.is_error is False
        assert json.loads(result.content[0].text) == {"subject": "ann"}
    await http.aclose()
