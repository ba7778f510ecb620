"""Whose turn a tools/call's large job takes on the engine's off-loop lane.

The lane's client view is made only when a job comes (not per call): the
job must still be queued under the caller's `client_key`.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from wymcp.core.schema import Action, Context, Tool, action
from wymcp.core.server._off_loop import OffLoopLane
from wymcp.core.server._typed_data import ON_LOOP_VALUES


class Totals(Tool):
    name = "totals"
    description = "Sums numbers."
    actions = {  # noqa: RUF012 - the Tool API declares actions as a class attribute
        "sum": Action(
            description="Sum them",
            properties={"values": {"type": "array", "items": {"type": "number"}}},
            required=["values"],
        )
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        del action, ctx
        return sum(data["values"])


@attrs.frozen
class Item:
    s: str


@attrs.frozen
class Batch:
    items: list[Item]


class Bulk(Tool):
    name = "bulk"
    description = "Take many items."

    @action(description="Count the items")
    async def take(self, data: Batch, ctx: Context) -> dict[str, int]:
        del ctx
        return {"count": len(data.items)}


class Alice:
    subject = "alice"


@pytest.fixture
def turns(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The client key each job on any lane was queued under."""
    seen: list[str] = []
    start = OffLoopLane.start

    async def recording(self: OffLoopLane, work: Any) -> Any:
        client = self._client
        seen.append(client if isinstance(client, str) else client())
        return await start(self, work)

    monkeypatch.setattr(OffLoopLane, "start", recording)
    return seen


@pytest.mark.parametrize(
    ("principal", "key"), [(Alice(), "sub:alice"), (None, "anonymous")]
)
async def test_a_large_calls_gate_walk_takes_the_callers_turn(
    make_wire: Any, turns: list[str], principal: object, key: str
) -> None:
    wire = make_wire(Totals)
    values: list[Any] = [1] * (ON_LOOP_VALUES + 10)
    values[-1] = "x"  # refused: the gates walk the data, off the loop
    body, headers = wire.request(
        "tools/call",
        {"name": "totals", "arguments": {"action": "sum", "data": {"values": values}}},
        meta=wire.meta(),
    )
    reply, _ = await wire.post(body, headers, principal=principal)
    assert reply.body["result"]["isError"] is True
    assert turns == [key]


async def test_a_small_call_takes_no_turn(make_wire: Any, turns: list[str]) -> None:
    wire = make_wire(Totals)
    reply, _ = await wire.modern(
        "tools/call",
        {"name": "totals", "arguments": {"action": "sum", "data": {"values": [1, 2]}}},
    )
    assert reply.body["result"]["content"][0]["text"] == "3"
    assert turns == []


async def test_large_typed_data_is_read_in_the_callers_turn(
    make_wire: Any, turns: list[str]
) -> None:
    wire = make_wire(Bulk)
    items = [{"s": "x"}] * ON_LOOP_VALUES  # two values each: read off the loop
    body, headers = wire.request(
        "tools/call",
        {"name": "bulk", "arguments": {"action": "take", "data": {"items": items}}},
        meta=wire.meta(),
    )
    reply, _ = await wire.post(body, headers, principal=Alice())
    assert json.loads(reply.body["result"]["content"][0]["text"]) == {
        "count": ON_LOOP_VALUES
    }
    assert turns
    assert set(turns) == {"sub:alice"}
