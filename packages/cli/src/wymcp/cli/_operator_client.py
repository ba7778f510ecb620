"""A small MCP client over HTTP for operators: one request at a time, both eras.

At 2026-07-28 each request carries `_meta` and the mirrored headers; at a
2025 revision it opens a session (`initialize`) and ends it with DELETE.
JSON and SSE answers are read alike, each bounded in size.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Final, Self

import aiohttp

from wymcp.cli._versions import release
from wymcp.core.schema import HeaderAnnotation, header_annotations
from wymcp.core.server import (
    ECHO_LIMIT,
    METHOD_NOT_FOUND,
    MODERN,
    SESSION_HEADER,
    is_stateless,
    mirrored_headers,
    request_message,
    request_meta,
    session_headers,
)

ACCEPT: Final = "application/json, text/event-stream"
MAX_BODY: Final = 16 * 1024 * 1024
MAX_PAGES: Final = 100
CLIENT_NAME: Final = "wymcp-cli"


class OperatorError(Exception):
    """The server could not be asked or did not answer in MCP; the text says why."""


def _messages(body: bytes, content_type: str) -> list[Any]:
    """The JSON messages of a body: one for JSON, one per `data:` event for SSE."""
    if content_type != "text/event-stream":
        try:
            return [json.loads(body)] if body.strip() else []
        except ValueError:
            return []
    messages: list[Any] = []
    data: list[str] = []
    for raw in [*body.decode("utf-8", "replace").splitlines(), ""]:
        if not raw:
            if data:
                # an event that is not JSON is no MCP message: skipped
                with contextlib.suppress(ValueError):
                    messages.append(json.loads("\n".join(data)))
            data = []
        elif raw.startswith("data:"):
            data.append(raw[5:].removeprefix(" "))
    return messages


class OperatorClient:
    """Ask one MCP endpoint over HTTP (`async with`), at `protocol`."""

    def __init__(
        self,
        url: str,
        *,
        protocol: str = MODERN,
        headers: Mapping[str, str] | None = None,
        timeout: float = 120.0,
    ) -> None:
        self.url = url
        self.protocol = protocol
        self.headers = dict(headers or {})
        self.session_id: str | None = None
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._http: aiohttp.ClientSession | None = None
        self._ids = itertools.count(1)
        self._annotations: dict[str, tuple[HeaderAnnotation, ...]] = {}
        self.client_info = {"name": CLIENT_NAME, "version": release()}

    @property
    def modern(self) -> bool:
        """Whether requests go statelessly at 2026-07-28."""
        return is_stateless(self.protocol)

    async def __aenter__(self) -> Self:
        self._http = aiohttp.ClientSession(timeout=self._timeout)
        try:
            if not self.modern:
                await self._initialize()
        except BaseException:
            await self._http.close()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        http, self._http = self._http, None
        if http is None:
            return
        try:
            if self.session_id is not None:
                headers = {**self.headers, **self._session_headers}
                async with http.delete(self.url, headers=headers):
                    pass
        except aiohttp.ClientError:
            pass  # the session ends with the server's idle timeout anyway
        finally:
            await http.close()

    async def _initialize(self) -> None:
        answer = await self.request(
            "initialize",
            {
                "protocolVersion": self.protocol,
                "capabilities": {},
                "clientInfo": self.client_info,
            },
        )
        result = answer.get("result")
        if not isinstance(result, dict):
            raise OperatorError(f"initialize failed: {error_text(answer)}")
        self.protocol = str(result.get("protocolVersion", self.protocol))
        await self._post(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            list(self._session_headers.items()),
        )

    @property
    def _session_headers(self) -> dict[str, str]:
        return session_headers(self.protocol, self.session_id)

    def _headers(self, method: str, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        if not self.modern:
            if method == "initialize":
                return []
            return list(self._session_headers.items())
        annotations = self._annotations.get(str(params.get("name")), ())
        return mirrored_headers(method, params, annotations)

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Send one request; return its JSON-RPC response (`result` or `error`)."""
        shaped = dict(params or {})
        if self.modern:
            shaped["_meta"] = request_meta(
                capabilities={}, client_info=self.client_info
            )
        rid = next(self._ids)
        message = request_message(rid, method, shaped)
        status, messages = await self._post(message, self._headers(method, shaped))
        for answer in messages:
            if isinstance(answer, dict) and answer.get("id") == rid:
                return answer
        for answer in messages:  # an error the server could not tie to our id
            if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
                return answer
        raise OperatorError(f"{method}: HTTP {status} without a JSON-RPC answer")

    async def _post(
        self, message: Mapping[str, Any], headers: list[tuple[str, str]]
    ) -> tuple[int, list[Any]]:
        if self._http is None:
            raise RuntimeError("the client is not open: use `async with`")
        sent = [
            ("Content-Type", "application/json"),
            ("Accept", ACCEPT),
            *self.headers.items(),
            *headers,
        ]
        try:
            async with self._http.post(
                self.url, data=json.dumps(message).encode(), headers=sent
            ) as response:
                body = bytearray()
                async for chunk in response.content.iter_chunked(65536):
                    body += chunk
                    if len(body) > MAX_BODY:
                        raise OperatorError(
                            f"the answer is larger than {MAX_BODY} bytes; not read"
                        )
                if self.session_id is None and SESSION_HEADER in response.headers:
                    self.session_id = response.headers[SESSION_HEADER]
                return response.status, _messages(bytes(body), response.content_type)
        except aiohttp.ClientError as exc:
            raise OperatorError(
                f"cannot reach {self.url[:ECHO_LIMIT]}: {exc}"
            ) from None
        except TimeoutError:
            raise OperatorError(
                f"no answer from {self.url[:ECHO_LIMIT]} in time"
            ) from None

    async def list_all(
        self, method: str, key: str, *, optional: bool = False
    ) -> list[dict[str, Any]]:
        """Every item of a paginated list method (at most MAX_PAGES pages).

        `optional`: a server without the feature (-32601) has no items.
        """
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            answer = await self.request(
                method, {"cursor": cursor} if cursor is not None else None
            )
            result = answer.get("result")
            error = answer.get("error")
            if (
                optional
                and isinstance(error, dict)
                and error.get("code") == METHOD_NOT_FOUND
            ):
                return []
            if not isinstance(result, dict):
                raise OperatorError(f"{method} failed: {error_text(answer)}")
            items += [item for item in result.get(key, []) if isinstance(item, dict)]
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str):
                break
        if method == "tools/list":
            self._annotations = {
                str(tool.get("name")): header_annotations(tool.get("inputSchema"))
                for tool in items
            }
        return items

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Call a tool (at 2026-07-28 after listing the tools for their annotations)."""
        if self.modern and not self._annotations:
            await self.list_all("tools/list", "tools")
        return await self.request("tools/call", {"name": name, "arguments": arguments})


def error_text(answer: Mapping[str, Any]) -> str:
    error = answer.get("error")
    if isinstance(error, dict):
        data = error.get("data")
        reason = data.get("reason") if isinstance(data, dict) else None
        why = f" ({str(reason)[:500]})" if reason else ""
        return f"error {error.get('code')}: {str(error.get('message'))[:500]}{why}"
    return "no result"
