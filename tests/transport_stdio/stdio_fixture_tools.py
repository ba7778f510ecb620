"""Tools the stdio tests serve besides the conformance fixture's."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, ClassVar

from wymcp.core.schema import Tool

NAME = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}


class TwoQuestions(Tool):
    """Asks twice in a row under the same key."""

    name = "two_questions"
    description = "Ask a first name, then a last name, and greet."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        first = await ctx.elicit("First name?", NAME)
        last = await ctx.elicit("Last name?", NAME)
        return f"Hello, {first['content']['name']} {last['content']['name']}!"


class SampleThenRoots(Tool):
    """Samples the client's model, then asks for its roots."""

    name = "sample_then_roots"
    description = "Ask the model something, then list the client's roots."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        said = await ctx.sample("Say hi", max_tokens=10)
        roots = await ctx.list_roots()
        uris = [root["uri"] for root in roots["roots"]]
        return f"{said['content']['text']}; roots: {', '.join(uris)}"


class Slow(Tool):
    """Sleeps, so a test can cancel it, time it out, or shut down under it."""

    name = "slow"
    description = "Sleep for the given seconds, then say done."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"seconds": {"type": "number", "minimum": 0}},
        "required": ["seconds"],
    }
    started = 0
    finished = 0

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        type(self).started += 1
        await ctx.report_progress(0.5, 1.0, "sleeping")
        await asyncio.sleep(arguments["seconds"])
        type(self).finished += 1
        return f"done after {arguments['seconds']}"


class Printer(Tool):
    """Writes to stdout and stderr the way careless tool code does."""

    name = "printer"
    description = "Print a line to stdout, then answer."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        print("a stray line from a tool")  # noqa: T201 - the point of the tool
        sys.stdout.flush()
        return "printed"


class Crash(Tool):
    """Raises: the answer is isError, and no traceback reaches stdout."""

    name = "crash"
    description = "Raise an exception."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        raise RuntimeError("boom")
