"""One request being served (`Call`): what every method handler reads."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import attrs

from wymcp.core.server._exchange import Exchange, Headers, Stream
from wymcp.core.server._jsonrpc import Incoming, method_not_found
from wymcp.core.server._middleware import CallRecord
from wymcp.core.server._revision import Revision
from wymcp.core.server._session import Session


@attrs.define(eq=False)
class Call:
    """One request being served at its `revision`.

    Built once from the exchange (`build_call`): `version` is the revision's
    name, `headers` the exchange's, and `checks_params` whether
    `Mcp-Param-*` headers must mirror the arguments (a stateless revision over
    a transport with HTTP headers).
    """

    id: str | int | None
    method: str
    params: Mapping[str, Any]
    meta: Mapping[str, Any]
    revision: Revision
    version: str
    headers: Headers
    principal: object | None
    checks_params: bool
    stream: Stream | None
    capabilities: Mapping[str, Any]
    session: Session | None = None
    peer: str | None = None
    """The client's network address, if the transport knows one."""
    record: CallRecord | None = None
    """What the middleware, metrics and access log see of it (None: unobserved)."""
    json_bytes: int | None = None
    """The length of the JSON text the request came in, if the transport knows it."""


def build_call(
    incoming: Incoming,
    exchange: Exchange,
    stream: Stream,
    *,
    revision: Revision,
    meta: Mapping[str, Any],
    capabilities: Mapping[str, Any],
    session: Session | None = None,
) -> Call:
    """The Call of a request, whichever path opened it.

    Its fields are set here, on an instance made without `__init__`: calling
    the class builds a tuple of the 15 arguments and a second frame (~2k
    instructions of a call). `Call` has no validator or converter to skip;
    tests/core_server/test_call.py pins that every field is set.
    """
    call: Call = _new(Call)
    call.id = incoming.id
    call.method = incoming.method
    call.params = incoming.params
    call.meta = meta
    call.revision = revision
    call.version = revision.name
    call.headers = exchange.headers
    call.principal = exchange.principal
    call.checks_params = revision.stateless and exchange.mirrored_headers
    call.stream = stream
    call.capabilities = capabilities
    call.session = session
    call.peer = exchange.peer
    call.record = None  # the engine sets it when it observes the call
    call.json_bytes = exchange.json_bytes
    return call


_new: Final = object.__new__


Handler = Callable[[Call], Awaitable[dict[str, Any]]]


def need(call: Call, available: bool) -> None:  # noqa: FBT001 - a plain check
    """-32601 for a resource or prompt method when the server has none."""
    if not available:
        raise method_not_found(
            f"This server has no {call.method.split('/')[0]}.",
        )
