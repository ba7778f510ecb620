"""The runner an application is served with (`wymcp serve`, `GunicornWorker`).

aiohttp leaves connection limits to whoever runs the application; this runner
applies the settings: handler cancellation (a call stops when its client
leaves), `HEADER_TIMEOUT` (aiohttp's keep-alive timeout, which also bounds the
wait for a request's line and headers) and `MAX_CONNECTIONS`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

from aiohttp import web
from wymcp.conf import Settings

RETRY_AFTER = 5
"""Seconds a connection refused by `MAX_CONNECTIONS` is told to wait."""
_LINGER = 2.0
"""Seconds a refused connection is kept (reading and discarding) after its 503,
so the client reads the answer instead of a reset."""


def _over_capacity_answer() -> bytes:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32603,
                "message": "Service unavailable: too many open connections "
                "(MAX_CONNECTIONS). Retry later.",
            },
        },
        separators=(",", ":"),
    ).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Retry-After: {RETRY_AFTER}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode() + body


class _OverCapacity(asyncio.Protocol):
    """A connection past `MAX_CONNECTIONS`: answered 503 at once, then closed.

    The answer goes out before the request is read; what the client sends is
    discarded for `_LINGER` seconds so closing does not reset the connection
    before the client has read the 503.
    """

    def __init__(self, answer: bytes) -> None:
        self._answer = answer
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        stream = cast("asyncio.Transport", transport)
        stream.write(self._answer)
        if stream.can_write_eof():
            stream.write_eof()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(_LINGER, stream.close)

    def data_received(self, data: bytes) -> None:
        """Discard the request: it is answered already."""

    def eof_received(self) -> bool:
        """Close once the client has closed its side."""
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        del exc
        if self._timer is not None:
            self._timer.cancel()


class _ConnectionCap:
    """The protocol factory sites listen with: aiohttp's server, capped.

    A connection is counted from when aiohttp registers it until its handler
    ends; the cap is checked as each connection is accepted, so a burst
    accepted at once can pass it by at most the listen backlog.
    """

    def __init__(self, server: web.Server, limit: int) -> None:
        self._server = server
        self._limit = limit
        self._answer = _over_capacity_answer()

    def __call__(self) -> asyncio.BaseProtocol:
        if len(self._server.connections) >= self._limit:
            return _OverCapacity(self._answer)
        return self._server()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)


class _Runner(web.AppRunner):
    """An `AppRunner` whose sites listen through a `_ConnectionCap`."""

    def __init__(
        self, app: web.Application, *, max_connections: int, **kwargs: Any
    ) -> None:
        super().__init__(app, **kwargs)
        self._max_connections = max_connections

    @property
    def server(self) -> web.Server | None:
        """The server behind the cap (sites call it once per connection)."""
        server = super().server
        if server is None:
            return None
        return cast("web.Server", _ConnectionCap(server, self._max_connections))


def make_runner(
    app: web.Application, settings: Settings, **kwargs: Any
) -> web.AppRunner:
    """An `AppRunner` for `app` with the connection settings of `settings`.

    `kwargs` go to `web.AppRunner` (`access_log`, `logger`, `handle_signals`,
    …); `handler_cancellation`, `keepalive_timeout` and `shutdown_timeout`
    come from the settings.
    """
    return _Runner(
        app,
        max_connections=settings.MAX_CONNECTIONS,
        handler_cancellation=True,
        keepalive_timeout=settings.HEADER_TIMEOUT,
        shutdown_timeout=settings.SHUTDOWN_GRACE,
        **kwargs,
    )
