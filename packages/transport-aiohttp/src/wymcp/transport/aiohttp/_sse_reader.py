"""Reading a `text/event-stream` body event by event: the one SSE reader of the clients.

Comment lines (keep-alives) are skipped, `data:` lines of one event are joined
with newlines, and an event is handed over at its blank line, so a caller can
react to a message while the stream is still open. `limit` bounds the bytes read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import attrs
from aiohttp import StreamReader
from aiohttp.http_exceptions import LineTooLong


class BodyTooLargeError(ValueError):
    """The body passed the reader's `limit` (the text says how many bytes)."""


@attrs.frozen
class Event:
    """One server-sent event: its `data` (joined lines) and its `id`, if any."""

    data: str
    id: str | None = None


async def read_events(
    content: StreamReader, *, limit: int | None = None
) -> AsyncIterator[Event]:
    """Yield each event of an SSE body until the server ends it.

    With `limit`, BodyTooLargeError once the body passes `limit` bytes (a
    line is never read past it); without, a line may be aiohttp's read
    buffer high-water mark long.
    """
    data: list[str] = []
    event_id: str | None = None
    seen = False
    left = limit
    while line_bytes := await _line(content, left, limit):
        if left is not None:
            left -= len(line_bytes)
        line = line_bytes.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if seen:
                yield Event("\n".join(data), event_id)
            data, event_id, seen = [], None, False
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data.append(value)
            seen = True
        elif field == "id":
            event_id = value
            seen = True
    if seen:
        yield Event("\n".join(data), event_id)


async def _line(content: StreamReader, left: int | None, limit: int | None) -> bytes:
    if left is None:
        return await content.readline()
    if left <= 0:  # (max_size=0 would mean aiohttp's default)
        if await content.read(1):
            raise BodyTooLargeError(
                f"the answer is larger than {limit} bytes; not read"
            )
        return b""
    try:
        return await content.readuntil(b"\n", max_size=left)
    except LineTooLong:
        raise BodyTooLargeError(
            f"the answer is larger than {limit} bytes; not read"
        ) from None
