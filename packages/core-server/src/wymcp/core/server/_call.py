"""One request being served (`Call`): what every method handler reads."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

from wymcp.core.server._exchange import Exchange, Stream
from wymcp.core.server._jsonrpc import Incoming, method_not_found
from wymcp.core.server._mirror import HeaderIndex
from wymcp.core.server._revision import Revision
from wymcp.core.server._session import Session


@attrs.define(eq=False)
class Call:
    """One request being served at its `revision`, from its `exchange`."""

    id: str | int | None
    method: str
    params: Mapping[str, Any]
    meta: Mapping[str, Any]
    revision: Revision
    exchange: Exchange
    stream: Stream | None
    capabilities: Mapping[str, Any]
    session: Session | None = None

    @property
    def version(self) -> str:
        """The protocol version the call is served at."""
        return self.revision.name

    @property
    def principal(self) -> object | None:
        """Who the transport's auth hook accepted, or None."""
        return self.exchange.principal

    @property
    def headers(self) -> HeaderIndex:
        """The request's headers by lower-case name."""
        return self.exchange.headers.index

    @property
    def checks_params(self) -> bool:
        """Whether `Mcp-Param-*` headers must mirror the arguments.

        They do at a stateless revision over a transport with HTTP headers.
        """
        return self.revision.stateless and self.exchange.mirrored_headers


def open_call(
    incoming: Incoming,
    exchange: Exchange,
    stream: Stream,
    *,
    revision: Revision,
    capabilities: Mapping[str, Any],
    session: Session | None = None,
) -> Call:
    """The Call of a request, whichever path opened it."""
    return Call(
        id=incoming.id,
        method=incoming.method,
        params=incoming.params,
        meta=incoming.meta,
        revision=revision,
        exchange=exchange,
        stream=stream,
        capabilities=capabilities,
        session=session,
    )


Handler = Callable[[Call], Awaitable[dict[str, Any]]]


def need(call: Call, available: bool) -> None:  # noqa: FBT001 - a plain check
    """-32601 for a resource or prompt method when the server has none."""
    if not available:
        raise method_not_found(
            f"This server has no {call.method.split('/')[0]}.",
        )
