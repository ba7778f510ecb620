"""The MCP endpoint's request handler: it drives one exchange per request.

`Admission` decides whether a request is read, `BodyReader` reads its body; the
engine's `Reply` to the `Exchange` becomes a JSON response, or the last event
of the SSE stream it opened. Nothing unexpected escapes as a 500: it becomes a
short JSON-RPC -32603 answer and one log line.
"""

from __future__ import annotations

import asyncio
import logging
from time import perf_counter
from typing import TYPE_CHECKING, Any, Final

from aiohttp import HttpVersion11, web
from multidict import CIMultiDict, CIMultiDictProxy

from wymcp.conf import Settings
from wymcp.core.server import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    CallRecord,
    Exchange,
    Headers,
    ServedEngine,
    client_key,
    error_message,
)
from wymcp.transport.aiohttp._access_log import AccessLog
from wymcp.transport.aiohttp._admission import Admission, Refused
from wymcp.transport.aiohttp._answers import (
    echoable_id,
    encode,
    error_response,
    internal_error,
    reply_response,
)
from wymcp.transport.aiohttp._body_budget import Reservation
from wymcp.transport.aiohttp._body_reader import NOT_BUFFERED, BodyReader
from wymcp.transport.aiohttp._health import Health
from wymcp.transport.aiohttp._metrics import Metrics, unauthorized
from wymcp.transport.aiohttp._scrapes import Scrapes
from wymcp.transport.aiohttp._sse_stream import SseStream

if TYPE_CHECKING:
    from wymcp.transport.aiohttp._bearer_auth import BearerAuth

logger = logging.getLogger("wymcp.transport.aiohttp")

_CLIENT_CLOSED = 499
"""The status counted and logged for a request whose client left first."""
_STREAMS = frozenset({"GET", "DELETE"})
"""The HTTP methods counted as the `method` of their request."""


def _copied(headers: CIMultiDictProxy[str]) -> Headers:
    return Headers.of(headers.items())


# `Headers.view` reads aiohttp's multidict in place and counts on its `keys()`
# holding each name once (multidict 7); an older multidict's is copied instead.
_UNIQUE_KEYS: Final = len(CIMultiDict((("a", ""), ("A", ""))).keys()) == 1
request_headers: Final = Headers.view if _UNIQUE_KEYS else _copied
"""The engine's `Headers` of a request's headers (`request.headers`)."""


