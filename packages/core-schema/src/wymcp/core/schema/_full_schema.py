"""The `full` published input schema: every action's fields in `tools/list`.

The compact root (`action` enum, `data` object, closed) plus a root `oneOf` with
one branch per action: `action` is that action's `const` and `data` its closed
fields. `x-mcp-header` may only sit on a pure `properties` chain, so an action's
fields never carry one here (headers come from a hand-written `input_schema`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wymcp.core.schema._spec import ToolSpec, fresh_copy

_HEADER = "x-mcp-header"


def full_input_schema(spec: ToolSpec) -> dict[str, Any]:
    """The input schema with each action's full `data` schema under `oneOf`.

    A plain tool, or a tool with a hand-written `input_schema`, publishes the same
    schema as in the compact form.
    """
    compact: dict[str, Any] = fresh_copy(dict(spec.input_schema))
    if spec.plain is not None or not spec.actions or "oneOf" in compact:
        return compact
    if getattr(spec.tool, "input_schema", None) is not None:
        return compact
    compact["oneOf"] = [
        _branch(name, spec.actions[name].published) for name in sorted(spec.actions)
    ]
    return compact


def _branch(name: str, published: Mapping[str, Any]) -> dict[str, Any]:
    """One action's branch: its `action` const and its closed `data` schema."""
    data: dict[str, Any] = {
        "type": "object",
        "properties": {
            key: _without_headers(value)
            for key, value in published.get("properties", {}).items()
        },
        "additionalProperties": False,
    }
    required = list(published.get("required", ()))
    if required:
        data["required"] = required
    groups = published.get("required_one_of", ())
    if groups:
        data["anyOf"] = [{"required": list(group)} for group in groups]
    branch: dict[str, Any] = {
        "properties": {"action": {"const": name}, "data": data},
        "required": ["action", "data"] if required or groups else ["action"],
    }
    return branch


def _without_headers(value: Any) -> Any:
    """A fresh copy of a schema with every `x-mcp-header` key left out."""
    if isinstance(value, Mapping):
        return {k: _without_headers(v) for k, v in value.items() if k != _HEADER}
    if isinstance(value, (list, tuple)):
        return [_without_headers(v) for v in value]
    return value
