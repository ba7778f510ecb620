"""Tools that change what the server lists, so listeners hear `list_changed`.

Each call toggles one extra tool (or prompt): added when absent, removed when
present, through the engine the call runs on (`ctx.server`).
"""

from typing import Any, ClassVar

from wymcp.core.schema import Tool
from wymcp.core.server import Prompt
from wymcp_conformance._content_tools import NO_ARGUMENTS


class DynamicTool(Tool):
    """The tool `test_trigger_tool_change` adds and removes."""

    name = "test_dynamic_tool"
    description = "A tool that comes and goes, for list-change tests."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Say it is here."""
        del arguments, ctx
        return "The dynamic tool is here."


class DynamicPrompt(Prompt):
    """The prompt `test_trigger_prompt_change` adds and removes."""

    name = "test_dynamic_prompt"
    description = "A prompt that comes and goes, for list-change tests."

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        """Say it is here."""
        del arguments, ctx
        return "The dynamic prompt is here."


class TriggerToolChange(Tool):
    """Adds or removes `test_dynamic_tool`."""

    name = "test_trigger_tool_change"
    description = "Change the tool list (toggle test_dynamic_tool)."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Toggle the dynamic tool."""
        del arguments
        if ctx.server.remove_tool(DynamicTool.name):
            return "Removed test_dynamic_tool."
        ctx.server.add_tool(DynamicTool)
        return "Added test_dynamic_tool."


class TriggerPromptChange(Tool):
    """Adds or removes `test_dynamic_prompt`."""

    name = "test_trigger_prompt_change"
    description = "Change the prompt list (toggle test_dynamic_prompt)."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Toggle the dynamic prompt."""
        del arguments
        if ctx.server.remove_prompt(DynamicPrompt.name):
            return "Removed test_dynamic_prompt."
        ctx.server.add_prompt(DynamicPrompt)
        return "Added test_dynamic_prompt."
