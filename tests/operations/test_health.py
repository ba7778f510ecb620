"""/healthz and /readyz: cheap, no token, Host-guarded; readiness drains first."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from ops_tools import Jobs
from redis_server import server_binary, start_server, stop_server
from wymcp.transport.aiohttp import _health, create_app
from wymcp.transport.aiohttp._setup import get_endpoint

STATE = "s" * 32


async def _status(client: TestClient, path: str, **headers: str) -> tuple[int, object]:
    async with client.get(path, headers=headers) as response:
        return response.status, await response.json()


async def test_both_probes_answer_without_a_token_and_check_the_host():
    app = create_app(
        TOOLS=[Jobs],
        AUTH=lambda token: None,
        AUTH_AUTHORIZATION_SERVERS=["https://auth.example.com"],
    )
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        assert await _status(client, "/healthz") == (200, {"status": "ok"})
        assert await _status(client, "/readyz") == (200, {"status": "ready"})
        # the MCP endpoint itself wants the token the probes do not
        async with client.post("/mcp", json={}) as response:
            assert response.status == 401
        for path in ("/healthz", "/readyz"):
            status, _ = await _status(client, path, Host="evil.example")
            assert status == 403
            status, _ = await _status(client, path, Origin="http://evil.example")
            assert status == 403


async def test_readiness_fails_first_at_shutdown_while_liveness_holds():
    app = create_app(TOOLS=[Jobs])
    client = TestClient(TestServer(app, host="127.0.0.1"))
    await client.start_server()
    try:
        health = get_endpoint(app).health
        # the drain is the first shutdown callback: before the sessions end
        assert app.on_shutdown[0] == health.drain
        await app.shutdown()
        assert await _status(client, "/readyz") == (503, {"status": "draining"})
        assert await _status(client, "/healthz") == (200, {"status": "ok"})
    finally:
        await client.close()


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    server = start_server(server_binary(), tmp_path)
    try:
        yield server.url
    finally:
        stop_server(server)


async def test_readiness_asks_the_broker(redis_url: str):
    app = create_app(TOOLS=[Jobs], BROKER=redis_url, STATE_SECRET=STATE)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        assert await _status(client, "/readyz") == (200, {"status": "ready"})
        broker_down = create_app(
            TOOLS=[Jobs], BROKER="redis://127.0.0.1:1/0", STATE_SECRET=STATE
        )
        async with TestClient(TestServer(broker_down, host="127.0.0.1")) as down:
            assert await _status(down, "/readyz") == (
                503,
                {"status": "broker_unavailable"},
            )
            assert await _status(down, "/healthz") == (200, {"status": "ok"})


def test_the_probe_paths_are_routes_of_the_app():
    app = create_app(TOOLS=[Jobs])
    paths = {
        route.resource.canonical
        for route in app.router.routes()
        if route.resource is not None
    }
    assert {"/mcp", "/healthz", "/readyz"} <= paths
    assert isinstance(app, web.Application)


async def test_probes_of_a_stalled_broker_share_one_ping_and_one_warning(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    # the stalled PING gives up after BROKER_PING_TIMEOUT (2 s, read at each
    # ping): 0.5 s gives the same verdicts, twice, 3 s sooner
    monkeypatch.setattr(_health, "BROKER_PING_TIMEOUT", 0.5)
    caplog.set_level("INFO", logger="wymcp.transport.aiohttp")
    pings = 0
    answering = asyncio.Event()

    async def ping() -> None:  # a stalled Redis: no answer until the test says
        nonlocal pings
        pings += 1
        await answering.wait()

    app = create_app(TOOLS=[Jobs])
    get_endpoint(app).health._ping = ping
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        probes = [asyncio.ensure_future(_status(client, "/readyz")) for _ in range(50)]
        await asyncio.sleep(0.1)
        start = time.monotonic()  # a valid client beside them
        assert await _status(client, "/healthz") == (200, {"status": "ok"})
        assert time.monotonic() - start < 1.0
        answers = await asyncio.gather(*probes)
        assert set(map(str, answers)) == {"(503, {'status': 'broker_unavailable'})"}
        assert pings == 1
        await asyncio.sleep(1.1)  # past the verdict: one more PING, no more log
        assert await _status(client, "/readyz") == (
            503,
            {"status": "broker_unavailable"},
        )
        assert pings == 2
        answering.set()
        await asyncio.sleep(1.1)
        assert await _status(client, "/readyz") == (200, {"status": "ready"})
    warnings = [r for r in caplog.records if "did not answer" in r.getMessage()]
    assert len(warnings) == 1
    assert any("answers again" in r.getMessage() for r in caplog.records)
