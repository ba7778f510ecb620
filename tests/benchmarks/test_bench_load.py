"""The benchmark's hand-written HTTP/1.1 client reads what real servers send.

Servers answer with Content-Length bodies (JSON) or chunked bodies (SSE); the load
client must read both, keep the connection alive, and tell a result from a refusal.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

ROOT = Path(__file__).resolve().parents[2]
SEEN = web.AppKey("seen", list)


@pytest.fixture(scope="module")
def bench_load() -> ModuleType:
    path = ROOT / "benchmarks" / "bench_load.py"
    spec = importlib.util.spec_from_file_location("bench_load", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_load"] = module
    spec.loader.exec_module(module)
    return module


def result(message_id: int, *, is_error: bool) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": message_id,
        "result": {"content": [{"type": "text", "text": "3"}], "isError": is_error},
    }


async def handle(request: web.Request) -> web.StreamResponse:
    message = await request.json()
    name = message["params"]["name"]
    seen = request.app[SEEN]
    seen.append(dict(request.headers))
    if name == "sse":
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        await response.write(b": keep-alive\n\n")
        body = json.dumps(result(message["id"], is_error=False))
        await response.write(f"event: message\ndata: {body}\n\n".encode())
        await response.write_eof()
        return response
    return web.json_response(result(message["id"], is_error=name == "refused"))


@pytest.fixture
async def server() -> TestServer:
    app = web.Application()
    app[SEEN] = []
    app.router.add_post("/mcp", handle)
    test_server = TestServer(app, host="127.0.0.1")
    await test_server.start_server()
    yield test_server
    await test_server.close()


async def test_reads_json_and_chunked_sse_answers_on_one_connection(
    bench_load: ModuleType, server: TestServer
) -> None:
    url = str(server.make_url("/mcp"))
    channel = bench_load.RawChannel(bench_load.Channel(None, url, modern=True), url)
    await channel.connect()
    try:
        for name in ("json", "sse", "json", "sse"):
            ok, why = await channel.call(bench_load.Call(name, {"a": 1}))
            assert ok, why
    finally:
        await channel.close()
    assert len(server.app[SEEN]) == 4


async def test_a_refusal_is_not_counted_as_a_success(
    bench_load: ModuleType, server: TestServer
) -> None:
    url = str(server.make_url("/mcp"))
    channel = bench_load.RawChannel(bench_load.Channel(None, url, modern=True), url)
    await channel.connect()
    try:
        first = await channel.call(bench_load.Call("refused", {}))
        assert first[0] is False
        assert await channel.call(bench_load.Call("json", {})) == (True, "")
        ok, why = await channel.call(bench_load.Call("refused", {}))
    finally:
        await channel.close()
    assert ok is False
    assert "HTTP 200" in why


def test_the_2026_call_carries_the_mirrored_headers_and_the_envelope(
    bench_load: ModuleType,
) -> None:
    channel = bench_load.Channel(None, "http://127.0.0.1:1/mcp", modern=True)
    body, headers = channel.prepared("tools/call", {"name": "calc", "arguments": {}})
    message = json.loads(body)
    assert headers["MCP-Protocol-Version"] == "2026-07-28"
    assert headers["Mcp-Method"] == "tools/call"
    assert headers["Mcp-Name"] == "calc"
    meta = message["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert "io.modelcontextprotocol/clientCapabilities" in meta


def test_percentile_is_nearest_rank(bench_load: ModuleType) -> None:
    values = [float(v) for v in range(1, 101)]
    assert bench_load.percentile(values, 50) == 50.0
    assert bench_load.percentile(values, 99) == 99.0
    assert bench_load.percentile([], 50) == 0.0


def session_app(name: str, calls: list[tuple[str, str]]) -> web.Application:
    """A server that opens sessions named after itself and records who calls it."""

    async def answer(request: web.Request) -> web.StreamResponse:
        message = await request.json()
        if "id" not in message:
            return web.Response(status=202)
        if message["method"] == "initialize":
            opened = {"protocolVersion": "2025-11-25", "capabilities": {}}
            sid = f"{name}-{len(calls)}"
            body = {"jsonrpc": "2.0", "id": message["id"], "result": opened}
            return web.json_response(body, headers={"Mcp-Session-Id": sid})
        calls.append((name, request.headers.get("Mcp-Session-Id", "")))
        return web.json_response(result(message["id"], is_error=False))

    app = web.Application()
    app.router.add_post("/mcp", answer)
    return app


async def test_spread_calls_go_to_the_server_that_did_not_open_the_session(
    bench_load: ModuleType,
) -> None:
    calls: list[tuple[str, str]] = []
    servers = [TestServer(session_app(n, calls), host="127.0.0.1") for n in "ab"]
    for server in servers:
        await server.start_server()
    try:
        urls = [str(server.make_url("/mcp")) for server in servers]
        outcome = await bench_load.drive(
            urls[0],
            bench_load.Call("calc", {}),
            modern=False,
            concurrency=4,
            warmup=4,
            requests=40,
            checkpoint=lambda: None,
            urls=urls,
            shift=1,
        )
    finally:
        for server in servers:
            await server.close()
    assert (outcome.ok, outcome.failed) == (40, 0)
    assert {name for name, _ in calls} == {"a", "b"}
    assert all(sid and not sid.startswith(name) for name, sid in calls), calls


async def test_several_servers_need_the_hand_written_client(
    bench_load: ModuleType,
) -> None:
    with pytest.raises(ValueError, match="hand-written"):
        await bench_load.drive(
            "http://127.0.0.1:1/mcp",
            bench_load.Call("calc", {}),
            modern=True,
            concurrency=1,
            warmup=1,
            requests=1,
            checkpoint=lambda: None,
            client="aiohttp",
            urls=["http://127.0.0.1:1/mcp", "http://127.0.0.1:2/mcp"],
        )
