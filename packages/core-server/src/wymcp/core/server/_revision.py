"""The protocol revisions the engine speaks and what each one allows.

2026-07-28 is stateless; 2025-11-25, 2025-06-18 and 2025-03-26 are served
through sessions opened by `initialize`.
"""

from __future__ import annotations

from typing import Final

MODERN: Final = "2026-07-28"
LEGACY: Final = ("2025-11-25", "2025-06-18", "2025-03-26")
SUPPORTED: Final = (MODERN, *LEGACY)
HANDSHAKE: Final = frozenset({*LEGACY, "2024-11-05"})
"""Versions an `MCP-Protocol-Version` header may name on the session path."""

META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION: Final = "io.modelcontextprotocol/subscriptionId"


def is_modern(version: str) -> bool:
    """Whether `version` is served statelessly."""
    return version == MODERN


def has_titles(version: str) -> bool:
    """Whether titles, output schemas, structured content exist (2025-06-18+).

    Resource links and elicitation arrived with them.
    """
    return version != "2025-03-26"


def newest_first(versions: tuple[str, ...]) -> tuple[str, ...]:
    """Sort versions newest first (they are ISO dates)."""
    return tuple(sorted(set(versions), reverse=True))
