"""One request being served (`Call`), what handlers use, the errors they raise."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

from wymcp.core.server._catalogue import Catalogue
from wymcp.core.server._context import ToolContext
from wymcp.core.server._exchange import Stream
from wymcp.core.server._jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RpcError,
)
from wymcp.core.server._mirror import HeaderIndex
from wymcp.core.server._revision import is_modern
from wymcp.core.server._session import Session


@attrs.define(eq=False)
class Call:
    """One request being served: what handlers read."""

    id: str | int | None
    method: str
    params: Mapping[str, Any]
    meta: Mapping[str, Any]
    version: str
    headers: HeaderIndex
    stream: Stream | None
    principal: object | None
    capabilities: Mapping[str, Any]
    session: Session | None = None
    mirrored_headers: bool = True

    @property
    def modern(self) -> bool:
        """Whether the call is served at 2026-07-28."""
        return is_modern(self.version)


Handler = Callable[[Call], Awaitable[dict[str, Any]]]


@attrs.frozen
class Kit:
    """What method handlers outside the engine use of it."""

    catalogue: Catalogue
    context: Callable[[Call, str], ToolContext]
    page: Callable[[Call, list[Any], str], dict[str, Any]]
    cache_hints: Callable[[Call, dict[str, Any]], dict[str, Any]]


def need(call: Call, available: bool) -> None:  # noqa: FBT001 - a plain check
    """-32601 for a resource or prompt method when the server has none."""
    if not available:
        raise RpcError(
            METHOD_NOT_FOUND,
            "Method not found",
            {"reason": f"This server has no {call.method.split('/')[0]}."},
        )


def invalid_request(reason: str, status: int = 400) -> RpcError:
    """-32600 with a reason."""
    return RpcError(
        INVALID_REQUEST, "Invalid Request", {"reason": reason}, status=status
    )


def invalid_params(reason: str) -> RpcError:
    """-32602 with a reason."""
    return RpcError(INVALID_PARAMS, "Invalid params", {"reason": reason})
