"""The validation ladder, revision selection, sessions and lifecycle methods."""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

import pytest

from wymcp.core.schema import Action, Tool
from wymcp.core.server import Engine, EngineOptions, Exchange, Headers

MODERN = "2026-07-28"


class Tasks(Tool):
    name = "tasks"
    title = "Task tracker"
    description = "Track tasks."
    output_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"id": {"type": "integer"}},
    }
    actions: ClassVar[dict[str, Action]] = {
        "create": Action(
            description="Create a task",
            properties={"title": {"type": "string", "minLength": 1}},
            required=["title"],
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        return {"id": 1}


class Zero(Tool):
    name = "zero"
    description = "Takes nothing."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return "zero done"


@pytest.fixture
def wire(make_wire):
    return make_wire(Tasks, Zero)


# ---------------------------------------------------------------- 2026 ladder


async def test_tools_list_at_2026_carries_result_type_server_info_and_cache_hints(wire):
    reply, _ = await wire.modern("tools/list")
    assert reply.status == 200
    result = reply.body["result"]
    assert [t["name"] for t in result["tools"]] == ["tasks", "zero", "help"]
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "wymcp"
    assert result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")


async def test_tools_list_order_is_stable(wire):
    first, _ = await wire.modern("tools/list")
    second, _ = await wire.modern("tools/list", rid=2)
    assert first.body["result"]["tools"] == second.body["result"]["tools"]


async def test_a_batch_is_refused_with_400_and_invalid_request(wire):
    body, headers = wire.request("tools/list")
    reply, _ = await wire.post([body], headers)
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32600
    assert "id" not in reply.body


@pytest.mark.parametrize(
    "body",
    [
        "text",
        42,
        {"jsonrpc": "1.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": []},
        {"jsonrpc": "2.0"},
    ],
)
async def test_malformed_messages_get_400_invalid_request(wire, body):
    reply, _ = await wire.post(body, [("MCP-Protocol-Version", MODERN)])
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32600


async def test_missing_meta_is_400_invalid_params_before_header_checks(wire):
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
    reply, _ = await wire.post(body, [("MCP-Protocol-Version", MODERN)])
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32602
    assert reply.body["id"] == 7


@pytest.mark.parametrize(
    "drop",
    [
        "io.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/clientCapabilities",
    ],
)
async def test_each_required_meta_field_is_checked(wire, drop):
    meta = wire.meta()
    del meta[drop]
    reply, _ = await wire.modern("tools/list", meta=meta, rid="a")
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32602
    assert reply.body["id"] == "a"


async def test_client_info_is_optional(wire):
    reply, _ = await wire.modern("server/discover")
    assert reply.status == 200


async def test_header_version_mismatch_beats_unsupported_version(wire):
    meta = wire.meta(**{"io.modelcontextprotocol/protocolVersion": "v999.0.0"})
    reply, _ = await wire.modern("tools/list", meta=meta, rid=3)
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32020
    assert reply.body["id"] == 3


async def test_unsupported_version_is_400_with_supported_and_requested(wire):
    meta = wire.meta(**{"io.modelcontextprotocol/protocolVersion": "v999.0.0"})
    body, _ = wire.request("tools/list", meta=meta)
    headers = [("MCP-Protocol-Version", "v999.0.0"), ("Mcp-Method", "tools/list")]
    reply, _ = await wire.post(body, headers)
    assert reply.status == 400
    error = reply.body["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == "v999.0.0"
    assert MODERN in error["data"]["supported"]


@pytest.mark.parametrize(
    "headers",
    [
        [("MCP-Protocol-Version", MODERN)],
        [("MCP-Protocol-Version", MODERN), ("Mcp-Method", "TOOLS/LIST")],
        [("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/call")],
        [("Mcp-Method", "tools/list")],
        [
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "tools/list"),
            ("Mcp-Method", "tools/list"),
        ],
    ],
    ids=["missing-method", "case", "other-method", "missing-version", "duplicated"],
)
async def test_standard_header_problems_are_400_header_mismatch(wire, headers):
    body, _ = wire.request("tools/list")
    reply, _ = await wire.post(body, headers)
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32020


async def test_header_names_are_case_insensitive_and_values_trimmed(wire):
    body, _ = wire.request("tools/call", {"name": "zero"})
    headers = [
        ("mcp-protocol-version", MODERN),
        ("MCP-METHOD", " tools/call "),
        ("mcp-name", "  zero\t"),
    ]
    reply, _ = await wire.post(body, headers)
    assert reply.status == 200
    assert reply.body["result"]["content"][0]["text"] == "zero done"


@pytest.mark.parametrize(
    ("sent", "status"),
    [
        (None, 400),
        ("other", 400),
        ("=?base64?emVybw==?=", 200),
        ("=?base64?emVybw?=", 400),
    ],
)
async def test_mcp_name_must_match_the_tool_name(wire, sent, status):
    body, headers = wire.request("tools/call", {"name": "zero"})
    headers = [h for h in headers if h[0] != "Mcp-Name"]
    if sent is not None:
        headers.append(("Mcp-Name", sent))
    reply, _ = await wire.post(body, headers)
    assert reply.status == status
    if status == 400:
        assert reply.body["error"]["code"] == -32020


@pytest.mark.parametrize(
    ("field", "header", "sent"),
    [
        ("name", "Mcp-Name", "zéro"),
        ("name", "Mcp-Name", "ze\x7fro"),
        ("name", "Mcp-Name", "ze\tro"),
        ("name", "Mcp-Name", "\udcffzero"),
        ("method", "Mcp-Method", "tools/cäll"),
    ],
    ids=["latin", "del", "inner-tab", "raw-byte", "method"],
)
async def test_a_raw_value_that_is_not_visible_ascii_is_a_mismatch(
    wire, field, header, sent
):
    # even when it equals the body: such a value must come =?base64?…?=-wrapped
    body, headers = wire.request("tools/call", {"name": "zero"})
    if field == "method":
        body["method"] = sent
    else:
        body["params"]["name"] = sent
    headers = [h for h in headers if h[0] != header] + [(header, sent)]
    reply, _ = await wire.post(body, headers)
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32020
    assert "visible ASCII" in reply.body["error"]["message"]


async def test_a_base64_wrapped_non_ascii_name_passes_the_header_check(wire):
    body, headers = wire.request("tools/call", {"name": "zéro"})
    headers = [h for h in headers if h[0] != "Mcp-Name"]
    reply, _ = await wire.post(body, [*headers, ("Mcp-Name", "=?base64?esOpcm8=?=")])
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32602  # the unknown tool, past the header


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
    ],
)
async def test_removed_and_unknown_methods_are_404_method_not_found(wire, method):
    reply, _ = await wire.modern(method, rid="x")
    assert reply.status == 404
    assert reply.body["error"]["code"] == -32601
    assert reply.body["id"] == "x"


