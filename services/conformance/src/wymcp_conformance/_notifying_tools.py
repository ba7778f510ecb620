"""Tools that fail on purpose or talk on the call's stream (progress, logs)."""

import asyncio
from typing import Any, ClassVar

from wymcp.core.schema import Tool, ToolError
from wymcp_conformance._content_tools import NO_ARGUMENTS

STEP_SECONDS = 0.05
"""The pause between two notifications, so a client sees them arrive apart."""


class ErrorHandling(Tool):
    """Always answers a tool execution error (`isError: true`)."""

    name = "test_error_handling"
    description = "Always fail with a tool execution error, for testing."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Raise the error the suite expects to read back."""
        del arguments, ctx
        raise ToolError("This tool intentionally returns an error for testing")


class ToolWithProgress(Tool):
    """Reports progress 0, 50 and 100 of 100, then answers."""

    name = "test_tool_with_progress"
    description = "Report three progress steps, then answer."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Send the three progress notifications with a pause between them."""
        del arguments
        for step in (0, 50, 100):
            if step:
                await asyncio.sleep(STEP_SECONDS)
            await ctx.report_progress(step, 100, f"step {step // 50 + 1} of 3")
        return f"Progress completed (token {ctx.progress_token!r})."


class ToolWithLogging(Tool):
    """Logs three info messages on its stream, then answers."""

    name = "test_tool_with_logging"
    description = "Log three info messages, then answer."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Send the three log notifications with a pause between them."""
        del arguments
        for message in (
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ):
            await ctx.log("info", message, logger="wymcp_conformance")
            await asyncio.sleep(STEP_SECONDS)
        return "Logging completed."


class LoggingTool(Tool):
    """Tries to log; the engine must keep quiet unless the request set a level."""

    name = "test_logging_tool"
    description = "Log a message at every level, then answer."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Log at three levels; whether anything is sent is the engine's call."""
        del arguments
        for level in ("debug", "info", "error"):
            await ctx.log(level, f"a {level} message", logger="wymcp_conformance")
        return "Logged what the request's log level allows."


class Reconnection(Tool):
    """Closes its SSE stream mid-call, then answers (SEP-1699 polling).

    The client resumes with a GET carrying `Last-Event-ID` and gets the answer
    there.
    """

    name = "test_reconnection"
    description = "Close the response stream mid-call, then answer on the resumed one."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Close the stream, wait a little, then answer."""
        del arguments
        closed = await ctx.close_stream()
        await asyncio.sleep(STEP_SECONDS * 2)
        return "Reconnection test completed." if closed else "The stream stayed open."
