"""Read one SSE event off an aiohttp client response, for stream tests.

Keep-alive comment blocks are skipped; the event's fields come back by name
(`id`, `data`, `retry`, `event`).
"""

from __future__ import annotations

import asyncio
from typing import Any

WAIT: float = 15
"""Seconds an event may take to arrive before the test fails (TimeoutError)."""


async def next_event(response: Any) -> dict[str, str]:
    """The next SSE event's fields; TimeoutError after `WAIT` seconds."""
    while True:
        raw = await asyncio.wait_for(response.content.readuntil(b"\n\n"), WAIT)
        if not raw.startswith(b":"):
            break
    fields: dict[str, str] = {}
    for line in raw.decode().splitlines():
        name, _, value = line.partition(": ")
        fields[name] = value
    return fields
