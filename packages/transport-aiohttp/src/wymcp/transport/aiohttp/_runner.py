"""The runner an application is served with (`wymcp serve`, `GunicornWorker`).

It applies the connection settings aiohttp leaves to its runner (handler
cancellation, `HEADER_TIMEOUT`, `MAX_CONNECTIONS`, `WRITE_TIMEOUT`), hands bodies
over uninflated, answers malformed HTTP with a short JSON 400, drops unread bodies
unparsed and bounds a request's framing bytes (`_Handler`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, cast

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError, LineTooLong
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from wymcp.conf import Settings
from wymcp.core.server import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    RETRY_AFTER,
    error_message,
)
from wymcp.transport.aiohttp._answers import encode, error_response
from wymcp.transport.aiohttp._chunk_framing import (
    FRAMING_FLOOR,
    FramingOverrunError,
    framing_allowance,
)
from wymcp.transport.aiohttp._setup import ENDPOINT_KEY

logger = logging.getLogger("wymcp.transport.aiohttp")

_LINGER = 2.0
"""Seconds a refused connection is kept (dropping what arrives) after its answer,
so the client reads the answer instead of a reset: a 503 past `MAX_CONNECTIONS`,
or any answer that left its request's body unread."""
_READ_BUFSIZE = 64 * 1024
"""aiohttp's read-ahead unit: a body not being read (one waiting its turn of
BODY_MEMORY_BUDGET) has its connection paused past twice this buffered, not
aiohttp 3.14's 512 KiB (a waiting body then cost about 0.75 MiB)."""


def _over_capacity_answer() -> bytes:
    body = encode(
        error_message(
            None,
            INTERNAL_ERROR,
            "Service unavailable: too many open connections "
            "(MAX_CONNECTIONS). Retry later.",
        )
    )
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


