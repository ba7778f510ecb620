"""A user's HTTP server with JWT auth and a Redis BROKER, asked in-process.

Needs `wymcp-transport-aiohttp[redis,jwt]`: the settings module (argv[1])
builds its `AUTH` with pyjwt, the 2025-11-25 session lives in the Redis at
argv[2]. Prints, as JSON, the status without a token and the answers of a
session's initialize and tools/call with one.
"""

import asyncio
import json
import sys
import time

import jwt
from aiohttp.test_utils import TestClient, TestServer

from wymcp.conf import load_settings
from wymcp.transport.aiohttp import create_app

SECRET = "a-shared-hs256-secret-for-this-test-only-0123456789"
ISSUER = "https://auth.example.com"
RESOURCE = "https://mcp.example.com/mcp"
LEGACY = "2025-11-25"


def token() -> str:
    """A token the settings' JwtValidator accepts."""
    claims = {"iss": ISSUER, "aud": RESOURCE, "sub": "ada", "exp": time.time() + 300}
    return jwt.encode(claims, SECRET, algorithm="HS256")


async def answer(response):
    """The JSON-RPC answer of a JSON or an SSE response."""
    text = await response.text()
    if response.content_type == "text/event-stream":
        data = [line[5:] for line in text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return json.loads(text)


async def main(module: str, broker: str) -> dict:
    """Ask the served app without a token, then open a session and call a tool."""
    app = create_app(load_settings(module, BROKER=broker))
    async with TestClient(TestServer(app)) as client:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "install-test", "version": "1"},
            },
        }
        refused = await client.post("/mcp", json=hello, headers=headers)
        headers["Authorization"] = f"Bearer {token()}"
        opened = await client.post("/mcp", json=hello, headers=headers)
        initialized = await answer(opened)
        headers["Mcp-Session-Id"] = opened.headers["Mcp-Session-Id"]
        headers["MCP-Protocol-Version"] = LEGACY
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        noted = await client.post("/mcp", json=note, headers=headers)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "notes",
                "arguments": {"action": "add", "data": {"text": "hi"}},
            },
        }
        called = await client.post("/mcp", json=call, headers=headers)
        return {
            "refused": refused.status,
            "challenge": refused.headers.get("WWW-Authenticate", ""),
            "server": initialized["result"]["serverInfo"]["name"],
            "noted": noted.status,
            "called": await answer(called),
        }


sys.stdout.write(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))) + "\n")