async def test_a_notification_at_2026_is_accepted_with_202(wire):
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}
    reply, _ = await wire.post(body, [("MCP-Protocol-Version", MODERN)])
    assert reply.status == 202
    assert reply.body is None


async def test_a_response_at_2026_is_refused(wire):
    body = {"jsonrpc": "2.0", "id": 1, "result": {}}
    reply, _ = await wire.post(body, [("MCP-Protocol-Version", MODERN)])
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32600


async def test_an_invalid_log_level_in_meta_is_invalid_params(wire):
    meta = wire.meta(**{"io.modelcontextprotocol/logLevel": "verbose"})
    reply, _ = await wire.modern("tools/list", meta=meta)
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32602


async def test_server_discover_names_versions_and_capabilities(wire):
    reply, _ = await wire.modern("server/discover")
    result = reply.body["result"]
    assert result["supportedVersions"][0] == MODERN
    assert "2025-11-25" in result["supportedVersions"]
    assert "tools" in result["capabilities"]
    assert result["resultType"] == "complete"


async def test_an_engine_without_2026_answers_unsupported_version(make_wire):
    wire = make_wire(Zero, protocol_versions=("2025-11-25",))
    reply, _ = await wire.modern("tools/list")
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32022
    assert reply.body["error"]["data"]["supported"] == []


async def test_the_session_id_header_is_ignored_at_2026(wire):
    reply, _ = await wire.modern(
        "tools/list", extra_headers=[("Mcp-Session-Id", "nope")]
    )
    assert reply.status == 200
    assert "Mcp-Session-Id" not in reply.headers


