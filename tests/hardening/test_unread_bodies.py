"""An answer that leaves a body unread closes the connection, parsing none of the rest.

A request refused before its body (415, 403, 405, 404) or served without reading
it (DELETE) used to be followed by up to 10 s of aiohttp parsing the rest of a
chunked body (its lingering close): four clients sending 1-byte chunks pushed a
valid client to 2-3.45 s. Now the answer says `Connection: close`, what still
arrives is dropped unparsed, and the connection ends `_LINGER` seconds later.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web

from wymcp.conf import load_settings
from wymcp.transport.aiohttp import create_app
from wymcp.transport.aiohttp._runner import _LINGER

if TYPE_CHECKING:
    from conftest import Answer, Serve, Wire

BODY_PIECE = 16 * 1024
"""Body bytes per write: 96 KiB on the wire in 1-byte chunks."""
PIECES = 256
"""Writes of a hostile body: 4 MiB of body, 24 MiB on the wire."""
CLOSE_BOUND = 2 * _LINGER + 2.0
"""Seconds after its answer within which the connection must end (lingering:
`_LINGER`; before the fix, aiohttp parsed on for 10 s)."""


def one_byte_chunks(count: int) -> bytes:
    """`count` bytes of body as 1-byte HTTP chunks, the last chunk left out."""
    framed = bytearray(6 * count)
    for at, part in enumerate(b"1\r\nx\r\n"):
        framed[at::6] = bytes([part]) * count
    return bytes(framed)


def chunked_head(
    wire: Wire, headers: Mapping[str, str], *, method: str = "POST", path: str = ""
) -> bytes:
    """A request head announcing a chunked body."""
    sent = {**headers, "Transfer-Encoding": "chunked"}
    head = wire.request_bytes(b"", sent, method=method, length=False)
    if path:
        head = head.replace(f" {wire.path} ".encode(), f" {path} ".encode(), 1)
    return head


async def unread_body(wire: Wire, head: bytes) -> Answer:
    """Send `head`, then 1-byte chunks without end; the answer, once the server closed.

    The connection must end (EOF or reset) within `CLOSE_BOUND` of the answer,
    while the client still sends.
    """
    reader, writer = await wire.connect()
    piece = one_byte_chunks(BODY_PIECE)

    async def pump() -> None:
        with contextlib.suppress(ConnectionError):
            writer.write(head)
            for _ in range(PIECES):
                writer.write(piece)
                await writer.drain()

    pumping = asyncio.ensure_future(pump())
    try:
        answer = await wire.read(reader)
        try:
            async with asyncio.timeout(CLOSE_BOUND):
                while await reader.read(64 * 1024):
                    pass  # nothing more is answered: the connection ends
        except ConnectionError:
            pass  # a reset: the server closed while the client still sent
        except TimeoutError:
            pytest.fail(f"the connection was still open {CLOSE_BOUND} s after {answer}")
        return answer
    finally:
        pumping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pumping
        writer.close()


async def four_alongside(wire: Wire, head: bytes) -> list[Answer]:
    """Four clients sending `head` and an endless body, beside a valid client."""

    async def hostile() -> list[Answer]:
        return list(await asyncio.gather(*(unread_body(wire, head) for _ in range(4))))

    return await wire.alongside(hostile())


def assert_closing_error(answer: Answer, status: int) -> dict[str, Any]:
    """A JSON-RPC error answer of `status` that closes the connection."""
    assert answer.status == status, answer
    assert answer.headers.get("connection", "").lower() == "close", answer
    error: dict[str, Any] = answer.json()["error"]
    assert error["code"] == -32600
    return error


def modern(wire: Wire, **changed: str) -> dict[str, str]:
    return {**wire.headers("tools/list"), **changed}


async def test_a_415_over_an_endless_body_of_one_byte_chunks(serve: Serve) -> None:
    wire = await serve(BODY_TIMEOUT=60.0)
    head = chunked_head(wire, modern(wire, **{"Content-Type": "text/plain"}))
    for answer in await four_alongside(wire, head):
        error = assert_closing_error(answer, 415)
        assert "Unsupported Media Type" in error["message"]
    await wire.healthy()


async def test_a_403_for_a_foreign_origin_over_an_endless_body(serve: Serve) -> None:
    wire = await serve(BODY_TIMEOUT=60.0)
    head = chunked_head(wire, modern(wire, Origin="https://evil.example"))
    for answer in await four_alongside(wire, head):
        assert "Origin" in assert_closing_error(answer, 403)["message"]
    await wire.healthy()


async def test_a_405_over_an_endless_body(serve: Serve) -> None:
    wire = await serve(BODY_TIMEOUT=60.0)
    head = chunked_head(wire, modern(wire), method="PUT")
    for answer in await four_alongside(wire, head):
        assert_closing_error(answer, 405)
        assert answer.headers["allow"] == "GET, POST, DELETE"
    await wire.healthy()


async def test_an_unknown_path_over_an_endless_body(serve: Serve) -> None:
    """aiohttp's own 404 (the router's, not the endpoint's) closes alike."""
    wire = await serve(BODY_TIMEOUT=60.0)
    head = chunked_head(wire, modern(wire), path="/elsewhere")
    for answer in await four_alongside(wire, head):
        assert answer.status == 404, answer
        assert answer.headers.get("connection", "").lower() == "close"
        assert b"Not Found" in answer.body
    await wire.healthy()


async def test_a_delete_that_succeeds_over_an_endless_body(serve: Serve) -> None:
    wire = await serve(BODY_TIMEOUT=60.0)
    sessions = [await wire.open_session() for _ in range(4)]
    heads = [chunked_head(wire, headers, method="DELETE") for headers in sessions]

    async def hostile() -> list[Answer]:
        return list(await asyncio.gather(*(unread_body(wire, h) for h in heads)))

    for answer in await wire.alongside(hostile()):
        assert answer.status in {200, 202, 204}, answer
        assert answer.headers.get("connection", "").lower() == "close"
    await wire.healthy()


@pytest.fixture
async def plain_runner() -> Any:
    """The endpoint under aiohttp's own `AppRunner` (it lingers 10 s)."""
    runners: list[web.AppRunner] = []

    async def start() -> int:
        settings = load_settings(None, TOOLS=[], BODY_TIMEOUT=60.0)
        runner = web.AppRunner(create_app(settings))
        await runner.setup()
        runners.append(runner)
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port: int = runner.addresses[0][1]
        return port

    try:
        yield start
    finally:
        for runner in runners:
            await runner.cleanup()


async def test_the_endpoint_alone_stops_parsing_a_body_it_refused(
    plain_runner: Any, wire_to: Any
) -> None:
    """Under any runner: after a 415, nothing more of the connection is parsed.

    The body's end and then a valid request follow the answer on the same
    connection: they used to be parsed and the request answered (the 415 kept
    the connection alive); now they are dropped unread, never answered.
    """
    wire: Wire = wire_to(await plain_runner())
    head = chunked_head(wire, modern(wire, **{"Content-Type": "text/plain"}))
    valid = json.dumps(wire.body("tools/list")).encode()
    after = wire.request_bytes(valid, modern(wire))
    reader, writer = await wire.connect()
    try:
        writer.write(head + one_byte_chunks(512))
        answer = await wire.read(reader)
        assert_closing_error(answer, 415)
        writer.write(one_byte_chunks(512) + b"0\r\n\r\n" + after)
        # the next request is never read: no answer before the client gives up
        with contextlib.suppress(TimeoutError, ConnectionError):
            async with asyncio.timeout(1.0):
                assert await reader.read(64 * 1024) == b""
    finally:
        writer.close()
