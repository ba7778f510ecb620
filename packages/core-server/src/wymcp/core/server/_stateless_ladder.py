"""The 2026-07-28 validation ladder (docs/protocol.md, "2026-07-28").

Which path a message takes, then `_meta`, mirrored headers, version and log
level, in the order the conformance suite expects; the `Call` it opens.
"""

from __future__ import annotations

from wymcp.core.server._call import Call, build_call
from wymcp.core.server._exchange import Exchange, Reply, Stream
from wymcp.core.server._header_names import VERSION_KEY
from wymcp.core.server._jsonrpc import (
    Incoming,
    invalid_params,
    invalid_request,
    unsupported_version,
)
from wymcp.core.server._levels import is_level
from wymcp.core.server._revision import (
    HANDSHAKE,
    META_CAPABILITIES,
    META_LOG_LEVEL,
    META_VERSION,
    REVISIONS,
    STATELESS,
)
from wymcp.core.server._stateless_mirror import HeaderIndex, check_standard


def takes_stateless_path(incoming: Incoming, headers: HeaderIndex) -> bool:
    """Whether a message goes the stateless 2026-07-28 way.

    It does when `_meta` carries the 2026 fields, or when the
    `MCP-Protocol-Version` header names no handshake revision.
    """
    meta = incoming.params.get("_meta")
    if isinstance(meta, dict) and (META_VERSION in meta or META_CAPABILITIES in meta):
        return True
    versions = headers.get(VERSION_KEY)
    if not versions:
        return False
    return versions[0].strip() not in HANDSHAKE


def open_stateless(
    incoming: Incoming,
    exchange: Exchange,
    stream: Stream,
    versions: tuple[str, ...],
) -> Call | Reply:
    """Run steps 2-4 of the ladder (and the log level) and open the Call.

    A notification is acknowledged (202) without a call.
    """
    if incoming.kind == "response":
        raise invalid_request(
            "Clients send no responses at 2026-07-28: nothing asked one."
        )
    if incoming.kind == "notification":
        return Reply(202)
    meta = incoming.params.get("_meta")
    if not isinstance(meta, dict):
        raise invalid_params(f"params._meta must carry '{META_VERSION}'.")
    # indexed (a `.get` is a method call each); the first absent one is named
    try:
        version = meta[META_VERSION]
        capabilities = meta[META_CAPABILITIES]
    except KeyError:
        field = META_VERSION if META_VERSION not in meta else META_CAPABILITIES
        raise invalid_params(f"params._meta must carry '{field}'.") from None
    if not isinstance(version, str):
        raise invalid_params(f"params._meta '{META_VERSION}' must be a string.")
    if not isinstance(capabilities, dict):
        raise invalid_params(f"params._meta '{META_CAPABILITIES}' must be an object.")
    if exchange.mirrored_headers:
        check_standard(
            exchange.headers.index, incoming.method, version, incoming.params
        )
    served = STATELESS.name in versions
    if REVISIONS.get(version) is not STATELESS or not served:
        raise unsupported_version([STATELESS.name] if served else [], version)
    level = meta.get(META_LOG_LEVEL)
    if level is not None and not is_level(level):
        raise invalid_params(f"params._meta '{META_LOG_LEVEL}' is not a log level.")
    return build_call(
        incoming,
        exchange,
        stream,
        revision=STATELESS,
        meta=meta,
        capabilities=capabilities,
    )
