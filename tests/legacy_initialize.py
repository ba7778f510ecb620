"""A 2025-11-25 `initialize` request written out by hand, for transport tests."""

from __future__ import annotations

from typing import Any, Final

LEGACY_INITIALIZE: Final[dict[str, Any]] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
"""The body (id 1), to post as JSON with the usual `Accept` of both media types."""
