"""Chunked framing is budgeted, not only the payload: 1-byte chunks get a 400.

aiohttp spends Python per HTTP chunk; a 4 MiB body of 1-byte chunks cost
seconds of CPU. A body may use 1024 chunks plus one per KiB it carries
(`_chunk_framing`); past that it is refused at once, beside a valid client.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from wymcp.transport.aiohttp._chunk_framing import BYTES_PER_CHUNK, FREE_CHUNKS

if TYPE_CHECKING:
    from conftest import Answer, Serve, Wire

SMALL = 512


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
