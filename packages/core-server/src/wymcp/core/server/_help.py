"""The built-in `help` tool.

Three levels (an index, one tool in full, one action in full) and errors
that name the valid targets.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from wymcp.core.gates import check
from wymcp.core.schema import (
    RESERVED_NAME,
    ActionSpec,
    Tool,
    ToolSpec,
    action_output_schema,
    action_summaries,
)
from wymcp.core.server._help_defs import hoist_shared
from wymcp.core.server._jsonrpc import echo

HELP_DESCRIPTION: Final = (
    "Get details about this server's tools. No arguments: an index of every "
    "tool and its actions. {tool}: that tool's actions in full (schemas, notes, "
    "examples). {tool, action}: one action in full."
)
HELP_INPUT_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "tool": {"type": "string", "description": "Tool name to get details about"},
        "action": {
            "type": "string",
            "description": "Action name within that tool (requires tool)",
        },
    },
    "additionalProperties": False,
}


def help_definition() -> dict[str, Any]:
    """The help tool as `tools/list` publishes it."""
    return {
        "name": RESERVED_NAME,
        "description": HELP_DESCRIPTION,
        "inputSchema": dict(HELP_INPUT_SCHEMA),
    }


class _HelpArguments(Tool):
    """The help tool's own arguments, declared so the gates check them."""

    name = RESERVED_NAME
    description = HELP_DESCRIPTION
    input_schema = HELP_INPUT_SCHEMA

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Never run: only its arguments are gated."""
        del ctx
        return arguments


def help_arguments(
    arguments: Mapping[str, Any],
) -> tuple[str | None, str | None] | dict[str, Any]:
    """The (tool, action) a help call asks for, or the refusal of its arguments.

    help is gated like a tool without actions: an unknown argument answers
    `unknown_params` (with `did_you_mean`), a non-string one `invalid_values`,
    both as a tool result with `isError`, paths from `arguments`.
    """
    verdict = check(_HelpArguments, None, dict(arguments))
    if verdict.refusal is not None:
        return verdict.refusal
    data = verdict.data or {}
    return data.get("tool"), data.get("action")


def render_action(spec: ActionSpec) -> dict[str, Any]:
    """One action in full: description, published schema, notes, related, examples.

    The last three appear only when declared.
    """
    action = spec.action
    if action is None:
        return spec.published_copy()
    rendered: dict[str, Any] = {"description": action.description}
    rendered.update(spec.published_copy())
    rendered.setdefault("required", [])
    if action.notes:
        rendered["notes"] = action.notes
    if action.related:
        rendered["related"] = list(action.related)
    if action.examples:
        rendered["examples"] = copy.deepcopy([dict(e) for e in action.examples])
    return rendered


class HelpAnswer:
    """A help answer: the JSON payload and whether it is an error."""

    def __init__(self, payload: dict[str, Any], *, is_error: bool = False) -> None:
        self.payload = payload
        self.is_error = is_error


def _valid_tools(specs: Sequence[ToolSpec]) -> list[str]:
    return sorted([*(s.name for s in specs), RESERVED_NAME])


def _unknown_tool(specs: Sequence[ToolSpec], message: str, code: str) -> HelpAnswer:
    valid = _valid_tools(specs)
    return HelpAnswer(
        {
            "error": code,
            "message": f"{message} Valid tools: {', '.join(valid)}.",
            "valid_tools": valid,
            "help": f"{RESERVED_NAME} {{}}",
        },
        is_error=True,
    )


def _index(specs: Sequence[ToolSpec]) -> HelpAnswer:
    tools = [
        {
            "tool": s.name,
            "description": s.tool.description,
            "actions": action_summaries(s),
        }
        for s in specs
    ]
    tools.append(
        {"tool": RESERVED_NAME, "description": HELP_DESCRIPTION, "actions": []}
    )
    return HelpAnswer({"tools": tools})


def _tool_level(spec: ToolSpec) -> HelpAnswer:
    payload: dict[str, Any] = {
        "tool": spec.name,
        "description": spec.tool.description,
        "actions": {name: render_action(a) for name, a in sorted(spec.actions.items())},
    }
    if spec.plain is not None:
        payload["input_schema"] = copy.deepcopy(dict(spec.input_schema))
    return HelpAnswer(hoist_shared(payload))


def _without_tool(specs: Sequence[ToolSpec], action: str | None) -> HelpAnswer:
    if action is None:
        return _index(specs)
    return _unknown_tool(
        specs, f"help with action '{echo(action)}' requires a tool.", "missing_tool"
    )


def answer_help(
    specs: Sequence[ToolSpec],
    tool: str | None,
    action: str | None,
    context_of: Any,
) -> HelpAnswer:
    """Resolve a help call: tool first, then action, never a silent fallback.

    `context_of(spec, action)` returns the action context or None.
    """
    if tool is None:
        return _without_tool(specs, action)
    if tool == RESERVED_NAME:
        return HelpAnswer(
            {"tool": RESERVED_NAME, "description": HELP_DESCRIPTION, "actions": {}}
        )
    spec = next((s for s in specs if s.name == tool), None)
    if spec is None:
        return _unknown_tool(specs, f"Unknown tool '{echo(tool)}'.", "unknown_tool")
    if action is None:
        return _tool_level(spec)
    action_spec = spec.actions.get(action)
    if action_spec is None:
        verdict = check(spec.tool, action, None)
        refusal = dict(verdict.refusal or {})
        refusal.pop("also", None)  # help sends no data: nothing to gate beyond
        return HelpAnswer(refusal, is_error=True)
    payload = {"tool": spec.name, "action": action, **render_action(action_spec)}
    output = action_output_schema(spec.tool, action)
    if output is not None:
        payload["output_schema"] = output
    payload = hoist_shared(payload)
    context = context_of(spec, action)
    if context is not None:
        payload["context"] = context
    return HelpAnswer(payload)
