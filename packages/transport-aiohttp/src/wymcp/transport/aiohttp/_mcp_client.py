"""`McpClient`: the MCP client over HTTP `wymcp.testing.Client` and `wymcp call` share.

At 2026-07-28 each request carries `_meta` and the mirrored headers; at a 2025
revision `initialize` opens a session and `end()` DELETEs it. JSON and SSE
answers are read alike into a `ClientReply`, whatever aiohttp client sends.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

import attrs
from aiohttp import ClientResponse

from wymcp.core.schema import HeaderAnnotation, header_annotations
from wymcp.core.server import (
    METHOD_NOT_FOUND,
    MODERN,
    SESSION_HEADER,
    encode_json,
    is_stateless,
    mirrored_headers,
    request_message,
    request_meta,
    session_headers,
)
from wymcp.transport.aiohttp._sse_reader import BodyTooLargeError, read_events

ACCEPT: Final = "application/json, text/event-stream"
MAX_PAGES: Final = 100
"""The most pages `list_all` reads of one list."""

Headers = Sequence[tuple[str, str]]
Post = Callable[[bytes, Headers], AbstractAsyncContextManager[ClientResponse]]
"""POSTs a body with these headers to the endpoint (an aiohttp client's `post`)."""
Delete = Callable[[Headers], AbstractAsyncContextManager[ClientResponse]]
"""DELETEs the endpoint with these headers (ends a 2025 session)."""
ServerRequestHandler = Callable[[str, dict[str, Any]], Awaitable[Mapping[str, Any]]]
"""Answers what the server asks mid-answer: `{"result": ...}` or `{"error": ...}`."""


class McpClientError(RuntimeError):
    """The server did not answer as MCP asks (the text says what failed)."""


@attrs.frozen
class ClientReply:
    """What one POST got back.

    `status` is the HTTP status, `response` the JSON-RPC message that answered
    (None for no body, as for a notification), `messages` every JSON-RPC message
    streamed before it (notifications and server requests, in order),
    `headers` the HTTP response headers.
    """

    status: int
    response: Mapping[str, Any] | None = None
    messages: tuple[Mapping[str, Any], ...] = ()
    headers: Mapping[str, str] = attrs.field(factory=dict)

    @property
    def result(self) -> dict[str, Any] | None:
        """The JSON-RPC `result`, or None (an error, or no answer)."""
        result = (self.response or {}).get("result")
        return result if isinstance(result, dict) else None

    @property
    def error_text(self) -> str:
        """The JSON-RPC error in one line (code, message, reason), or `no result`."""
        return error_text(self.response)


def error_text(response: Mapping[str, Any] | None) -> str:
    """A JSON-RPC error told in one line (code, message, reason), cut to size."""
    error = (response or {}).get("error")
    if isinstance(error, dict):
        data = error.get("data")
        reason = data.get("reason") if isinstance(data, dict) else None
        why = f" ({str(reason)[:500]})" if reason else ""
        return f"error {error.get('code')}: {str(error.get('message'))[:500]}{why}"
    return "no result"


def _decoded(text: bytes | str) -> Any:
    """The JSON value of a body or event, or None when it is empty or not JSON."""
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


class McpClient:
    """One MCP client of one endpoint, at `protocol_version`, over `post`/`delete`.

    `capabilities` and `client_info` are what it declares, `log_level` the level
    it asks logs at, `headers` extra HTTP headers on every request,
    `on_request` answers what the server asks mid-answer (None: not answered),
    `max_body` bounds each answer's bytes (None: unbounded).
    """

    def __init__(
        self,
        post: Post,
        delete: Delete,
        *,
        client_info: Mapping[str, Any],
        protocol_version: str = MODERN,
        capabilities: Mapping[str, Any] | None = None,
        log_level: str | None = None,
        headers: Mapping[str, str] | None = None,
        on_request: ServerRequestHandler | None = None,
        max_body: int | None = None,
    ) -> None:
        self._post = post
        self._delete = delete
        self.client_info = dict(client_info)
        self.protocol_version = protocol_version
        self.capabilities = dict(capabilities or {})
        self.log_level = log_level
        self.headers = dict(headers or {})
        self.on_request = on_request
        self.max_body = max_body
        self.session_id: str | None = None
        self.initialize_result: dict[str, Any] | None = None
        self.annotations: dict[str, tuple[HeaderAnnotation, ...]] | None = None
        self._ids = itertools.count(1)

    @property
    def modern(self) -> bool:
        """Whether requests go statelessly at 2026-07-28."""
        return is_stateless(self.protocol_version)

    # ------------------------------------------------------------- lifecycle

    async def initialize(self) -> None:
        """Open a 2025 session: initialize, initialized, and the log level if set."""
        params = {
            "protocolVersion": self.protocol_version,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        }
        reply = await self.request("initialize", params)
        if reply.result is None:
            raise McpClientError(
                f"initialize failed: HTTP {reply.status}, {reply.error_text}"
            )
        self.initialize_result = reply.result
        self.protocol_version = str(
            reply.result.get("protocolVersion", self.protocol_version)
        )
        self.session_id = reply.headers.get(SESSION_HEADER)
        await self.notify("notifications/initialized")
        if self.log_level is not None:
            await self.request("logging/setLevel", {"level": self.log_level})

    async def end(self) -> None:
        """End the session, if one is open (DELETE)."""
        if self.session_id is None:
            return
        headers = [*self.headers.items(), *self.session_headers().items()]
        self.session_id = None
        async with self._delete(headers):
            pass

    # --------------------------------------------------------------- sending

    def session_headers(self) -> dict[str, str]:
        """The headers naming the session and revision (none at 2026-07-28)."""
        return session_headers(self.protocol_version, self.session_id)

    def request_headers(
        self, method: str, params: Mapping[str, Any]
    ) -> list[tuple[str, str]]:
        """Accept, the extra headers, then the mirrored or session headers."""
        headers = [("Accept", ACCEPT), *self.headers.items()]
        if self.modern:
            name = params.get("name")
            known = self.annotations or {}
            annotations = known.get(name, ()) if isinstance(name, str) else ()
            headers += mirrored_headers(method, params, annotations)
        elif method != "initialize":
            headers += self.session_headers().items()
        return headers

    def params(
        self, params: Mapping[str, Any] | None, meta: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """`params` with the `_meta` of the revision (and `meta` added to it)."""
        shaped = dict(params or {})
        given = shaped.get("_meta")
        extra = {**(given if isinstance(given, Mapping) else {}), **(meta or {})}
        if self.modern:
            shaped["_meta"] = request_meta(
                capabilities=self.capabilities,
                client_info=self.client_info,
                log_level=self.log_level,
                extra=extra,
            )
        elif extra:
            shaped["_meta"] = extra
        return shaped

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> ClientReply:
        """Send one JSON-RPC request in the client's revision; return the reply."""
        shaped = self.params(params, meta)
        message = request_message(next(self._ids), method, shaped)
        return await self.post(message, self.request_headers(method, shaped))

    async def notify(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> ClientReply:
        """Send one JSON-RPC notification; return the (empty, 202) reply."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        shaped = self.params(params, None)
        if shaped:
            message["params"] = shaped
        return await self.post(message, self.request_headers(method, shaped))

    async def post(self, message: Mapping[str, Any], headers: Headers) -> ClientReply:
        """POST one message with exactly these headers (plus Content-Type)."""
        sent = [("Content-Type", "application/json"), *headers]
        async with self._post(encode_json(message), sent) as response:
            return await self._read(response)

    # --------------------------------------------------------------- reading

    async def _read(self, response: ClientResponse) -> ClientReply:
        headers = dict(response.headers)
        if response.content_type != "text/event-stream":
            decoded = _decoded(await self._body(response))
            return ClientReply(
                status=response.status,
                response=decoded if isinstance(decoded, dict) else None,
                headers=headers,
            )
        messages: list[Mapping[str, Any]] = []
        final: Mapping[str, Any] | None = None
        async for event in read_events(response.content, limit=self.max_body):
            message = _decoded(event.data)
            if not isinstance(message, dict):  # no MCP message: skipped
                continue
            if "method" not in message:
                final = message
                continue
            messages.append(message)
            if "id" in message and self.on_request is not None:
                await self._answer(message, self.on_request)
        return ClientReply(
            status=response.status,
            response=final,
            messages=tuple(messages),
            headers=headers,
        )

    async def _body(self, response: ClientResponse) -> bytes:
        if self.max_body is None:
            return await response.read()
        body = bytearray()
        async for chunk in response.content.iter_chunked(65536):
            body += chunk
            if len(body) > self.max_body:
                raise BodyTooLargeError(
                    f"the answer is larger than {self.max_body} bytes; not read"
                )
        return bytes(body)

    async def _answer(
        self, request: Mapping[str, Any], handler: ServerRequestHandler
    ) -> None:
        outcome = await handler(
            str(request["method"]), dict(request.get("params") or {})
        )
        reply = {"jsonrpc": "2.0", "id": request["id"], **outcome}
        headers = [("Accept", ACCEPT), *self.headers.items()]
        await self.post(reply, [*headers, *self.session_headers().items()])

    # ----------------------------------------------------------------- lists

    def learn(self, tools: Sequence[Mapping[str, Any]]) -> None:
        """Keep each tool's header annotations (what 2026-07-28 calls mirror)."""
        self.annotations = {
            str(tool.get("name")): header_annotations(tool.get("inputSchema"))
            for tool in tools
        }

    async def list_all(
        self, method: str, key: str, *, optional: bool = False
    ) -> list[dict[str, Any]]:
        """Every item of a paginated list (at most MAX_PAGES pages).

        `optional`: a server without the feature (-32601) has no items. A
        `tools/list` teaches the client the tools' header annotations.
        """
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            reply = await self.request(
                method, {"cursor": cursor} if cursor is not None else None
            )
            error = (reply.response or {}).get("error")
            code = error.get("code") if isinstance(error, dict) else None
            if optional and code == METHOD_NOT_FOUND:
                return []
            if reply.response is None:
                raise McpClientError(
                    f"{method}: HTTP {reply.status} without a JSON-RPC answer"
                )
            if reply.result is None:
                raise McpClientError(f"{method} failed: {reply.error_text}")
            page = reply.result.get(key, [])
            items += [item for item in page if isinstance(item, dict)]
            cursor = reply.result.get("nextCursor")
            if not isinstance(cursor, str):
                break
        if method == "tools/list":
            self.learn(items)
        return items