def _closing(request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
    """`response`, closing the connection if it leaves the request's body unread.

    A refusal before the body (415, 403, a size over `BODY_LIMIT`, …) or a
    DELETE or GET sent with a body: what the client still sends is dropped
    as it arrives, not parsed chunk by chunk while aiohttp lingers (10 s
    under a plain `AppRunner`, `_runner._LINGER` under wymcp's).
    """
    if not request.content.is_eof():
        response.force_close()
        request.protocol.close()
    return response


def _cancelled(record: CallRecord | None) -> None:
    """Note in `record` (if observed) that the request was cancelled."""
    if record is not None:
        record.outcome = "cancelled"


class Endpoint:
    """Serves one MCP endpoint of one application from settings and an engine."""

    def __init__(self, settings: Settings, engine: ServedEngine) -> None:
        self.settings = settings
        self.engine = engine
        self.admission = Admission(settings)
        self.reader = BodyReader(settings)
        self._keepalive = settings.KEEPALIVE_INTERVAL
        self.metrics = Metrics(settings) if settings.METRICS else None
        self.scrapes = Scrapes()
        self.access = AccessLog() if settings.ACCESS_LOG else None
        self.observing = self.metrics is not None or self.access is not None
        """Whether requests are counted or logged (each gets a `CallRecord`)."""
        self.health = Health(self.admission, engine)

    @property
    def auth(self) -> BearerAuth | None:
        """The `AUTH` hook, or None when the endpoint serves without tokens."""
        return self.admission.auth

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one request to the endpoint, whatever it carries.

        With METRICS or ACCESS_LOG on (`observing`), the request gets a
        `CallRecord` the engine fills, and is counted and logged once
        answered: here, not in a coroutine around this one (one await less
        per request).
        """
        record: CallRecord | None = None
        started = 0.0
        if self.observing:
            started = perf_counter()
            record = CallRecord()
        response: web.StreamResponse | None = None
        reservation: Reservation | None = None
        principal = None
        try:
            # read in place: aiohttp's multidict already matches names in any case
            sent = request.headers
            # Without AUTH and for a small body aiohttp holds whole (the usual
            # call), nothing here awaits: the same checks, with no coroutine each.
            admission = self.admission
            if admission.auth is None:
                admission.admit_anonymous(request, sent)
            else:
                principal = await admission.admit(request)
            body: Any = None
            json_bytes: int | None = None
            if request.method == "POST":
                reader = self.reader
                body = reader.read_buffered(request, sent)
                if body is NOT_BUFFERED:
                    # a large body counts against the budget till the answer is sent
                    reservation = reader.reserve(client_key(principal, request.remote))
                    body = await reader.read_json(request, reservation)
                else:  # read whole as sent (no Content-Encoding): its JSON text
                    json_bytes = request.content.total_bytes
            # positional, in `Exchange`'s order (keywords to a class cost a dict)
            exchange = Exchange(
                request.method,
                request_headers(sent),
                body,
                principal,
                True,  # noqa: FBT003 - mirrored_headers: HTTP has headers
                None if principal is None else admission.challenge(request),
                request.remote,
                record,
                json_bytes,
            )
            response = _closing(request, await self._serve(request, exchange))
        except Refused as refused:
            response = _closing(request, refused.response)
        except asyncio.CancelledError:
            _cancelled(record)
            raise
        except Exception:
            logger.exception(
                "wymcp: unexpected error answering %s %s", request.method, request.path
            )
            response = _closing(request, internal_error())
        finally:
            if reservation is not None:
                reservation.release()
            if record is not None:
                self._observe(request, record, response, started, principal)
        assert response is not None  # noqa: S101 - each branch answered or raised
        return response

    def _observe(
        self,
        request: web.Request,
        record: CallRecord,
        response: web.StreamResponse | None,
        started: float,
        principal: object | None,
    ) -> None:
        """Count and log one answered request; a failure here is logged, not raised.

        The answer is sent already: counting it must not turn it into an error.
        No `response`: the client left first (counted as `_CLIENT_CLOSED`).
        `principal` is the one AUTH admitted, for a request refused before
        the engine filled the record.
        """
        seconds = perf_counter() - started
        if record.method is None and request.method in _STREAMS:
            record.method = request.method  # a stream's: the engine names no method
        if record.principal is None:
            record.principal = principal
        status = _CLIENT_CLOSED if response is None else response.status
        if status >= 400 and record.outcome == "ok":  # noqa: PLR2004 - 4xx/5xx
            record.outcome = "refused"  # the transport answered before the engine
        try:
            metrics = self.metrics
            if metrics is not None:
                # The body bytes that arrived, not the declared Content-Length:
                # a body refused unread carried none, and the client picks
                # the figure it declares.
                received = request.content.total_bytes
                metrics.observe(record, status, seconds, received)
            access = self.access
            if access is not None:
                access.write(
                    record,
                    request_id=access.request_id(request.headers.get("X-Request-Id")),
                    http_method=request.method,
                    status=status,
                    seconds=seconds,
                )
        except Exception:
            logger.exception("wymcp: counting or logging a request failed")

    async def expect(self, request: web.Request) -> web.StreamResponse | None:
        """Answer `Expect: 100-continue` only for a request the endpoint would read.

        A refused request (method, Host, Origin, content type, a declared size
        over `BODY_LIMIT`) gets its answer at once, so the client never sends
        the body.
        """
        try:
            await self.admission.admit(request)
        except Refused as refused:
            refused.response.force_close()
            return refused.response
        except Exception:
            logger.exception("wymcp: unexpected error checking %s", request.path)
            return internal_error()
        if request.version != HttpVersion11:
            return None
        if request.headers.get("Expect", "").lower() != "100-continue":
            return error_response(
                417,
                INVALID_REQUEST,
                "Expectation failed: only Expect: 100-continue is understood.",
            )
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0
        return None

    async def _serve(
        self, request: web.Request, exchange: Exchange
    ) -> web.StreamResponse:
        stream = SseStream(request, keepalive=self._keepalive)
        try:
            engine = self.engine
            if exchange.method == "POST":
                reply = await engine.post(exchange, stream)
            elif exchange.method == "GET":
                reply = await engine.get(exchange, stream)
            else:
                reply = await engine.delete(exchange)
            if stream.opened:
                return await stream.finish(reply.body)
            return reply_response(reply)
        except asyncio.CancelledError:
            raise
        except Exception:
            if stream.gone:  # the client left: the call is over, nobody to answer
                raise asyncio.CancelledError from None
            logger.exception(
                "wymcp: unexpected error answering %s %s", request.method, request.path
            )
            rid = echoable_id(exchange.body)
            if stream.opened:
                return await self._end_stream_with_error(stream, rid)
            return internal_error(rid)
        finally:
            if stream.opened:  # only an opened stream has pings to stop
                await stream.close()

    async def _end_stream_with_error(
        self, stream: SseStream, rid: Any
    ) -> web.StreamResponse:
        try:
            return await stream.finish(
                error_message(
                    rid, INTERNAL_ERROR, "Internal error. The server logged the cause."
                )
            )
        except ConnectionResetError:
            raise asyncio.CancelledError from None

    async def scrape(self, request: web.Request) -> web.StreamResponse:
        """Serve the metrics (METRICS): Host/Origin checked, METRICS_TOKEN if set.

        One scrape at a time (`Scrapes`): the gauges are read from the engine,
        then the text is made on the scrape thread (it grows with the series,
        and reads files in multiprocess mode). The broker's task count is the
        one the probe refreshes every 5 s: a scrape makes no Redis call, so a
        stalled Redis never holds the scrape's turn.
        """
        metrics = self.metrics
        assert metrics is not None  # noqa: S101 - only routed with METRICS
        try:
            self.admission.check_addressing(request)
        except Refused as refused:
            return refused.response
        if not metrics.authorized(request.headers):
            return unauthorized()
        accept = request.headers.get("Accept")

        def make() -> tuple[bytes, str]:
            return metrics.exposition(accept)

        async def before() -> None:
            metrics.live(self.engine)
            metrics.flush()

        return await self.scrapes.run(make, before=before)

    async def metadata(self, request: web.Request) -> web.StreamResponse:
        """Serve the RFC 9728 protected-resource metadata (GET; public, no token)."""
        try:
            self.admission.check_host(request)
        except Refused as refused:
            return refused.response
        auth = self.auth
        assert auth is not None  # noqa: S101 - only routed when AUTH is set
        scopes = auth.scopes_supported(self.engine.tool_specs)
        document = auth.metadata.document(request, scopes)
        return web.Response(
            body=encode(document),
            content_type="application/json",
            headers={
                "Access-Control-Allow-Origin": "*",
                "Cache-Control": "max-age=300",
            },
        )
