"""`PUBLISH_SCHEMA = "full"` under the official SDK's client, at both revisions:
every tool is still listed (none dropped for its `x-mcp-header`), the
multi-action ones with one `oneOf` branch per action, and a call still runs.
"""

from __future__ import annotations

import pytest
from mcp import Client, StdioServerParameters
from stdio_harness import FIXTURE, WYMCP, child_env

REVISIONS = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]


def server(mode: str) -> StdioServerParameters:
    env = child_env() | {"WYMCP_PUBLISH_SCHEMA": mode}
    return StdioServerParameters(
        command=WYMCP, args=["stdio", "--settings", FIXTURE], env=env
    )


@pytest.mark.parametrize(("mode", "revision"), REVISIONS)
async def test_the_sdk_lists_the_full_form_as_it_lists_the_compact_one(
    mode: str, revision: str
):
    async with Client(server("compact"), mode=mode) as client:
        compact = (await client.list_tools()).tools
    async with Client(server("full"), mode=mode) as client:
        assert client.protocol_version == revision
        full = (await client.list_tools()).tools
        good = await client.call_tool(
            "calc", {"action": "add", "data": {"a": 2, "b": 3}}
        )
        assert good.structured_content == {"result": 5}
    assert [tool.name for tool in full] == [tool.name for tool in compact]
    calc = next(tool for tool in full if tool.name == "calc")
    branches = calc.input_schema["oneOf"]
    names = [branch["properties"]["action"]["const"] for branch in branches]
    assert names == calc.input_schema["properties"]["action"]["enum"]
    assert "oneOf" not in next(t for t in compact if t.name == "calc").input_schema
