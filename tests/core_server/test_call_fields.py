"""What a call's `Call` and its tool's `ctx` carry, field by field.

`build_call` sets each field of a `Call` made without `__init__` (as `classify`
does a request's `Incoming`), and `Contexts` fills `ToolContext` positionally,
so each field is pinned here by name: a field added or moved in the class
shows up as a wrong value or as never set.
"""

from __future__ import annotations

from typing import Any

import attrs

from wymcp.core.schema import Tool
from wymcp.core.server import Exchange, Headers
from wymcp.core.server._call import Call, build_call
from wymcp.core.server._jsonrpc import Incoming, classify
from wymcp.core.server._revision import STATELESS


class Principal:
    subject = "alice"


def test_build_call_fills_each_field_from_the_request() -> None:
    params = {"name": "t", "_meta": {"k": 1}}
    incoming = classify(
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    )
    headers = Headers.of([("Mcp-Method", "tools/call")])
    principal = Principal()
    exchange = Exchange(
        "POST",
        headers,
        None,
        principal,
        mirrored_headers=True,
        peer="10.0.0.1",
        json_bytes=123,
    )
    stream = object()
    meta = {"m": 1}
    capabilities = {"c": 1}
    call = build_call(
        incoming,
        exchange,
        stream,  # type: ignore[arg-type]
        revision=STATELESS,
        meta=meta,
        capabilities=capabilities,
    )
    assert call.id == 7
    assert call.method == "tools/call"
    assert call.params is params
    assert call.meta is meta
    assert call.revision is STATELESS
    assert call.version == STATELESS.name
    assert call.headers is headers
    assert call.principal is principal
    assert call.checks_params is True
    assert call.stream is stream
    assert call.capabilities is capabilities
    assert call.session is None
    assert call.peer == "10.0.0.1"
    assert call.record is None
    assert call.json_bytes == 123


def _stateless_call(incoming: Incoming, exchange: Exchange) -> Call:
    """`build_call` at 2026-07-28, with no stream, `_meta` or capabilities."""
    return build_call(
        incoming,
        exchange,
        None,  # type: ignore[arg-type]
        revision=STATELESS,
        meta={},
        capabilities={},
    )


def test_without_mirrored_headers_a_call_checks_no_params() -> None:
    incoming = classify({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    exchange = Exchange("POST", Headers.of([]), None, mirrored_headers=False)
    call = _stateless_call(incoming, exchange)
    assert call.checks_params is False
    assert call.peer is None
    assert call.json_bytes is None


class Seen(Tool):
    """Answers what its `ctx` holds."""

    name = "seen"
    description = "Tells what its context holds."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        del arguments
        return {
            "request_id": ctx.request_id,
            "session_id": ctx.session_id,
            "protocol_version": ctx.protocol_version,
            "meta": dict(ctx.meta),
            "principal": getattr(ctx.principal, "subject", None),
            "client_capabilities": dict(ctx.client_capabilities),
            "tool": ctx.tool,
            "action": ctx.action,
            "request_state": ctx.request_state,
            "state": ctx.state,
            "server": ctx.server is not None,
            "progress_token": ctx.progress_token,
            "log": [ctx._log_enabled, ctx._log_threshold],
            "stream": ctx._stream is not None,
            "asker": [ctx._asker is None, callable(ctx._make_asker)],
        }


async def test_a_stateless_ctx_holds_the_call(make_wire: Any) -> None:
    wire = make_wire(Seen())
    meta = wire.meta(
        progressToken="p1", **{"io.modelcontextprotocol/logLevel": "debug"}
    )
    meta["io.modelcontextprotocol/clientCapabilities"] = {"roots": {}}
    body, headers = wire.request(
        "tools/call", {"name": "seen", "arguments": {}}, rid=42, meta=meta
    )
    reply, _ = await wire.post(body, headers, principal=Principal())
    seen = wire.result_json(reply)
    assert seen == {
        "request_id": 42,
        "session_id": None,
        "protocol_version": "2026-07-28",
        "meta": meta,
        "principal": "alice",
        "client_capabilities": {"roots": {}},
        "tool": "seen",
        "action": None,
        "request_state": None,
        "state": None,
        "server": True,
        "progress_token": "p1",
        "log": [True, "debug"],
        "stream": True,
        "asker": [True, True],
    }


def test_build_call_and_classify_set_every_field_of_their_class() -> None:
    """Both set fields on an instance made without `__init__`: none may be missed."""
    params: dict[str, Any] = {"name": "t"}
    incoming = classify(
        {"jsonrpc": "2.0", "id": "r", "method": "tools/call", "params": params}
    )
    exchange = Exchange("POST", Headers.of([]), None)
    call = _stateless_call(incoming, exchange)
    for made, cls in ((incoming, Incoming), (call, Call)):
        unset = [
            field.name for field in attrs.fields(cls) if not hasattr(made, field.name)
        ]
        assert unset == [], f"{cls.__name__} fields never set: {unset}"
    assert incoming.kind == "request"
    assert (incoming.method, incoming.id) == ("tools/call", "r")
    assert incoming.params is params
    assert (incoming.result, incoming.error) == (None, None)
    assert incoming.meta == {}
