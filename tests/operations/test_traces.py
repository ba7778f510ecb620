"""TRACING: the spans of each request, read with the SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

from ops_tools import Jobs
from wymcp.conf import load_settings, run_checks
from wymcp.core.schema import Action, Tool
from wymcp.testing import Client
from wymcp.transport.aiohttp import create_app

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
HTTP_TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
HTTP_PARENT_ID = "b7ad6b7169203331"
HTTP_TRACEPARENT = f"00-{HTTP_TRACE_ID}-{HTTP_PARENT_ID}-01"
REVISIONS = ["2026-07-28", "2025-11-25"]

_EXPORTER = InMemorySpanExporter()


@pytest.fixture(autouse=True)
def spans() -> InMemorySpanExporter:
    """The spans this test made (the global provider is set once per process)."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    return _EXPORTER


class Asker(Tool):
    """A plain tool that asks the user's name (a server->client request at 2025)."""

    name = "asker"
    description = "Greet the user by name."
    actions = {"greet": Action(description="Greet", properties={})}  # noqa: RUF012 - the pinned declaration style

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> Any:
        del action, data
        answer = await ctx.elicit("Your name?", {"type": "object", "properties": {}})
        return {"hello": answer.get("content", {}).get("name")}


def _named(spans: InMemorySpanExporter, name: str) -> ReadableSpan:
    found = [s for s in spans.get_finished_spans() if s.name == name]
    assert len(found) == 1, [s.name for s in spans.get_finished_spans()]
    return found[0]


def _children(spans: InMemorySpanExporter, parent: ReadableSpan) -> list[str]:
    assert parent.context is not None
    return sorted(
        s.name
        for s in spans.get_finished_spans()
        if s.parent is not None and s.parent.span_id == parent.context.span_id
    )


@pytest.mark.parametrize("version", REVISIONS)
async def test_a_call_span_has_the_conventions_attributes_and_the_meta_parent(
    spans: InMemorySpanExporter, version: str
):
    app = create_app(TOOLS=[Jobs], TRACING=True)
    async with Client(app, protocol_version=version) as client:
        ok = await client.call(
            "jobs", "run", {"size": 2}, meta={"traceparent": TRACEPARENT}
        )
        session = client.session_id
    assert ok.value == {"size": 2}
    call = _named(spans, "tools/call jobs")
    assert call.kind is SpanKind.SERVER
    attributes = dict(call.attributes or {})
    expected = {
        "mcp.method.name": "tools/call",
        "mcp.protocol.version": version,
        "gen_ai.tool.name": "jobs",
        "gen_ai.operation.name": "execute_tool",
        "wymcp.action": "run",
    }
    assert {k: attributes.get(k) for k in expected} == expected
    assert attributes["jsonrpc.request.id"].isdigit()
    assert attributes.get("mcp.session.id") == session
    assert (session is None) == (version == "2026-07-28")
    assert "error.type" not in attributes
    assert call.status.status_code is StatusCode.UNSET
    # the parent is the client's span named in `params._meta`
    assert call.parent is not None
    assert call.parent.is_remote
    assert f"{call.parent.trace_id:032x}" == TRACE_ID
    assert f"{call.parent.span_id:016x}" == PARENT_ID
    # the gates and the tool's code are child spans of the call span
    assert _children(spans, call) == ["execute_tool jobs", "gates jobs"]
    assert call.context is not None
    assert {
        s.context.trace_id
        for s in spans.get_finished_spans()
        if s.context is not None and s.name.endswith(" jobs")
    } == {int(TRACE_ID, 16)}


@pytest.mark.parametrize("version", REVISIONS)
async def test_a_refused_call_and_a_raised_tool_carry_error_type(
    spans: InMemorySpanExporter, version: str
):
    app = create_app(TOOLS=[Jobs], TRACING=True)
    async with Client(app, protocol_version=version) as client:
        refused = await client.call("jobs", "run", {"size": 99})
        assert refused.is_error
        refused_spans = spans.get_finished_spans()
        spans.clear()
        crashed = await client.call("jobs", "crash")
        assert crashed.is_error
    (call,) = [s for s in refused_spans if s.name == "tools/call jobs"]
    assert (call.attributes or {})["error.type"] == "invalid_values"
    assert call.status.status_code is StatusCode.ERROR
    (gates,) = [s for s in refused_spans if s.name == "gates jobs"]
    assert (gates.attributes or {})["error.type"] == "invalid_values"
    assert gates.parent is not None
    assert call.context is not None
    assert gates.parent.span_id == call.context.span_id
    assert not [s for s in refused_spans if s.name == "execute_tool jobs"]
    raised = _named(spans, "tools/call jobs")
    assert (raised.attributes or {})["error.type"] == "tool_raised"
    assert raised.status.status_code is StatusCode.ERROR
    tool = _named(spans, "execute_tool jobs")
    assert (tool.attributes or {})["error.type"] == "RuntimeError"  # what it raised
    assert _children(spans, raised) == ["execute_tool jobs", "gates jobs"]


