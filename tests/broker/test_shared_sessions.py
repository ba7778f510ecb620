"""BROKER: two apps (two workers) sharing one real Redis serve the same sessions."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import aiohttp
import pytest
import redis.asyncio as aioredis

from legacy_initialize import LEGACY_INITIALIZE
from redis_server import free_port
from wymcp.broker.redis import _brokered_engine
from wymcp.broker.redis._sessions import KEY_PREFIX
from wymcp.core.schema import Action, Tool
from wymcp.transport.aiohttp import create_app
from wymcp.transport.aiohttp._setup import get_endpoint

SECRET = "s" * 32
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
JSON_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
}


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
        return {"greeting": f"Hello, {data['name']}!", "session": ctx.session_id}


def app(broker: str, tools: tuple[type[Tool], ...] = (Greeter,), **overrides: Any):
    return create_app(
        TOOLS=list(tools), BROKER=broker, STATE_SECRETS=[SECRET], **overrides
    )


async def initialize(client) -> str:
    response = await client.post(
        "/mcp",
        json=LEGACY_INITIALIZE,
        headers=JSON_HEADERS,
    )
    assert response.status == 200
    return response.headers["Mcp-Session-Id"]


def session_headers(sid: str) -> dict[str, str]:
    return {**JSON_HEADERS, "Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY}


async def post(client, sid: str, body: dict[str, Any]):
    return await client.post("/mcp", json=body, headers=session_headers(sid))


async def initialized(client, sid: str) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await post(client, sid, note)).status == 202


async def call(client, sid: str, rid: int = 2):
    return await post(
        client,
        sid,
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {
                "name": "greeter",
                "arguments": {"action": "hello", "data": {"name": "Ada"}},
            },
        },
    )


async def prompts(client, sid: str, rid: int = 9):
    """prompts/list: a method a session serves only once initialized."""
    body = {"jsonrpc": "2.0", "id": rid, "method": "prompts/list"}
    return await post(client, sid, body)


async def test_a_session_made_on_one_worker_is_served_by_the_other(
    aiohttp_client, redis_url
):
    one = await aiohttp_client(app(redis_url))
    two = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    await initialized(two, sid)
    # "initialized", sent to worker two, reached worker one through Redis
    assert (await prompts(one, sid)).status == 200
    for client, rid in ((one, 2), (two, 3), (one, 4)):
        response = await call(client, sid, rid)
        assert response.status == 200
        result = (await response.json())["result"]
        assert result.get("isError") is not True
        assert json.loads(result["content"][0]["text"])["session"] == sid


async def test_a_session_not_yet_initialized_is_refused_on_every_worker(
    aiohttp_client, redis_url
):
    one = await aiohttp_client(app(redis_url))
    two = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    assert (await prompts(one, sid)).status == 400
    response = await prompts(two, sid)
    assert response.status == 400
    assert "not yet initialized" in json.dumps(await response.json())


async def test_a_log_level_set_on_one_worker_is_kept_in_redis(
    aiohttp_client, redis_url
):
    one = await aiohttp_client(app(redis_url))
    two = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    await initialized(one, sid)
    body = {"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel"}
    body["params"] = {"level": "error"}
    assert (await post(two, sid, body)).status == 200
    client = aioredis.Redis.from_url(redis_url)
    try:
        recorded = json.loads(await client.get(KEY_PREFIX + sid))
    finally:
        await client.aclose()
    assert recorded["l"] == "error"
    assert recorded["n"] is True


async def test_delete_on_one_worker_ends_the_session_on_both(aiohttp_client, redis_url):
    one = await aiohttp_client(app(redis_url))
    two = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    await initialized(one, sid)
    assert (await call(two, sid)).status == 200  # worker two holds a copy now
    assert (await one.delete("/mcp", headers=session_headers(sid))).status == 200
    for client in (two, one):
        response = await call(client, sid)
        assert response.status == 404
        assert (await response.json())["error"]["code"] == -32001
    assert (await two.delete("/mcp", headers=session_headers(sid))).status == 404


async def test_delete_on_one_worker_ends_the_get_stream_on_the_other(
    aiohttp_client, redis_url
):
    one = await aiohttp_client(app(redis_url))
    two = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    await initialized(one, sid)
    headers = {**session_headers(sid), "Accept": "text/event-stream"}
    stream = await two.get("/mcp", headers=headers)
    assert stream.status == 200
    assert b"id: r-" in await stream.content.readuntil(b"\n\n")
    assert (await one.delete("/mcp", headers=session_headers(sid))).status == 200
    # worker two hears of the end through Redis and closes the stream
    rest = await stream.content.read()
    assert b"evt-2" not in rest
    assert stream.content.at_eof()


async def test_a_foreign_principal_cannot_use_a_shared_session(
    aiohttp_client, redis_url
):
    client = aioredis.Redis.from_url(redis_url)
    one = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    try:
        recorded = json.loads(await client.get(KEY_PREFIX + sid))
        recorded["p"] = "sub:mallory"
        await client.set(KEY_PREFIX + sid, json.dumps(recorded), xx=True, px=60_000)
    finally:
        await client.aclose()
    two = await aiohttp_client(app(redis_url))
    response = await call(two, sid)
    assert response.status == 404


async def test_idle_sessions_expire_in_redis_for_every_worker(
    aiohttp_client, redis_url
):
    idle = 0.3
    one = await aiohttp_client(app(redis_url, SESSION_IDLE_TIMEOUT=idle))
    two = await aiohttp_client(app(redis_url, SESSION_IDLE_TIMEOUT=idle))
    sid = await initialize(one)
    await initialized(two, sid)
    client = aioredis.Redis.from_url(redis_url)
    try:
        ttl = await client.pttl(KEY_PREFIX + sid)
        assert 0 < ttl <= idle * 1000
        await asyncio.sleep(idle / 2)
        assert (await call(two, sid)).status == 200  # use restarts the idle timer
        assert await client.pttl(KEY_PREFIX + sid) > ttl - idle * 500
        # past the idle timeout, unused: Redis forgets it, and so does each worker
        for _ in range(100):
            if not await client.exists(KEY_PREFIX + sid):
                break
            await asyncio.sleep(idle / 4)
        assert not await client.exists(KEY_PREFIX + sid)
    finally:
        await client.aclose()
    for worker in (one, two):
        assert (await call(worker, sid)).status == 404


async def test_an_unknown_or_odd_session_id_never_reaches_redis(
    aiohttp_client, redis_url
):
    one = await aiohttp_client(app(redis_url))
    for sid in ("x" * 43, "short", "é" * 43, "a" * 5000):
        response = await call(one, sid)
        assert response.status in {400, 404}


# ------------------------------------------------------------ Redis down


def modern_call() -> tuple[str, dict[str, str]]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "greeter",
            "arguments": {"action": "hello", "data": {"name": "Ada"}},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        **JSON_HEADERS,
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "greeter",
    }
    return json.dumps(body), headers


@pytest.fixture
def dead_broker() -> str:
    return f"redis://127.0.0.1:{free_port()}/0"


async def test_redis_down_answers_session_requests_503_with_retry_after(
    aiohttp_client, dead_broker, monkeypatch: pytest.MonkeyPatch
):
    # each session request waits up to _SUBSCRIBE_WAIT (2 s) for the worker's
    # subscription, then answers 503: three of them waited 6 s for the same
    # answer a tenth of that wait gives
    monkeypatch.setattr(_brokered_engine, "_SUBSCRIBE_WAIT", 0.2)
    client = await aiohttp_client(app(dead_broker))
    response = await client.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 7,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}},
        },
        headers=JSON_HEADERS,
    )
    assert response.status == 503
    assert response.headers["Retry-After"] == "5"
    body = await response.json()
    assert body["id"] == 7
    assert "BROKER" in body["error"]["message"]
    sid = "A" * 43
    response = await call(client, sid)
    assert response.status == 503
    assert (await client.delete("/mcp", headers=session_headers(sid))).status == 503
    get_headers = {**session_headers(sid), "Accept": "text/event-stream"}
    assert (await client.get("/mcp", headers=get_headers)).status == 503


async def test_redis_down_still_serves_stateless_2026_calls(
    aiohttp_client, dead_broker
):
    client = await aiohttp_client(app(dead_broker))
    data, headers = modern_call()
    response = await client.post("/mcp", data=data, headers=headers)
    assert response.status == 200
    result = (await response.json())["result"]
    assert "Hello, Ada!" in result["content"][0]["text"]


async def test_a_session_whose_record_cannot_be_written_is_not_kept(
    aiohttp_client, dead_broker
):
    client = await aiohttp_client(app(dead_broker))
    await client.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}},
        },
        headers=JSON_HEADERS,
    )
    assert get_endpoint(client.app).engine._store.sessions() == []


async def test_service_resumes_after_redis_restarts_without_restarting_workers(
    aiohttp_client, tmp_path
):
    from redis_server import server_binary, start_server, stop_server

    server = start_server(server_binary(), tmp_path)
    try:
        one = await aiohttp_client(app(server.url))
        two = await aiohttp_client(app(server.url))
        sid = await initialize(one)
        await initialized(two, sid)
        assert (await call(one, sid)).status == 200
        stop_server(server)
        down = await call(two, sid)
        assert down.status == 503
        assert down.headers["Retry-After"] == "5"
        data, headers = modern_call()
        assert (await one.post("/mcp", data=data, headers=headers)).status == 200
        server = start_server(server_binary(), tmp_path, port=server.port)
        # the restarted Redis has no sessions (no persistence): 404, then anew
        assert (await call(two, sid)).status == 404
        fresh = await initialize(two)
        await initialized(one, fresh)
        assert (await call(one, fresh)).status == 200
        assert (await call(two, fresh)).status == 200
    finally:
        stop_server(server)


class Slow(Tool):
    name = "slow"
    description = "Waits until cancelled."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "wait": Action(description="Wait", properties={})
    }
    started: asyncio.Event
    cancelled: asyncio.Event

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        type(self).started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            type(self).cancelled.set()
            raise
        return None


async def slow_call_on_two(aiohttp_client, redis_url, rid: int):
    """Two workers, a session made on the first, `Slow` running on the second."""
    Slow.started = asyncio.Event()
    Slow.cancelled = asyncio.Event()
    one = await aiohttp_client(app(redis_url, (Slow,)))
    two = await aiohttp_client(app(redis_url, (Slow,)))
    sid = await initialize(one)
    await initialized(one, sid)
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "slow", "arguments": {"action": "wait", "data": {}}},
    }
    running = asyncio.ensure_future(post(two, sid, body))
    await Slow.started.wait()
    return one, two, sid, running


async def test_delete_on_one_worker_cancels_the_call_running_on_the_other(
    aiohttp_client, redis_url
):
    one, _, sid, running = await slow_call_on_two(aiohttp_client, redis_url, 3)
    assert (await one.delete("/mcp", headers=session_headers(sid))).status == 200
    await Slow.cancelled.wait()  # worker two heard of the end and cancelled it
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError):
        await running


# ------------------------------------------- client messages across workers


class Asker(Tool):
    name = "asker"
    description = "Asks the user a name."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "ask": Action(description="Ask a name", properties={})
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        answer = await ctx.elicit(
            "Your name?",
            {"type": "object", "properties": {"name": {"type": "string"}}},
        )
        return {"answer": answer}


async def events(response) -> Any:
    """Each SSE event's JSON data, as the stream yields it."""
    while True:
        block = await response.content.readuntil(b"\n\n")
        if not block:
            return
        for line in block.decode().splitlines():
            if line.startswith("data: ") and line[6:].strip():
                yield json.loads(line[6:])


