"""MIDDLEWARE: a user's own middleware tags calls and refuses some, on the wire."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from ops_tools import SEEN, Jobs, NoCrash, Tagger
from wymcp.conf import ImproperlyConfigured, load_settings
from wymcp.core.server import Engine
from wymcp.testing import Client
from wymcp.transport.aiohttp import create_app


@pytest.fixture(autouse=True)
def _fresh() -> None:
    SEEN.clear()


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_tagging_middleware_sees_each_call_and_its_outcome(version: str):
    app = create_app(TOOLS=[Jobs], MIDDLEWARE=[Tagger])
    async with Client(app, protocol_version=version) as client:
        ok = await client.call("jobs", "run", {"size": 2})
        refused = await client.call("jobs", "run", {"size": 99})
        failed = await client.call("jobs", "fail")
    assert ok.value == {"size": 2}
    assert refused.is_error
    assert failed.is_error
    calls = [r for r in SEEN if r.method == "tools/call"]
    assert [(r.tool, r.action, r.outcome, r.refused) for r in calls] == [
        ("jobs", "run", "ok", False),
        ("jobs", "run", "invalid_values", True),
        ("jobs", "fail", "tool_error", False),
    ]
    assert {r.revision for r in calls} == {version}
    assert all(r.tags == {"tagged": f"jobs.{r.action}"} for r in calls)
    assert all((r.session is None) == (version == "2026-07-28") for r in calls)


async def test_a_refusing_middleware_answers_a_tool_refusal_and_the_tool_never_runs():
    app = create_app(TOOLS=[Jobs], MIDDLEWARE=["ops_tools.Tagger", NoCrash()])
    async with Client(app) as client:
        crash = await client.call("jobs", "crash")
        run = await client.call("jobs", "run", {"size": 1})
        listing = await client.request("tools/list")
    assert crash.status == 200
    assert crash.is_error
    assert json.loads(crash.text) == {
        "error": "crash_forbidden",
        "message": "Crashing jobs is not allowed here.",
        "tool": "jobs",
        "action": "crash",
        "help": 'help {tool: "jobs", action: "crash"}',
    }
    assert run.value == {"size": 1}
    # any other method: a JSON-RPC error naming the middleware's code
    assert listing.error is not None
    assert listing.error["code"] == -32600
    assert listing.error["data"] == {"error": "listing_closed"}
    # the outer middleware saw the inner one's refusal as the call's outcome
    crashed = next(r for r in SEEN if r.action == "crash")
    assert (crashed.outcome, crashed.refused) == ("crash_forbidden", True)


def test_middleware_is_checked_when_the_settings_load():
    with pytest.raises(ImproperlyConfigured, match=r"MIDDLEWARE items must be"):
        load_settings(None, MIDDLEWARE=[42])
    with pytest.raises(ImproperlyConfigured, match=r"E003"):
        load_settings(None, MIDDLEWARE=["no_such_module.Middleware"])


async def test_the_stdio_engine_runs_the_middleware_too():
    from wymcp.transport.stdio import build_stdio_engine

    settings = load_settings(
        None, TOOLS=[Jobs], MIDDLEWARE=[NoCrash], STATE_SECRET="s" * 32
    )
    engine = build_stdio_engine(settings)
    reply = await engine.post(_modern_exchange("crash"), _NoStream())
    result = reply.body["result"]
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"])["error"] == "crash_forbidden"


def _modern_exchange(action: str) -> Any:
    from wymcp.core.server import Exchange, Headers

    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "jobs",
            "arguments": {"action": action, "data": {}},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    return Exchange(
        "POST",
        Headers.of([("mcp-protocol-version", "2026-07-28")]),
        body,
        mirrored_headers=False,
    )


async def test_without_middleware_the_engine_makes_no_record():
    """The default path: no record, the handler awaited as before."""
    engine = Engine(tools=[Jobs])
    assert engine._middleware == ()
    from wymcp.core.server import Exchange, Headers

    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "jobs",
            "arguments": {"action": "run", "data": {"size": 1}},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    exchange = Exchange(
        "POST",
        Headers.of([("mcp-protocol-version", "2026-07-28")]),
        body,
        mirrored_headers=False,
    )
    reply = await engine.post(exchange, _NoStream())
    assert reply.status == 200
    assert exchange.record is None


@pytest.mark.parametrize(
    ("raised", "outcome"),
    [
        (RuntimeError("a bug in a handler"), "internal_error"),
        (asyncio.CancelledError(), "cancelled"),
    ],
)
async def test_a_handler_raising_without_middleware_is_recorded(
    raised: BaseException, outcome: str
):
    """Without middleware the handler is awaited directly (no `observed`
    around it); the engine still notes the outcome in the transport's record."""
    from wymcp.core.server import CallRecord

    engine = Engine(tools=[Jobs])

    async def broken(call: Any) -> Any:
        raise raised

    engine._methods["tools/call"] = broken
    exchange = _modern_exchange("run")
    exchange.record = record = CallRecord()
    with pytest.raises(type(raised)):
        await engine.post(exchange, _NoStream())
    assert (record.method, record.tool, record.action) == ("tools/call", "jobs", "run")
    assert (record.outcome, record.refused) == (outcome, False)


