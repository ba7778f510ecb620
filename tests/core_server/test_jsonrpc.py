"""Classification of whatever a client sends, and the engine's answers to
arbitrary bodies: always bounded, never an exception.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wymcp.core.schema import Action, Tool
from wymcp.core.server import Engine, EngineOptions, Exchange, Headers
from wymcp.core.server._jsonrpc import RpcError, classify, echo, request_id_of

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)
METHODS = st.sampled_from(
    [
        "tools/call",
        "tools/list",
        "server/discover",
        "initialize",
        "ping",
        "prompts/get",
        "resources/read",
        "completion/complete",
        "logging/setLevel",
        "notifications/initialized",
    ]
)


class Widgets(Tool):
    name = "widgets"
    description = "Widgets."
    actions: ClassVar[dict[str, Action]] = {
        "create": Action(
            description="Create",
            properties={
                "name": {"type": "string", "maxLength": 5},
                "qty": {"type": "integer", "minimum": 0},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            required=["name"],
        )
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        return data


class NullStream:
    opened = False

    async def open(self, headers: Any = None) -> None:
        self.opened = True

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        self.opened = True


def answer(body: Any, headers: list[tuple[str, str]]) -> Any:
    engine = Engine(tools=[Widgets], options=EngineOptions())
    exchange = Exchange("POST", Headers.of(headers), body)
    return asyncio.run(engine.post(exchange, NullStream()))


def check_bounded(reply: Any) -> None:
    assert reply.status in {200, 202, 204, 400, 404}
    if reply.body is not None:
        text = json.dumps(reply.body)
        assert len(text) < 8192
        assert "Traceback" not in text


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(body=JSON)
def test_any_body_gets_a_bounded_answer(body):
    check_bounded(answer(body, []))
    check_bounded(answer(body, [("MCP-Protocol-Version", "2026-07-28")]))


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(method=METHODS, params=st.dictionaries(st.text(max_size=12), JSON, max_size=4))
def test_any_params_get_a_bounded_answer(method, params):
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", method)]
    if isinstance(params.get("name"), str):
        headers.append(("Mcp-Name", params["name"]))
    check_bounded(answer(body, headers))


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(arguments=JSON)
def test_any_tool_arguments_get_a_bounded_answer(arguments):
    params = {
        "name": "widgets",
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "widgets"),
    ]
    reply = answer(body, headers)
    check_bounded(reply)


def test_a_huge_name_is_not_echoed_in_full():
    name = "x" * 100_000
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ]
    reply = answer(body, headers)
    assert len(json.dumps(reply.body)) < 2048


def test_classification():
    assert classify({"jsonrpc": "2.0", "id": 1, "method": "m"}).kind == "request"
    assert classify({"jsonrpc": "2.0", "method": "m"}).kind == "notification"
    assert classify({"jsonrpc": "2.0", "id": "a", "result": {}}).kind == "response"
    assert classify({"jsonrpc": "2.0", "id": "a", "error": {}}).kind == "response"


@pytest.mark.parametrize(
    "bad",
    [
        {"jsonrpc": "2.0", "id": "a", "result": {}, "error": {}},
        {"jsonrpc": "2.0", "id": True, "method": "m"},
        {"jsonrpc": "2.0", "id": None, "result": {}},
    ],
)
def test_what_is_no_message_is_invalid_request(bad):
    with pytest.raises(RpcError) as raised:
        classify(bad)
    assert raised.value.code == -32600


def test_request_id_of_echoes_only_valid_request_ids():
    assert request_id_of({"method": "m", "id": 3}) == 3
    assert request_id_of({"method": "m", "id": 3.5}) is None
    assert request_id_of({"id": 3}) is None
    assert request_id_of([{"method": "m", "id": 3}]) is None


def test_echo_cuts_long_text():
    assert echo("abc") == "abc"
    assert len(echo("x" * 500)) == 121


def request(rid: Any, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"_meta": meta} if meta is not None else {}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": params}


@pytest.mark.parametrize(
    "rid",
    ["x" * 200, "", 2**63 - 1, -(2**63) + 1, 0],
    ids=["200-characters", "empty", "2**63-1", "-(2**63-1)", "zero"],
)
def test_ids_within_the_bounds_are_requests(rid):
    assert classify(request(rid)).id == rid
    assert request_id_of(request(rid)) == rid


@pytest.mark.parametrize(
    "rid",
    ["x" * 201, "i" * 100_000, 2**63, -(2**63), 10**300],
    ids=["201-characters", "100000-characters", "2**63", "-2**63", "301-digits"],
)
def test_ids_past_the_bounds_are_refused_and_never_echoed(rid):
    with pytest.raises(RpcError) as raised:
        classify(request(rid))
    assert raised.value.code == -32600
    assert "at most 200 characters" in raised.value.data["reason"]
    assert request_id_of(request(rid)) is None
    reply = answer(request(rid), [])
    assert reply.status == 400
    assert "id" not in reply.body
    assert len(json.dumps(reply.body)) < 512


@pytest.mark.parametrize(
    "token",
    ["t" * 201, 10**300, -(2**63)],
    ids=["201-characters", "301-digits", "-2**63"],
)
def test_a_progress_token_past_the_bounds_is_refused_echoing_the_id(token):
    body = request(7, {"progressToken": token})
    with pytest.raises(RpcError) as raised:
        classify(body)
    assert "progressToken" in raised.value.data["reason"]
    reply = answer(body, [])
    assert reply.status == 400
    assert reply.body["id"] == 7
    assert reply.body["error"]["code"] == -32600
    assert len(json.dumps(reply.body)) < 512


@pytest.mark.parametrize("token", ["t" * 200, 2**63 - 1, 1.5, None, {"a": 1}])
def test_other_progress_tokens_pass_classification(token):
    assert classify(request(7, {"progressToken": token})).id == 7
