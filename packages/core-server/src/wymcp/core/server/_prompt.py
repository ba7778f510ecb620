"""Prompts declared as classes, their arguments checked by the gates.

`prepare_prompt` checks a declaration once and builds a plain tool whose
input schema is the prompt's arguments, so `prompts/get` meets the same
gates as `tools/call`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from wymcp.core.schema import (
    ConfigurationError,
    Prompt,
    PromptArgument,
    Tool,
    ToolSpec,
    prepare,
)
from wymcp.core.server._content import Content
from wymcp.core.server._revision import Revision


@attrs.frozen(eq=False)
class PromptSpec:
    """A checked prompt and the tool its arguments are gated as."""

    name: str
    prompt: Prompt
    gate: ToolSpec

    def definition(self, revision: Revision) -> dict[str, Any]:
        """The Prompt object of `prompts/list`."""
        prompt = self.prompt
        shape: dict[str, Any] = {"name": self.name}
        if prompt.title and revision.titles:
            shape["title"] = prompt.title
        if prompt.description:
            shape["description"] = prompt.description
        if prompt.arguments:
            shape["arguments"] = [_argument(a, revision) for a in prompt.arguments]
        return shape


def _argument(argument: PromptArgument, revision: Revision) -> dict[str, Any]:
    shape: dict[str, Any] = {"name": argument.name}
    if argument.title and revision.titles:
        shape["title"] = argument.title
    if argument.description:
        shape["description"] = argument.description
    shape["required"] = argument.required
    return shape


def _gate_tool(name: str, arguments: Sequence[PromptArgument]) -> type[Tool]:
    properties: dict[str, Any] = {}
    for argument in arguments:
        schema: dict[str, Any] = {"type": "string", **(argument.schema or {})}
        if argument.description:
            schema["description"] = argument.description
        properties[argument.name] = schema
    input_schema = {
        "type": "object",
        "properties": properties,
        "required": [a.name for a in arguments if a.required],
        "additionalProperties": False,
    }

    async def run(self: Tool, arguments: dict[str, Any], ctx: Any) -> object:
        del self, ctx
        return arguments

    return type(
        "PromptArguments",
        (Tool,),
        {
            "name": name,
            "description": f"The arguments of prompt {name}.",
            "input_schema": input_schema,
            "run": run,
        },
    )


def prepare_prompt(prompt: object) -> PromptSpec:
    """Check a Prompt class or instance once."""
    instance = prompt() if isinstance(prompt, type) else prompt
    label = str(getattr(instance, "name", None) or type(instance).__name__)
    if not isinstance(instance, Prompt):
        raise ConfigurationError(label, ["is not a wymcp Prompt"])
    name = getattr(instance, "name", None)
    problems: list[str] = []
    if not isinstance(name, str) or not name:
        problems.append("name must be a non-empty string")
    names = [getattr(a, "name", None) for a in instance.arguments]
    if any(not isinstance(a, PromptArgument) for a in instance.arguments):
        problems.append("arguments must be PromptArgument values")
    elif len(set(names)) != len(names):
        problems.append("argument names must be unique")
    if problems:
        raise ConfigurationError(label, problems)
    gate = prepare(_gate_tool(str(name), instance.arguments))
    return PromptSpec(name=str(name), prompt=instance, gate=gate)


def prompt_refusal(spec: PromptSpec, refusal: Mapping[str, Any]) -> dict[str, Any]:
    """A gate refusal of a prompt's arguments, worded for the prompt.

    The tool fields (`tool`, `action`, `help`) give way to `prompt`, and the
    message names the prompt where the gates named their tool.
    """
    answer = {k: v for k, v in refusal.items() if k not in ("help", "tool", "action")}
    message = str(answer.get("message") or "Invalid prompt arguments.")
    gate = f"tool '{refusal.get('tool', spec.name)}'"
    answer["message"] = message.replace(gate, f"prompt '{spec.name}'", 1)
    answer["prompt"] = spec.name
    return answer


def _message(item: object) -> dict[str, Any]:
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    if isinstance(item, Content):
        return {"role": "user", "content": item.to_json()}
    if isinstance(item, tuple) and len(item) == 2:  # noqa: PLR2004 - (role, content)
        role, content = item
        return _message({"role": role, "content": content})
    if isinstance(item, Mapping) and "role" in item and "content" in item:
        content = item["content"]
        if isinstance(content, Content):
            content = content.to_json()
        elif isinstance(content, str):
            content = {"type": "text", "text": content}
        return {"role": item["role"], "content": content}
    raise TypeError("render() must return text, Content or messages")


def prompt_result(spec: PromptSpec, value: object) -> dict[str, Any]:
    """Shape what `render` returned into a GetPromptResult."""
    if isinstance(value, Mapping) and "messages" in value:
        result = dict(value)
        result["messages"] = [_message(m) for m in value["messages"]]
    else:
        items = value if isinstance(value, list) else [value]
        result = {"messages": [_message(m) for m in items]}
    if spec.prompt.description and "description" not in result:
        result["description"] = spec.prompt.description
    return result
