"""Fuzz the HTTP endpoint with random and mutated JSON-RPC messages at every revision.

Properties, for every request: no 5xx; no internal error (-32603: the server
failed to classify the input); no traceback; an answer under
`RESPONSE_CAP`; a JSON answer is one well-formed JSON-RPC response (or empty
for 202, or aiohttp's plain-text 400 for malformed HTTP); an SSE answer is a
series of JSON-RPC messages ending with the response; and a valid call
still gets its correct answer afterwards.
"""

from __future__ import annotations

import base64
import json
import os
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

if TYPE_CHECKING:
    from conftest import Answer, Client

FUZZ = settings.get_profile(os.environ.get("WYMCP_FUZZ_PROFILE", "wymcp-fuzz"))
MODERN = "2026-07-28"
SESSION_REVISIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"

KNOWN_METHODS = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
]
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
TOOL_NAMES = st.sampled_from(["echo", "region", "steps", "boom", "help", "nope", ""])
ECHO_DATA = st.fixed_dictionaries(
    {},
    optional={
        "text": st.text(max_size=60) | JSON_VALUES,
        "count": st.integers(-5, 200) | JSON_VALUES,
        "tags": st.lists(st.text(max_size=5), max_size=7) | JSON_VALUES,
        "when": st.sampled_from(["2026-07-28", "2026-02-30", "tomorrow"]),
        "where": st.fixed_dictionaries(
            {}, optional={"lat": JSON_VALUES, "lon": st.floats(), "alt": SCALARS}
        )
        | JSON_VALUES,
        "a": st.text(max_size=4),
        "b": SCALARS,
        "zzz": SCALARS,
    },
)
ARGUMENTS = st.one_of(
    st.fixed_dictionaries(
        {"action": st.sampled_from(["say", "pick", "shout"]) | SCALARS},
        optional={"data": ECHO_DATA | JSON_VALUES, "extra": SCALARS},
    ),
    st.fixed_dictionaries(
        {},
        optional={
            "region": st.text(max_size=45) | SCALARS,
            "count": st.integers() | SCALARS,
            "tool": st.sampled_from(["echo", "region", "nope"]) | SCALARS,
            "action": st.sampled_from(["say", "pick", "nope"]) | SCALARS,
        },
    ),
    JSON_VALUES,
)
META = st.fixed_dictionaries(
    {},
    optional={
        PV: st.sampled_from([MODERN, *SESSION_REVISIONS, "v999"]) | SCALARS,
        CAPS: st.just({}) | JSON_VALUES,
        "progressToken": st.text(max_size=8) | st.integers() | JSON_VALUES,
        "io.modelcontextprotocol/logLevel": st.sampled_from(["debug", "loud"]),
    },
)
PARAMS = st.fixed_dictionaries(
    {},
    optional={
        "name": TOOL_NAMES | SCALARS,
        "arguments": ARGUMENTS,
        "uri": st.text(max_size=20) | SCALARS,
        "cursor": st.text(max_size=10) | SCALARS,
        "level": st.sampled_from(["debug", "info", "nope"]) | SCALARS,
        "protocolVersion": st.sampled_from([*SESSION_REVISIONS, MODERN]) | SCALARS,
        "capabilities": st.just({}) | JSON_VALUES,
        "requestId": SCALARS,
        "_meta": META | JSON_VALUES,
    },
)
MESSAGES = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0") | SCALARS},
    optional={
        "id": st.integers(-(2**64), 2**64) | st.text(max_size=10) | JSON_VALUES,
        "method": st.sampled_from(KNOWN_METHODS) | st.text(max_size=20) | SCALARS,
        "params": PARAMS | JSON_VALUES,
        "result": JSON_VALUES,
        "error": JSON_VALUES,
    },
)
REQUEST_IDS = st.integers(-1000, 10**6) | st.text(max_size=10)
CALL_PARAMS = {
    "name": TOOL_NAMES | SCALARS,
    "arguments": ARGUMENTS,
    "uri": st.text(max_size=20) | SCALARS,
    "cursor": st.text(max_size=10) | SCALARS,
    "level": st.sampled_from(["debug", "info", "nope"]) | SCALARS,
}
MODERN_REQUESTS = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": REQUEST_IDS,
        "method": st.sampled_from(["tools/call"] * 4 + KNOWN_METHODS),
        "params": st.fixed_dictionaries(
            {
                "_meta": st.fixed_dictionaries(
                    {PV: st.just(MODERN), CAPS: st.just({})},
                    optional={"progressToken": st.integers(0, 9)},
                )
            },
            optional=CALL_PARAMS,
        ),
    }
)
SESSION_REQUESTS = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": REQUEST_IDS,
        "method": st.sampled_from(["tools/call"] * 4 + KNOWN_METHODS),
    },
    optional={
        "params": st.fixed_dictionaries(
            {},
            optional={**CALL_PARAMS, "_meta": st.just({"progressToken": 1})},
        )
    },
)
HEADER_TEXT = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30
)


