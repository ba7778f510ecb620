"""The resource methods: list, templates, read, subscribe, unsubscribe."""

from __future__ import annotations

import logging
from typing import Any

from wymcp.core.schema import ResourceNotFoundError
from wymcp.core.server._asking import answer_asking
from wymcp.core.server._call import Call, Kit, invalid_params, need
from wymcp.core.server._context import MissingCapabilityError
from wymcp.core.server._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    RpcError,
    echo,
)
from wymcp.core.server._session import Session
from wymcp.core.server._subscriptions import (
    MAX_URI_LENGTH,
    MAX_URIS,
    WATCH_BYTES,
    watch_cost,
)
from wymcp.core.server._toolcall import InputRequired

_log = logging.getLogger("wymcp.core.server")


def _uri(call: Call) -> str:
    uri = call.params.get("uri")
    if not isinstance(uri, str):
        raise invalid_params("Missing or invalid 'uri' in params.")
    return uri


def _session_of(call: Call) -> Session:
    assert call.session is not None  # noqa: S101 - a session method
    return call.session


class ResourceMethods:
    """Handlers of the resource methods, bound to one engine's kit."""

    def __init__(self, kit: Kit) -> None:
        self._kit = kit

    async def list(self, call: Call) -> dict[str, Any]:
        """`resources/list`."""
        catalogue = self._kit.catalogue
        need(call, catalogue.has_resources)
        items = catalogue.resource_definitions(call.version, templates=False)
        if call.session is not None:
            call.session.dirty.discard("resources")
        return self._kit.page(call, items, "resources")

    async def templates(self, call: Call) -> dict[str, Any]:
        """`resources/templates/list`."""
        catalogue = self._kit.catalogue
        need(call, catalogue.has_resources)
        items = catalogue.resource_definitions(call.version, templates=True)
        return self._kit.page(call, items, "resourceTemplates")

    async def read(self, call: Call) -> dict[str, Any]:
        """`resources/read`: -32602 (2026) or -32002 (2025) for an unknown URI."""
        need(call, self._kit.catalogue.has_resources)
        uri = _uri(call)
        found = self._kit.catalogue.resource_for(uri)
        if found is None:
            raise _not_found(call, uri)
        spec, values = found
        ctx = self._kit.context(call, f"resources/read:{uri}")

        async def read() -> dict[str, Any]:
            try:
                value = await spec.resource.read(uri, values, ctx)
                return {"contents": spec.contents(uri, value)}
            except (InputRequired, MissingCapabilityError):
                raise
            except ResourceNotFoundError:
                raise _not_found(call, uri) from None
            except Exception:  # noqa: BLE001 - a raising read answers -32603
                _log.exception("resource %s raised", spec.name)
                raise RpcError(
                    INTERNAL_ERROR,
                    "Internal error",
                    {"reason": "The resource could not be read.", "uri": echo(uri)},
                ) from None

        result = await answer_asking(read())
        if result.get("resultType") == "input_required":
            return result
        return self._kit.cache_hints(call, result)

    async def subscribe(self, call: Call) -> dict[str, Any]:
        """`resources/subscribe` (sessions), for a URI this server serves.

        A session watches at most `MAX_URIS` URIs in `WATCH_BYTES` of memory.
        """
        need(call, self._kit.catalogue.has_resources)
        session = _session_of(call)
        uri = _uri(call)
        if len(uri) > MAX_URI_LENGTH:
            raise invalid_params(
                f"A watched URI may be at most {MAX_URI_LENGTH} characters long."
            )
        if uri in session.subscriptions:
            return {}
        if self._kit.catalogue.resource_for(uri) is None:
            raise _not_found(call, uri)
        cost = watch_cost(uri)
        if (
            len(session.subscriptions) >= MAX_URIS
            or session.watched_bytes + cost > WATCH_BYTES
        ):
            raise invalid_params(
                f"A session may watch at most {MAX_URIS} resources in "
                f"{WATCH_BYTES} bytes of URIs. Unsubscribe first."
            )
        session.subscriptions.add(uri)
        session.watched_bytes += cost
        return {}

    async def unsubscribe(self, call: Call) -> dict[str, Any]:
        """`resources/unsubscribe` (sessions)."""
        need(call, self._kit.catalogue.has_resources)
        session = _session_of(call)
        uri = _uri(call)
        if uri in session.subscriptions:
            session.subscriptions.discard(uri)
            session.watched_bytes -= watch_cost(uri)
        return {}


def _not_found(call: Call, uri: str) -> RpcError:
    """The answer to a URI that names nothing: -32602 (2026) or -32002 (2025)."""
    code = INVALID_PARAMS if call.modern else RESOURCE_NOT_FOUND
    return RpcError(code, "Resource not found", {"uri": echo(uri)})
