"""The limits a hostile client meets over the wire, each with its clear answer.

What a session keeps is bounded (400 / -32602 past it); HEADER_TIMEOUT
closes a connection whose request head never finishes; MAX_CONNECTIONS,
MAX_SESSIONS and MAX_STREAMS answer 503 with Retry-After (the only 5xx a
client can cause, and one that tells it when to come back); CALL_TIMEOUT
stops a hanging tool and answers isError; BODY_LIMIT and BODY_TIMEOUT are
in test_hostile_http.py.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import Answer, Serve, Wire

SMALL = 512
ANSWER_WAIT = 30.0
"""Seconds a test waits for the server to act before it fails (no hang)."""


def initialize(rid: int = 1) -> dict[str, Any]:
    """A 2025-11-25 initialize request."""
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "limits", "version": "0"},
        },
    }


async def open_session(wire: Wire) -> dict[str, str]:
    """Open and initialize a session; its request headers."""
    answer = await wire.post(initialize(), {"Content-Type": "application/json"})
    assert answer.status == 200, answer
    headers = {
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
        "Mcp-Session-Id": answer.headers["mcp-session-id"],
    }
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await wire.post(done, headers)).status == 202
    return headers


def assert_busy(answer: Answer) -> None:
    """503 with Retry-After and a short JSON-RPC error."""
    assert answer.status == 503, answer
    assert int(answer.headers["retry-after"]) > 0
    assert len(answer.body) <= SMALL
    assert answer.json()["error"]["code"] == -32603


async def test_sessions_beyond_max_sessions_get_503_retry_after(serve: Serve) -> None:
    wire = await serve(MAX_SESSIONS=2)
    first = await open_session(wire)
    await open_session(wire)
    busy = await wire.post(initialize(), {"Content-Type": "application/json"})
    assert_busy(busy)
    await wire.healthy()  # 2026-07-28 is stateless: never refused by the cap
    delete = wire.request_bytes(b"", first, method="DELETE")
    assert (await wire.send(delete)).status == 200
    await open_session(wire)


async def test_initialize_with_megabytes_of_capabilities_opens_no_session(
    wire: Wire,
) -> None:
    # a session keeps its client's declarations: 8 KiB of JSON at most
    request = initialize()
    request["params"]["capabilities"] = {"x": [{"a": i} for i in range(100_000)]}
    answer = await wire.post(request, {"Content-Type": "application/json"})
    assert answer.status == 400, answer
    assert answer.json()["error"]["code"] == -32602
    assert "mcp-session-id" not in answer.headers
    assert len(answer.body) <= SMALL
    await open_session(wire)


async def test_streams_beyond_max_streams_get_503_retry_after(serve: Serve) -> None:
    wire = await serve(MAX_STREAMS=1)
    first = await open_session(wire)
    second = await open_session(wire)
    stream_headers = {"Accept": "text/event-stream"}
    reader, writer = await wire.connect()
    try:
        writer.write(wire.request_bytes(b"", {**first, **stream_headers}, method="GET"))
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        assert b" 200 " in head.split(b"\r\n")[0]
        busy = await wire.send(
            wire.request_bytes(b"", {**second, **stream_headers}, method="GET")
        )
        assert_busy(busy)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"action": "say", "data": {"text": "a"}},
            },
        }
        assert (await wire.post(call, second)).status == 200  # calls still served
    finally:
        writer.close()
        await writer.wait_closed()
    for _ in range(1000):  # the slot frees once the server sees the stream end
        status = await stream_status(wire, {**second, **stream_headers})
        if status == 200:
            break
        await asyncio.sleep(0.02)
    assert status == 200


async def stream_status(wire: Wire, headers: dict[str, str]) -> int:
    """Open a GET stream, read its status, close it."""
    reader, writer = await wire.connect()
    try:
        writer.write(wire.request_bytes(b"", headers, method="GET"))
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        return int(head.split(b" ", 2)[1])
    finally:
        writer.close()
        await writer.wait_closed()


async def test_a_hanging_tool_is_stopped_by_call_timeout(serve: Serve) -> None:
    wire = await serve(CALL_TIMEOUT=0.5)
    answer = await wire.call("hang", {})
    assert answer.status == 200
    result = answer.json()["result"]
    assert result["isError"] is True
    payload = json.loads(result["content"][0]["text"])
    assert payload["errorType"] == "call_timeout"
    assert payload["tool"] == "hang"
    assert len(answer.body) <= 1024
    assert wire.probe.cancelled == 1
    await wire.healthy()


async def test_a_streaming_call_is_stopped_by_call_timeout(serve: Serve) -> None:
    wire = await serve(CALL_TIMEOUT=0.3)
    params = {"name": "ticker", "arguments": {}, "_meta": {"progressToken": "t"}}
    answer = await wire.post(
        wire.body("tools/call", params), wire.headers("tools/call", "ticker")
    )
    assert answer.status == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    events = [
        json.loads(line[5:])
        for line in answer.body.decode().split("\n")
        if line.startswith("data:") and line[5:].strip()
    ]
    final = events[-1]["result"]
    assert final["isError"] is True
    assert json.loads(final["content"][0]["text"])["errorType"] == "call_timeout"
    assert wire.probe.finished == 0
    assert wire.probe.cancelled == 1


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    """Whether the server closes the connection (EOF or reset) without answering."""
    try:
        data = await asyncio.wait_for(reader.read(1024), ANSWER_WAIT)
    except ConnectionResetError:
        return True
    return data == b""


@pytest.mark.parametrize(
    "sent",
    [b"", b"POST /mcp HT", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "],
    ids=["idle", "half-request-line", "unfinished-headers"],
)
async def test_a_request_head_that_never_finishes_is_cut_off(
    serve: Serve, sent: bytes
) -> None:
    wire = await serve(HEADER_TIMEOUT=0.3)
    reader, writer = await wire.connect()
    try:
        writer.write(sent)
        await writer.drain()
        assert await closed_by_server(reader)
    finally:
        writer.close()
    await wire.healthy()


async def test_headers_trickled_a_byte_at_a_time_are_cut_off(serve: Serve) -> None:
    # the timeout counts from the connection's start, not from the last byte
    wire = await serve(HEADER_TIMEOUT=0.3)
    reader, writer = await wire.connect()

    async def trickle() -> None:
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        try:
            while True:
                writer.write(b"X")
                await writer.drain()
                await asyncio.sleep(0.05)
        except ConnectionError:
            return

    sender = asyncio.ensure_future(trickle())
    try:
        assert await closed_by_server(reader)
    finally:
        sender.cancel()
        writer.close()
    await wire.healthy()


async def test_an_idle_kept_alive_connection_is_closed_after_its_answer(
    serve: Serve,
) -> None:
    wire = await serve(HEADER_TIMEOUT=0.3)
    reader, writer = await wire.connect()
    try:
        body = json.dumps(wire.body("tools/list")).encode()
        writer.write(wire.request_bytes(body, wire.headers("tools/list")))
        answer = await wire.read(reader)
        assert answer.status == 200
        assert await closed_by_server(reader)
    finally:
        writer.close()


async def test_a_call_longer_than_header_timeout_is_answered(serve: Serve) -> None:
    # HEADER_TIMEOUT bounds the wait for a request, never the call itself
    wire = await serve(HEADER_TIMEOUT=0.2, CALL_TIMEOUT=1.0)
    answer = await wire.call("hang", {})
    assert answer.status == 200, answer
    assert "call_timeout" in answer.json()["result"]["content"][0]["text"]


async def kept_alive(wire: Wire) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection that has been answered once and stays open."""
    reader, writer = await wire.connect()
    body = json.dumps(wire.body("tools/list")).encode()
    writer.write(wire.request_bytes(body, wire.headers("tools/list")))
    assert (await wire.read(reader)).status == 200
    return reader, writer


