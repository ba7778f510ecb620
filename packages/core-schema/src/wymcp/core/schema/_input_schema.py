"""The `inputSchema` a multi-action tool publishes, and its action summaries.

One shape: an `action` enum of the sorted action names whose description holds one
`name: description` summary per line, and a bare `data` object; the root is closed.
Both readers refuse an action map registration would refuse, so a line never splits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wymcp.core.schema._bindings import marks_actions
from wymcp.core.schema._errors import ConfigurationError
from wymcp.core.schema._registration import action_map_problems, prepare
from wymcp.core.schema._spec import ToolSpec
from wymcp.core.schema._summaries import compact_input_schema, summaries


def action_summaries(spec: Any) -> list[str]:
    """Return `"name: description"` for every action, sorted by name.

    Accepts a `ToolSpec` (whose actions registration built), a `Tool` class or
    instance, or anything with an `actions` mapping; an unprepared map is checked as
    registration checks it (`ConfigurationError`). A tool with `@action` methods
    is prepared, so the actions they declare are listed too. The help index and the
    enum description both come from one function, so they cannot drift.
    """
    if not isinstance(spec, ToolSpec) and marks_actions(spec):
        spec = prepare(spec)
    actions = getattr(spec, "actions", None)
    if not isinstance(actions, Mapping):
        return []
    if not isinstance(spec, ToolSpec):
        _refuse_unsound(actions)
    return summaries(actions)


def build_input_schema(actions: Mapping[str, Any]) -> dict[str, Any]:
    """Build the published input schema of a multi-action tool from its actions.

    Raises `ConfigurationError` for a map registration would refuse.
    """
    _refuse_unsound(actions)
    return compact_input_schema(actions)


def _refuse_unsound(actions: Mapping[Any, Any]) -> None:
    """Raise `ConfigurationError` naming what registration would refuse in a map."""
    problems = action_map_problems(actions)
    if problems:
        raise ConfigurationError(None, problems)
