"""What the operations tests serve: a tool per outcome, and two user middleware."""

from __future__ import annotations

import asyncio
from typing import Any

from wymcp.core.schema import Action, Tool, ToolError
from wymcp.core.server import CallRecord, CallRefused, Next

SLEEPING = asyncio.Event()
"""Set when a `sleep` call has started (a test then cancels it)."""


class Jobs(Tool):
    """A tool with an action per outcome the metrics count."""

    name = "jobs"
    description = "Run jobs."
    actions = {  # noqa: RUF012 - the declaration
        "run": Action(
            description="Run a job",
            properties={
                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                "label": {"type": "string"},
            },
            required=["size"],
        ),
        "pick": Action(
            description="Pick by id or by name",
            properties={"id": {"type": "integer"}, "name": {"type": "string"}},
            required_one_of=[["id"], ["name"]],
        ),
        "fail": Action(description="Fail on purpose", properties={}),
        "crash": Action(description="Raise on purpose", properties={}),
        "sleep": Action(description="Sleep too long", properties={}),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> Any:
        if action == "fail":
            raise ToolError("the job failed")
        if action == "crash":
            raise RuntimeError("boom")
        if action == "sleep":
            SLEEPING.set()
            await asyncio.sleep(30)
        return {"size": data.get("size")}


SEEN: list[CallRecord] = []


class Tagger:
    """Tags every call with its tool and action, and keeps the records it saw."""

    async def __call__(self, call: CallRecord, call_next: Next) -> dict[str, Any]:
        call.tags["tagged"] = f"{call.tool}.{call.action}"
        result = await call_next()
        SEEN.append(call)
        return result


class NoCrash:
    """Refuses `jobs crash` before the tool runs, and any `tools/list`."""

    async def __call__(self, call: CallRecord, call_next: Next) -> dict[str, Any]:
        if call.method == "tools/list":
            raise CallRefused("listing_closed", "Listing is closed today.")
        if call.tool == "jobs" and call.action == "crash":
            raise CallRefused("crash_forbidden", "Crashing jobs is not allowed here.")
        return await call_next()


class Raiser(Tool):
    """A tool that raises with the value it was sent, as careless tools do."""

    name = "raiser"
    description = "Raise with the text sent."
    actions = {  # noqa: RUF012 - the declaration
        "say": Action(
            description="Raise ValueError naming the text",
            properties={"text": {"type": "string"}},
            required=["text"],
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> Any:
        text = data["text"]
        raise ValueError(f"bad value {text}")
