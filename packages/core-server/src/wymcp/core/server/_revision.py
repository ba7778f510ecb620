"""The protocol revisions the engine speaks and what each one allows (`Revision`).

2026-07-28 is stateless; 2025-11-25, 2025-06-18 and 2025-03-26 are served
through sessions opened by `initialize`. Every difference between them is a
field or a method of `Revision`, chosen once per request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from wymcp.core.server._exchange import Reply
from wymcp.core.server._jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_VERSION,
    RpcError,
    method_not_found,
    resource_not_found,
    rpc_error_message,
)

MODERN: Final = "2026-07-28"
"""The stateless revision: every request carries its version and capabilities."""
LEGACY: Final = ("2025-11-25", "2025-06-18", "2025-03-26")
"""The session revisions, newest first: `initialize` opens a session."""
SUPPORTED: Final = (MODERN, *LEGACY)
"""Every revision the engine speaks, newest first."""
HANDSHAKE: Final = frozenset({*LEGACY, "2024-11-05"})
"""Versions an `MCP-Protocol-Version` header may name on the session path."""

META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
"""The `_meta` key of a 2026-07-28 request's revision."""
META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
"""The `_meta` key of a 2026-07-28 request's client capabilities."""
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION: Final = "io.modelcontextprotocol/subscriptionId"

_SHARED_METHODS: Final = frozenset(
    {
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
    }
)
_STATELESS_METHODS: Final = _SHARED_METHODS | {
    "server/discover",
    "subscriptions/listen",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
}
_SESSION_METHODS: Final = _SHARED_METHODS | {
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
}

_STATELESS_STATUS: Final = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_CAPABILITY: 400,
    UNSUPPORTED_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
_SESSION_STATUS: Final = {PARSE_ERROR: 400, INVALID_REQUEST: 400}


@attrs.frozen(eq=False)
class Revision:
    """What one protocol revision serves and how it answers.

    `stateless`: served without a session (`_meta` on every request, the
    mirrored headers, `resultType`, cache hints, serverInfo in each result's
    `_meta`, the tasks extension, `input_required`); else a session revision
    (serverInfo in the `initialize` result, `resources/subscribe`, questions
    sent on the call's stream). `titles`: titles, output schemas, structured
    content, resource links and elicitation exist (2025-06-18 on).
    `statuses` maps a JSON-RPC code to its HTTP status (others: 200);
    `methods` are the request methods it serves; `checks_version_header`:
    a session POST must repeat the negotiated `MCP-Protocol-Version`;
    `polls`: the server may end a call's POST stream early and the client
    resumes it with `Last-Event-ID` (SEP-1699, 2025-11-25).
    """

    name: str
    stateless: bool
    titles: bool
    statuses: Mapping[int, int]
    methods: frozenset[str]
    not_found_reason: str
    checks_version_header: bool = True
    polls: bool = False

    def reply(self, rid: str | int | None, error: RpcError) -> Reply:
        """The HTTP answer to `error`: its forced status, else this revision's."""
        status = error.status or self.statuses.get(error.code, 200)
        return Reply(status, rpc_error_message(rid, error), dict(error.headers))

    def method_not_found(self) -> RpcError:
        """-32601 for a method this revision does not serve."""
        return method_not_found(self.not_found_reason)

    def resource_not_found(self, uri: str) -> RpcError:
        """An unknown URI: -32602 when stateless, -32002 in a session."""
        return resource_not_found(
            INVALID_PARAMS if self.stateless else RESOURCE_NOT_FOUND, uri
        )

    def publishes_output_schema(self, schema: Mapping[str, Any]) -> bool:
        """Whether `tools/list` carries this `outputSchema`.

        Before 2026-07-28 an output schema's root must be an object.
        """
        return self.titles and (self.stateless or schema.get("type") == "object")

    def carries_structured(self, value: object) -> bool:
        """Whether `structuredContent` may hold `value` (an object before 2026)."""
        return self.titles and (self.stateless or isinstance(value, dict))

    def finish(
        self, result: dict[str, Any], server_info: dict[str, Any] | None
    ) -> dict[str, Any]:
        """A handler's result as it goes out.

        When stateless it carries `resultType` and `server_info` in `_meta`;
        a session revision gives its server info in `initialize` instead.
        """
        if not self.stateless:
            return result
        result.setdefault("resultType", "complete")
        meta = result.get("_meta")
        result["_meta"] = (
            {**meta, META_SERVER_INFO: server_info}
            if meta
            else {META_SERVER_INFO: server_info}
        )
        return result


STATELESS: Final = Revision(
    name=MODERN,
    stateless=True,
    titles=True,
    statuses=_STATELESS_STATUS,
    methods=_STATELESS_METHODS,
    not_found_reason=f"This method does not exist at {MODERN}.",
)
REVISIONS: Final[Mapping[str, Revision]] = {
    MODERN: STATELESS,
    **{
        name: Revision(
            name=name,
            stateless=False,
            titles=name != "2025-03-26",
            statuses=_SESSION_STATUS,
            methods=_SESSION_METHODS,
            not_found_reason="This server has no such method.",
            checks_version_header=name != "2025-03-26",
            polls=name == LEGACY[0],
        )
        for name in LEGACY
    },
}
"""Every revision served, by version."""

SESSIONS: Final = REVISIONS[LEGACY[0]]
"""The revision that answers a session-path error before a session is found
(every session revision shares its status table)."""


def revision(version: str) -> Revision:
    """The `Revision` of a served `version` (KeyError for any other)."""
    return REVISIONS[version]


def newest_first(versions: tuple[str, ...]) -> tuple[str, ...]:
    """Sort versions newest first (they are ISO dates)."""
    return tuple(sorted(set(versions), reverse=True))


def is_stateless(version: str) -> bool:
    """Whether a client speaking `version` sends each request without a session."""
    known = REVISIONS.get(version)
    return known is not None and known.stateless