async def test_a_call_stopped_at_call_timeout_is_a_timeout(
    spans: InMemorySpanExporter,
):
    app = create_app(TOOLS=[Jobs], TRACING=True, CALL_TIMEOUT=0.3)
    async with Client(app) as client:
        stopped = await client.call("jobs", "sleep")
    assert stopped.is_error
    call = _named(spans, "tools/call jobs")
    assert (call.attributes or {})["error.type"] == "call_timeout"
    tool = _named(spans, "execute_tool jobs")
    assert (tool.attributes or {})["error.type"] == "timeout"
    assert tool.parent is not None
    assert call.context is not None
    assert tool.parent.span_id == call.context.span_id


async def test_a_json_rpc_error_is_its_code_and_an_unknown_tool_is_not_named(
    spans: InMemorySpanExporter,
):
    app = create_app(TOOLS=[Jobs], TRACING=True)
    async with Client(app) as client:
        unknown = await client.call("no-such-tool\r\nX", "x")
    assert unknown.error is not None
    call = _named(spans, "tools/call")
    attributes = dict(call.attributes or {})
    assert attributes["error.type"] == "unknown_tool"
    assert attributes["rpc.response.status_code"] == str(unknown.error["code"])
    assert "gen_ai.tool.name" not in attributes
    # the status text is the outcome, never the name the client sent
    assert call.status.description == "unknown_tool"


@pytest.mark.parametrize("version", REVISIONS)
async def test_the_http_traceparent_is_the_parent_unless_meta_names_one(
    spans: InMemorySpanExporter, version: str
):
    """`_meta` wins (the MCP conventions); the HTTP context is then a link."""
    app = create_app(TOOLS=[Jobs], TRACING=True)
    headers = {"traceparent": HTTP_TRACEPARENT}
    async with Client(app, protocol_version=version, headers=headers) as client:
        await client.call("jobs", "run", {"size": 1})
        from_http = _named(spans, "tools/call jobs")
        spans.clear()
        await client.call("jobs", "run", {"size": 1}, meta={"traceparent": TRACEPARENT})
        from_meta = _named(spans, "tools/call jobs")
    assert from_http.parent is not None
    assert f"{from_http.parent.trace_id:032x}" == HTTP_TRACE_ID
    assert f"{from_http.parent.span_id:016x}" == HTTP_PARENT_ID
    assert not from_http.links
    assert from_meta.parent is not None
    assert f"{from_meta.parent.span_id:016x}" == PARENT_ID
    assert [f"{link.context.span_id:016x}" for link in from_meta.links] == [
        HTTP_PARENT_ID
    ]


@pytest.mark.parametrize(
    "traceparent",
    [
        "garbage",
        f"00-{TRACE_ID}-{PARENT_ID}-01-" + "x" * 200,  # longer than read
        12345,
        f"00-{'0' * 32}-{PARENT_ID}-01",  # an invalid (all-zero) trace id
    ],
)
async def test_a_bad_traceparent_starts_a_new_trace_and_the_call_is_answered(
    spans: InMemorySpanExporter, traceparent: object
):
    app = create_app(TOOLS=[Jobs], TRACING=True)
    async with Client(app) as client:
        ok = await client.call(
            "jobs", "run", {"size": 1}, meta={"traceparent": traceparent}
        )
    assert ok.value == {"size": 1}
    call = _named(spans, "tools/call jobs")
    assert call.parent is None


