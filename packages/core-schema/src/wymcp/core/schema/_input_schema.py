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
    and the enum description both come from ``_summaries``, so they cannot drift.
    """
    actions = getattr(spec, "actions", None)
    return _summaries(actions if isinstance(actions, Mapping) else {})


def build_input_schema(actions: Mapping[str, Any]) -> dict[str, Any]:
    """Build the published input schema of a multi-action tool from its actions."""
    return {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": sorted(actions),
                "description": "\n".join(_summaries(actions)),
            },
            "data": {"type": "object"},
        },
        "required": ["action"],
        "additionalProperties": False,
    }


def _summaries(actions: Mapping[str, Any]) -> list[str]:
    """One ``name: description`` line per action (``ActionSpec`` or ``Action``)."""
    return [f"{name}: {_description_of(actions[name])}" for name in sorted(actions)]


def _description_of(action: Any) -> str:
    """The description of an ``ActionSpec`` or an ``Action``."""
    declared = getattr(action, "action", action)
    return str(getattr(declared, "description", ""))
