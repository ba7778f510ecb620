"""The 2026-07-28 validation ladder (mcp-server-requirements.md §1.5).

Which path a message takes, then `_meta`, mirrored headers, version and log
level, in the order the conformance suite expects.
"""

from __future__ import annotations

from typing import Final

from wymcp.core.server._call import Call, invalid_params
from wymcp.core.server._exchange import Exchange, Stream
from wymcp.core.server._jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_VERSION,
    Incoming,
    RpcError,
    echo,
)
from wymcp.core.server._levels import is_level
from wymcp.core.server._mirror import HeaderIndex, check_standard
from wymcp.core.server._revision import (
    HANDSHAKE,
    META_CAPABILITIES,
    META_LOG_LEVEL,
    META_VERSION,
    MODERN,
)

MODERN_STATUS: Final = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_CAPABILITY: 400,
    UNSUPPORTED_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
"""HTTP status of each JSON-RPC error at 2026-07-28 (others: 200)."""


def is_modern_request(incoming: Incoming, headers: HeaderIndex) -> bool:
    """Whether a message goes the stateless 2026-07-28 way.

    It does when `_meta` carries the 2026 fields, or when the
    `MCP-Protocol-Version` header names no handshake revision.
    """
    meta = incoming.meta
    if META_VERSION in meta or META_CAPABILITIES in meta:
        return True
    versions = headers.get("mcp-protocol-version")
    if not versions:
        return False
    return versions[0].strip() not in HANDSHAKE


def modern_call(
    incoming: Incoming,
    exchange: Exchange,
    stream: Stream,
    index: HeaderIndex,
    versions: tuple[str, ...],
) -> Call:
    """Run steps 2-4 of the ladder (and the log level) and build the Call."""
    meta = incoming.params.get("_meta")
    for field in (META_VERSION, META_CAPABILITIES):
        if not isinstance(meta, dict) or field not in meta:
            raise invalid_params(f"params._meta must carry '{field}'.")
    assert isinstance(meta, dict)  # noqa: S101 - narrowed by the loop above
    version = meta[META_VERSION]
    capabilities = meta[META_CAPABILITIES]
    if not isinstance(version, str):
        raise invalid_params(f"params._meta '{META_VERSION}' must be a string.")
    if not isinstance(capabilities, dict):
        raise invalid_params(f"params._meta '{META_CAPABILITIES}' must be an object.")
    if exchange.mirrored_headers:
        check_standard(index, incoming.method, version, incoming.params)
    if version != MODERN or MODERN not in versions:
        raise RpcError(
            UNSUPPORTED_VERSION,
            "Unsupported protocol version",
            {
                "supported": [MODERN] if MODERN in versions else [],
                "requested": echo(version),
            },
        )
    level = meta.get(META_LOG_LEVEL)
    if level is not None and not is_level(level):
        raise invalid_params(f"params._meta '{META_LOG_LEVEL}' is not a log level.")
    return Call(
        id=incoming.id,
        method=incoming.method,
        params=incoming.params,
        meta=meta,
        version=MODERN,
        headers=index,
        stream=stream,
        principal=exchange.principal,
        capabilities=capabilities,
        mirrored_headers=exchange.mirrored_headers,
    )