# ------------------------------------------------------------------- sessions


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26"])
async def test_initialize_echoes_a_supported_version_and_opens_a_session(wire, version):
    reply, _ = await wire.post(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        },
        revision=version,
    )
    assert reply.status == 200
    result = reply.body["result"]
    assert result["protocolVersion"] == version
    assert result["serverInfo"]["name"] == "wymcp"
    assert "tools" in result["capabilities"]
    sid = reply.headers["Mcp-Session-Id"]
    assert len(sid) == 43
    assert all(0x21 <= ord(c) <= 0x7E for c in sid)


@pytest.mark.parametrize("version", ["2024-11-05", "1999-01-01", None])
async def test_initialize_counter_proposes_the_latest_session_revision(wire, version):
    reply, _ = await wire.post(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": version},
        },
        revision="2025-11-25",
    )
    assert reply.body["result"]["protocolVersion"] == "2025-11-25"


def initialize_with(capabilities: Any, client_info: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": client_info,
        },
    }


@pytest.mark.parametrize(
    ("capabilities", "client_info"),
    [
        ({"experimental": {"x": "a" * 8200}}, {"name": "c", "version": "1"}),
        ({}, {"name": "c", "version": "1", "description": "d" * 8200}),
        ({"x": [{"a": i} for i in range(100_000)]}, {"name": "c", "version": "1"}),
    ],
    ids=["capabilities", "client-info", "1.4-MB-capabilities"],
)
async def test_initialize_refuses_declarations_a_session_would_keep_too_large(
    wire, capabilities, client_info
):
    reply, _ = await wire.post(
        initialize_with(capabilities, client_info), revision="2025-11-25"
    )
    assert reply.status == 400
    assert reply.body["id"] == 5
    assert reply.body["error"]["code"] == -32602
    assert "8192 bytes" in reply.body["error"]["data"]["reason"]
    assert "Mcp-Session-Id" not in reply.headers
    assert len(json.dumps(reply.body)) < 512


async def test_initialize_keeps_declarations_up_to_the_limit(wire):
    capabilities = {"sampling": {}, "experimental": {"x": "a" * 7000}}
    reply, _ = await wire.post(
        initialize_with(capabilities, {"name": "c", "version": "1"}),
        revision="2025-11-25",
    )
    assert reply.status == 200
    assert "Mcp-Session-Id" in reply.headers


async def test_session_ids_are_unique(wire):
    first = await wire.initialize()
    second = await wire.initialize()
    assert first != second


async def test_a_session_request_without_session_id_is_400(wire):
    body = {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}
    reply, _ = await wire.post(body, revision="2025-11-25")
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32600
    assert reply.body["id"] == 4


async def test_an_unknown_session_is_404_session_terminated(wire):
    reply, _ = await wire.session("nope", "tools/list", rid=9)
    assert reply.status == 404
    assert reply.body == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {"code": -32001, "message": "Session terminated"},
    }


async def test_a_notification_to_an_unknown_session_is_an_empty_404(wire):
    reply, _ = await wire.post(
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        [("Mcp-Session-Id", "nope")],
        revision="2025-11-25",
    )
    assert reply.status == 404
    assert reply.body is None


async def test_tools_list_and_call_in_a_session(wire):
    sid = await wire.initialize()
    reply, _ = await wire.session(sid, "tools/list")
    assert [t["name"] for t in reply.body["result"]["tools"]] == [
        "tasks",
        "zero",
        "help",
    ]
    assert "resultType" not in reply.body["result"]
    reply, _ = await wire.session(sid, "tools/call", {"name": "zero"}, rid=2)
    assert reply.body["result"]["content"] == [{"type": "text", "text": "zero done"}]


async def test_delete_ends_the_session_then_404(wire):
    sid = await wire.initialize()
    exchange = Exchange(method="DELETE", headers=Headers.of([("Mcp-Session-Id", sid)]))
    reply = await wire.engine.delete(exchange)
    assert reply.status == 200
    again = await wire.engine.delete(exchange)
    assert again.status == 404
    reply, _ = await wire.session(sid, "tools/list", rid=5)
    assert reply.status == 404
    assert reply.body["error"]["code"] == -32001
    assert reply.body["id"] == 5


class Waiter(Tool):
    """Waits until cancelled; records the cancellation."""

    name = "waiter"
    description = "Waits."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def __init__(self) -> None:
        self.cancelled = 0

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return "never"


