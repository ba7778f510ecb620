"""The session path of the 2025 revisions: initialize, session POSTs, GET, DELETE.

The engine hands it every message that is not a 2026-07-28 request; it owns
the Mcp-Session-Id checks, the session's SSE stream and its end.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from wymcp.core.server._call import Call, build_call
from wymcp.core.server._exchange import Exchange, Reply, Stream
from wymcp.core.server._header_names import (
    SESSION_HEADER,
    SESSION_KEY,
    VERSION_HEADER,
    VERSION_KEY,
)
from wymcp.core.server._jsonrpc import (
    Incoming,
    invalid_params,
    invalid_request,
    response,
    session_terminated,
    sessions_not_served,
    unavailable,
)
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._revision import HANDSHAKE, REVISIONS, SESSIONS, revision
from wymcp.core.server._session import (
    DECLARATION_LIMIT,
    Session,
    SessionStore,
    declaration_size,
    new_session_id,
    principal_key,
)
from wymcp.core.server._session_declaration import compact
from wymcp.core.server._session_lifecycle import (
    BEFORE_INITIALIZED,
    deliver,
    duplicated_session_header,
    session_notification,
    wrong_version_header,
)
from wymcp.core.server._session_stream import serve_session_stream
from wymcp.core.server._stream_resumable import resumable

_log = logging.getLogger("wymcp.core.server")


class SessionPath:
    """Serves the session revisions for one engine."""

    def __init__(
        self,
        *,
        store: SessionStore,
        options: EngineOptions,
        capabilities: Callable[[str], dict[str, Any]],
        server_info: Callable[[str], dict[str, Any]],
        ended: Callable[[Session], None] | None = None,
    ) -> None:
        self._ended = ended
        self._store = store
        self._options = options
        self._capabilities = capabilities
        self._server_info = server_info

    def open(
        self, incoming: Incoming, exchange: Exchange, stream: Stream
    ) -> Call | Reply:
        """The Call of one POSTed session message, or the answer that ends it.

        `initialize`, a ping outside a session, the client's responses and
        notifications are answered here; a request of a live session opens
        a Call at the session's revision.
        """
        headers = exchange.headers.index
        sids = headers.get(SESSION_KEY)
        versions = headers.get(VERSION_KEY)
        if (sids is not None and len(sids) > 1) or (
            versions is not None and len(versions) > 1
        ):  # read once here, each header's duplicate is named as before
            raise invalid_request(str(duplicated_session_header(headers)))
        if incoming.kind == "request" and incoming.method == "initialize":
            return self._initialize(incoming, exchange)
        if incoming.kind == "request" and incoming.method == "ping":
            # answered whether a session applies or not
            return build_call(
                incoming,
                exchange,
                stream,
                revision=SESSIONS,
                meta=incoming.meta,
                capabilities={},
            )
        session = self._live_session(incoming, exchange, sids)
        if isinstance(session, Reply):
            return session
        problem = wrong_version_header(session, versions[0] if versions else None)
        if problem is not None:
            raise invalid_request(problem)
        if incoming.kind == "response":
            deliver(session, incoming)
            return Reply(202)
        if incoming.kind == "notification":
            session_notification(session, incoming)
            return Reply(202)
        if not session.initialized and incoming.method not in BEFORE_INITIALIZED:
            raise invalid_request(
                "Session not yet initialized. Send notifications/initialized first."
            )
        return build_call(
            incoming,
            exchange,
            resumable(session, stream),
            revision=REVISIONS[session.protocol_version],
            meta=incoming.meta,
            capabilities=session.client_capabilities,
            session=session,
        )

    def _live_session(
        self, incoming: Incoming, exchange: Exchange, sids: list[str] | None
    ) -> Session | Reply:
        """The live session `sids` (the header's values) names; 404 when none."""
        sid = sids[0] if sids else None
        if sid is None:
            raise invalid_request("Missing Mcp-Session-Id header. Initialize first.")
        session = self._store.get(sid.strip())
        if session is not None and not session.closed:
            principal = exchange.principal
            if session.principal is principal or principal_key(
                session.principal
            ) == principal_key(principal):  # the same caller (None: no auth)
                return session
        if incoming.kind != "request":
            return Reply(404)
        raise session_terminated()

    def _initialize(self, incoming: Incoming, exchange: Exchange) -> Reply:
        params = incoming.params
        offered = [
            v for v in self._options.protocol_versions if not revision(v).stateless
        ]
        if not offered:
            raise sessions_not_served(list(self._options.protocol_versions))
        requested = params.get("protocolVersion")
        version = requested if requested in offered else offered[0]
        capabilities = params.get("capabilities")
        capabilities = capabilities if isinstance(capabilities, dict) else {}
        client_info = params.get("clientInfo")
        client_info = client_info if isinstance(client_info, dict) else {}
        if declaration_size(capabilities, client_info) > DECLARATION_LIMIT:
            raise invalid_params(
                "'capabilities' and 'clientInfo' take more than "
                f"{DECLARATION_LIMIT} bytes of JSON together; a session "
                "keeps them, so send only the capabilities you have.",
                status=400,
            )
        session = Session(
            id=new_session_id(),
            protocol_version=version,
            capabilities_json=compact(capabilities),
            client_info_json=compact(client_info),
            principal=exchange.principal,
            started=self._options.clock(),
            ended=self._ended,
        )
        if exchange.record is not None:
            exchange.record.revision = version
        if not self._store.add(session):
            raise unavailable(
                "Too many live sessions. Retry later.",
                self._options.retry_after,
                "max_sessions",
            )
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self._capabilities(version),
            "serverInfo": self._server_info(version),
        }
        if self._options.instructions is not None:
            result["instructions"] = self._options.instructions
        return Reply(200, response(incoming.id, result), {SESSION_HEADER: session.id})

    # ------------------------------------------------------------ GET/DELETE

    @staticmethod
    def _plain(
        status: int, message: str, headers: Mapping[str, str] | None = None
    ) -> Reply:
        return Reply(status, {"error": message}, dict(headers or {}))

    def _session_for(self, exchange: Exchange) -> Session | Reply:
        headers = exchange.headers
        problem = duplicated_session_header(headers.index)
        if problem is not None:
            return self._plain(400, problem)
        sent_version = headers.get(VERSION_HEADER)
        sid = headers.get(SESSION_HEADER)
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
        problem = wrong_version_header(session, sent_version)
        if problem is not None:
            return self._plain(400, problem)
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
