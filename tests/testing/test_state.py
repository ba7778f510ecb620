"""`build_context(state=...)`: a direct call's `ctx.state`, standing for LIFESPAN's."""

from __future__ import annotations

from typing import Any

from wymcp.core.schema import Context, Tool, action
from wymcp.testing import assert_succeeded, build_context, call


class Counter(Tool):
    name = "counter"
    description = "Count in the shared state."

    @action(description="Count one", properties={})
    async def bump(self, data: dict[str, Any], ctx: Context) -> object:
        del data
        ctx.state["calls"] += 1
        return {"calls": ctx.state["calls"]}


async def test_the_state_given_is_every_call_s_ctx_state() -> None:
    shared = {"calls": 0}
    for expected in (1, 2):
        answer = await call(Counter, "bump", {}, ctx=build_context(state=shared))
        assert assert_succeeded(answer) == {"calls": expected}
    assert shared == {"calls": 2}