@pytest.mark.parametrize("call_timeout", [None, 300.0])
async def test_delete_cancels_the_sessions_calls_in_flight(make_wire, call_timeout):
    """Each call in flight stops and answers 404 "Session terminated"."""
    tool = Waiter()
    wire = make_wire(tool, call_timeout=call_timeout)
    sid = await wire.initialize()
    calls = [
        asyncio.create_task(wire.session(sid, "tools/call", {"name": "waiter"}, rid=i))
        for i in (7, 8)
    ]
    for _ in range(5):
        await asyncio.sleep(0)
    assert not any(call.done() for call in calls)
    reply = await wire.engine.delete(
        Exchange(method="DELETE", headers=Headers.of([("Mcp-Session-Id", sid)]))
    )
    assert reply.status == 200
    for _ in range(10):
        await asyncio.sleep(0)
    assert all(call.done() for call in calls)
    for rid, call in zip((7, 8), calls, strict=True):
        answer, _ = call.result()
        assert answer.status == 404
        assert answer.body["error"]["code"] == -32001
        assert answer.body["id"] == rid
    assert tool.cancelled == 2


@pytest.mark.parametrize(
    "headers",
    [
        [],
        [("MCP-Protocol-Version", MODERN)],
        [("MCP-Protocol-Version", MODERN), ("Mcp-Session-Id", "x")],
    ],
)
async def test_get_and_delete_without_a_session_are_405(wire, headers):
    exchange = Exchange(method="GET", headers=Headers.of(headers))
    reply = await wire.engine.get(exchange, wire.Stream())
    assert reply.status == 405
    assert reply.headers["Allow"] == "POST"
    reply = await wire.engine.delete(
        Exchange(method="DELETE", headers=Headers.of(headers))
    )
    assert reply.status == 405


async def test_get_for_an_unknown_session_is_404(wire):
    exchange = Exchange(method="GET", headers=Headers.of([("Mcp-Session-Id", "nope")]))
    reply = await wire.engine.get(exchange, wire.Stream())
    assert reply.status == 404


async def test_get_opens_the_session_stream_with_a_priming_event(wire):
    import asyncio

    sid = await wire.initialize()
    stream = wire.Stream()
    exchange = Exchange(method="GET", headers=Headers.of([("Mcp-Session-Id", sid)]))
    task = asyncio.create_task(wire.engine.get(exchange, stream))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert stream.opened
    assert stream.events[0] == (None, "evt-1")
    # a second GET replaces the first, which then ends
    second = wire.Stream()
    task2 = asyncio.create_task(wire.engine.get(exchange, second))
    reply = await task
    assert reply.status == 200
    await asyncio.sleep(0)
    assert second.events[0] == (None, "evt-2")
    await wire.engine.delete(
        Exchange(method="DELETE", headers=Headers.of([("Mcp-Session-Id", sid)]))
    )
    assert (await task2).status == 200


@pytest.mark.parametrize("name", ["Mcp-Session-Id", "MCP-Protocol-Version"])
async def test_duplicated_singleton_headers_are_400(wire, name):
    sid = await wire.initialize()
    headers = [
        ("Mcp-Session-Id", sid),
        ("MCP-Protocol-Version", "2025-11-25"),
        (name, "x"),
    ]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    reply, _ = await wire.post(body, headers, revision="2025-11-25")
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32600
    get = await wire.engine.get(
        Exchange(method="GET", headers=Headers.of(headers)), wire.Stream()
    )
    assert get.status == 400


async def test_a_duplicated_version_header_on_initialize_is_400(wire):
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25"},
    }
    headers = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
    reply, _ = await wire.post(body, headers, revision="2025-11-25")
    assert reply.status == 400
    assert reply.body["id"] == 0


async def test_a_wrong_version_header_in_a_session_is_400(wire):
    sid = await wire.initialize("2025-06-18")
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = [("Mcp-Session-Id", sid), ("MCP-Protocol-Version", "2025-11-25")]
    reply, _ = await wire.post(body, headers, revision="2025-06-18")
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32600


async def test_a_2025_03_26_session_ignores_the_version_header(wire):
    sid = await wire.initialize("2025-03-26")
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = [("Mcp-Session-Id", sid), ("MCP-Protocol-Version", "2025-06-18")]
    reply, _ = await wire.post(body, headers, revision="2025-03-26")
    assert reply.status == 200


