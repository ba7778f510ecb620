"""The resource methods: list, templates, read, subscribe, unsubscribe."""

from __future__ import annotations

import logging
from typing import Any

from wymcp.core.schema import ResourceNotFoundError
from wymcp.core.server._asking import Contexts, answer_asking
from wymcp.core.server._call import Call, need
from wymcp.core.server._call_tool import InputRequired
from wymcp.core.server._catalogue import Catalogue
from wymcp.core.server._jsonrpc import echo, internal_error, invalid_params
from wymcp.core.server._listing import Listing
from wymcp.core.server._session import Session
from wymcp.core.server._subscriptions import (
    MAX_URI_LENGTH,
    MAX_URIS,
    WATCH_BYTES,
    watch_cost,
)
from wymcp.core.server._tool_context import MissingCapabilityError

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
    """Handlers of the resource methods over one engine's catalogue."""

    def __init__(
        self, catalogue: Catalogue, contexts: Contexts, listing: Listing
    ) -> None:
        self._catalogue = catalogue
        self._contexts = contexts
        self._listing = listing

    async def list(self, call: Call) -> dict[str, Any]:
        """`resources/list`."""
        need(call, self._catalogue.has_resources)
        items = self._catalogue.resource_definitions(call.revision, templates=False)
        return self._listing.page(call, items, "resources", seen="resources")

    async def templates(self, call: Call) -> dict[str, Any]:
        """`resources/templates/list`."""
        need(call, self._catalogue.has_resources)
        items = self._catalogue.resource_definitions(call.revision, templates=True)
        return self._listing.page(call, items, "resourceTemplates")

    async def read(self, call: Call) -> dict[str, Any]:
        """`resources/read`: -32602 (2026) or -32002 (2025) for an unknown URI."""
        need(call, self._catalogue.has_resources)
        uri = _uri(call)
        found = self._catalogue.resource_for(uri)
        if found is None:
            raise call.revision.resource_not_found(uri)
        spec, values = found
        ctx = self._contexts(call, "resources/read:", uri)

        async def read() -> dict[str, Any]:
            try:
                value = await spec.resource.read(uri, values, ctx)
                return {"contents": spec.contents(uri, value)}
            except (InputRequired, MissingCapabilityError):
                raise
            except ResourceNotFoundError:
                raise call.revision.resource_not_found(uri) from None
            except Exception:  # noqa: BLE001 - a raising read answers -32603
                _log.exception("resource %s raised", spec.name)
                raise internal_error(
                    "The resource could not be read.", uri=echo(uri)
                ) from None

        result = await answer_asking(read())
        if result.get("resultType") == "input_required":
            return result
        return self._listing.hinted(call, result)

    async def subscribe(self, call: Call) -> dict[str, Any]:
        """`resources/subscribe` (sessions), for a URI this server serves.

        A session watches at most `MAX_URIS` URIs in `WATCH_BYTES` of memory.
        """
        need(call, self._catalogue.has_resources)
        session = _session_of(call)
        uri = _uri(call)
        if len(uri) > MAX_URI_LENGTH:
            raise invalid_params(
                f"A watched URI may be at most {MAX_URI_LENGTH} characters long."
            )
        if uri in session.subscriptions:
            return {}
        if self._catalogue.resource_for(uri) is None:
            raise call.revision.resource_not_found(uri)
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
        need(call, self._catalogue.has_resources)
        session = _session_of(call)
        uri = _uri(call)
        if uri in session.subscriptions:
            session.subscriptions.discard(uri)
            session.watched_bytes -= watch_cost(uri)
        return {}
