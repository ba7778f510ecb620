"""A 2026-07-28 request written out by hand for transport tests: body and headers.

Spelled here, not with `wymcp.core.server`'s builders, so the tests check the
server against the wire as the spec writes it.
"""

from __future__ import annotations

import json
from typing import Any

MODERN = "2026-07-28"


def modern_post(
    method: str,
    params: dict[str, Any] | None = None,
    *,
    rid: int = 1,
    token: str | None = None,
) -> tuple[str, dict[str, str]]:
    """The JSON body and headers of one request (with a bearer token if given)."""
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": method,
        "params": {
            **(params or {}),
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if params and "name" in params:
        headers["Mcp-Name"] = params["name"]
    elif params and "uri" in params:
        headers["Mcp-Name"] = params["uri"]
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return json.dumps(body), headers
