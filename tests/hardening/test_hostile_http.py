"""Hostile bodies over a real socket: every one gets a bounded 4xx, never a 5xx.

Each case asserts its exact answer (status and JSON-RPC code), that the answer
stays small whatever was sent, quotes nothing back, carries no traceback, and
that the server still serves a valid call afterwards.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import Answer, Wire


SMALL = 512
"""Bytes an answer the transport gives itself may take, whatever was sent."""


def assert_refused(
    answer: Answer, status: int, code: int, *, rid: Any = None
) -> dict[str, Any]:
    """Assert a bounded JSON-RPC error answer and return its error object."""
    assert answer.status == status, answer
    assert answer.headers["content-type"].startswith("application/json")
    assert len(answer.body) <= SMALL, len(answer.body)
    assert b"Traceback" not in answer.body
    payload = answer.json()
    assert payload["jsonrpc"] == "2.0"
    assert payload.get("id") == rid
    assert payload["error"]["code"] == code
    return payload["error"]


PLAIN_LIST = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}'


def listing(wire: Wire) -> bytes:
    """A valid 2026-07-28 tools/list body."""
    return json.dumps(wire.body("tools/list")).encode()


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/json; charset=latin-1",
        "application/jsonx",
        "multipart/form-data; boundary=x",
    ],
)
async def test_a_wrong_or_missing_content_type_gets_415(
    wire: Wire, content_type: str | None
) -> None:
    headers = wire.headers("tools/list")
    del headers["Content-Type"]
    if content_type is not None:
        headers["Content-Type"] = content_type
    assert_refused(await wire.post(listing(wire), headers), 415, -32600)
    await wire.healthy()


async def test_two_content_types_are_refused_by_the_http_parser(wire: Wire) -> None:
    request = wire.request_bytes(listing(wire), wire.headers("tools/list"))
    request = request.replace(
        b"Content-Type: application/json\r\n",
        b"Content-Type: application/json\r\nContent-Type: text/plain\r\n",
    )
    answer = await wire.send(request)
    assert answer.status == 400
    assert answer.headers["content-type"].startswith("application/json")
    assert len(answer.body) <= SMALL
    await wire.healthy()


async def test_an_empty_body_is_a_parse_error(wire: Wire) -> None:
    assert_refused(await wire.post(b"", wire.headers("tools/list")), 400, -32700)
    await wire.healthy()


async def test_a_batch_is_refused_as_an_invalid_request(wire: Wire) -> None:
    batch = [wire.body("tools/list", rid=1), wire.body("tools/list", rid=2)]
    answer = await wire.post(batch, wire.headers("tools/list"))
    assert answer.status == 400
    payload = answer.json()
    assert payload["error"]["code"] == -32600
    assert "id" not in payload or payload["id"] is None
    assert len(answer.body) <= SMALL
    await wire.healthy()


@pytest.mark.parametrize(("opening", "closing"), [(b"[", b"]"), (b'{"a":', b"}")])
async def test_nesting_100000_levels_deep_is_a_parse_error(
    wire: Wire, opening: bytes, closing: bytes
) -> None:
    body = opening * 100_000 + (b"1" if opening != b"[" else b"") + closing * 100_000
    error = assert_refused(
        await wire.alongside(wire.post(body, wire.headers("tools/list"))), 400, -32700
    )
    assert "100 levels" in error["message"]
    await wire.healthy()


async def test_deep_nesting_inside_a_call_is_a_parse_error(wire: Wire) -> None:
    call = json.dumps(
        wire.body(
            "tools/call",
            {"name": "echo", "arguments": {"action": "say", "data": {"text": "x"}}},
        )
    )
    body = call.replace('"x"', "[" * 5000 + "]" * 5000).encode()
    assert_refused(
        await wire.post(body, wire.headers("tools/call", "echo")), 400, -32700
    )


async def test_a_301_digit_integer_reaches_the_tool_exactly(wire: Wire) -> None:
    digits = "9" * 301
    call = json.dumps(
        wire.body("tools/call", {"name": "count", "arguments": {"count": 7}})
    )
    body = call.replace('"count": 7', f'"count": {digits}').encode()
    headers = {**wire.headers("tools/call", "count"), "Mcp-Param-Count": digits}
    answer = await wire.post(body, headers)
    assert answer.status == 200
    result = answer.json()["result"]
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"]) == {"count": int(digits)}


async def test_a_301_digit_integer_over_a_maximum_is_refused_without_echo(
    wire: Wire,
) -> None:
    digits = "7" * 301
    call = json.dumps(
        wire.body(
            "tools/call",
            {
                "name": "echo",
                "arguments": {"action": "say", "data": {"text": "a", "count": 5}},
            },
        )
    )
    answer = await wire.post(
        call.replace('"count": 5', f'"count": {digits}').encode(),
        wire.headers("tools/call", "echo"),
    )
    assert answer.status == 200
    result = answer.json()["result"]
    assert result["isError"] is True
    refusal = json.loads(result["content"][0]["text"])
    assert refusal["error"] == "invalid_values"
    assert refusal["errors"] == [
        {"path": "data.count", "problems": ["value is higher than maximum 100"]}
    ]
    assert digits[:20] not in answer.body.decode()


async def test_a_5000_digit_integer_is_a_parse_error(wire: Wire) -> None:
    call = json.dumps(
        wire.body(
            "tools/call",
            {
                "name": "echo",
                "arguments": {"action": "say", "data": {"text": "a", "count": 5}},
            },
        )
    )
    body = call.replace('"count": 5', '"count": ' + "1" * 5000).encode()
    error = assert_refused(
        await wire.alongside(wire.post(body, wire.headers("tools/call", "echo"))),
        400,
        -32700,
    )
    assert "as a string" in error["message"]
    await wire.healthy()


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400", "-1e999"])
async def test_numbers_that_are_not_finite_json_are_parse_errors(
    wire: Wire, number: str
) -> None:
    call = json.dumps(
        wire.body(
            "tools/call",
            {
                "name": "echo",
                "arguments": {"action": "say", "data": {"text": "a", "count": 5}},
            },
        )
    )
    body = call.replace('"count": 5', f'"count": {number}').encode()
    assert_refused(
        await wire.post(body, wire.headers("tools/call", "echo")), 400, -32700
    )


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list\xff"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "\xc0\xaf"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "\xed\xa0\x80"}',
        b"\xef\xbb\xbf" + PLAIN_LIST,
        b"\xff\xfe" + PLAIN_LIST.decode().encode("utf-16-le"),
    ],
    ids=["stray-byte", "overlong", "encoded-surrogate", "bom", "utf-16"],
)
async def test_bytes_that_are_not_utf8_json_are_parse_errors(
    wire: Wire, body: bytes
) -> None:
    assert_refused(await wire.post(body, wire.headers("tools/list")), 400, -32700)
    await wire.healthy()


@pytest.mark.parametrize(
    "arguments",
    [
        {"action": "say", "data": {"text": "\udcff"}},
        {"action": "\udcff", "data": {}},
        {"action": "say", "data": {"\udcff": 1, "text": "a"}},
        {"action": "say", "data": {"text": "\ude00\ud83d"}},
    ],
    ids=["echoed-by-tool", "unknown-action", "unknown-key", "reversed-pair"],
)
async def test_a_lone_surrogate_escape_is_a_parse_error(
    wire: Wire, arguments: dict[str, Any]
) -> None:
    # valid JSON text, but no Unicode string: echoing it could not be encoded
    call = wire.body("tools/call", {"name": "echo", "arguments": arguments})
    body = json.dumps(call).encode()
    error = assert_refused(
        await wire.post(body, wire.headers("tools/call", "echo")), 400, -32700
    )
    assert "lone surrogate" in error["message"]
    await wire.healthy()


async def test_an_escaped_surrogate_pair_reaches_the_tool(wire: Wire) -> None:
    answer = await wire.call("echo", {"action": "say", "data": {"text": "\U0001f600"}})
    assert answer.status == 200, answer
    text = answer.json()["result"]["content"][0]["text"]
    assert json.loads(text) == {"said": {"text": "\U0001f600"}}


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "tools/list"}',
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
            b'"params": {"name": "echo", "name": "boom"}}'
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
            b'{"name": "echo", "arguments": {"action": "say", '
            b'"data": {"text": "a", "text": "b"}}}}'
        ),
    ],
    ids=["top-level", "params", "tool-data"],
)
async def test_duplicate_keys_refuse_the_whole_body(wire: Wire, body: bytes) -> None:
    error = assert_refused(
        await wire.post(body, wire.headers("tools/call", "echo")), 400, -32700
    )
    assert "repeats a key" in error["message"]


async def test_a_declared_body_over_the_limit_is_refused_before_it_is_sent(
    wire: Wire,
) -> None:
    headers = {**wire.headers("tools/list"), "Content-Length": str(wire.body_limit + 1)}
    request = wire.request_bytes(b"", headers, length=False)
    assert_refused(await wire.send(request), 413, -32600)
    await wire.healthy()


async def test_a_huge_declared_length_is_refused(wire: Wire) -> None:
    headers = {**wire.headers("tools/list"), "Content-Length": str(10**15)}
    assert_refused(
        await wire.send(wire.request_bytes(b"", headers, length=False)), 413, -32600
    )


async def test_a_body_one_byte_over_the_limit_is_refused(wire: Wire) -> None:
    body = b'{"pad": "' + b"a" * (wire.body_limit - 10) + b'"}'
    assert len(body) == wire.body_limit + 1
    assert_refused(await wire.post(body, wire.headers("tools/list")), 413, -32600)
    await wire.healthy()


async def test_a_chunked_body_over_the_limit_is_refused_before_it_ends(
    wire: Wire,
) -> None:
    headers = {**wire.headers("tools/list"), "Transfer-Encoding": "chunked"}
    reader, writer = await wire.connect()
    try:
        writer.write(wire.request_bytes(b"", headers, length=False))
        chunk = b"a" * 65536
        for _ in range(wire.body_limit // len(chunk) + 1):  # the end never sent
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        await writer.drain()
        answer = await wire.read(reader)
    finally:
        writer.close()
    assert_refused(answer, 413, -32600)
    assert answer.headers.get("connection", "").lower() == "close"
    await wire.healthy()


async def test_a_body_that_trickles_in_gets_408(wire: Wire) -> None:
    body = json.dumps(wire.body("tools/list")).encode()
    reader, writer = await wire.connect()
    try:
        writer.write(
            wire.request_bytes(
                b"",
                {**wire.headers("tools/list"), "Content-Length": str(len(body))},
                length=False,
            )
        )

        async def trickle() -> None:
            for byte in body:
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.1)

        sender = asyncio.ensure_future(trickle())
        answer = await wire.read(reader)
        sender.cancel()
    finally:
        writer.close()
    assert_refused(answer, 408, -32600)
    await wire.healthy()


@pytest.mark.parametrize(
    "body",
    [
        b"null",
        b"42",
        b'"tools/list"',
        b"{}",
        b'{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}',
        b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": 7}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": []}',
    ],
)
async def test_json_that_is_no_jsonrpc_message_is_an_invalid_request(
    wire: Wire, body: bytes
) -> None:
    answer = await wire.post(body, wire.headers("tools/list"))
    assert answer.status == 400
    assert answer.json()["error"]["code"] in {-32600, -32602}
    assert len(answer.body) <= SMALL
    await wire.healthy()


@pytest.mark.parametrize(
    "rid", ["i" * 100_000, "i" * 201, 10**300], ids=["100000-chars", "201-chars", "int"]
)
async def test_an_oversized_id_is_refused_and_never_echoed(
    wire: Wire, rid: Any
) -> None:
    body = json.dumps(wire.body("tools/list", rid=rid)).encode()
    error = assert_refused(
        await wire.post(body, wire.headers("tools/list")), 400, -32600
    )
    assert "at most 200 characters" in error["data"]["reason"]
    await wire.healthy()


async def test_an_oversized_progress_token_is_refused_before_the_call(
    wire: Wire,
) -> None:
    # a token is echoed in every progress notification: bounded like an id
    params = {"name": "ticker", "_meta": {"progressToken": "t" * 100_000}}
    body = json.dumps(wire.body("tools/call", params, rid=9)).encode()
    answer = await wire.post(body, wire.headers("tools/call", "ticker"))
    error = assert_refused(answer, 400, -32600, rid=9)
    assert "progressToken" in error["data"]["reason"]
    assert wire.probe.started == 0
    await wire.healthy()


async def test_a_hundred_thousand_unknown_keys_get_a_bounded_refusal(
    wire: Wire,
) -> None:
    data = {f"key{i}": i for i in range(100_000)} | {"text": "a"}
    answer = await wire.alongside(wire.call("echo", {"action": "say", "data": data}))
    assert answer.status == 200
    result = answer.json()["result"]
    refusal = json.loads(result["content"][0]["text"])
    assert refusal["error"] == "unknown_params"
    assert refusal["unknown_count"] == 100_000
    assert len(refusal["unknown"]) == 10
    assert len(answer.body) < 4096


async def test_a_megabyte_key_is_cut_in_the_refusal(wire: Wire) -> None:
    answer = await wire.alongside(
        wire.call("echo", {"action": "say", "data": {"k" * 60_000: 1, "text": "a"}})
    )
    assert answer.status == 200
    assert answer.json()["result"]["isError"] is True
    assert len(answer.body) < 4096
