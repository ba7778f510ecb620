"""`BodyReader.read_buffered`: a small body read without awaiting, same bounds."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from unittest import mock

import pytest
from aiohttp import streams
from aiohttp.test_utils import make_mocked_request

from wymcp.conf import Settings
from wymcp.transport.aiohttp._admission import Refused
from wymcp.transport.aiohttp._body_budget import COUNTED_FROM
from wymcp.transport.aiohttp._body_reader import NOT_BUFFERED, BodyReader


def _request(body: bytes, *, whole: bool = True, headers: Any = None) -> Any:
    payload = streams.StreamReader(mock.Mock(), 2**16, loop=asyncio.get_running_loop())
    payload.feed_data(body)
    if whole:
        payload.feed_eof()
    return make_mocked_request(
        "POST",
        "/mcp",
        headers={"Content-Type": "application/json", **(headers or {})},
        payload=payload,
    )


def _reader(**overrides: Any) -> BodyReader:
    return BodyReader(Settings().evolve(**overrides))


async def test_a_whole_small_body_is_decoded_without_awaiting() -> None:
    reader = _reader()
    message = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    request = _request(json.dumps(message).encode())
    assert reader.read_buffered(request, request.headers) == message
    assert request.content.at_eof()  # read whole, nothing left behind


async def test_a_body_still_arriving_is_left_whole_for_read_json() -> None:
    reader = _reader()
    request = _request(b'{"jsonrpc": "2.0",', whole=False)
    assert reader.read_buffered(request, request.headers) is NOT_BUFFERED
    reservation = reader.reserve("addr:127.0.0.1")
    request.content.feed_data(b' "id": 1, "method": "ping"}')
    request.content.feed_eof()
    value = await reader.read_json(request, reservation)
    assert value == {"jsonrpc": "2.0", "id": 1, "method": "ping"}


async def test_a_compressed_or_oversized_body_is_left_for_read_json() -> None:
    reader = _reader(BODY_LIMIT=100)
    reservation = reader.reserve("addr:127.0.0.1")
    gzipped = _request(b"x" * 50, headers={"Content-Encoding": "gzip"})
    assert reader.read_buffered(gzipped, gzipped.headers) is NOT_BUFFERED
    identity = _request(b"[1]", headers={"content-encoding": "identity"})
    assert reader.read_buffered(identity, identity.headers) is NOT_BUFFERED
    assert await reader.read_json(identity, reservation) == [1]
    over = _request(b"[" + b"1," * 60 + b"1]")
    assert reader.read_buffered(over, over.headers) is NOT_BUFFERED
    with pytest.raises(Refused) as refused:
        await reader.read_json(over, reservation)
    assert refused.value.response.status == 413


async def test_a_body_the_budget_counts_is_left_for_read_json_and_refused_there() -> (
    None
):
    reader = _reader(BODY_MEMORY_BUDGET=8 * 1024)
    small = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "x" * 4000}).encode()
    assert len(small) <= COUNTED_FROM
    fits = _request(small)
    assert reader.read_buffered(fits, fits.headers) == json.loads(small)
    assert reader.bodies.held == 0  # never counted
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "x" * 9000}).encode()
    request = _request(body)
    assert reader.read_buffered(request, request.headers) is NOT_BUFFERED
    with pytest.raises(Refused) as refused:
        await reader.read_json(request, reader.reserve("addr:127.0.0.1"))
    assert refused.value.response.status == 503
    assert reader.bodies.held == 0


async def test_a_malformed_buffered_body_gets_the_parse_error() -> None:
    reader = _reader()
    request = _request(b'{"a": 1, "a": 2}')
    with pytest.raises(Refused) as refused:
        reader.read_buffered(request, request.headers)
    assert refused.value.response.status == 400
    assert b"repeats a key" in refused.value.response.body
