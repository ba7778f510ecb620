"""read_events: SSE framing as the transport writes it, read event by event, bounded."""

from __future__ import annotations

import asyncio
from unittest import mock

from aiohttp import StreamReader

from wymcp.transport.aiohttp._sse_reader import BodyTooLargeError, Event, read_events


def reader(payload: bytes) -> StreamReader:
    stream = StreamReader(
        mock.Mock(_reading_paused=False), 2**16, loop=asyncio.get_running_loop()
    )
    stream.feed_data(payload)
    stream.feed_eof()
    return stream


async def events(payload: bytes) -> list[Event]:
    return [event async for event in read_events(reader(payload))]


async def test_events_comments_and_ids():
    payload = (
        b": keepalive\n\n"
        b"id: e1\ndata: \n\n"
        b'data: {"a": 1}\n\n'
        b"data: line one\r\ndata: line two\r\n\r\n"
        b"event: message\nretry: 10\ndata:tight\n\n"
    )
    assert await events(payload) == [
        Event("", "e1"),
        Event('{"a": 1}'),
        Event("line one\nline two"),
        Event("tight"),
    ]


async def test_an_event_cut_by_the_end_of_the_stream_is_still_read():
    assert await events(b'data: {"last": true}\n') == [Event('{"last": true}')]
    assert await events(b"") == []


async def test_a_limit_bounds_the_bytes_read_even_inside_one_line():
    import pytest

    payload = b'data: {"a": 1}\n\n'  # 16 bytes
    assert await events(payload) == [Event('{"a": 1}')]
    exact = [e async for e in read_events(reader(payload), limit=len(payload))]
    assert exact == [Event('{"a": 1}')]
    for small in (len(payload) - 1, 5):
        with pytest.raises(BodyTooLargeError, match=f"larger than {small} bytes"):
            _ = [e async for e in read_events(reader(payload), limit=small)]
    # one long line is refused at the limit, not read whole first
    long_line = b"data: " + b"x" * 10_000_000 + b"\n\n"
    with pytest.raises(BodyTooLargeError):
        _ = [e async for e in read_events(reader(long_line), limit=1 << 20)]