class _NoStream:
    opened = False

    async def open(self, headers: Any = None) -> None:
        raise AssertionError("no stream expected")

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        raise AssertionError("no stream expected")


class _RecordSpy:
    """An engine that notes whether each POST came with a record, then serves it."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.records: list[object | None] = []

    async def post(self, exchange: Any, stream: Any) -> Any:
        self.records.append(exchange.record)
        return await self.engine.post(exchange, stream)


@pytest.mark.parametrize(
    ("settings", "observed"),
    [({}, False), ({"METRICS": True}, True), ({"ACCESS_LOG": True}, True)],
)
async def test_the_endpoint_observes_requests_only_when_asked(
    settings: dict[str, object], observed: bool
):
    """Both off, the engine gets no record (and makes none): nothing is counted."""
    from wymcp.transport.aiohttp._setup import get_endpoint

    app = create_app(TOOLS=[Jobs], **settings)
    endpoint = get_endpoint(app)
    spy = _RecordSpy(endpoint.engine)
    endpoint.engine = spy
    async with Client(app) as client:
        ran = await client.call("jobs", "run", {"size": 1})
    assert ran.value == {"size": 1}
    assert spy.records
    assert all((record is not None) == observed for record in spy.records)


class _RaisesBefore:
    async def __call__(self, call: Any, call_next: Any) -> Any:
        if call.action == "run":
            raise RuntimeError("a bug in the middleware")
        return await call_next()


class _RaisesAfter:
    async def __call__(self, call: Any, call_next: Any) -> Any:
        result = await call_next()
        if call.action == "run":
            raise RuntimeError("a bug in the middleware")
        return result


@pytest.mark.parametrize("middleware", [_RaisesBefore, _RaisesAfter])
async def test_a_raising_middleware_is_counted_and_logged_as_internal_error(
    middleware: type, caplog: pytest.LogCaptureFixture
):
    caplog.set_level("INFO", logger="wymcp.access")
    app = create_app(
        TOOLS=[Jobs], MIDDLEWARE=[Tagger, middleware()], METRICS=True, ACCESS_LOG=True
    )
    async with Client(app) as client:
        raised = await client.call("jobs", "run", {"size": 1})
        fine = await client.call("jobs", "fail")
        async with client.http.get("/metrics") as response:
            text = await response.text()
    assert raised.error is not None
    assert raised.error["code"] == -32603
    assert fine.is_error
    assert (
        'wymcp_tool_calls_total{action="run",outcome="internal_error",tool="jobs"} 1.0'
        in text
    )
    assert 'method="tools/call",outcome="ok"' not in text
    assert 'outcome="ok",tool="jobs"' not in text
    lines = [r.getMessage() for r in caplog.records if r.name == "wymcp.access"]
    assert any(
        "action=run" in line and "outcome=internal_error" in line for line in lines
    )