def header_value(value: Any) -> str | None:
    """What an honest client mirrors for `value`, or None when nothing fits."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if value.isascii() and value.isprintable() and value == value.strip():
            return value
        return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="
    return None


def honest_headers(message: Any, revision: str) -> dict[str, str]:
    """The headers a correct 2026-07-28 client would send with `message`."""
    headers = {"Content-Type": "application/json", "MCP-Protocol-Version": revision}
    if not isinstance(message, dict):
        return headers
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    if isinstance(message.get("method"), str):
        headers["Mcp-Method"] = message["method"]
    field = "uri" if message.get("method") == "resources/read" else "name"
    mirrored = header_value(params.get(field))
    if mirrored is not None:
        headers["Mcp-Name"] = mirrored
    arguments = params.get("arguments")
    if isinstance(arguments, dict):
        for key in ("region", "count"):
            mirrored = header_value(arguments.get(key))
            if mirrored is not None:
                headers[f"Mcp-Param-{key.capitalize()}"] = mirrored
    return headers


@st.composite
def mutated_headers(draw: st.DrawFn, headers: dict[str, str]) -> dict[str, str]:
    """Drop, change or add mirrored headers (values stay valid HTTP)."""
    result = dict(headers)
    names = ["MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"]
    names += ["Mcp-Param-Region", "Mcp-Param-Count", "Content-Type", "Accept"]
    for name in draw(st.lists(st.sampled_from(names), max_size=3)):
        if draw(st.booleans()):
            result.pop(name, None)
        else:
            result[name] = draw(HEADER_TEXT)
    return result


def encode(message: Any) -> bytes:
    """Serialise a drawn message (the few that cannot be serialised never are)."""
    return json.dumps(message).encode()


def sse_lines(body: bytes) -> list[str]:
    """The lines of an SSE body: split at CR, LF or CRLF only (not U+2028, U+0085)."""
    return body.decode().replace("\r\n", "\n").replace("\r", "\n").split("\n")


def assert_well_answered(answer: Answer) -> None:
    """The properties every answer has, whatever was sent."""
    assert answer.status < 500, answer
    assert b"Traceback" not in answer.body
    event(f"HTTP {answer.status}")
    kind = answer.headers.get("content-type", "")
    if answer.status == 202 or not answer.body:
        assert answer.body == b"", answer
        return
    if kind.startswith("text/plain"):
        assert answer.status == 400, answer  # aiohttp's own parser answer
        return
    if kind.startswith("text/event-stream"):
        events = [
            json.loads(line[5:])
            for line in sse_lines(answer.body)
            if line.startswith("data:") and line[5:].strip()
        ]
        assert events, answer
        for note in events[:-1]:
            assert note["jsonrpc"] == "2.0"
            assert "method" in note, note
        assert_response(events[-1])
        return
    assert kind.startswith("application/json"), answer
    assert_response(json.loads(answer.body))


def assert_response(payload: Any) -> None:
    """One JSON-RPC response: result xor error, a sane id, no internal error."""
    assert isinstance(payload, dict), payload
    assert payload["jsonrpc"] == "2.0"
    assert ("result" in payload) != ("error" in payload), payload
    if "result" in payload:
        is_error = isinstance(payload["result"], dict) and payload["result"].get(
            "isError"
        )
        event("refused in the tool dialect" if is_error else "result")
    rid = payload.get("id")
    assert rid is None or isinstance(rid, int | str), payload
    if "error" in payload:
        error = payload["error"]
        event(f"JSON-RPC error {error.get('code')}")
        assert isinstance(error["code"], int)
        assert isinstance(error["message"], str)
        assert error["code"] != -32603, payload  # an unexpected server failure


@FUZZ
@given(message=st.one_of(MODERN_REQUESTS, MODERN_REQUESTS, MESSAGES), data=st.data())
@example(message={"jsonrpc": "2.0", "id": 1, "method": "tools/call"}, data=None)
@example(
    message={
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "steps",
            "_meta": {PV: MODERN, CAPS: {}, "progressToken": 1},
        },
    },
    data=None,
)
@example(  # the same at 2026-07-28, with the other Unicode line separators
    message={
        "jsonrpc": "2.0",
        "id": "\u2028\u2029\x85",
        "method": "tools/call",
        "params": {
            "name": "steps",
            "_meta": {PV: MODERN, CAPS: {}, "progressToken": "\u2028"},
        },
    },
    data=None,
)
def test_random_messages_at_2026(client: Client, message: Any, data: Any) -> None:
    headers = honest_headers(message, MODERN)
    if data is not None and data.draw(st.booleans(), label="mutate headers"):
        headers = data.draw(mutated_headers(headers), label="headers")
    assert_well_answered(client.post(encode(message), headers))
    client.assert_healthy()


@FUZZ
@given(
    name=TOOL_NAMES,
    arguments=ARGUMENTS,
    meta_extra=st.fixed_dictionaries({}, optional={"progressToken": st.integers(0, 9)}),
    data=st.data(),
)
def test_tool_calls_at_2026(
    client: Client, name: str, arguments: Any, meta_extra: Any, data: Any
) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments,
            "_meta": {PV: MODERN, CAPS: {}, **meta_extra},
        },
    }
    headers = honest_headers(message, MODERN)
    if data.draw(st.booleans(), label="mutate headers"):
        headers = data.draw(mutated_headers(headers), label="headers")
    answer = client.post(encode(message), headers)
    assert_well_answered(answer)
    if answer.status == 200 and answer.headers["content-type"].startswith(
        "application/json"
    ):
        payload = json.loads(answer.body)
        if "result" in payload:
            assert isinstance(payload["result"]["isError"], bool)
            assert payload["result"]["content"], payload
    client.assert_healthy()


VALID_CALL = encode(
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {
            "name": "echo",
            "arguments": {"action": "say", "data": {"text": "hi", "count": 2}},
            "_meta": {PV: MODERN, CAPS: {}},
        },
    }
)
MUTATIONS = st.lists(
    st.tuples(
        st.sampled_from(["flip", "insert", "delete", "duplicate"]),
        st.integers(0, len(VALID_CALL) - 1),
        st.binary(min_size=1, max_size=4)
        | st.sampled_from([b"{", b"[", b'"', b"\\", b"\x00", b"\xff", b"1e999"]),
    ),
    min_size=1,
    max_size=6,
)


def mutate(body: bytes, mutations: list[tuple[str, int, bytes]]) -> bytes:
    """Apply byte-level mutations to `body`."""
    data = bytearray(body)
    for kind, position, chunk in mutations:
        at = position % max(len(data), 1)
        if kind == "flip" and data:
            data[at] ^= chunk[0] or 1
        elif kind == "insert":
            data[at:at] = chunk
        elif kind == "delete":
            del data[at : at + len(chunk)]
        else:
            data[at:at] = data[at : at + 8]
    return bytes(data)


@FUZZ
@given(mutations=MUTATIONS)
@example(mutations=[("insert", 0, b"[")])
@example(mutations=[("delete", len(VALID_CALL) - 2, b"xx")])
def test_mutated_valid_calls_at_2026(
    client: Client, mutations: list[tuple[str, int, bytes]]
) -> None:
    headers = {
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "echo",
    }
    assert_well_answered(client.post(mutate(VALID_CALL, mutations), headers))
    client.assert_healthy()


@pytest.fixture(scope="module")
def session(client: Client) -> dict[str, str]:
    """An initialized 2025-11-25 session's headers."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"},
        },
    }
    answer = client.post(encode(init), {"Content-Type": "application/json"})
    assert answer.status == 200
    headers = {
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
        "Mcp-Session-Id": answer.headers["mcp-session-id"],
    }
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert client.post(encode(done), headers).status == 202
    return headers


