"""`also` under a hostile client: the rest of a refused call, read off the loop.

A refusal now gates the rest of the call too (the value gate behind a typo, the
data a JSON text holds), so a large refused body costs one more linear walk. It
runs in a worker thread, like the value gate's own walk; the loop watchdog
(autouse here) and a valid client pinging alongside must not notice. Its memory
is bounded by the walk, not by the count of mistakes.
"""

from __future__ import annotations

import json
import tracemalloc
from typing import TYPE_CHECKING, Any

from hardening.test_linearity import assert_linear
from hardening.test_typed_actions import frozen_heap
from wymcp.core.gates import arguments_refusal, check
from wymcp.core.schema import Action, Tool, prepare

if TYPE_CHECKING:
    from conftest import Serve
    from loop_watchdog import LoopWatchdog

__all__ = ["frozen_heap"]

BODY = 4 * 1024 * 1024


class Tags(Tool):
    name = "tags"
    description = "Tag things."
    actions = {  # noqa: RUF012 - the declaration style of a Tool
        "add": Action(
            description="Add tags",
            properties={
                "title": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            required=["title"],
        )
    }

    async def run_action(self, ctx: object, action: str, data: Any) -> Any:
        return {"ok": True}


def _typo_and_bad_tags(n: int) -> dict[str, Any]:
    return {"titel": "x", "tags": [1] * n}


async def test_a_large_json_text_data_is_refused_off_the_loop(
    serve: Serve, loop_watchdog: LoopWatchdog, frozen_heap: None
) -> None:
    wire = await serve(TOOLS=[Tags], BODY_LIMIT=BODY, BODY_MEMORY_BUDGET=4 * BODY)
    count = (BODY - 1000) // 4
    text = json.dumps(_typo_and_bad_tags(count), separators=(",", ":"))
    params = {"name": "tags", "arguments": {"action": "add", "data": text}}
    body = json.dumps(wire.body("tools/call", params)).encode()
    assert len(body) <= BODY
    answer = await wire.alongside(wire.post(body, wire.headers("tools/call", "tags")))
    assert answer.status == 200, answer
    refusal = json.loads(answer.json()["result"]["content"][0]["text"])
    assert refusal["error"] == "invalid_arguments"
    assert refusal["also"]["invalid_values"]["error_count"] == count
    assert len(json.dumps(refusal).encode()) < 4096 + 1024  # + the declared schema
    print(f"{count} bad tags; longest stall: {loop_watchdog.longest * 1000:.0f} ms")  # noqa: T201 - the measured figure


def test_the_rest_of_a_refused_call_is_gated_linearly() -> None:
    spec = prepare(Tags)
    assert_linear(lambda d: check(spec, "add", d), _typo_and_bad_tags, 20_000)


def test_a_json_text_data_is_read_linearly() -> None:
    spec = prepare(Tags)
    assert_linear(
        lambda text: arguments_refusal(spec, {"action": "add", "data": text}),
        lambda n: json.dumps(_typo_and_bad_tags(n)),
        20_000,
    )


def _peak(data: dict[str, Any]) -> int:
    spec = prepare(Tags)
    check(spec, "add", {"titel": "x"})  # warm: compiled, cached
    tracemalloc.start()
    try:
        refusal = check(spec, "add", data).refusal
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert refusal is not None
    assert refusal["also"]["invalid_values"]["error_count"] == len(data["tags"])
    return peak


def test_the_rest_of_a_refused_call_costs_memory_independent_of_its_mistakes() -> None:
    small = _peak(_typo_and_bad_tags(100_000))
    large = _peak(_typo_and_bad_tags(200_000))
    print(f"peak: {small / 1024:.0f} KiB, then {large / 1024:.0f} KiB")  # noqa: T201 - the measured figure
    assert large < 512 * 1024  # the value gate's own walk: about 317 KiB
    assert large < small * 1.1
