"""read_events: SSE framing as the transport writes it, read event by event."""

from __future__ import annotations

import asyncio
from unittest import mock

from aiohttp import StreamReader

from wymcp.testing._sse_events import Event, read_events


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