def assert_session_alive(client: Client, headers: dict[str, str]) -> None:
    """The session still answers a valid call."""
    call = {
        "jsonrpc": "2.0",
        "id": 77,
        "method": "tools/call",
        "params": {
            "name": "echo",
            "arguments": {"action": "say", "data": {"text": "s"}},
        },
    }
    answer = client.post(encode(call), headers)
    assert answer.status == 200, answer
    assert json.loads(answer.body)["result"]["isError"] is False


@FUZZ
@given(
    message=st.one_of(SESSION_REQUESTS, SESSION_REQUESTS, MESSAGES),
    revision_header=st.sampled_from(["2025-11-25", "2025-11-25", None, "x"]),
)
@example(
    message={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
    revision_header="2025-11-25",
)
@example(  # found by scripts/fuzz.py: U+0085 in an id rides raw in an SSE event
    message={
        "jsonrpc": "2.0",
        "id": "\x85",
        "method": "tools/call",
        "params": {"name": "steps"},
    },
    revision_header="2025-11-25",
)
def test_random_messages_in_a_2025_session(
    client: Client, session: dict[str, str], message: Any, revision_header: str | None
) -> None:
    if isinstance(message.get("method"), str) and "cancel" in message["method"]:
        message = {**message, "method": "notifications/other"}
    headers = dict(session)
    if revision_header is None:
        del headers["MCP-Protocol-Version"]
    else:
        headers["MCP-Protocol-Version"] = revision_header
    params = message.get("params")
    if isinstance(params, dict) and isinstance(params.get("_meta"), dict):
        params["_meta"].pop(PV, None)
        params["_meta"].pop(CAPS, None)
    assert_well_answered(client.post(encode(message), headers))
    assert_session_alive(client, session)
    client.assert_healthy()


@FUZZ
@given(
    version=st.sampled_from(SESSION_REVISIONS) | st.text(max_size=12),
    message=st.one_of(SESSION_REQUESTS, MESSAGES),
)
def test_initialize_then_anything(client: Client, version: str, message: Any) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"},
        },
    }
    answer = client.post(encode(init), {"Content-Type": "application/json"})
    assert_well_answered(answer)
    if answer.status != 200:
        return
    headers = {
        "Content-Type": "application/json",
        "Mcp-Session-Id": answer.headers["mcp-session-id"],
    }
    assert_well_answered(client.post(encode(message), headers))
    delete = (
        "DELETE /mcp HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{client.port}\r\n"
        f"Mcp-Session-Id: {headers['Mcp-Session-Id']}\r\n\r\n"
    ).encode()
    assert client.send(delete).status in {200, 404}
