"""The action summaries and the compact `inputSchema` built from a checked map.

Its callers pass an action map registration has accepted; the public readers in
`_input_schema` check a map before handing it here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wymcp.core.schema._field_guide import data_description


def compact_input_schema(actions: Mapping[str, Any]) -> dict[str, Any]:
    """The published input schema of a multi-action tool whose actions are checked."""
    return {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": sorted(actions),
                "description": "\n".join(summaries(actions)),
            },
            "data": {"type": "object", "description": data_description(actions)},
        },
        "required": ["action"],
        "additionalProperties": False,
    }


def summaries(actions: Mapping[str, Any]) -> list[str]:
    """One `name: description` line per action (`ActionSpec` or `Action`)."""
    return [f"{name}: {_description_of(actions[name])}" for name in sorted(actions)]


def _description_of(action: Any) -> str:
    """The description of an `ActionSpec` or an `Action`."""
    declared = getattr(action, "action", action)
    return str(getattr(declared, "description", ""))