async def test_ping_answers_an_empty_result(wire):
    sid = await wire.initialize()
    reply, _ = await wire.session(sid, "ping")
    assert reply.body["result"] == {}


async def test_logging_set_level_accepts_the_eight_levels_only(wire):
    sid = await wire.initialize()
    for level in (
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ):
        reply, _ = await wire.session(sid, "logging/setLevel", {"level": level})
        assert reply.body["result"] == {}
    reply, _ = await wire.session(sid, "logging/setLevel", {"level": "verbose"})
    assert reply.body["error"]["code"] == -32602


async def test_methods_other_than_list_and_call_wait_for_initialized(wire):
    reply, _ = await wire.open_session()
    sid = reply.headers["Mcp-Session-Id"]
    listed, _ = await wire.session(sid, "tools/list")
    assert listed.status == 200
    early, _ = await wire.session(sid, "logging/setLevel", {"level": "info"})
    assert early.status == 400


async def test_an_unknown_method_in_a_session_is_method_not_found(wire):
    sid = await wire.initialize()
    reply, _ = await wire.session(sid, "server/discover", rid="q")
    assert reply.body["error"]["code"] == -32601
    assert reply.body["id"] == "q"


async def test_the_session_cap_answers_503_with_retry_after(make_wire):
    wire = make_wire(Zero, max_sessions=1)
    await wire.initialize()
    reply, _ = await wire.open_session()
    assert reply.status == 503
    assert reply.headers["Retry-After"] == "5"
    assert "Mcp-Session-Id" not in reply.headers


async def test_idle_sessions_expire(make_wire):
    now = [0.0]
    wire = make_wire(Zero, session_idle_timeout=10.0, clock=lambda: now[0])
    sid = await wire.initialize()
    now[0] = 5.0
    ok, _ = await wire.session(sid, "ping")
    assert ok.status == 200
    reply, _ = await wire.session(sid, "tools/list")
    assert reply.status == 200
    now[0] = 20.0
    reply, _ = await wire.session(sid, "tools/list")
    assert reply.status == 404


