"""The MCP endpoint's request handler: the bytes side of Streamable HTTP.

It checks Host and Origin, bounds and decodes the body, and hands the engine
an `Exchange`; the engine's `Reply` becomes a JSON response, or the last
event of the SSE stream the engine opened. Nothing unexpected escapes as a
500: it becomes a short JSON-RPC -32603 answer and one log line.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, Protocol

from aiohttp import HttpVersion11, web
from wymcp.conf import Settings
from wymcp.core.server import Exchange, Headers, Reply, Stream
from wymcp.transport.aiohttp._answers import (
    INVALID_REQUEST,
    PARSE_ERROR,
    echoable_id,
    encode,
    error_payload,
    error_response,
    internal_error,
)
from wymcp.transport.aiohttp._host_policy import HostPolicy
from wymcp.transport.aiohttp._json_body import BodyError, decode_json
from wymcp.transport.aiohttp._sse_stream import SseStream

logger = logging.getLogger("wymcp.transport.aiohttp")

ALLOW = "GET, POST, DELETE"
_JSON_TYPES = frozenset({"application/json"})
_READ_CHUNK = 64 * 1024


class Engine(Protocol):
    """What the endpoint needs from `wymcp.core.server.Engine`."""

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
            self._check_before_body(request)
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

    def _check_before_body(self, request: web.Request) -> None:
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
        if request.method == "POST":
            self._check_content_type(request)
            declared = request.content_length
            if declared is not None and declared > self.settings.BODY_LIMIT:
                raise _Refused(self._too_large())

    def _too_large(self) -> web.Response:
        return error_response(
            413,
            INVALID_REQUEST,
            "Payload too large: the body exceeds BODY_LIMIT "
            f"({self.settings.BODY_LIMIT} bytes).",
            close=True,
        )

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        self._check_before_body(request)
        headers = Headers.of(request.headers.items())
        stream = SseStream(request, keepalive=self.settings.KEEPALIVE_INTERVAL)
        body: Any = None
        try:
            if request.method == "POST":
                body = await self._read_json(request)
                reply = await self.engine.post(Exchange("POST", headers, body), stream)
            elif request.method == "GET":
                reply = await self.engine.get(Exchange("GET", headers), stream)
            else:
                reply = await self.engine.delete(Exchange("DELETE", headers))
            if stream.opened:
                return await stream.finish(reply.body)
            return _json_reply(reply)
        except (_Refused, asyncio.CancelledError):
            raise
        except Exception:
            if stream.gone:  # the client left: the call is over, nobody to answer
                raise asyncio.CancelledError from None
            logger.exception(
                "wymcp: unexpected error answering %s %s", request.method, request.path
            )
            if stream.opened:
                return await self._end_stream_with_error(stream, echoable_id(body))
            return internal_error(echoable_id(body))
        finally:
            await stream.close()

    async def _end_stream_with_error(
        self, stream: SseStream, rid: Any
    ) -> web.StreamResponse:
        try:
            return await stream.finish(
                error_payload(
                    -32603, "Internal error. The server logged the cause.", rid
                )
            )
        except ConnectionResetError:
            raise asyncio.CancelledError from None

    def _check_host_and_origin(self, request: web.Request) -> None:
        if not self._policy.host_allowed(request.headers.getall("Host", [])):
            raise _Refused(
                error_response(
                    403,
                    INVALID_REQUEST,
                    "Forbidden: the Host header is not allowed. Add the host to "
                    "ALLOWED_HOSTS.",
                )
            )
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
        mime, charset = (
            (values[0].partition(";")[0].strip().lower(), request.charset)
            if len(values) == 1
            else ("", None)
        )
        if mime not in _JSON_TYPES or (
            charset is not None and charset.lower() not in {"utf-8", "utf8"}
        ):
            raise _Refused(
                error_response(
                    415,
                    INVALID_REQUEST,
                    "Unsupported Media Type: send the JSON-RPC message with "
                    "Content-Type: application/json (UTF-8).",
                )
            )

    async def _read_json(self, request: web.Request) -> Any:
        limit = self.settings.BODY_LIMIT
        chunks: list[bytes] = []
        size = 0
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
                    chunks.append(chunk)
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
        try:
            return decode_json(
                b"".join(chunks), depth_limit=self.settings.JSON_DEPTH_LIMIT
            )
        except BodyError as exc:
            raise _Refused(
                error_response(400, PARSE_ERROR, f"Parse error: {exc.reason}")
            ) from None


def _json_reply(reply: Reply) -> web.Response:
    headers: Mapping[str, str] = reply.headers
    if reply.body is None:
        return web.Response(status=reply.status, headers=headers)
    return web.Response(
        status=reply.status,
        body=encode(reply.body),
        content_type="application/json",
        headers=headers,
    )
