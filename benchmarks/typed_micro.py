"""In-process micro-benchmark: the typed ``add`` path against the dict ``add`` path.

Run: ``.venv/bin/python benchmarks/typed_micro.py``. Both tools publish the same
input and output schemas; one call runs the gates, the tool and the shaping of
its answer (``call_tool``). Prints best-of-N microseconds of process CPU time per
call for each path (CPU time: a busy neighbour does not count) and the
difference, the typed path's cost (structure + unstructure with cattrs).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import attrs

from wymcp.core.schema import Action, Context, Tool, action, prepare
from wymcp.core.server import ToolContext
from wymcp.core.server._call_deadlines import Deadlines
from wymcp.core.server._call_tool import call_tool
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._revision import STATELESS

MODERN = "2026-07-28"


@attrs.frozen
class AddIn:
    """Two numbers."""

    a: float
    b: float


@attrs.frozen
class Sum:
    """Their sum."""

    sum: float


class TypedCalc(Tool):
    """`add` declared by its types."""

    name = "calc"
    description = "Arithmetic on numbers."

    @action(description="Add two numbers")
    async def add(self, data: AddIn, ctx: Context) -> Sum:
        """Add."""
        del ctx
        return Sum(sum=data.a + data.b)


class DictCalc(Tool):
    """`add` declared by hand, with the same schemas."""

    name = "calc"
    description = "Arithmetic on numbers."
    actions = {  # noqa: RUF012 - a declaration
        "add": Action(
            description="Add two numbers",
            properties={"a": {"type": "number"}, "b": {"type": "number"}},
            required=["a", "b"],
        )
    }
    output_schema = {  # noqa: RUF012 - a declaration
        "type": "object",
        "properties": {"sum": {"type": "number"}},
        "required": ["sum"],
        "additionalProperties": False,
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        """Add."""
        del action, ctx
        return {"sum": data["a"] + data["b"]}


async def per_call_us(tool: type[Tool], loops: int, rounds: int) -> float:
    """The best of ``rounds`` rounds of ``loops`` calls, in microseconds per call."""
    spec = prepare(tool)
    deadlines = Deadlines()
    options = EngineOptions(result_limit=None)  # as before: no RESULT_LIMIT counted
    arguments = {"action": "add", "data": {"a": 1.5, "b": 2}}
    first = await call_tool(
        spec,
        arguments,
        ToolContext(protocol_version=MODERN),
        revision=STATELESS,
        options=options,
        deadlines=deadlines,
        call_timeout=None,
    )
    assert first["structuredContent"] == {"sum": 3.5}, first  # noqa: S101 - a sanity check
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for _ in range(loops):
            await call_tool(
                spec,
                arguments,
                ToolContext(protocol_version=MODERN),
                revision=STATELESS,
                options=options,
                deadlines=deadlines,
                call_timeout=None,
            )
        best = min(best, (time.process_time() - started) / loops)
    return best * 1e6


async def measure(loops: int = 2_000, alternations: int = 40) -> dict[str, float]:
    """Both paths in short alternating rounds; the best round of each.

    Short rounds, alternated, give a noisy neighbour the same chance to slow
    either path; the best round is the path's cost without the neighbour.
    """
    dict_us = float("inf")
    typed_us = float("inf")
    for _ in range(alternations):
        dict_us = min(dict_us, await per_call_us(DictCalc, loops, 1))
        typed_us = min(typed_us, await per_call_us(TypedCalc, loops, 1))
    return {
        "dict_us": round(dict_us, 2),
        "typed_us": round(typed_us, 2),
        "typed_extra_us": round(typed_us - dict_us, 2),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(measure())))
