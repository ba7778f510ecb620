"""The session path's checks and the client's non-request messages.

The version header, answers to server requests, and notifications.
"""

from __future__ import annotations

from typing import Final

from wymcp.core.server._call import invalid_request
from wymcp.core.server._context import ClientRequestError
from wymcp.core.server._jsonrpc import INVALID_REQUEST, PARSE_ERROR, Incoming
from wymcp.core.server._mirror import HeaderIndex
from wymcp.core.server._session import Session

SESSION_STATUS: Final = {PARSE_ERROR: 400, INVALID_REQUEST: 400}
"""HTTP status of each JSON-RPC error in a session (others: 200)."""

BEFORE_INITIALIZED: Final = frozenset({"ping", "tools/list", "tools/call"})
"""Methods a session serves before `notifications/initialized`."""


def check_session_version(session: Session, headers: HeaderIndex) -> None:
    """-32600 when `MCP-Protocol-Version` names another revision.

    An absent header is allowed; 2025-03-26 sessions ignore it.
    """
    if session.protocol_version == "2025-03-26":
        return
    sent = headers.get("mcp-protocol-version")
    if sent and sent[0].strip() != session.protocol_version:
        raise invalid_request(
            "Incorrect MCP-Protocol-Version header. Expected the version "
            "negotiated during initialize."
        )


def deliver(session: Session, incoming: Incoming) -> None:
    """Hand a client's response to the question waiting for it, if any."""
    if not isinstance(incoming.id, str):
        return
    future = session.pending.get(incoming.id)
    if future is None or future.done():
        return
    if incoming.error is not None:
        future.set_exception(
            ClientRequestError(
                "client_error", "The client answered with an error.", incoming.error
            )
        )
    elif isinstance(incoming.result, dict):
        future.set_result(incoming.result)
    else:
        future.set_exception(
            ClientRequestError("client_error", "The client's result is not an object.")
        )


def session_notification(session: Session, incoming: Incoming) -> None:
    """Act on `notifications/initialized` and `notifications/cancelled`."""
    if incoming.method == "notifications/initialized":
        session.initialized = True
    elif incoming.method == "notifications/cancelled":
        rid = incoming.params.get("requestId")
        if isinstance(rid, str | int) and not isinstance(rid, bool):
            task = session.in_flight.get(rid)
            if task is not None and not task.done():
                session.cancelled.add(rid)
                task.cancel()
