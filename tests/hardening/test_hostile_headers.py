"""Hostile headers over a real socket: oversized, injected, undecodable, repeated.

Requests aiohttp's HTTP parser rejects get the runner's short JSON 400
(-32600, quoting nothing) and never reach wymcp; the rest get the engine's
400 / -32020 (header mismatch). In every case the answer is bounded and the
server keeps serving.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import Answer, Wire

SMALL = 512


def call_request(
    wire: Wire, name: str, arguments: dict[str, Any], extra: bytes = b""
) -> bytes:
    """A raw 2026-07-28 tools/call with `extra` header lines inserted as given."""
    body = json.dumps(
        wire.body("tools/call", {"name": name, "arguments": arguments})
    ).encode()
    head = wire.request_bytes(b"", wire.headers("tools/call", name), length=False)
    head = head[:-2] + extra + f"Content-Length: {len(body)}\r\n\r\n".encode()
    return head + body


def is_parser_refusal(answer: Answer) -> bool:
    """Whether `answer` is the runner's answer to HTTP aiohttp cannot parse."""
    payload = answer.json()
    return payload["id"] is None and payload["error"]["code"] == -32600


def assert_parser_refused(answer: Answer) -> None:
    """The answer to malformed HTTP: a short JSON 400 that quotes nothing."""
    assert answer.status == 400, answer
    assert answer.headers["content-type"].startswith("application/json")
    assert len(answer.body) <= SMALL
    assert is_parser_refusal(answer)
    assert b"Traceback" not in answer.body


def assert_mismatch(answer: Answer) -> None:
    """The engine's answer to a mirrored header that does not match: 400 / -32020."""
    assert answer.status == 400, answer
    assert len(answer.body) <= SMALL
    payload = answer.json()
    assert payload["id"] == 1
    assert payload["error"]["code"] == -32020


async def test_a_header_line_over_8190_bytes_is_refused_by_the_parser(
    wire: Wire,
) -> None:
    extra = b"X-Padding: " + b"a" * 9000 + b"\r\n"
    answer = await wire.send(call_request(wire, "echo", {}, extra))
    assert_parser_refused(answer)
    assert b"a" * 120 not in answer.body
    await wire.healthy()


async def test_an_mcp_name_over_8190_bytes_is_refused_by_the_parser(
    wire: Wire,
) -> None:
    extra = b"Mcp-Param-Region: " + b"r" * 20_000 + b"\r\n"
    answer = await wire.send(call_request(wire, "region", {"region": "r"}, extra))
    assert_parser_refused(answer)
    await wire.healthy()


async def test_too_many_headers_are_refused_by_the_parser(wire: Wire) -> None:
    extra = b"".join(b"X-H%d: v\r\n" % i for i in range(300))
    assert_parser_refused(await wire.send(call_request(wire, "echo", {}, extra)))
    await wire.healthy()


@pytest.mark.parametrize(
    "line",
    [
        b"Mcp-Name: ec\rho\r\n",
        b"Mcp-Name: echo\nX-Injected: 1\r\n",
        b"Mcp-Name: echo\r\n\r\nPOST /mcp HTTP/1.1\r\n",
        b"Mcp-Name: ec\x00ho\r\n",
        b"Mcp-Param-Region: eu\rX-Injected: 1\r\n",
        b"Mcp-Param-Region: eu\nMcp-Param-Region: us\r\n",
        b"Mcp-Param-Region\r\n",
        b"Mcp Param Region: eu\r\n",
    ],
    ids=[
        "cr-in-name",
        "lf-in-name",
        "request-smuggling",
        "nul-in-name",
        "cr-in-param",
        "lf-in-param",
        "no-colon",
        "space-in-field-name",
    ],
)
async def test_cr_lf_and_nul_in_headers_never_reach_the_engine(
    wire: Wire, line: bytes
) -> None:
    request = call_request(wire, "region", {"region": "eu"}, line)
    request = request.replace(b"Mcp-Name: region\r\n", b"")
    answer = await wire.send(request)
    assert answer.status == 400, answer
    assert len(answer.body) <= SMALL
    assert "x-injected" not in answer.headers
    assert b"X-Injected" not in answer.body  # no answer quotes the line
    await wire.healthy()


@pytest.mark.parametrize(
    "value",
    ["échø", "echo\u00a0", "\u202eohce"],
    ids=["latin", "nbsp", "bidi-override"],
)
async def test_a_non_ascii_mcp_name_that_differs_is_a_mismatch(
    wire: Wire, value: str
) -> None:
    request = call_request(wire, "echo", {"action": "say", "data": {"text": "a"}})
    request = request.replace(
        b"Mcp-Name: echo\r\n", b"Mcp-Name: " + value.encode() + b"\r\n"
    )
    assert_mismatch(await wire.send(request))
    await wire.healthy()


