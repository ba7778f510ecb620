"""The session path of the 2025 revisions: initialize, session POSTs, GET, DELETE.

The engine hands it every message that is not a 2026-07-28 request; it owns
the Mcp-Session-Id checks, the session's SSE stream and its end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from wymcp.core.server._call import Call, Handler, invalid_request
from wymcp.core.server._declaration import compact
from wymcp.core.server._exchange import Exchange, Reply, Stream
from wymcp.core.server._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SESSION_NOT_FOUND,
    Incoming,
    RpcError,
    error_response,
    response,
)
from wymcp.core.server._lifecycle import (
    BEFORE_INITIALIZED,
    SESSION_STATUS,
    check_session_version,
    deliver,
    session_notification,
)
from wymcp.core.server._mirror import HeaderIndex
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._resumable_stream import resumable, run_resumable
from wymcp.core.server._revision import HANDSHAKE, LEGACY
from wymcp.core.server._session import (
    DECLARATION_LIMIT,
    Session,
    SessionStore,
    declaration_size,
    new_session_id,
    principal_key,
)
from wymcp.core.server._session_stream import serve_session_stream

_log = logging.getLogger("wymcp.core.server")


class SessionPath:
    """Serves the session revisions for one engine."""

    def __init__(
        self,
        *,
        store: SessionStore,
        options: EngineOptions,
        methods: Mapping[str, Handler],
        capabilities: Callable[[str], dict[str, Any]],
        server_info: Callable[[str], dict[str, Any]],
    ) -> None:
        self._store = store
        self._options = options
        self._methods = methods
        self._capabilities = capabilities
        self._server_info = server_info

    def _reply(self, rid: str | int | None, error: RpcError) -> Reply:
        status = error.status or SESSION_STATUS.get(error.code, 200)
        return Reply(status, error_response(rid, error), dict(error.headers))

    async def post(
        self,
        incoming: Incoming,
        exchange: Exchange,
        stream: Stream,
        index: HeaderIndex,
    ) -> Reply:
        """Answer one POSTed message of a session revision."""
        try:
            return await self._serve(incoming, exchange, stream, index)
        except RpcError as error:
            return self._reply(incoming.id, error)

    async def _serve(
        self,
        incoming: Incoming,
        exchange: Exchange,
        stream: Stream,
        index: HeaderIndex,
    ) -> Reply:
        for name in ("Mcp-Session-Id", "MCP-Protocol-Version"):
            if len(index.get(name.lower(), ())) > 1:
                raise invalid_request(
                    f"Duplicated {name} header. Send exactly one {name} header."
                )
        if incoming.kind == "request" and incoming.method == "initialize":
            return self._initialize(incoming, exchange)
        if incoming.kind == "request" and incoming.method == "ping":
            return Reply(200, response(incoming.id, {}))
        session = self._live_session(incoming, exchange, index)
        if isinstance(session, Reply):
            return session
        check_session_version(session, index)
        if incoming.kind == "response":
            deliver(session, incoming)
            return Reply(202)
        if incoming.kind == "notification":
            session_notification(session, incoming)
            return Reply(202)
        return await self._request(session, incoming, exchange, stream)

    def _live_session(
        self, incoming: Incoming, exchange: Exchange, index: HeaderIndex
    ) -> Session | Reply:
        sids = index.get("mcp-session-id")
        sid = sids[0] if sids else None
        if sid is None:
            raise invalid_request("Missing Mcp-Session-Id header. Initialize first.")
        session = self._store.get(sid.strip())
        if (
            session is not None
            and not session.closed
            and principal_key(session.principal) == principal_key(exchange.principal)
        ):
            return session
        if incoming.kind != "request":
            return Reply(404)
        return Reply(
            404,
            error_response(
                incoming.id, RpcError(SESSION_NOT_FOUND, "Session terminated")
            ),
        )

    def _initialize(self, incoming: Incoming, exchange: Exchange) -> Reply:
        params = incoming.params
        offered = [v for v in self._options.protocol_versions if v in LEGACY]
        if not offered:
            raise RpcError(
                INVALID_REQUEST,
                "This server serves 2026-07-28 only; it needs no initialize.",
                {"supported": list(self._options.protocol_versions)},
                status=400,
            )
        requested = params.get("protocolVersion")
        version = requested if requested in offered else offered[0]
        capabilities = params.get("capabilities")
        capabilities = capabilities if isinstance(capabilities, dict) else {}
        client_info = params.get("clientInfo")
        client_info = client_info if isinstance(client_info, dict) else {}
        if declaration_size(capabilities, client_info) > DECLARATION_LIMIT:
            raise RpcError(
                INVALID_PARAMS,
                "Invalid params",
                {
                    "reason": "'capabilities' and 'clientInfo' take more than "
                    f"{DECLARATION_LIMIT} bytes of JSON together; a session "
                    "keeps them, so send only the capabilities you have."
                },
                status=400,
            )
        session = Session(
            id=new_session_id(),
            protocol_version=version,
            capabilities_json=compact(capabilities),
            client_info_json=compact(client_info),
            principal=exchange.principal,
        )
        if not self._store.add(session):
            return Reply(
                503,
                error_response(
                    incoming.id,
                    RpcError(
                        INTERNAL_ERROR,
                        "Too many live sessions. Retry later.",
                    ),
                ),
                {"Retry-After": str(self._options.retry_after)},
            )
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self._capabilities(version),
            "serverInfo": self._server_info(version),
        }
        if self._options.instructions is not None:
            result["instructions"] = self._options.instructions
        return Reply(200, response(incoming.id, result), {"Mcp-Session-Id": session.id})

    async def _request(
        self,
        session: Session,
        incoming: Incoming,
        exchange: Exchange,
        stream: Stream,
    ) -> Reply:
        rid = incoming.id
        assert rid is not None  # noqa: S101 - a request always has an id
        if not session.initialized and incoming.method not in BEFORE_INITIALIZED:
            raise invalid_request(
                "Session not yet initialized. Send notifications/initialized first."
            )
        handler = self._methods.get(incoming.method)
        if handler is None:
            raise RpcError(
                METHOD_NOT_FOUND,
                "Method not found",
                {"reason": "This server has no such method."},
            )
        stream = resumable(session, stream)
        call = Call(
            id=rid,
            method=incoming.method,
            params=incoming.params,
            meta=incoming.meta,
            version=session.protocol_version,
            headers={},
            stream=stream,
            principal=exchange.principal,
            capabilities=session.client_capabilities,
            session=session,
        )
        return await run_resumable(stream, lambda: _run(session, rid, handler, call))

    # ------------------------------------------------------------ GET/DELETE

    @staticmethod
    def _plain(
        status: int, message: str, headers: Mapping[str, str] | None = None
    ) -> Reply:
        return Reply(status, {"error": message}, dict(headers or {}))

    def _session_for(self, exchange: Exchange) -> Session | Reply:
        headers = exchange.headers
        for name in ("Mcp-Session-Id", "MCP-Protocol-Version"):
            if len(headers.getall(name)) > 1:
                return self._plain(
                    400, f"Duplicated {name} header. Send exactly one {name} header."
                )
        sent_version = headers.get("MCP-Protocol-Version")
        sid = headers.get("Mcp-Session-Id")
        if sid is None or (
            sent_version is not None and sent_version.strip() not in HANDSHAKE
        ):
            return self._plain(
                405,
                "Method not allowed: no session applies. POST to this endpoint.",
                {"Allow": "POST"},
            )
        session = self._store.get(sid.strip())
        if (
            session is None
            or session.closed
            or principal_key(session.principal) != principal_key(exchange.principal)
        ):
            return self._plain(404, "Session not found")
        if (
            session.protocol_version != "2025-03-26"
            and sent_version is not None
            and sent_version.strip() != session.protocol_version
        ):
            return self._plain(
                400,
                "Incorrect MCP-Protocol-Version header. Expected the version "
                "negotiated during initialize.",
            )
        return session

    async def get(self, exchange: Exchange, stream: Stream) -> Reply:
        """Serve a session's SSE stream.

        It lasts until the session ends or another GET replaces it.
        """
        found = self._session_for(exchange)
        if isinstance(found, Reply):
            return found
        return await serve_session_stream(
            found, exchange.headers.get("Last-Event-ID"), stream
        )

    async def delete(self, exchange: Exchange) -> Reply:
        """End a session; later requests naming it get 404."""
        found = self._session_for(exchange)
        if isinstance(found, Reply):
            return found
        self._store.remove(found.id)
        found.terminate()
        return Reply(200, None)


async def _run(session: Session, rid: str | int, handler: Handler, call: Call) -> Reply:
    """Run one request of `session`, as a call it can cancel or end."""
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
    return Reply(
        404, error_response(rid, RpcError(SESSION_NOT_FOUND, "Session terminated"))
    )
