"""The in-process client answers exactly what a real HTTP server answers.

The same cases run twice: through `wymcp.testing.Client` over aiohttp's test
server, and as raw aiohttp requests (envelopes and SSE parsing written out
here, independently) to the same settings served by an `AppRunner` on
127.0.0.1. The JSON-RPC answers, what streamed before them, the HTTP status
and the kind of body must be identical. A direct `call()` with the same
envelope must answer the same again.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import aiohttp
import attrs
import pytest
from aiohttp import web

from served import ServeApp
from wymcp.conf import Settings
from wymcp.testing import Answer, Client, build_context, call, connect
from wymcp.transport.aiohttp import create_app

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
RELEASE = (Path(__file__).resolve().parents[2] / "VERSION").read_text().strip()
ITEMS = [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 3}]
ACCEPT = "application/json, text/event-stream"


@attrs.frozen
class Case:
    """One tools/call, described once for both sides."""

    name: str
    tool: str
    arguments: dict[str, Any]
    progress: bool = False
    headers: tuple[tuple[str, str], ...] = ()


CALLS = [
    Case(
        "accepted",
        "orders",
        {"action": "place", "data": {"customer": "c", "items": ITEMS}},
    ),
    Case(
        "streamed",
        "orders",
        {"action": "place", "data": {"customer": "c", "items": ITEMS}},
        progress=True,
    ),
    Case(
        "invalid_values",
        "orders",
        {
            "action": "place",
            "data": {"customer": "", "items": [{"sku": "a", "qty": 5000}]},
        },
    ),
    Case(
        "unknown_params",
        "orders",
        {"action": "place", "data": {"customer": "c", "items": ITEMS, "x": {"y": 1}}},
    ),
    Case("missing_required", "orders", {"action": "place", "data": {}}),
    Case("unknown_action", "orders", {"action": "ship"}),
    Case("tool_error", "orders", {"action": "cancel", "data": {"order_id": 4}}),
    Case("tool_raised", "orders", {"action": "explode"}),
    Case("bad_envelope", "orders", {"action": "place", "data": [1]}),
    Case(
        "plain",
        "weather",
        {"region": "Zürich", "days": 3},
        headers=(("Mcp-Param-Region", "=?base64?WsO8cmljaA==?="),),
    ),
    Case(
        "plain_refused",
        "weather",
        {"region": "north", "days": 0},
        headers=(("Mcp-Param-Region", "north"),),
    ),
    Case("unknown_tool", "nope", {}),
    Case("help_index", "help", {}),
    Case("help_tool", "help", {"tool": "orders"}),
    Case("help_action", "help", {"tool": "orders", "action": "place"}),
    Case("help_unknown", "help", {"tool": "orders", "action": "nope"}),
    Case("asks", "greeter", {}),
]


@attrs.frozen
class Seen:
    """What one side got: status, body kind, answer, streamed messages.

    JSON-RPC ids are left out: each side numbers its own requests, and the
    server numbers its requests to the client at random.
    """

    status: int
    kind: str
    answer: Any
    messages: tuple[Any, ...]


_REFERENCE = re.compile(r'(reference(?:\\":\\"| ))[0-9a-f]{8}')
"""A tool_raised answer's log reference: random, so left out like ids."""


def _without_id(message: Any) -> Any:
    if isinstance(message, dict):
        kept = {k: v for k, v in message.items() if k != "id"}
        return json.loads(_REFERENCE.sub(r"\1-", json.dumps(kept)))
    return message


def from_answer(answer: Answer) -> Seen:
    kind = answer.headers.get("Content-Type", "").split(";")[0]
    return Seen(
        answer.status,
        kind,
        _without_id(answer.response),
        tuple(_without_id(m) for m in answer.messages),
    )


async def raw_post(
    http: aiohttp.ClientSession,
    url: str,
    body: dict[str, Any],
    headers: list[tuple[str, str]],
) -> tuple[Seen, aiohttp.typedefs.LooseHeaders]:
    sent = [("Content-Type", "application/json"), ("Accept", ACCEPT), *headers]
    async with http.post(url, data=json.dumps(body), headers=sent) as response:
        text = await response.text()
        kind = response.content_type
        if kind == "text/event-stream":
            events = []
            for block in text.split("\n\n"):
                data = [
                    line[len("data: ") :]
                    for line in block.split("\n")
                    if line.startswith("data: ")
                ]
                if data and data != [""]:
                    events.append(json.loads("\n".join(data)))
            answer = events[-1]
            messages = tuple(_without_id(m) for m in events[:-1])
        else:
            answer, messages = (json.loads(text) if text else None), ()
        seen = Seen(response.status, kind, _without_id(answer), messages)
        return seen, dict(response.headers)


@pytest.fixture
def parity_settings(settings: Settings) -> Settings:
    return settings.evolve(SERVER_NAME="parity")


@pytest.fixture
async def server_url(parity_settings: Settings, serve_app: ServeApp) -> str:
    return await serve_app(create_app(parity_settings), handler_cancellation=False)


def modern_body(
    rid: int, method: str, params: dict[str, Any], meta: dict[str, Any]
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": method,
        "params": {
            **params,
            "_meta": {
                **meta,
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                "io.modelcontextprotocol/clientInfo": {
                    "name": "wymcp-testing",
                    "version": RELEASE,
                },
                "io.modelcontextprotocol/logLevel": "debug",
            },
        },
    }


async def client_side(settings: Settings, revision: str) -> dict[str, Seen]:
    seen: dict[str, Seen] = {}
    async with connect(
        settings,
        protocol_version=revision,
        capabilities={"elicitation": {}},
        log_level="debug",
    ) as client:
        seen["tools/list"] = from_answer(await client.request("tools/list"))
        for case in CALLS:
            answer = await client.call(
                case.tool, arguments=case.arguments, progress=case.progress
            )
            seen[case.name] = from_answer(answer)
        if revision == MODERN:
            seen["discover"] = from_answer(await client.request("server/discover"))
    return seen


