"""The tools the `tasks-*` scenarios (SEP-2663) call.

`greet` never runs as a task; the others may (`failing_job` and
`test_tool_with_task` must) when the request declares the tasks extension.
"""

import asyncio
from typing import Any, ClassVar

from wymcp.core.schema import Tool, ToolError
from wymcp.core.server import InputRequest, TaskFailedError
from wymcp_conformance._content_tools import NO_ARGUMENTS

_INTERNAL_ERROR = -32603

_CONFIRM: dict[str, Any] = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}
_NAME: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


def _accepted(answer: dict[str, Any]) -> dict[str, Any]:
    content = answer.get("content")
    if answer.get("action") != "accept" or not isinstance(content, dict):
        raise ToolError("The user declined.")
    return content


class Greet(Tool):
    """Greets by name, at once (never a task)."""

    name = "greet"
    description = "Greet someone by name."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 200}},
        "required": ["name"],
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Hello, {name}!."""
        del ctx
        return f"Hello, {arguments['name']}!"


class SlowCompute(Tool):
    """Sleeps `seconds`, then answers: a task when the client can take one."""

    name = "slow_compute"
    description = "Sleep for `seconds` (0 to 600), then report the label."
    task_support = "optional"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "seconds": {"type": "number", "minimum": 0, "maximum": 600},
            "label": {"type": "string", "maxLength": 200},
        },
        "required": ["seconds"],
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Sleep, then say what was computed."""
        del ctx
        await asyncio.sleep(float(arguments["seconds"]))
        label = arguments.get("label", "")
        return f"Computed {label} after {arguments['seconds']} seconds."


class FailingJob(Tool):
    """Fails as a tool (isError) after about a second; always a task."""

    name = "failing_job"
    description = "Fail with a tool execution error after about a second."
    task_support = "required"
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Wait, then fail."""
        del arguments, ctx
        await asyncio.sleep(1)
        raise ToolError("The job failed, as it always does.")


class ProtocolErrorJob(Tool):
    """Ends with a JSON-RPC error: a task that ends `failed`."""

    name = "protocol_error_job"
    description = "End with a protocol (JSON-RPC) error."
    task_support = "optional"
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Fail with an internal error."""
        del arguments, ctx
        await asyncio.sleep(0.1)
        raise TaskFailedError(_INTERNAL_ERROR, "The job hit an internal error.")


class ConfirmDelete(Tool):
    """Asks the user to confirm, then reports the (pretend) deletion."""

    name = "confirm_delete"
    description = "Ask the user to confirm deleting `filename`, then delete it."
    task_support = "optional"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"filename": {"type": "string", "maxLength": 200}},
        "required": ["filename"],
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Elicit a confirmation."""
        filename = arguments["filename"]
        answer = await ctx.elicit(f"Delete {filename}?", _CONFIRM, key="confirm")
        if _accepted(answer).get("confirm") is not True:
            return f"Kept {filename}."
        return f"Deleted {filename}."


class MultiInput(Tool):
    """Asks two things at once: two open questions on the task."""

    name = "multi_input"
    description = "Ask for a name and a confirmation at once, then report both."
    task_support = "optional"
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Ask both, answer with what was given."""
        del arguments
        answers = await ctx.ask(
            {
                "name": InputRequest.elicitation("Your name?", _NAME),
                "confirm": InputRequest.elicitation("Go ahead?", _CONFIRM),
            }
        )
        name = _accepted(answers["name"]).get("name")
        confirm = _accepted(answers["confirm"]).get("confirm")
        return f"Name {name}, confirmed {confirm}."


class ToolWithTask(Tool):
    """Asks the user's name in the request (MRTR), then goes on as a task."""

    name = "test_tool_with_task"
    description = "Ask the user's name (key user_name), then greet them as a task."
    task_support = "required"
    task_prelude = True
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Elicit, start the task, greet."""
        del arguments
        answer = await ctx.elicit("What is your name?", _NAME, key="user_name")
        name = _accepted(answer).get("name")
        await ctx.start_task()
        await asyncio.sleep(0.2)
        return f"Hello, {name}!"
