"""The client of `wymcp list` and `wymcp call`: one request at a time, both eras.

The MCP part is the HTTP transport's `McpClient` (shared with
`wymcp.testing.Client`); this adds a real connection with a timeout, answers
bounded to MAX_BODY, and every failure told as an `OperatorError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final, Self, TypeVar

import aiohttp

from wymcp.cli._versions import release
from wymcp.core.server import ECHO_LIMIT, MODERN
from wymcp.transport.aiohttp import ClientReply, McpClient, McpClientError

MAX_BODY: Final = 16 * 1024 * 1024
CLIENT_NAME: Final = "wymcp-cli"
_T = TypeVar("_T")


class OperatorError(Exception):
    """The server could not be asked or did not answer in MCP; the text says why."""


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
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._http: aiohttp.ClientSession | None = None
        self.mcp = McpClient(
            self._post,
            self._delete,
            client_info={"name": CLIENT_NAME, "version": release()},
            protocol_version=protocol,
            headers=headers,
            max_body=MAX_BODY,
        )

    @property
    def protocol(self) -> str:
        """The revision spoken (the one `initialize` agreed, at 2025)."""
        return self.mcp.protocol_version

    @property
    def modern(self) -> bool:
        """Whether requests go statelessly at 2026-07-28."""
        return self.mcp.modern

    def _session(self) -> aiohttp.ClientSession:
        if self._http is None:
            raise RuntimeError("the client is not open: use `async with`")
        return self._http

    @asynccontextmanager
    async def _post(
        self, body: bytes, headers: Any
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        async with self._session().post(self.url, data=body, headers=headers) as got:
            yield got

    @asynccontextmanager
    async def _delete(self, headers: Any) -> AsyncIterator[aiohttp.ClientResponse]:
        async with self._session().delete(self.url, headers=headers) as got:
            yield got

    async def __aenter__(self) -> Self:
        self._http = aiohttp.ClientSession(timeout=self._timeout)
        try:
            if not self.modern:
                await self._told(self.mcp.initialize())
        except BaseException:
            await self._http.close()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        http = self._http
        if http is None:
            return
        try:
            await self.mcp.end()
        except aiohttp.ClientError:
            pass  # the session ends with the server's idle timeout anyway
        finally:
            self._http = None
            await http.close()

    async def _told(self, step: Awaitable[_T]) -> _T:
        """Await one exchange; every way it fails becomes an OperatorError."""
        try:
            return await step
        except (McpClientError, ValueError) as exc:  # ValueError: too large
            raise OperatorError(str(exc)) from None
        except aiohttp.ClientError as exc:
            raise OperatorError(
                f"cannot reach {self.url[:ECHO_LIMIT]}: {exc}"
            ) from None
        except TimeoutError:
            raise OperatorError(
                f"no answer from {self.url[:ECHO_LIMIT]} in time"
            ) from None

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> ClientReply:
        """Send one request; its reply, which holds a JSON-RPC `result` or `error`."""
        reply = await self._told(self.mcp.request(method, params))
        if reply.response is None:
            raise OperatorError(
                f"{method}: HTTP {reply.status} without a JSON-RPC answer"
            )
        return reply

    async def list_all(
        self, method: str, key: str, *, optional: bool = False
    ) -> list[dict[str, Any]]:
        """Every item of a paginated list method (see `McpClient.list_all`)."""
        return await self._told(self.mcp.list_all(method, key, optional=optional))

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> ClientReply:
        """Call a tool (at 2026-07-28 after listing the tools for their annotations)."""
        if self.modern and not self.mcp.annotations:
            await self.list_all("tools/list", "tools")
        return await self.request("tools/call", {"name": name, "arguments": arguments})