@pytest.mark.parametrize("size", [64 * 1024, 128 * 1024])
async def test_huge_tracestate_and_baggage_are_ignored_unread(
    spans: InMemorySpanExporter, loop_watchdog: Any, size: int
):
    """Values past the bounds never reach the propagators; the parent still holds."""
    app = create_app(TOOLS=[Jobs], TRACING=True)
    meta = {
        "traceparent": TRACEPARENT,
        "tracestate": "a=" + "b" * size,
        "baggage": "k=v," * (size // 4),
    }
    async with Client(app) as client:
        ok = await client.call("jobs", "run", {"size": 1}, meta=meta)
    assert ok.value == {"size": 1}
    call = _named(spans, "tools/call jobs")
    assert call.parent is not None
    assert f"{call.parent.span_id:016x}" == PARENT_ID
    assert call.parent.trace_state is not None
    assert not call.parent.trace_state  # the over-long tracestate was not read


@pytest.mark.parametrize("version", REVISIONS)
async def test_a_server_to_client_request_carries_the_trace_context(
    spans: InMemorySpanExporter, version: str
):
    """2025: a request on the call's stream; 2026: each of `inputRequests`."""
    asked: list[dict[str, Any]] = []

    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        del method
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    app = create_app(TOOLS=[Asker], TRACING=True)
    async with Client(
        app,
        protocol_version=version,
        capabilities={"elicitation": {}},
        on_request=answer,
    ) as client:
        greeted = await client.call("asker", "greet", meta={"traceparent": TRACEPARENT})
    assert greeted.value == {"hello": "Ada"}
    (params,) = asked
    carried = params["_meta"]["traceparent"]
    # the client's answer is a child of the tool's span that asked, in the
    # caller's trace (at 2026, the first round's: the retry runs the tool again)
    tools = [s for s in spans.get_finished_spans() if s.name == "execute_tool asker"]
    assert len(tools) == (2 if version == "2026-07-28" else 1)
    asking = tools[0].context
    assert asking is not None
    assert carried == f"00-{TRACE_ID}-{asking.span_id:016x}-01"


async def test_the_stdio_transport_traces_each_request(spans: InMemorySpanExporter):
    from wymcp.transport.stdio import build_stdio_engine
    from wymcp.transport.stdio._connection import Connection
    from wymcp.transport.stdio._line_writer import LineWriter

    class Collected:
        full = False

        def __init__(self) -> None:
            self.data = bytearray()

        def write(self, data: bytes) -> None:
            self.data += data

        async def drain(self) -> None:
            return None

        async def aclose(self) -> None:
            return None

    class Lines:
        def __init__(self, data: bytes) -> None:
            self._pieces = [data]

        async def read(self) -> bytes:
            await asyncio.sleep(0)
            return self._pieces.pop(0) if self._pieces else b""

    settings = load_settings(None, TOOLS=[Jobs], TRACING=True, STATE_SECRET="s" * 32)
    output = Collected()
    connection = Connection(
        build_stdio_engine(settings),
        LineWriter(output),
        body_limit=1024 * 1024,
        depth_limit=100,
        shutdown_grace=1.0,
    )
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "traceparent": TRACEPARENT,
    }
    request = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "jobs",
            "arguments": {"action": "crash", "data": {}},
            "_meta": meta,
        },
    }
    await connection.read(Lines(json.dumps(request).encode() + b"\n"))
    async with asyncio.timeout(5):
        await asyncio.gather(*connection._in_flight.values())
    answer = json.loads(output.data)
    assert answer["id"] == 7
    assert answer["result"]["isError"] is True
    call = _named(spans, "tools/call jobs")
    attributes = dict(call.attributes or {})
    assert attributes["error.type"] == "tool_raised"
    assert attributes["jsonrpc.request.id"] == "7"
    assert attributes["mcp.protocol.version"] == "2026-07-28"
    assert call.parent is not None
    assert f"{call.parent.span_id:016x}" == PARENT_ID
    assert _children(spans, call) == ["execute_tool jobs", "gates jobs"]


def test_tracing_off_never_imports_opentelemetry():
    """The default path: an engine serves a call and OpenTelemetry stays unloaded."""
    script = """
import asyncio, sys
sys.path.insert(0, "tests")
from ops_tools import Jobs
from wymcp.core.server import Engine, Exchange, Headers

async def main():
    engine = Engine(tools=[Jobs])
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "traceparent": "TRACEPARENT"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "jobs", "arguments": {"action": "run", "data": {"size": 1}},
        "_meta": meta}}
    exchange = Exchange("POST", Headers.of([("mcp-protocol-version", "2026-07-28")]),
                        body, mirrored_headers=False)
    reply = await engine.post(exchange, None)
    assert reply.status == 200, reply
    assert exchange.record is None
    print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))

asyncio.run(main())
""".replace("TRACEPARENT", TRACEPARENT)
    done = subprocess.run(  # noqa: S603 - this interpreter, our script
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_tracing_without_the_api_is_e013(monkeypatch: pytest.MonkeyPatch):
    import importlib.util

    assert not [
        p for p in run_checks(load_settings(None, TRACING=True)) if p.id == "wymcp.E013"
    ]
    real = importlib.util.find_spec

    def without_otel(name: str, *args: Any) -> Any:
        return None if name == "opentelemetry" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_otel)
    (problem,) = [
        p for p in run_checks(load_settings(None, TRACING=True)) if p.id == "wymcp.E013"
    ]
    assert "otel" in (problem.hint or "")
