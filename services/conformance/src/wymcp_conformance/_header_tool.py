"""The tool whose `region` argument a 2026-07-28 client mirrors in `Mcp-Param-Region`.

It must come before any other tool with an annotated top-level string property:
the suite's header scenario picks the first one it finds in `tools/list`.
"""

from typing import Any, ClassVar

from wymcp.core.schema import Tool

REGION_HEADER = "Region"


class XMcpHeader(Tool):
    """Echoes the region it was called with (or says there was none)."""

    name = "test_x_mcp_header"
    description = "Echo the optional region, which clients mirror in Mcp-Param-Region."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "region": {
                "type": "string",
                "description": "Any region name; sent as the Mcp-Param-Region header.",
                "x-mcp-header": REGION_HEADER,
            },
        },
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Echo the region."""
        del ctx
        return f"region: {arguments.get('region', '<none>')}"
