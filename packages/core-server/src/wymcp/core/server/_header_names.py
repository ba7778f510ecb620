"""The HTTP header names of MCP's Streamable HTTP transport, spelled once.

Header names compare case-insensitively; these are the spellings wymcp sends.
"""

from __future__ import annotations

from typing import Final

SESSION_HEADER: Final = "Mcp-Session-Id"
"""The 2025 session a request belongs to (set by the `initialize` answer)."""
VERSION_HEADER: Final = "MCP-Protocol-Version"
"""The revision a request speaks."""
METHOD_HEADER: Final = "Mcp-Method"
"""2026-07-28: the JSON-RPC method of the body, mirrored."""
NAME_HEADER: Final = "Mcp-Name"
"""2026-07-28: the tool, prompt or resource the body names, mirrored."""
PARAM_HEADER_PREFIX: Final = "Mcp-Param-"
"""2026-07-28: the prefix of a mirrored, annotated tool argument."""

SESSION_KEY: Final = SESSION_HEADER.lower()
"""`SESSION_HEADER` as a key of a `HeaderIndex` (names folded to lower case)."""
VERSION_KEY: Final = VERSION_HEADER.lower()
"""`VERSION_HEADER` as a `HeaderIndex` key."""
METHOD_KEY: Final = METHOD_HEADER.lower()
"""`METHOD_HEADER` as a `HeaderIndex` key."""
NAME_KEY: Final = NAME_HEADER.lower()
"""`NAME_HEADER` as a `HeaderIndex` key."""
PARAM_KEY_PREFIX: Final = PARAM_HEADER_PREFIX.lower()
"""`PARAM_HEADER_PREFIX` as the start of a `HeaderIndex` key."""
