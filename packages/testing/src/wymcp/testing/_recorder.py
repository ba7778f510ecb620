"""`Recorder`: a `Stream` that keeps what the engine streams instead of sending it.

Used by direct calls and direct contexts: progress and log notifications
land in `messages`. A request the server sends the client (elicitation,
sampling, roots) is handed to `on_request`, if set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


class Recorder:
    """A `wymcp.core.server.Stream` that records every message it is sent."""

    def __init__(
        self, on_request: Callable[[Mapping[str, Any]], None] | None = None
    ) -> None:
        self.messages: list[Mapping[str, Any]] = []
        self.headers: dict[str, str] = {}
        self._opened = False
        self._on_request = on_request

    @property
    def opened(self) -> bool:
        """Whether anything opened the stream."""
        return self._opened

    async def open(self, headers: Mapping[str, str] | None = None) -> None:
        """Mark the stream open and keep its headers (first call only)."""
        if self._opened:
            return
        self._opened = True
        self.headers = dict(headers or {})

    async def send(self, message: Any | None, *, event_id: str | None = None) -> None:
        """Record `message` (an empty event, None, is a priming event: dropped)."""
        del event_id
        await self.open()
        if not isinstance(message, Mapping):
            return
        self.messages.append(message)
        if "method" in message and "id" in message and self._on_request is not None:
            self._on_request(message)
