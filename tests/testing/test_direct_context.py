"""build_context: the envelope of a direct call, and a context a tool can run with."""

from __future__ import annotations

from wymcp.core.server import ToolContext
from wymcp.testing import DirectContext, build_context


def test_the_defaults_describe_a_stateless_2026_call():
    ctx = build_context()
    assert isinstance(ctx, ToolContext)
    assert isinstance(ctx, DirectContext)
    assert ctx.protocol_version == "2026-07-28"
    assert ctx.request_id == 1
    assert ctx.session_id is None
    assert ctx.meta == {}
    assert ctx.principal is None
    assert ctx.client_capabilities == {}
    assert ctx.log_level is None
    assert ctx.progress_token is None


def test_a_progress_token_goes_into_the_meta():
    ctx = build_context(meta={"trace": "t"}, progress_token="p1")
    assert ctx.meta == {"trace": "t", "progressToken": "p1"}
    assert ctx.progress_token == "p1"


async def test_a_tool_run_directly_with_it_records_what_it_streams(orders_tool):
    ctx = build_context(progress_token=7, log_level="info", principal="bob")
    data = {"customer": "c", "items": [{"sku": "a", "qty": 1}], "rush": True}
    value = await orders_tool().run_action("place", data, ctx)
    assert value["who"] == "bob"
    assert [m["method"] for m in ctx.messages] == [
        "notifications/progress",
        "notifications/message",
    ]


async def test_without_a_level_a_2026_context_sends_no_logs_and_a_2025_one_all():
    quiet = build_context()
    await quiet.log("error", "x")
    assert quiet.messages == []
    session = build_context(protocol_version="2025-11-25", session_id="s")
    await session.log("debug", "y")
    assert session.session_id == "s"
    assert [m["params"]["data"] for m in session.messages] == ["y"]
