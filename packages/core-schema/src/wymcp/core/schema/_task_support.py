"""Task support a tool or action declares: `forbidden`, `optional`, `required`.

Checked once at registration; the engine reads the resolved value per action.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

TASK_SUPPORT: Final = ("forbidden", "optional", "required")
"""The values a `task_support` declaration may take."""

PLAIN: Final = ""
"""The key of a plain tool's (action-less) task support."""


def _checked(where: str, value: object, problems: list[str]) -> str | None:
    if value is None or value in TASK_SUPPORT:
        return value if isinstance(value, str) else None
    shown = repr(value[:40]) if isinstance(value, str) else type(value).__name__
    problems.append(
        f"{where}: task_support must be one of {', '.join(TASK_SUPPORT)}, not {shown}"
    )
    return None


def declared_task_support(
    tool_value: object, actions: Mapping[str, object] | None, problems: list[str]
) -> Mapping[str, str]:
    """The task support of each action ("" for a plain tool), checked.

    An action's own `task_support` wins over the tool's; neither means
    `forbidden`. Each problem is appended to `problems`.
    """
    default = _checked("task_support", tool_value, problems) or "forbidden"
    if actions is None:
        return MappingProxyType({PLAIN: default})
    table: dict[str, str] = {}
    for name, action in actions.items():
        own = _checked(
            f"action {name!r}", getattr(action, "task_support", None), problems
        )
        table[name] = own or default
    return MappingProxyType(table)


def published_task_support(table: Mapping[str, str]) -> str:
    """What tools/list shows for the whole tool.

    `required` when every action requires a task, `optional` when any may
    run as one, else `forbidden`.
    """
    values = set(table.values())
    if values == {"required"}:
        return "required"
    if values - {"forbidden"}:
        return "optional"
    return "forbidden"