async def test_a_session_belongs_to_its_principal(wire):
    reply, _ = await wire.open_session(principal="alice")
    sid = reply.headers["Mcp-Session-Id"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    reply, _ = await wire.post(
        body, [("Mcp-Session-Id", sid)], revision="2025-11-25", principal="mallory"
    )
    assert reply.status == 404


# ------------------------------------------------------- fields by revision


async def test_title_and_output_schema_are_absent_at_2025_03_26(wire):
    sid = await wire.initialize("2025-03-26")
    reply, _ = await wire.session(sid, "tools/list", version="2025-03-26")
    tasks = reply.body["result"]["tools"][0]
    assert "title" not in tasks
    assert "outputSchema" not in tasks
    call, _ = await wire.session(
        sid,
        "tools/call",
        {"name": "tasks", "arguments": {"action": "create", "data": {"title": "x"}}},
        version="2025-03-26",
    )
    assert "structuredContent" not in call.body["result"]
    assert call.body["result"]["content"][0]["text"] == '{"id":1}'


async def test_title_and_output_schema_are_present_from_2025_06_18(wire):
    sid = await wire.initialize("2025-06-18")
    reply, _ = await wire.session(sid, "tools/list", version="2025-06-18")
    tasks = reply.body["result"]["tools"][0]
    assert tasks["title"] == "Task tracker"
    assert tasks["outputSchema"]["type"] == "object"
    call, _ = await wire.session(
        sid,
        "tools/call",
        {"name": "tasks", "arguments": {"action": "create", "data": {"title": "x"}}},
        version="2025-06-18",
    )
    assert call.body["result"]["structuredContent"] == {"id": 1}


async def test_aclose_ends_sessions(wire):
    sid = await wire.initialize()
    await wire.engine.aclose()
    reply, _ = await wire.session(sid, "tools/list")
    assert reply.status == 404


def test_engine_options_refuse_unknown_versions():
    with pytest.raises(ValueError, match="protocol_versions"):
        EngineOptions(protocol_versions=("2024-11-05",))


def test_an_engine_lists_help_last():
    engine = Engine(tools=[Zero], options=EngineOptions())
    assert [s.name for s in engine.tool_specs] == ["zero"]


async def test_a_session_follows_the_principal_identity_across_token_refresh(wire):
    reply, _ = await wire.open_session(principal={"sub": "alice", "exp": 1})
    sid = reply.headers["Mcp-Session-Id"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    refreshed, _ = await wire.post(
        body,
        [("Mcp-Session-Id", sid)],
        revision="2025-11-25",
        principal={"sub": "alice", "exp": 2},
    )
    assert refreshed.status == 200
    other, _ = await wire.post(
        body,
        [("Mcp-Session-Id", sid)],
        revision="2025-11-25",
        principal={"sub": "bob", "exp": 2},
    )
    assert other.status == 404


async def test_server_title_and_instructions_are_announced(make_wire):
    wire = make_wire(Zero, server_title="Zero server", instructions="Be kind.")
    reply, _ = await wire.modern("server/discover")
    assert reply.body["result"]["instructions"] == "Be kind."
    reply, _ = await wire.open_session()
    result = reply.body["result"]
    assert result["instructions"] == "Be kind."
    assert result["serverInfo"]["title"] == "Zero server"


@pytest.mark.parametrize(
    "meta",
    [
        {
            "io.modelcontextprotocol/protocolVersion": 2026,
            "io.modelcontextprotocol/clientCapabilities": {},
        },
        {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": [],
        },
    ],
)
async def test_mistyped_meta_fields_are_invalid_params(wire, meta):
    reply, _ = await wire.modern("tools/list", meta=meta)
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32602


async def test_a_2026_only_engine_refuses_initialize_naming_its_versions(make_wire):
    wire = make_wire(Zero, protocol_versions=(MODERN,))
    reply, _ = await wire.open_session()
    assert reply.status == 400
    assert reply.body["error"]["data"]["supported"] == [MODERN]


async def test_get_with_a_wrong_version_header_is_400(wire):
    sid = await wire.initialize("2025-06-18")
    headers = [("Mcp-Session-Id", sid), ("MCP-Protocol-Version", "2025-11-25")]
    reply = await wire.engine.get(
        Exchange(method="GET", headers=Headers.of(headers)), wire.Stream()
    )
    assert reply.status == 400


async def test_a_gone_get_stream_ends_quietly(wire):
    sid = await wire.initialize()
    wire.engine.add_tool(Tasks)
    reply = await wire.engine.get(
        Exchange(method="GET", headers=Headers.of([("Mcp-Session-Id", sid)])),
        wire.Stream(fail=True),
    )
    assert reply.status == 200


class Deaf(Tool):
    """Swallows its cancellation and returns anyway."""

    name = "deaf"
    description = "Ignores one cancellation."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return "went on"
        return "never"


async def test_a_call_that_swallows_a_delete_still_answers_session_terminated(
    make_wire,
):
    wire = make_wire(Deaf)  # no CALL_TIMEOUT: the tool runs in the request's task
    sid = await wire.initialize()
    call = asyncio.create_task(wire.session(sid, "tools/call", {"name": "deaf"}))
    for _ in range(5):
        await asyncio.sleep(0)
    await wire.engine.delete(
        Exchange(method="DELETE", headers=Headers.of([("Mcp-Session-Id", sid)]))
    )
    answer, _ = await call
    assert answer.status == 404
    assert answer.body["error"]["message"] == "Session terminated"


@pytest.mark.parametrize("name", ["Mcp-Session-Id", "MCP-Protocol-Version"])
async def test_a_repeated_session_header_gets_one_answer_on_post_get_and_delete(
    wire, name
):
    sid = await wire.initialize()
    headers = [("Mcp-Session-Id", sid), ("MCP-Protocol-Version", "2025-11-25")]
    headers.append((name, dict(headers)[name]))
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    posted, _ = await wire.post(body, headers, revision="2025-11-25")
    said = f"Duplicated {name} header. Send exactly one {name} header."
    assert posted.body["error"]["data"] == {"reason": said}
    got = await wire.engine.get(
        Exchange(method="GET", headers=Headers.of(headers)), wire.Stream()
    )
    deleted = await wire.engine.delete(
        Exchange(method="DELETE", headers=Headers.of(headers))
    )
    assert (
        (got.status, got.body)
        == (deleted.status, deleted.body)
        == (
            400,
            {"error": said},
        )
    )