async def test_connections_beyond_max_connections_get_503_retry_after(
    serve: Serve,
) -> None:
    wire = await serve(MAX_CONNECTIONS=2)
    held = [await kept_alive(wire), await kept_alive(wire)]
    body = json.dumps(wire.body("tools/list")).encode()
    answer = await wire.send(wire.request_bytes(body, wire.headers("tools/list")))
    assert answer.status == 503, answer
    assert answer.headers["retry-after"] == "5"
    assert answer.headers["connection"] == "close"
    assert len(answer.body) <= SMALL
    error = answer.json()["error"]
    assert error["code"] == -32603
    assert "MAX_CONNECTIONS" in error["message"]
    _, writer = held.pop()
    writer.close()
    await writer.wait_closed()
    for _ in range(100):  # the slot frees once the server has seen the close
        answer = await wire.send(wire.request_bytes(body, wire.headers("tools/list")))
        if answer.status == 200:
            break
        await asyncio.sleep(0.05)
    assert answer.status == 200, answer
    for _, writer in held:
        writer.close()


def padded_call(wire: Wire, name: str, arguments: Any, pad: int) -> bytes:
    """A 2026-07-28 `tools/call` whose `_meta` carries `pad` bytes: a large body."""
    params = {"name": name, "arguments": arguments, "_meta": {"pad": "p" * pad}}
    body = json.dumps(wire.body("tools/call", params)).encode()
    return wire.request_bytes(body, wire.headers("tools/call", name))


async def test_large_bodies_beyond_body_memory_budget_get_503_retry_after(
    serve: Serve,
) -> None:
    wire = await serve(BODY_MEMORY_BUDGET=300_000)
    _reader, writer = await wire.connect()
    try:
        writer.write(padded_call(wire, "hang", {}, 200_000))  # held while it hangs
        await writer.drain()
        await asyncio.wait_for(wire.probe.running.wait(), ANSWER_WAIT)
        busy = await wire.send(padded_call(wire, "hang", {}, 200_000))
        assert_busy(busy)
        assert "BODY_MEMORY_BUDGET" in busy.json()["error"]["message"]
        assert wire.probe.started == 1  # the refused call never ran
        small = await wire.call("echo", {"action": "say", "data": {"text": "a"}})
        assert small.status == 200  # bodies of at most 4 KiB are never refused
        under = padded_call(
            wire, "echo", {"action": "say", "data": {"text": "a"}}, 50_000
        )
        assert (await wire.send(under)).status == 200  # what is left is served
    finally:
        writer.close()
        await writer.wait_closed()
    call = padded_call(wire, "echo", {"action": "say", "data": {"text": "a"}}, 200_000)
    for _ in range(1000):  # the budget frees once the server sees the client leave
        answer = await wire.send(call)
        if answer.status == 200:
            break
        assert_busy(answer)
        await asyncio.sleep(0.02)
    assert answer.status == 200
    assert answer.json()["result"]["isError"] is False
