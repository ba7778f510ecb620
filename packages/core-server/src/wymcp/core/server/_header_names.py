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
