"""Chunked framing is budgeted, not only the payload: 1-byte chunks get a 400.

aiohttp spends Python per HTTP chunk; a 4 MiB body of 1-byte chunks cost
seconds of CPU. A body may use 1024 chunks plus one per KiB it carries
(`_chunk_framing`); past that it is refused at once, beside a valid client.
So is a request whose size lines or extensions take more bytes than
`raw_allowance`, and a transfer coding other than chunked (501).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING

import pytest
from aiohttp import web

from wymcp.conf import load_settings
from wymcp.transport.aiohttp import create_app
from wymcp.transport.aiohttp._chunk_framing import (
    BYTES_PER_CHUNK,
    FREE_CHUNKS,
    raw_allowance,
)
from wymcp.transport.aiohttp._runner import make_runner

if TYPE_CHECKING:
    from collections.abc import Callable

    from conftest import Answer, Serve, Wire

SMALL = 512
FLOOD_CAP = 512 * 1024 * 1024
"""The most bytes a flooding client sends (the test fails before, not hangs)."""
KERNEL_BUFFERS = 16 * 1024 * 1024
"""Bytes the sockets' buffers may hold beyond what the server read."""


def _framed(body: bytes, size: int) -> bytes:
    """`body` in HTTP chunks of `size` bytes, then the last chunk."""
    if size == 1:  # written by slices: a loop over millions of parts would stall
        count = len(body)
        framed = bytearray(6 * count)
        for at, part in enumerate((b"1", b"\r", b"\n", None, b"\r", b"\n")):
            framed[at::6] = body if part is None else part * count
        return bytes(framed) + b"0\r\n\r\n"
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


def _padded(wire: Wire, size: int) -> bytes:
    """A valid tools/list body of `size` bytes (JSON whitespace after it)."""
    body = json.dumps(wire.body("tools/list")).encode()
    return body + b" " * (size - len(body))


def _request(wire: Wire, body: bytes, chunk: int) -> bytes:
    """A POST of `body` in `chunk`-byte chunks, as written on the socket."""
    headers = {**wire.headers("tools/list"), "Transfer-Encoding": "chunked"}
    return wire.request_bytes(b"", headers, length=False) + _framed(body, chunk)


async def _send(wire: Wire, framed: bytes) -> Answer:
    """Write a request on one raw connection; its answer."""
    reader, writer = await wire.connect()
    try:
        writer.write(framed)  # buffered: the answer may come before it is sent
        return await wire.read(reader)
    finally:
        writer.close()


def _assert_framing_refused(answer: Answer) -> str:
    assert answer.status == 400, answer
    assert answer.headers.get("connection", "").lower() == "close"
    assert len(answer.body) <= SMALL
    error = answer.json()["error"]
    assert error["code"] == -32600
    assert "chunked framing is too fine" in error["message"]
    return str(error["message"])


async def test_four_bodies_of_one_byte_chunks_are_refused_beside_a_valid_client(
    serve: Serve,
) -> None:
    wire = await serve(BODY_TIMEOUT=60.0)  # not the timeout: the framing refuses
    framed = _request(wire, _padded(wire, wire.body_limit - 1024), 1)

    async def hostile() -> list[Answer]:
        return list(await asyncio.gather(*(_send(wire, framed) for _ in range(4))))

    for answer in await wire.alongside(hostile()):
        _assert_framing_refused(answer)
    await wire.healthy()


