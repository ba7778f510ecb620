"""One request's Server-Sent Events response: the engine's `Stream`.

The first write commits `200 text/event-stream` (no caching, no proxy
buffering); a keep-alive comment line goes out every `KEEPALIVE_INTERVAL`
seconds while the stream is open. A failed write means the client left: the
request's task is cancelled, so the call it was running stops.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from wymcp.transport.aiohttp._answers import encode

SSE_HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}
KEEPALIVE_LINE = b": keepalive\n\n"


class SseStream:
    """The `wymcp.core.server.Stream` of one aiohttp request.

    One is made per request and most are never opened: what an unopened
    stream holds is the class's defaults, not set per instance.
    """

    _response: web.StreamResponse | None = None
    opened = False
    """Whether the SSE response is committed (an attribute, read per request)."""
    _lock: asyncio.Lock | None = None  # made on the first write
    _pinger: asyncio.Task[None] | None = None
    _gone = False
    _ended = False  # by end_early: the call goes on, silently

    def __init__(self, request: web.Request, *, keepalive: float) -> None:
        self._request = request
        self._keepalive = keepalive
        self._task = asyncio.current_task()

    @property
    def gone(self) -> bool:
        """Whether a write failed because the client closed the stream."""
        return self._gone

    async def open(self, headers: Mapping[str, str] | None = None) -> None:
        """Commit the SSE response with extra headers; later calls do nothing."""
        if self._response is not None:
            return
        response = web.StreamResponse(status=200, headers=SSE_HEADERS)
        for name, value in (headers or {}).items():
            response.headers[name] = value
        self._response = response
        self.opened = True
        await response.prepare(self._request)
        self._pinger = asyncio.get_running_loop().create_task(self._ping())

    async def send(self, message: Any | None, *, event_id: str | None = None) -> None:
        """Write one event: `message` as JSON data (None: empty data)."""
        await self.open()
        frame = b""
        if event_id is not None:
            clean = event_id.replace("\r", "").replace("\n", "")
            frame += b"id: " + clean.encode("utf-8") + b"\n"
        frame += b"data: " + (b"" if message is None else encode(message)) + b"\n\n"
        await self._write(frame)

    async def end_early(self, event_id: str, retry_ms: int) -> None:
        """Send a priming event (`event_id`, `retry`, empty data), end the response.

        The request's call goes on (SEP-1699 polling): the client resumes with
        `Last-Event-ID`.
        """
        await self.open()
        clean = event_id.replace("\r", "").replace("\n", "")
        frame = f"id: {clean}\nretry: {int(retry_ms)}\ndata: \n\n".encode()
        await self._write(frame)
        await self._stop_pinging()
        response = self._response
        assert response is not None  # noqa: S101 - opened above
        await response.write_eof()
        self._ended = True

    async def finish(self, last: Any | None) -> web.StreamResponse:
        """Send `last` (if any) as the final event and end the response."""
        response = self._response
        assert response is not None  # noqa: S101 - only called once opened
        try:
            if last is not None and not self._ended:
                await self.send(last)
            await self._stop_pinging()
            if not self._gone:
                await response.write_eof()
        finally:
            await self._stop_pinging()
        return response

    async def close(self) -> None:
        """Stop the keep-alive pings (the request is over, however it ended)."""
        await self._stop_pinging()

    async def _stop_pinging(self) -> None:
        pinger, self._pinger = self._pinger, None
        if pinger is not None and pinger is not asyncio.current_task():
            pinger.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pinger

    async def _ping(self) -> None:
        with contextlib.suppress(ConnectionResetError):
            while True:
                await asyncio.sleep(self._keepalive)
                await self._write(KEEPALIVE_LINE)

    async def _write(self, data: bytes) -> None:
        response = self._response
        if self._gone or self._ended or response is None:
            raise ConnectionResetError("the client closed the stream")
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            try:
                await response.write(data)
            except (ConnectionError, RuntimeError):
                self._client_left()
                raise ConnectionResetError("the client closed the stream") from None

    def _client_left(self) -> None:
        self._gone = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