class _Handler(RequestHandler):
    """aiohttp's connection handler: write timeout, bounded 400s, bounded bodies.

    Write timeout: while the transport holds more than its high-water mark
    of unsent answer (writing paused), the backlog is checked every
    `write_timeout` seconds; a check that finds it no smaller than the last
    closes the connection at once (abort), which frees the backlog and
    cancels the request's call. A client that reads, however slowly, keeps
    its connection.

    Unread bodies: an answer that leaves its request's body unread (a 404,
    a 415, any refusal before the body) closes the connection, and what the
    client still sends is dropped without being parsed while aiohttp lingers
    (`_LINGER` seconds, so the client reads the answer instead of a reset).
    Framing bytes: of the bytes received from one answer to the next, those
    that are not the body of the request being handled may not pass
    `framing_allowance` (a head, and the size lines of the chunks the body
    may use); past it nothing more is parsed, and the body being read fails
    with `FramingOverrunError` (the endpoint answers 400). A large body on
    another route of the application is not cut: only its framing counts.
    """

    __slots__ = ("_backlog", "_received", "_wire", "_write_timeout", "_write_timer")

    def __init__(
        self, manager: web.Server, *, write_timeout: float, **kwargs: Any
    ) -> None:
        super().__init__(manager, **kwargs)
        self._write_timeout = write_timeout
        self._write_timer: asyncio.TimerHandle | None = None
        self._wire: asyncio.Transport | None = None
        self._backlog = 0
        self._received = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the transport, to measure and close it when writes stall."""
        self._wire = cast("asyncio.Transport", transport)
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        """Parse what arrived, unless the request sent too much framing."""
        received = self._received = self._received + len(data)
        if received > FRAMING_FLOOR and self._payload_parser is None:
            request = self._current_request
            if request is not None:  # its handler runs: its body is not framing
                carried = request.content.total_bytes
            elif self._request_in_progress:  # its answer is being written
                carried = received
            else:  # a head not handled yet
                carried = 0
            allowance = framing_allowance(carried)
            if received - carried > allowance:
                self._overrun(allowance)
                return
        # the base class named, not `super()`: no super object per packet
        RequestHandler.data_received(self, data)

    def _overrun(self, allowance: int) -> None:
        """Parse nothing more; the body being read (if any) fails."""
        if self._close:  # already closing: what arrives is dropped
            return
        logger.info(
            "wymcp: stopped reading a request that sent over %d bytes of framing",
            allowance,
        )
        request = self._current_request
        if request is not None:
            request.content.set_exception(FramingOverrunError(allowance))
        elif not self._request_in_progress:
            self.force_close()  # nobody to answer: nothing was asked yet
        self.close()

    async def finish_response(
        self, request: BaseRequest, resp: web.StreamResponse, start_time: float | None
    ) -> tuple[web.StreamResponse, bool]:
        """Send the answer; past an unread body, the connection closes.

        The rest of the body is dropped as it arrives, unparsed (aiohttp
        would parse it for up to its lingering time, chunk by chunk).
        """
        content = request.content
        unread = not content.is_eof()
        if unread:
            resp.force_close()
            self.close()
        answered = await RequestHandler.finish_response(self, request, resp, start_time)
        self._received = 0
        if unread and content.exception() is not None:
            # the body failed (`FramingOverrunError`): nothing to linger for, and
            # aiohttp's lingering would raise its exception again
            content.feed_eof()
        return answered

    def pause_writing(self) -> None:
        """The unsent backlog passed the high-water mark: start watching it."""
        super().pause_writing()
        if self._write_timer is None and self._wire is not None:
            self._backlog = self._wire.get_write_buffer_size()
            self._write_timer = asyncio.get_running_loop().call_later(
                self._write_timeout, self._check_backlog
            )

    def resume_writing(self) -> None:
        """The client caught up: stop watching."""
        super().resume_writing()
        self._stop_watching()

    def connection_lost(self, exc: BaseException | None) -> None:
        """Stop watching, then let aiohttp end the connection."""
        self._stop_watching()
        self._wire = None
        super().connection_lost(exc)

    def _stop_watching(self) -> None:
        timer, self._write_timer = self._write_timer, None
        if timer is not None:
            timer.cancel()

    def _check_backlog(self) -> None:
        self._write_timer = None
        wire = self._wire
        if wire is None or not self.writing_paused:
            return
        backlog = wire.get_write_buffer_size()
        if backlog < self._backlog:  # the client took some: watch on
            self._backlog = backlog
            self._write_timer = asyncio.get_running_loop().call_later(
                self._write_timeout, self._check_backlog
            )
            return
        logger.info(
            "wymcp: closed a connection whose client took none of %d unsent "
            "bytes in %g s (WRITE_TIMEOUT)",
            backlog,
            self._write_timeout,
        )
        wire.abort()

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """Answer malformed HTTP with a short JSON 400 that quotes nothing.

        aiohttp's own answer quotes the bytes around the fault (for a valid
        request followed by garbage, the whole earlier body) and logs a
        traceback; this one is a fixed sentence and one debug line.
        """
        if not isinstance(exc, HttpProcessingError):
            return super().handle_error(request, status, exc, message)
        logger.debug(
            "wymcp: refused malformed HTTP from %s (%s)",
            request.remote,
            type(exc).__name__,
        )
        if request.writer.output_size > 0:
            raise ConnectionError("an answer was already sent on this connection")
        if isinstance(exc, LineTooLong):
            text = (
                "Bad request: the request line or a header is longer than "
                f"{self.max_line_size} bytes."
            )
        else:
            text = "Bad request: the HTTP message is malformed."
        return error_response(400, INVALID_REQUEST, text, close=True)


class _ConnectionCap:
    """The protocol factory sites listen with: aiohttp's server, capped.

    A connection is counted from when aiohttp registers it until its handler
    ends; the cap is checked as each connection is accepted, so a burst
    accepted at once can pass it by at most the listen backlog. Connections
    are served by `_Handler`, made as `web.Server` makes its own handlers.
    """

    def __init__(
        self,
        server: web.Server,
        limit: int,
        write_timeout: float,
        refused: Callable[[], None] | None = None,
    ) -> None:
        self._server = server
        self._limit = limit
        self._write_timeout = write_timeout
        self._answer = _over_capacity_answer()
        self._refused = refused

    def __call__(self) -> asyncio.BaseProtocol:
        server = self._server
        if len(server.connections) >= self._limit:
            if self._refused is not None:
                self._refused()
            return _OverCapacity(self._answer)
        return _Handler(
            server,
            write_timeout=self._write_timeout,
            loop=asyncio.get_running_loop(),
            **server._kwargs,  # noqa: SLF001 - what `web.Server.__call__` passes
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)


class _Runner(web.AppRunner):
    """An `AppRunner` whose sites listen through a `_ConnectionCap`."""

    def __init__(
        self,
        app: web.Application,
        *,
        max_connections: int,
        write_timeout: float,
        **kwargs: Any,
    ) -> None:
        super().__init__(app, **kwargs)
        self._max_connections = max_connections
        self._write_timeout = write_timeout
        metrics = app[ENDPOINT_KEY].metrics if ENDPOINT_KEY in app else None
        self._refused = None if metrics is None else metrics.refused_connection

    @property
    def server(self) -> web.Server | None:
        """The server behind the cap (sites call it once per connection)."""
        server = super().server
        if server is None:
            return None
        return cast(
            "web.Server",
            _ConnectionCap(
                server, self._max_connections, self._write_timeout, self._refused
            ),
        )


def make_runner(
    app: web.Application, settings: Settings, **kwargs: Any
) -> web.AppRunner:
    """An `AppRunner` for `app` with the connection settings of `settings`.

    `kwargs` go to `web.AppRunner` (`access_log`, `logger`, `handle_signals`,
    …); `handler_cancellation`, `keepalive_timeout` and `shutdown_timeout`
    come from the settings, and `auto_decompress` is off: the endpoint
    refuses or inflates a compressed body itself (`ACCEPT_CONTENT_ENCODING`),
    so nothing is inflated past `BODY_LIMIT` or after a refusal. aiohttp
    lingers `_LINGER` seconds (not 10) over a body its answer left unread,
    dropping what arrives unparsed.
    """
    return _Runner(
        app,
        max_connections=settings.MAX_CONNECTIONS,
        write_timeout=settings.WRITE_TIMEOUT,
        lingering_time=_LINGER,
        handler_cancellation=True,
        keepalive_timeout=settings.HEADER_TIMEOUT,
        shutdown_timeout=settings.SHUTDOWN_GRACE,
        auto_decompress=False,
        read_bufsize=_READ_BUFSIZE,
        **kwargs,
    )
