"""Cursor pagination of the list methods."""

from __future__ import annotations

from typing import Any

import pytest

from wymcp.core.schema import Tool


def make_tool(tool_name: str) -> type[Tool]:
    async def run(self: Tool, arguments: dict[str, Any], ctx: Any) -> object:
        return "ok"

    return type(
        tool_name.title(),
        (Tool,),
        {"name": tool_name, "description": f"Tool {tool_name}.", "run": run},
    )


@pytest.fixture
def wire(make_wire):
    return make_wire(*(make_tool(n) for n in ("a", "b", "c")), page_size=2)


async def test_pages_follow_next_cursor_to_the_end(wire):
    names: list[str] = []
    cursor = None
    for rid in range(1, 5):
        params = {} if cursor is None else {"cursor": cursor}
        reply, _ = await wire.modern("tools/list", params, rid=rid)
        result = reply.body["result"]
        names += [t["name"] for t in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert names == ["a", "b", "c", "help"]


@pytest.mark.parametrize(
    "cursor", ["", "nope", "d3ltY3A6OTk", "d3ltY3A6LTE", 5, "x" * 100, "d3ltY3A6MA"]
)
async def test_a_cursor_never_sent_is_invalid_params(wire, cursor):
    reply, _ = await wire.modern("tools/list", {"cursor": cursor})
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32602
    assert "cursor" in reply.body["error"]["data"]["reason"]


async def test_an_invalid_cursor_in_a_session_is_invalid_params(wire):
    sid = await wire.initialize()
    reply, _ = await wire.session(sid, "tools/list", {"cursor": "nope"})
    assert reply.status == 200
    assert reply.body["error"]["code"] == -32602
