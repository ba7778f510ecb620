"""The second load client drives one shared 2025-11-25 session, and never hangs.

MCP wants request ids unique within a session, and a server that routes a
session's answers by id (the Python SDK, so fastmcp) cannot answer two calls in
flight with one id. The server here refuses such a call, so a client replaying
one id fails there. A server that stops answering must cost a bounded wait, the
case reported as not runnable, not a hung harness.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_autocannon
import bench_load
import bench_servers

SESSION = "bench-session-1"
IN_FLIGHT = web.AppKey("in_flight", set)
REUSED = web.AppKey("reused", list)
SILENT = web.AppKey("silent", bool)
ANSWERED = web.AppKey("answered", list)


@pytest.fixture(scope="module", autouse=True)
def _autocannon() -> None:
    """The locked autocannon, installed as the benchmark installs it (`npm ci`).

    Not a skip: a machine of the README has npm, and these tests are what
    proves the second client neither replays an id nor hangs.
    """
    bench_servers.ensure_node()
    assert bench_autocannon.available(), "locks/node did not install autocannon"


async def handle(request: web.Request) -> web.StreamResponse:
    """A stateful 2025-11-25 server that keeps a session's calls in flight by id."""
    app = request.app
    message = await request.json()
    if message.get("method") == "initialize":
        body = {
            "jsonrpc": "2.0",
            "id": message["id"],
            "result": {"protocolVersion": "2025-11-25", "capabilities": {}},
        }
        return web.json_response(body, headers={"Mcp-Session-Id": SESSION})
    if "id" not in message:
        return web.Response(status=202)
    assert request.headers.get("Mcp-Session-Id") == SESSION
    if app[SILENT] and app[ANSWERED]:
        await asyncio.Event().wait()  # answers the first call, then nothing
    key = repr(message["id"])
    if key in app[IN_FLIGHT]:
        app[REUSED].append(key)
        return web.json_response({"error": "request id in use"}, status=409)
    app[IN_FLIGHT].add(key)
    try:
        await asyncio.sleep(0.002)  # long enough for calls to overlap
    finally:
        app[IN_FLIGHT].discard(key)
    app[ANSWERED].append(key)
    text = {"type": "text", "text": "3"}
    result = {"content": [text], "isError": False}
    return web.json_response({"jsonrpc": "2.0", "id": message["id"], "result": result})


def serve(*, silent: bool) -> Iterator[tuple[str, web.Application]]:
    """Run the server on its own loop in a thread (autocannon runs blocking)."""
    app = web.Application()
    app[IN_FLIGHT] = set()
    app[REUSED] = []
    app[SILENT] = silent
    app[ANSWERED] = []
    app.router.add_post("/mcp", handle)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/mcp", app
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@pytest.fixture
def server() -> Iterator[tuple[str, web.Application]]:
    yield from serve(silent=False)


@pytest.fixture
def silent_server() -> Iterator[tuple[str, web.Application]]:
    yield from serve(silent=True)


def drive(url: str, *, slack_s: float = 30.0) -> tuple[bench_load.Outcome, int]:
    """One 2025-11-25 case through autocannon: the outcome and the checkpoints."""
    marks: list[float] = []
    outcome, _ = asyncio.run(
        bench_autocannon.drive(
            url,
            bench_load.Call("calc", {"a": 1, "b": 2}),
            modern=False,
            concurrency=8,
            warmup=100,
            requests=300,  # one second
            checkpoint=lambda: marks.append(time.perf_counter()),
            slack_s=slack_s,
        )
    )
    return outcome, len(marks)


def test_every_call_on_the_shared_session_carries_its_own_id(server) -> None:
    url, app = server
    outcome, marks = drive(url)
    assert outcome.first_failure == ""
    assert marks == 2
    assert outcome.failed == 0
    assert outcome.ok > 100
    assert app[REUSED] == []
    # the ids autocannon wrote are strings, one per call
    assert len(set(app[ANSWERED])) == len(app[ANSWERED])


def test_a_server_that_stops_answering_is_reported_within_the_bound(
    silent_server,
) -> None:
    url, _ = silent_server
    started = time.perf_counter()
    outcome, marks = drive(url, slack_s=2.0)
    waited = time.perf_counter() - started
    assert waited < 10.0  # the bound is 2 s + 100 calls at 100/s, plus the kill
    assert marks == 0  # nothing measured
    assert outcome.ok == 0
    assert "warm-up did not finish within 3 s" in outcome.first_failure
