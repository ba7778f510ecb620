"""The ``inputSchema`` a multi-action tool publishes, and its action summaries.

One shape: an ``action`` enum of the sorted action names whose description holds one
``name: description`` summary per line, and a bare ``data`` object; the root is closed.
Per-action constraints are not encoded here: the gates enforce them and help shows them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def action_summaries(spec: Any) -> list[str]:
    """Return ``"name: description"`` for every action, sorted by name.

    Accepts a ``ToolSpec`` (anything with an ``actions`` mapping of specs or of
    ``Action`` declarations), a ``Tool`` class or a ``Tool`` instance. The help index
    and the enum description both use this function, so they cannot drift.
    """
    actions = _actions_of(spec)
    return [f"{name}: {_description_of(actions[name])}" for name in sorted(actions)]


def build_input_schema(actions: Mapping[str, Any]) -> dict[str, Any]:
    """Build the published input schema of a multi-action tool from its actions."""
    return {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": sorted(actions),
                "description": "\n".join(
                    f"{name}: {_description_of(actions[name])}"
                    for name in sorted(actions)
                ),
            },
            "data": {"type": "object"},
        },
        "required": ["action"],
        "additionalProperties": False,
    }


def _actions_of(spec: Any) -> Mapping[str, Any]:
    """The actions mapping of a spec, a tool class or a tool instance."""
    actions = getattr(spec, "actions", None)
    return actions if isinstance(actions, Mapping) else {}


def _description_of(action: Any) -> str:
    """The description of an ``ActionSpec`` or an ``Action``."""
    declared = getattr(action, "action", action)
    return str(getattr(declared, "description", ""))