async def test_an_elicitation_answered_on_the_other_worker_reaches_the_call(
    aiohttp_client, redis_url
):
    def asker_app():
        return app(redis_url, (Asker,))

    one = await aiohttp_client(asker_app())
    two = await aiohttp_client(asker_app())
    response = await one.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        headers=JSON_HEADERS,
    )
    sid = response.headers["Mcp-Session-Id"]
    await initialized(one, sid)
    running = await post(
        two,
        sid,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "asker", "arguments": {"action": "ask", "data": {}}},
        },
    )
    stream = events(running)
    question = await anext(stream)
    assert question["method"] == "elicitation/create"
    answer = {"action": "accept", "content": {"name": "Ada"}}
    reply = await post(
        one, sid, {"jsonrpc": "2.0", "id": question["id"], "result": answer}
    )
    assert reply.status == 202
    final = await anext(stream)
    assert final["id"] == 5
    assert json.loads(final["result"]["content"][0]["text"]) == {"answer": answer}


async def test_a_cancel_sent_to_the_other_worker_stops_the_call(
    aiohttp_client, redis_url
):
    one, two, sid, running = await slow_call_on_two(aiohttp_client, redis_url, 8)
    cancel = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 8, "reason": "changed my mind"},
    }
    assert (await post(one, sid, cancel)).status == 202
    await Slow.cancelled.wait()
    answered = await running
    assert answered.status in {200, 204}
    # the session lives on: the cancel ended the call, not the session
    assert (await prompts(two, sid)).status == 200


async def test_a_session_fetched_a_moment_ago_is_served_without_redis(
    aiohttp_client, redis_url
):
    one = await aiohttp_client(app(redis_url))
    two = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    await initialized(one, sid)
    assert (await call(two, sid, 2)).status == 200
    await asyncio.sleep(0.1)  # worker two listens for ends and changes by now
    assert (await call(two, sid, 3)).status == 200  # fetched: fresh for a moment
    probe = aioredis.Redis.from_url(redis_url)
    try:
        before = (await probe.info("stats"))["total_commands_processed"]
        for rid in range(4, 9):
            assert (await call(two, sid, rid)).status == 200
        after = (await probe.info("stats"))["total_commands_processed"]
        assert after - before == 1  # the first INFO only
        # an end on the other worker still reaches it at once
        assert (await one.delete("/mcp", headers=session_headers(sid))).status == 200
        for _ in range(50):
            if get_endpoint(two.app).engine._store.get(sid) is None:
                break
            await asyncio.sleep(0.01)
        assert (await call(two, sid, 9)).status == 404
    finally:
        await probe.aclose()
