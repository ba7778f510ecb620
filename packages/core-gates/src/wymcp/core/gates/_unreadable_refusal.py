"""The refusal of data the schema admitted but the action's class cannot hold.

An `invalid_values` refusal like the value gate's: each offending path with what
its value cannot be (`UnreadableDataError` names them, never the values).
"""

from __future__ import annotations

from typing import Any

from wymcp.core.gates._bound import path_key
from wymcp.core.gates._refusal import invalid_values
from wymcp.core.gates._value_gate import ValueReport
from wymcp.core.schema import ToolSpec, UnreadableDataError


def unreadable_refusal(
    spec: ToolSpec, action: str, error: UnreadableDataError
) -> dict[str, Any]:
    """The `invalid_values` refusal of the values `error` names (action known)."""
    entries = sorted(error.found.entries, key=lambda entry: path_key(entry[0]))
    report = ValueReport(
        count=error.found.count,
        entries=[(path, [problem]) for path, problem in entries],
    )
    return invalid_values(spec, spec.actions[action], report)