async def test_doubling_the_body_does_not_move_where_it_is_refused(
    serve: Serve,
) -> None:
    wire = await serve(BODY_TIMEOUT=60.0)
    messages = [
        _assert_framing_refused(await _send(wire, _request(wire, _padded(wire, n), 1)))
        for n in (wire.body_limit // 2, wire.body_limit - 1024)
    ]
    # refused at the first chunk past the allowance, whatever follows it
    refused_at = FREE_CHUNKS + 2  # 1-byte chunks: n chunks carry n bytes
    assert messages == [f"{messages[0]}"] * 2
    assert f"({refused_at} chunks for {refused_at} bytes;" in messages[0]


async def test_a_body_in_chunks_of_a_kib_is_served(serve: Serve) -> None:
    wire = await serve(BODY_TIMEOUT=60.0)
    body = _padded(wire, wire.body_limit - 1024)  # about 2,000 chunks of 1 KiB
    answer = await _send(wire, _request(wire, body, BYTES_PER_CHUNK))
    assert answer.status == 200, answer
    assert answer.json()["result"]["tools"]


async def test_the_first_thousand_chunks_are_free_however_small(serve: Serve) -> None:
    wire = await serve(BODY_TIMEOUT=60.0)
    # 1-byte chunks up to the free allowance, then 64 KiB ones for the rest
    body = _padded(wire, 256 * 1024)
    head, rest = body[:FREE_CHUNKS], body[FREE_CHUNKS:]
    headers = {**wire.headers("tools/list"), "Transfer-Encoding": "chunked"}
    framed = (
        wire.request_bytes(b"", headers, length=False)
        + _framed(head, 1)[: -len(b"0\r\n\r\n")]
        + _framed(rest, 64 * 1024)
    )
    reader, writer = await wire.connect()
    try:
        writer.write(framed)
        answer = await wire.read(reader)
    finally:
        writer.close()
    assert answer.status == 200, answer


async def _flood(wire: Wire, head: bytes, piece: bytes) -> tuple[Answer, int]:
    """Send `head`, then `piece` over and over; the answer, and bytes sent by then.

    The bytes are counted as the socket took them (`drain`), so they include
    what waits in the kernel's buffers, a few MiB at most.
    """
    reader, writer = await wire.connect()
    sent = 0

    async def pump() -> None:
        nonlocal sent
        with contextlib.suppress(ConnectionError):
            writer.write(head)
            while sent < FLOOD_CAP:
                writer.write(piece)
                await writer.drain()
                sent += len(piece)

    pumping = asyncio.ensure_future(pump())
    try:
        answer = await wire.read(reader)
        return answer, sent
    finally:
        pumping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pumping
        writer.close()


def _assert_overrun_refused(answer: Answer) -> None:
    assert answer.status == 400, answer
    assert answer.headers.get("connection", "").lower() == "close"
    assert len(answer.body) <= SMALL
    error = answer.json()["error"]
    assert error["code"] == -32600
    assert "chunked framing takes too many bytes" in error["message"]


def _padded_chunks(padding: int, *, extension: bool) -> bytes:
    """Sixteen 1-byte chunks whose size lines carry `padding` bytes of no body."""
    # `1;x=aaaa…` (a chunk extension) or `000…01` (leading zeros)
    line = b"1;x=" + b"a" * padding if extension else b"0" * padding + b"1"
    return (line + b"\r\nx\r\n") * 16


@pytest.mark.parametrize("extension", [False, True], ids=["zeros", "extensions"])
async def test_framing_bytes_past_the_allowance_are_refused_beside_a_valid_client(
    serve: Serve, extension: bool
) -> None:
    """Size lines of 64 KiB, then 128 KiB: refused within the same bytes.

    Before, only the 1,026th chunk was refused: 1 MB lines had the server read
    13 GB of framing (5.98 CPU-s) on one connection first.
    """
    wire = await serve(BODY_TIMEOUT=60.0)
    allowance = raw_allowance(wire.body_limit)
    head = wire.request_bytes(
        b"",
        {**wire.headers("tools/list"), "Transfer-Encoding": "chunked"},
        length=False,
    )
    for padding in (64 * 1024, 128 * 1024):
        piece = _padded_chunks(padding, extension=extension)
        answer, sent = await wire.alongside(_flood(wire, head, piece))
        _assert_overrun_refused(answer)
        # read up to the allowance, not to the chunk count (64 or 128 MiB)
        assert sent <= allowance + KERNEL_BUFFERS, (sent, allowance)
    await wire.healthy()


async def test_a_body_at_the_limit_in_chunks_of_a_kib_stays_within_the_allowance(
    serve: Serve,
) -> None:
    """The allowance leaves room for the head and the framing of a full body."""
    wire = await serve(BODY_TIMEOUT=60.0)
    body = _padded(wire, wire.body_limit)
    framed = _request(wire, body, BYTES_PER_CHUNK)
    assert len(framed) < raw_allowance(wire.body_limit)
    answer = await _send(wire, framed)
    assert answer.status == 200, answer
    assert answer.json()["result"]["tools"]


@pytest.mark.parametrize("coding", ["gzip, chunked", "deflate, chunked", "x, chunked"])
async def test_a_transfer_coding_other_than_chunked_is_not_implemented(
    serve: Serve, coding: str
) -> None:
    """RFC 9112: an unknown transfer coding gets 501, not a body read as chunked."""
    wire = await serve()
    body = json.dumps(wire.body("tools/list")).encode()
    headers = {**wire.headers("tools/list"), "Transfer-Encoding": coding}
    framed = wire.request_bytes(b"", headers, length=False) + _framed(body, 64)
    answer = await wire.alongside(_send(wire, framed))
    assert answer.status == 501, answer
    assert answer.headers.get("connection", "").lower() == "close"
    error = answer.json()["error"]
    assert error["code"] == -32600
    assert "only transfer coding understood is chunked" in error["message"]
    # chunked alone, in any case, is served
    plain = {**headers, "Transfer-Encoding": "Chunked"}
    framed = wire.request_bytes(b"", plain, length=False) + _framed(body, 64)
    assert (await _send(wire, framed)).status == 200


async def test_a_large_upload_to_another_route_is_not_cut(
    wire_to: Callable[[int], Wire],
) -> None:
    """Under wymcp's runner only framing counts: a route of the application's
    own may take a body larger than BODY_LIMIT and its framing allowance."""
    settings = load_settings(None, TOOLS=[], BODY_LIMIT=64 * 1024)
    app = create_app(settings)

    async def upload(request: web.Request) -> web.Response:
        size = 0
        while chunk := await request.content.readany():
            size += len(chunk)
        return web.json_response({"size": size})

    app.router.add_post("/upload", upload)
    runner = make_runner(app, settings)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        wire = wire_to(port)
        body = b"x" * (4 * raw_allowance(settings.BODY_LIMIT))
        head = (
            f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Transfer-Encoding: chunked\r\n\r\n"
        ).encode()
        reader, writer = await wire.connect()
        try:
            writer.write(head + _framed(body, 16 * 1024))
            answer = await wire.read(reader)
        finally:
            writer.close()
        assert answer.status == 200, answer
        assert answer.json() == {"size": len(body)}
    finally:
        await runner.cleanup()
