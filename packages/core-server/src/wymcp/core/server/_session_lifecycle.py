"""A session's life: its checks, the client's non-request messages, its calls.

The version header, answers to server requests, notifications, `ping`,
`logging/setLevel`, and running a request as a call the session can cancel.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from wymcp.core.server._call import Call, Handler
from wymcp.core.server._exchange import Reply
from wymcp.core.server._header_names import (
    SESSION_HEADER,
    SESSION_KEY,
    VERSION_HEADER,
    VERSION_KEY,
)
from wymcp.core.server._jsonrpc import (
    Incoming,
    invalid_params,
    response,
    rpc_error_message,
    session_terminated,
)
from wymcp.core.server._levels import is_level
from wymcp.core.server._revision import REVISIONS
from wymcp.core.server._session import Session
from wymcp.core.server._stateless_mirror import DuplicatedHeaderError, HeaderIndex, once
from wymcp.core.server._tool_context import ClientRequestError

BEFORE_INITIALIZED: Final = frozenset({"ping", "tools/list", "tools/call"})
"""Methods a session serves before `notifications/initialized`."""

SESSION_HEADERS: Final = (
    (SESSION_HEADER, SESSION_KEY),
    (VERSION_HEADER, VERSION_KEY),
)
"""Headers a session request may carry once at most (as spelled, as indexed)."""


def duplicated_session_header(headers: HeaderIndex) -> str | None:
    """What to answer a request that repeats a session header, or None."""
    for name, key in SESSION_HEADERS:
        try:
            once(headers, key)
        except DuplicatedHeaderError:
            return f"Duplicated {name} header. Send exactly one {name} header."
    return None


def wrong_version_header(session: Session, sent: str | None) -> str | None:
    """What to answer when `MCP-Protocol-Version` names another revision, or None.

    An absent header is allowed; a revision that ignores the header allows any.
    """
    if sent is None or not REVISIONS[session.protocol_version].checks_version_header:
        return None
    if sent.strip() == session.protocol_version:
        return None
    return (
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


async def ping(call: Call) -> dict[str, Any]:
    """`ping`: an empty result."""
    del call
    return {}


async def set_level(call: Call) -> dict[str, Any]:
    """`logging/setLevel`: the session's log threshold from now on."""
    level = call.params.get("level")
    if not is_level(level):
        raise invalid_params(
            "Invalid log level. Use one of debug, info, notice, warning, "
            "error, critical, alert, emergency."
        )
    assert call.session is not None  # noqa: S101 - a session method
    call.session.log_level = level
    return {}


async def run_in_session(session: Session, handler: Handler, call: Call) -> Reply:
    """Run one request of `session`, as a call it can cancel or end."""
    rid = call.id
    assert rid is not None  # noqa: S101 - a request always has an id
    task = asyncio.current_task()
    if task is None:  # pragma: no cover - always served from a task
        return Reply(200, response(rid, await handler(call)))
    session.in_flight[rid] = task
    try:
        result = await handler(call)
    except asyncio.CancelledError:
        if session.terminated:
            return _terminated(rid, task)
        if rid in session.cancelled:
            _take_back(session, rid, task)
            return Reply(204)
        raise
    finally:
        if session.in_flight.get(rid) is task:
            del session.in_flight[rid]
    # the tool may have swallowed its cancellation and returned
    if session.terminated:
        return _terminated(rid, task)
    if rid in session.cancelled:
        _take_back(session, rid, task)
    return Reply(200, response(rid, result))


def _take_back(session: Session, rid: str | int, task: asyncio.Task[Any]) -> None:
    """Forget a `notifications/cancelled` and the cancellation it caused."""
    session.cancelled.discard(rid)
    if task.cancelling():
        task.uncancel()


def _terminated(rid: str | int, task: asyncio.Task[Any]) -> Reply:
    """The answer to a call whose session was deleted while it ran."""
    if task.cancelling():
        task.uncancel()
    return Reply(404, rpc_error_message(rid, session_terminated()))