async def modern_raw_side(url: str) -> dict[str, Seen]:
    seen: dict[str, Seen] = {}
    async with aiohttp.ClientSession() as http:
        base = [("MCP-Protocol-Version", MODERN)]
        seen["tools/list"], _ = await raw_post(
            http,
            url,
            modern_body(1, "tools/list", {}, {}),
            [*base, ("Mcp-Method", "tools/list")],
        )
        for rid, case in enumerate(CALLS, start=2):
            meta = {"progressToken": "progress"} if case.progress else {}
            body = modern_body(
                rid,
                "tools/call",
                {"name": case.tool, "arguments": case.arguments},
                meta,
            )
            headers = [
                *base,
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", case.tool),
                *case.headers,
            ]
            seen[case.name], _ = await raw_post(http, url, body, headers)
        seen["discover"], _ = await raw_post(
            http,
            url,
            modern_body(99, "server/discover", {}, {}),
            [*base, ("Mcp-Method", "server/discover")],
        )
    return seen


async def legacy_raw_side(url: str) -> dict[str, Seen]:
    seen: dict[str, Seen] = {}
    async with aiohttp.ClientSession() as http:
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "wymcp-testing", "version": RELEASE},
            },
        }
        _, headers = await raw_post(http, url, initialize, [])
        session = [
            ("Mcp-Session-Id", headers["Mcp-Session-Id"]),
            ("MCP-Protocol-Version", LEGACY),
        ]
        await raw_post(
            http,
            url,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            session,
        )
        level = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "logging/setLevel",
            "params": {"level": "debug"},
        }
        await raw_post(http, url, level, session)
        listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}
        seen["tools/list"], _ = await raw_post(http, url, listing, session)
        for rid, case in enumerate(CALLS, start=4):
            params: dict[str, Any] = {"name": case.tool, "arguments": case.arguments}
            if case.progress:
                params["_meta"] = {"progressToken": "progress"}
            body = {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tools/call",
                "params": params,
            }
            if case.name == "asks":
                seen[case.name] = await _answered_elicitation(http, url, body, session)
                continue
            seen[case.name], _ = await raw_post(http, url, body, session)
        async with http.delete(url, headers=session) as deleted:
            assert deleted.status == 200
    return seen


async def _answered_elicitation(
    http: aiohttp.ClientSession,
    url: str,
    body: dict[str, Any],
    session: list[tuple[str, str]],
) -> Seen:
    """A 2025 call that asks: refuse the request on the stream, as the client does."""
    sent = [("Content-Type", "application/json"), ("Accept", ACCEPT), *session]
    messages: list[Any] = []
    answer: Any = None
    async with http.post(url, data=json.dumps(body), headers=sent) as response:
        async for line in response.content:
            text = line.decode().strip()
            if not text.startswith("data: ") or text == "data:":
                continue
            message = json.loads(text[len("data: ") :])
            if "method" not in message:
                answer = message
                continue
            messages.append(message)
            refusal = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {
                    "code": -32601,
                    "message": "This test client does not answer elicitation/create.",
                },
            }
            await raw_post(http, url, refusal, session)
        return Seen(
            response.status,
            response.content_type,
            _without_id(answer),
            tuple(_without_id(m) for m in messages),
        )


@pytest.mark.parametrize("revision", [MODERN, LEGACY])
async def test_every_case_answers_the_same_in_process_and_over_http(
    parity_settings, server_url, revision
):
    in_process = await client_side(parity_settings, revision)
    if revision == MODERN:
        over_http = await modern_raw_side(server_url)
    else:
        over_http = await legacy_raw_side(server_url)
    assert list(in_process) == list(over_http)
    for name, seen in in_process.items():
        assert seen == over_http[name], name


async def test_the_cases_cover_success_refusals_errors_and_streams(
    parity_settings,
):
    seen = await client_side(parity_settings, MODERN)
    assert seen["streamed"].kind == "text/event-stream"
    assert len(seen["streamed"].messages) == 4
    assert seen["tool_error"].kind == "application/json"
    assert seen["bad_envelope"].status == 200
    assert seen["unknown_tool"].answer["error"]["code"] == -32602
    assert seen["asks"].answer["result"]["resultType"] == "input_required"
    refusals = {
        name: json.loads(seen[name].answer["result"]["content"][0]["text"])["error"]
        for name in (
            "invalid_values",
            "unknown_params",
            "missing_required",
            "unknown_action",
            "bad_envelope",
        )
    }
    assert refusals == {
        "invalid_values": "invalid_values",
        "unknown_params": "unknown_params",
        "missing_required": "missing_required_fields",
        "unknown_action": "unknown_action",
        "bad_envelope": "invalid_arguments",
    }


def test_a_client_is_built_around_an_application():
    assert Client(web.Application()).path == "/mcp"


@pytest.mark.parametrize("revision", [MODERN, LEGACY])
async def test_a_direct_call_answers_what_the_client_gets(parity_settings, revision):
    over_http = await client_side(parity_settings, revision)
    for case in CALLS:
        if case.tool in {"help", "nope"}:
            continue
        ctx = build_context(
            protocol_version=revision,
            client_capabilities={"elicitation": {}},
            log_level="debug",
            progress_token="progress" if case.progress else None,
        )
        answer = await call(
            case.tool, None, arguments=case.arguments, ctx=ctx, settings=parity_settings
        )
        direct = from_answer(answer)
        expected = over_http[case.name]
        assert (direct.status, direct.answer, direct.messages) == (
            expected.status,
            expected.answer,
            expected.messages,
        ), case.name