@pytest.mark.parametrize(
    ("value", "raw"),
    [("é", "é"), ("eu", "eu\udcff"), ("=?", "=?"), ("a\x01b", "a\x01b")],
    ids=["utf8-equal-to-body", "raw-ff-byte", "half-sentinel", "control"],
)
async def test_a_raw_mcp_param_that_is_not_visible_ascii_is_a_mismatch(
    wire: Wire, value: str, raw: str
) -> None:
    # even when it equals the body: the client must send =?base64?...?=
    answer = await wire.call(
        "region", {"region": value}, headers={"Mcp-Param-Region": raw}
    )
    if value == "=?":  # visible ASCII: a literal that matches
        assert answer.status == 200, answer
        return
    if is_parser_refusal(answer):
        assert_parser_refused(answer)  # aiohttp refuses some control bytes itself
        return
    assert_mismatch(answer)
    assert "visible ASCII" in answer.json()["error"]["message"]
    await wire.healthy()


async def test_a_raw_non_ascii_mcp_name_equal_to_the_body_is_a_mismatch(
    wire: Wire,
) -> None:
    answer = await wire.call("é", {}, headers={"Mcp-Name": "é"})
    assert_mismatch(answer)  # not the unknown-tool -32602: the header is invalid


async def test_raw_latin1_bytes_in_mcp_name_are_a_mismatch(wire: Wire) -> None:
    request = call_request(wire, "echo", {"action": "say", "data": {"text": "a"}})
    request = request.replace(b"Mcp-Name: echo\r\n", b"Mcp-Name: \xff\xfe\r\n")
    assert_mismatch(await wire.send(request))


@pytest.mark.parametrize(
    "sentinel",
    [
        "=?base64?!!!!?=",
        "=?base64?ZXU?=",
        "=?base64?dXM=?=",
        "=?base64? ZXU=?=",
        "=?base64?/w==?=",
        "=?base64?ZXU=\r?=",
        "=?BASE64?ZXU=?=",
        "=?base64?ZXU=",
        "=?base64?" + "QUFB" * 1500 + "?=",
    ],
    ids=[
        "not-base64",
        "unpadded",
        "other-value",
        "space",
        "not-utf8",
        "cr-inside",
        "upper-case-tag",
        "unterminated",
        "long",
    ],
)
async def test_bad_base64_sentinels_in_mcp_param_are_mismatches(
    wire: Wire, sentinel: str
) -> None:
    if "\r" in sentinel:
        line = b"Mcp-Param-Region: " + sentinel.encode() + b"\r\n"
        answer = await wire.send(call_request(wire, "region", {"region": "eu"}, line))
        assert answer.status == 400
        assert len(answer.body) <= SMALL
        return
    answer = await wire.call(
        "region", {"region": "eu"}, headers={"Mcp-Param-Region": sentinel}
    )
    assert_mismatch(answer)
    await wire.healthy()


async def test_a_bad_base64_mcp_name_is_a_mismatch(wire: Wire) -> None:
    answer = await wire.call(
        "echo",
        {"action": "say", "data": {"text": "a"}},
        headers={"Mcp-Name": "=?base64?@@@@?="},
    )
    assert_mismatch(answer)


async def test_a_base64_value_that_decodes_to_crlf_is_only_compared(
    wire: Wire,
) -> None:
    # "\r\nX-Injected: 1" travels base64-wrapped; decoded, it is compared with the
    # argument and never becomes a header.
    value = "\r\nX-Injected: 1"
    wrapped = "=?base64?DQpYLUluamVjdGVkOiAx?="
    answer = await wire.call(
        "region", {"region": value}, headers={"Mcp-Param-Region": wrapped}
    )
    assert answer.status == 200
    assert "x-injected" not in answer.headers
    assert json.loads(answer.json()["result"]["content"][0]["text"]) == {
        "region": value
    }


async def test_an_mcp_param_sent_twice_is_a_mismatch(wire: Wire) -> None:
    line = b"Mcp-Param-Region: eu\r\nMcp-Param-Region: eu\r\n"
    answer = await wire.send(call_request(wire, "region", {"region": "eu"}, line))
    assert_mismatch(answer)


async def test_an_mcp_param_for_an_absent_argument_is_a_mismatch(wire: Wire) -> None:
    answer = await wire.call("region", {}, headers={"Mcp-Param-Region": "eu"})
    assert_mismatch(answer)


async def test_a_missing_mcp_param_is_a_mismatch(wire: Wire) -> None:
    assert_mismatch(await wire.call("region", {"region": "eu"}))


@pytest.mark.parametrize("value", ["1e3", "0x10", "+5", "5.0", " ", "true", "٣"])
async def test_an_integer_mcp_param_must_be_plain_digits(
    wire: Wire, value: str
) -> None:
    line = b"Mcp-Param-Count: " + value.encode() + b"\r\n"
    answer = await wire.send(call_request(wire, "count", {"count": 5}, line))
    assert_mismatch(answer)


