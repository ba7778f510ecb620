"""Reading a `text/event-stream` body event by event (the SSE framing MCP uses).

Comment lines (keep-alives) are skipped, `data:` lines of one event are
joined with newlines, and an event is handed over at its blank line, so a
caller can react to a message while the stream is still open.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import attrs
from aiohttp import StreamReader


@attrs.frozen
class Event:
    """One server-sent event: its `data` (joined lines) and its `id`, if any."""

    data: str
    id: str | None = None


async def read_events(content: StreamReader) -> AsyncIterator[Event]:
    """Yield each event of an SSE body until the server ends it."""
    data: list[str] = []
    event_id: str | None = None
    seen = False
    while line_bytes := await content.readline():
        line = line_bytes.decode("utf-8").rstrip("\r\n")
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
