"""Whom the per-client limits and shares count a request as.

`RATE_LIMITS`, the body budget's and the off-loop lane's turns count the same
caller alike: the token's subject, else its principal, else its address.
"""

from __future__ import annotations

from wymcp.core.server._peer_group import peer_group
from wymcp.core.server._session import principal_key


def client_key(principal: object | None, peer: str | None) -> str:
    """The key of the caller `principal` (AUTH's) or, without one, `peer`.

    An IPv6 address counts by its /64 (`peer_group`, as the tasks count it):
    one host is commonly given a whole /64.
    """
    subject = getattr(principal, "subject", None)
    if isinstance(subject, str):
        return f"sub:{subject}"
    key = principal_key(principal)
    if key is not None:
        return f"principal:{key}"
    return f"addr:{peer_group(peer)}" if peer is not None else "anonymous"