async def test_a_5000_digit_integer_mcp_param_is_a_mismatch(wire: Wire) -> None:
    # more digits than Python converts to int: a mismatch, not a -32603
    answer = await wire.alongside(
        wire.call("count", {"count": 5}, headers={"Mcp-Param-Count": "9" * 5000})
    )
    assert_mismatch(answer)
    await wire.healthy()


async def test_an_mcp_name_sent_twice_is_a_mismatch(wire: Wire) -> None:
    request = call_request(wire, "echo", {"action": "say", "data": {"text": "a"}})
    request = request.replace(
        b"Mcp-Name: echo\r\n", b"Mcp-Name: echo\r\nMcp-Name: echo\r\n"
    )
    assert_mismatch(await wire.send(request))


async def test_a_repeated_host_is_refused(wire: Wire) -> None:
    request = call_request(wire, "echo", {"action": "say", "data": {"text": "a"}})
    request = request.replace(
        b"Host: 127.0.0.1", b"Host: evil.example.com\r\nHost: 127.0.0.1", 1
    )
    answer = await wire.send(request)
    assert answer.status in {400, 403}
    assert len(answer.body) <= SMALL


@pytest.mark.parametrize(
    "header",
    [
        b"Origin: http://evil.example.com\r\n",
        b"Origin: null\r\n",
        b"Origin: http://127.0.0.1.evil.example.com\r\n",
    ],
)
async def test_a_foreign_origin_is_forbidden(wire: Wire, header: bytes) -> None:
    request = call_request(
        wire, "echo", {"action": "say", "data": {"text": "a"}}, header
    )
    answer = await wire.send(request)
    assert answer.status == 403
    assert answer.json()["error"]["code"] == -32600
    assert len(answer.body) <= SMALL


async def test_a_foreign_host_is_forbidden(wire: Wire) -> None:
    request = call_request(wire, "echo", {"action": "say", "data": {"text": "a"}})
    request = request.replace(
        f"Host: 127.0.0.1:{wire.port}".encode(), b"Host: attacker.example"
    )
    answer = await wire.send(request)
    assert answer.status == 403
    assert len(answer.body) <= SMALL


# Header names are case-insensitive, and a name repeated in another case is
# the same name sent twice: how the transport indexes headers must not matter.


async def test_header_names_in_any_case_are_read_as_the_same_names(wire: Wire) -> None:
    request = call_request(
        wire, "region", {"region": "eu"}, b"mcp-param-region: eu\r\n"
    )
    for name in (b"Host", b"Content-Type", b"MCP-Protocol-Version", b"Mcp-Name"):
        request = request.replace(name + b": ", name.upper() + b": ", 1)
    request = request.replace(b"Mcp-Method: ", b"mcp-method: ", 1)
    answer = await wire.send(request)
    assert answer.status == 200, answer
    assert "result" in answer.json()


async def test_a_host_repeated_in_another_case_is_refused(wire: Wire) -> None:
    request = call_request(wire, "echo", {"action": "say", "data": {"text": "a"}})
    host = f"Host: 127.0.0.1:{wire.port}\r\n".encode()
    answer = await wire.send(request.replace(host, host + host.lower(), 1))
    assert answer.status in {400, 403}  # aiohttp's parser refuses it first
    assert len(answer.body) <= SMALL


async def test_an_origin_repeated_in_another_case_is_refused(wire: Wire) -> None:
    origin = b"Origin: http://127.0.0.1\r\nORIGIN: http://127.0.0.1\r\n"
    request = call_request(
        wire, "echo", {"action": "say", "data": {"text": "a"}}, origin
    )
    answer = await wire.send(request)
    assert answer.status == 403
    assert len(answer.body) <= SMALL


async def test_a_content_type_repeated_in_another_case_is_refused(wire: Wire) -> None:
    line = b"content-type: application/json\r\n"
    request = call_request(wire, "echo", {"action": "say", "data": {"text": "a"}}, line)
    answer = await wire.send(request)
    assert answer.status in {400, 415}  # aiohttp's parser refuses it first
    assert len(answer.body) <= SMALL


async def test_an_mcp_name_repeated_in_another_case_is_a_mismatch(wire: Wire) -> None:
    request = call_request(wire, "echo", {"action": "say", "data": {"text": "a"}})
    request = request.replace(
        b"Mcp-Name: echo\r\n", b"Mcp-Name: echo\r\nMCP-NAME: echo\r\n"
    )
    assert_mismatch(await wire.send(request))


async def test_an_mcp_param_repeated_in_another_case_is_a_mismatch(wire: Wire) -> None:
    line = b"Mcp-Param-Region: eu\r\nmcp-param-region: eu\r\n"
    answer = await wire.send(call_request(wire, "region", {"region": "eu"}, line))
    assert_mismatch(answer)
