"""The MCP endpoint's request handler: the bytes side of Streamable HTTP.

It checks Host and Origin, bounds and decodes the body, and hands the engine
an `Exchange`; the engine's `Reply` becomes a JSON response, or the last
event of the SSE stream the engine opened. Nothing unexpected escapes as a
500: it becomes a short JSON-RPC -32603 answer and one log line.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from aiohttp import HttpVersion11, web
from aiohttp.http_exceptions import PayloadEncodingError

from wymcp.conf import Settings
from wymcp.core.schema import ToolSpec
from wymcp.core.server import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    RETRY_AFTER,
    BodyError,
    Exchange,
    Headers,
    Principal,
    Reply,
    Stream,
    error_message,
    yielding,
)
from wymcp.transport.aiohttp._answers import (
    echoable_id,
    encode,
    error_response,
    internal_error,
)
from wymcp.transport.aiohttp._body_budget import BodyBudget, Reservation
from wymcp.transport.aiohttp._content_coding import (
    Inflater,
    InvalidCoding,
    TooLarge,
    body_codings,
)
from wymcp.transport.aiohttp._host_policy import HostPolicy
from wymcp.transport.aiohttp._json_body import decode_json
from wymcp.transport.aiohttp._sse_stream import SseStream
from wymcp.transport.aiohttp._stream_cap import Client, StreamCap

if TYPE_CHECKING:
    from wymcp.transport.aiohttp._bearer_auth import BearerAuth

logger = logging.getLogger("wymcp.transport.aiohttp")

ALLOW = "GET, POST, DELETE"
_JSON_TYPE = "application/json"
_UTF8 = frozenset({"utf-8", "utf8"})
_PLAIN_JSON = ["application/json"]
_JSON_HEADERS = {"Content-Type": "application/json"}
_READ_CHUNK = 64 * 1024
_OFF_LOOP = 64 * 1024
"""Bodies larger than this are decoded in a worker thread: `json` with hooks takes
about 1 us per object, so 4 MiB of `{}` would hold the loop for over a second."""
_PRINCIPAL_KEY = web.RequestKey("wymcp_principal", Principal)


class Engine(Protocol):
    """What the endpoint needs from `wymcp.core.server.Engine`."""

    @property
    def tool_specs(self) -> tuple[ToolSpec, ...]: ...

    async def post(self, exchange: Exchange, stream: Stream) -> Reply: ...
    async def get(self, exchange: Exchange, stream: Stream) -> Reply: ...
    async def delete(self, exchange: Exchange) -> Reply: ...
    async def aclose(self) -> None: ...


class _Refused(Exception):  # noqa: N818 - an answer, not a failure
    def __init__(self, response: web.Response) -> None:
        super().__init__(response.status)
        self.response = response


class Endpoint:
    """Serves one MCP endpoint of one application from settings and an engine."""

    def __init__(self, settings: Settings, engine: Engine) -> None:
        self.settings = settings
        self.engine = engine
        self._policy = HostPolicy.build(
            settings.ALLOWED_HOSTS, settings.ALLOWED_ORIGINS
        )
        self.auth: BearerAuth | None = None
        if settings.AUTH is not None:
            # Loaded only for AUTH: a server without it starts sooner.
            from wymcp.transport.aiohttp._bearer_auth import (  # noqa: PLC0415
                BearerAuth,
            )

            self.auth = BearerAuth(settings, settings.AUTH)
        self._streams = StreamCap(settings.MAX_STREAMS, settings.MAX_STREAMS_PER_CLIENT)
        self._bodies = BodyBudget(settings.BODY_MEMORY_BUDGET)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one request to the endpoint, whatever it carries."""
        try:
            return await self._dispatch(request)
        except _Refused as refused:
            return refused.response
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception(
                "wymcp: unexpected error answering %s %s", request.method, request.path
            )
            return internal_error()

    async def expect(self, request: web.Request) -> web.StreamResponse | None:
        """Answer `Expect: 100-continue` only for a request the endpoint would read.

        A refused request (method, Host, Origin, content type, a declared size
        over `BODY_LIMIT`) gets its answer at once, so the client never sends
        the body.
        """
        try:
            await self._admit(request)
        except _Refused as refused:
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

    async def _admit(self, request: web.Request) -> Principal | None:
        """Run every check that needs no body; return the authenticated principal.

        The principal is kept on the request, so a request admitted by the
        `Expect: 100-continue` handler is not authenticated twice.
        """
        if self.auth is not None and _PRINCIPAL_KEY in request:
            return request[_PRINCIPAL_KEY]
        self._check_method_host_origin(request)
        principal = None
        if self.auth is not None:
            outcome = await self.auth.authenticate(request)
            if isinstance(outcome, web.Response):
                raise _Refused(outcome)
            principal = request[_PRINCIPAL_KEY] = outcome
        if request.method == "POST":
            self._check_content_type(request)
            self._check_content_encoding(request)
            declared = request.content_length
            if declared is not None and declared > self.settings.BODY_LIMIT:
                raise _Refused(self._too_large())
        return principal

    def _check_method_host_origin(self, request: web.Request) -> None:
        if request.method not in {"GET", "POST", "DELETE"}:
            raise _Refused(
                error_response(
                    405,
                    INVALID_REQUEST,
                    f"Method not allowed. This endpoint answers {ALLOW}.",
                    headers={"Allow": ALLOW},
                )
            )
        self._check_host_and_origin(request)

    def _too_large(self) -> web.Response:
        return error_response(
            413,
            INVALID_REQUEST,
            "Payload too large: the body exceeds BODY_LIMIT "
            f"({self.settings.BODY_LIMIT} bytes).",
            close=True,
        )

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        reservation = self._bodies.reserve()
        try:
            return await self._dispatch_held(request, reservation)
        finally:
            reservation.release()

    async def _dispatch_held(
        self, request: web.Request, reservation: Reservation
    ) -> web.StreamResponse:
        """Answer the request; a large body counts against the budget till the end."""
        principal = await self._admit(request)
        headers = Headers.of(request.headers.items())
        body: Any = None
        if request.method == "POST":
            body = await self._read_json(request, reservation)
            if self.auth is not None and principal is not None:
                forbidden = self.auth.check_call(
                    request, principal, body, self.engine.tool_specs
                )
                if forbidden is not None:
                    return forbidden
        long_lived = request.method == "GET" or (
            isinstance(body, dict) and body.get("method") == "subscriptions/listen"
        )
        if not long_lived:
            return await self._serve(request, headers, body, principal, None)
        client: Client = (
            ("subject", principal.subject)
            if principal is not None
            else ("peer", str(request.remote))
        )
        refused_by = self._streams.acquire(client)
        if refused_by is not None:
            return error_response(
                503,
                INTERNAL_ERROR,
                f"Service unavailable: {_STREAM_CAPS[refused_by]} ({refused_by}). "
                "Retry later.",
                rid=echoable_id(body),
                headers={"Retry-After": str(RETRY_AFTER)},
            )
        expires = principal.expires_at if principal is not None else None
        lifetime = expires - time.time() if expires is not None else None
        try:
            return await self._serve(request, headers, body, principal, lifetime)
        finally:
            self._streams.release(client)

    async def _serve(
        self,
        request: web.Request,
        headers: Headers,
        body: Any,
        principal: Principal | None,
        lifetime: float | None,
    ) -> web.StreamResponse:
        stream = SseStream(request, keepalive=self.settings.KEEPALIVE_INTERVAL)
        deadline = None
        try:
            if lifetime is None:  # no token expiry to watch: no timer to arm
                reply = await self._exchange(request, headers, body, principal, stream)
            else:
                deadline = asyncio.timeout(lifetime)
                async with deadline:
                    reply = await self._exchange(
                        request, headers, body, principal, stream
                    )
            if stream.opened:
                return await stream.finish(reply.body)
            return _json_reply(reply)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if stream.gone:  # the client left: the call is over, nobody to answer
                raise asyncio.CancelledError from None
            expired = deadline is not None and deadline.expired()
            if isinstance(exc, TimeoutError) and expired:
                return await self._token_expired(request, stream)
            logger.exception(
                "wymcp: unexpected error answering %s %s", request.method, request.path
            )
            if stream.opened:
                return await self._end_stream_with_error(stream, echoable_id(body))
            return internal_error(echoable_id(body))
        finally:
            if stream.opened:  # only an opened stream has pings to stop
                await stream.close()

    async def _exchange(
        self,
        request: web.Request,
        headers: Headers,
        body: Any,
        principal: Principal | None,
        stream: SseStream,
    ) -> Reply:
        if request.method == "POST":
            return await self.engine.post(
                Exchange("POST", headers, body, principal), stream
            )
        if request.method == "GET":
            return await self.engine.get(
                Exchange("GET", headers, principal=principal), stream
            )
        return await self.engine.delete(
            Exchange("DELETE", headers, principal=principal)
        )

    async def _token_expired(
        self, request: web.Request, stream: SseStream
    ) -> web.StreamResponse:
        """End a long-lived stream whose token expired; the client reconnects."""
        if stream.opened:
            try:
                return await stream.finish(None)
            except ConnectionResetError:
                raise asyncio.CancelledError from None
        assert self.auth is not None  # noqa: S101 - only principals expire
        return self.auth.expired(request)

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

    async def metadata(self, request: web.Request) -> web.StreamResponse:
        """Serve the RFC 9728 protected-resource metadata (GET; public, no token)."""
        try:
            self._check_host(request)
        except _Refused as refused:
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

    def _check_host(self, request: web.Request) -> None:
        if not self._policy.host_allowed(request.headers.getall("Host", [])):
            raise _Refused(
                error_response(
                    403,
                    INVALID_REQUEST,
                    "Forbidden: the Host header is not allowed. Add the host to "
                    "ALLOWED_HOSTS.",
                )
            )
        target = request.raw_path
        if not target.startswith("/"):
            # The absolute form (`POST http://host/mcp`) names the host the
            # request is for, and a server must use it over Host (RFC 9112
            # section 3.2.2): it is checked the same way.
            authority = urlsplit(target).netloc
            if not authority or not self._policy.host_allowed([authority]):
                raise _Refused(
                    error_response(
                        403,
                        INVALID_REQUEST,
                        "Forbidden: the request target names a host that is not "
                        "allowed. Send the path alone, or add the host to "
                        "ALLOWED_HOSTS.",
                    )
                )

    def _check_host_and_origin(self, request: web.Request) -> None:
        self._check_host(request)
        if not self._policy.origin_allowed(request.headers.getall("Origin", [])):
            raise _Refused(
                error_response(
                    403,
                    INVALID_REQUEST,
                    "Forbidden: the Origin header is not allowed. Add the origin "
                    "to ALLOWED_ORIGINS.",
                )
            )

    def _check_content_type(self, request: web.Request) -> None:
        values = request.headers.getall("Content-Type", [])
        if values == _PLAIN_JSON:  # what clients send: nothing more to parse
            return
        if len(values) != 1 or not _is_utf8_json(values[0]):
            raise _Refused(
                error_response(
                    415,
                    INVALID_REQUEST,
                    "Unsupported Media Type: send the JSON-RPC message with "
                    "Content-Type: application/json (UTF-8).",
                )
            )

    def _check_content_encoding(self, request: web.Request) -> None:
        """Refuse a body in a coding `ACCEPT_CONTENT_ENCODING` does not list.

        One coding at most: stacked codings multiply what a bomb inflates to.
        The connection closes, so nothing the client still sends is read.
        """
        codings = body_codings(request.headers.getall("Content-Encoding", []))
        if not codings or (
            len(codings) == 1 and codings[0] in self.settings.ACCEPT_CONTENT_ENCODING
        ):
            return
        accepted = " or ".join(self.settings.ACCEPT_CONTENT_ENCODING)
        raise _Refused(
            error_response(
                415,
                INVALID_REQUEST,
                "Unsupported Media Type: send the body uncompressed"
                + (f", or in one coding: {accepted}." if accepted else ".")
                + " See ACCEPT_CONTENT_ENCODING.",
                close=True,
            )
        )

    def _inflater(self, request: web.Request) -> Inflater | None:
        """An `Inflater` for a compressed body aiohttp does not inflate itself.

        Under `wymcp serve` and `GunicornWorker` aiohttp hands the body over
        as sent; a runner that inflates marks the stream with its compressed
        size (`total_compressed_bytes`), and then the bytes read are inflated.
        """
        codings = body_codings(request.headers.getall("Content-Encoding", []))
        inflated = getattr(request.content, "total_compressed_bytes", None)
        if not codings or inflated is not None:
            return None
        return Inflater(codings[0], self.settings.BODY_LIMIT)

    def _bad_coding(self) -> web.Response:
        return error_response(
            400,
            INVALID_REQUEST,
            "Bad request: the body is not valid data of its Content-Encoding.",
            close=True,
        )

    def _unreadable(self) -> web.Response:
        return error_response(
            400,
            INVALID_REQUEST,
            "Bad request: the body could not be read (its chunked framing or "
            "its Content-Encoding is malformed).",
            close=True,
        )

    def _take(self, inflater: Inflater | None, chunk: bytes) -> bytes:
        if inflater is None:
            return chunk
        try:
            return inflater.feed(chunk)
        except TooLarge:
            raise _Refused(self._too_large()) from None
        except InvalidCoding:
            raise _Refused(self._bad_coding()) from None

    def _over_budget(self) -> web.Response:
        return error_response(
            503,
            INTERNAL_ERROR,
            "Service unavailable: large request bodies being served fill "
            f"BODY_MEMORY_BUDGET ({self._bodies.budget} bytes). Retry later.",
            headers={"Retry-After": str(RETRY_AFTER)},
            close=True,
        )

    def _hold(self, reservation: Reservation, held: int) -> None:
        """Count `held` bytes of body (inflated) against the budget, or refuse it."""
        if not reservation.grow_to(held):
            raise _Refused(self._over_budget())

    async def _read_json(self, request: web.Request, reservation: Reservation) -> Any:
        limit = self.settings.BODY_LIMIT
        inflater = self._inflater(request)
        chunks: list[bytes] = []
        size = held = 0
        content = request.content
        if content.is_eof():
            # The whole body already sits in aiohttp's buffer: nothing can
            # trickle, so no BODY_TIMEOUT timer is armed. At most one byte over
            # the limit is copied out, as in the loop below.
            chunk = content.read_nowait(limit + 1)
            if len(chunk) > limit:
                raise _Refused(self._too_large())
            chunks.append(self._take(inflater, chunk))
            self._hold(reservation, len(chunks[0]))
            return await self._decode(chunks, inflater, reservation)
        try:
            async with asyncio.timeout(self.settings.BODY_TIMEOUT):
                while True:
                    chunk = await request.content.read(
                        min(_READ_CHUNK, limit + 1 - size)
                    )
                    if not chunk:
                        break
                    size += len(chunk)
                    if size > limit:
                        raise _Refused(self._too_large())
                    chunks.append(self._take(inflater, chunk))
                    held += len(chunks[-1])
                    self._hold(reservation, held)
        except (PayloadEncodingError, web.RequestPayloadError):
            # aiohttp failed to read the body: chunks that are not chunked
            # encoding, or (under a runner that inflates) data that is not gzip
            raise _Refused(self._unreadable()) from None
        except TimeoutError:
            raise _Refused(
                error_response(
                    408,
                    INVALID_REQUEST,
                    "Request timeout: the body did not arrive within "
                    f"BODY_TIMEOUT ({self.settings.BODY_TIMEOUT:g} s).",
                    close=True,
                )
            ) from None
        return await self._decode(chunks, inflater, reservation)

    async def _decode(
        self, chunks: list[bytes], inflater: Inflater | None, reservation: Reservation
    ) -> Any:
        """The body's JSON value; one over `_OFF_LOOP` bytes is decoded off the loop."""
        if inflater is not None:
            try:
                inflater.finish()
            except InvalidCoding:
                raise _Refused(self._bad_coding()) from None
        body = b"".join(chunks)
        chunks.clear()
        decode = functools.partial(
            decode_json, body, depth_limit=self.settings.JSON_DEPTH_LIMIT
        )
        try:
            if len(body) <= _OFF_LOOP:
                return decode()
            # Off the loop: the hooks of `json` run Python code, so the GIL
            # passes back to the loop while the thread decodes.
            work = asyncio.get_running_loop().run_in_executor(None, yielding, decode)
            try:
                return await asyncio.shield(work)
            except asyncio.CancelledError:
                reservation.release_after(work)  # the thread still holds it
                raise
        except BodyError as exc:
            raise _Refused(
                error_response(400, PARSE_ERROR, f"Parse error: {exc.reason}")
            ) from None


_STREAM_CAPS = {
    "MAX_STREAMS": "too many open streams",
    "MAX_STREAMS_PER_CLIENT": "this client has too many open streams",
}


def _is_utf8_json(value: str) -> bool:
    """Whether a Content-Type value is JSON in UTF-8: one pass, no backtracking.

    `application/json` with any parameters, of which `charset` (quoted or
    not) must name UTF-8. aiohttp's own parser (the email package's) is
    quadratic in the number of `;` and recurses on nested comments.
    """
    mime, _, parameters = value.partition(";")
    if mime.strip().lower() != _JSON_TYPE:
        return False
    for parameter in parameters.split(";"):
        name, _, given = parameter.partition("=")
        if name.strip().lower() == "charset":
            charset = given.strip().removeprefix('"').removesuffix('"')
            if charset.lower() not in _UTF8:
                return False
    return True


def _json_reply(reply: Reply) -> web.Response:
    headers: Mapping[str, str] = reply.headers
    if reply.body is None:
        return web.Response(status=reply.status, headers=headers or None)
    if headers:
        headers = {**headers, "Content-Type": "application/json"}
    else:
        headers = _JSON_HEADERS
    return web.Response(status=reply.status, body=encode(reply.body), headers=headers)
