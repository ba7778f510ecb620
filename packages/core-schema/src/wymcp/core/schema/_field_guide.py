"""What a compact multi-action tool says about where its fields are.

The generated `data` description (each action's required fields, bounded) and the
pointer to `help` a tool's published description ends with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

DATA_DESCRIPTION_LIMIT: Final = 1024
"""The most characters the generated `data` description takes, cut note included."""

_HEAD: Final = "The action's fields. Required, by action: "
_CUT: Final = "; and {count} more actions (see help)."


def data_description(actions: Mapping[str, Any]) -> str:
    """Each action's required fields, `name: a, b`, sorted, at most the limit.

    A group of `required_one_of` reads `a+b or c`; an action with none says
    `none`. Entries that would pass `DATA_DESCRIPTION_LIMIT` are left out and
    counted at the end, so the text never passes it whatever the names are.
    """
    entries = [f"{name}: {_required_of(actions[name])}" for name in sorted(actions)]
    text = _HEAD
    for index, entry in enumerate(entries):
        separator = "" if index == 0 else "; "
        rest = len(entries) - index - 1
        room = DATA_DESCRIPTION_LIMIT - (len(_CUT.format(count=rest)) if rest else 1)
        if len(text) + len(separator) + len(entry) > room:
            return text.rstrip() + _CUT.format(count=len(entries) - index)
        text += separator + entry
    return text + "."


def _required_of(action: Any) -> str:
    """The required names of an `Action` or `ActionSpec`, and its one-of groups."""
    required = ", ".join(getattr(action, "required", ()))
    groups = getattr(action, "required_one_of", ())
    either = " or ".join("+".join(group) for group in groups)
    if required and either:
        return f"{required}, and {either}"
    return required or either or "none"


def help_pointer(tool_name: str) -> str:
    """The sentence a multi-action tool's published description ends with."""
    return (
        f' For an action\'s fields, call help with {{"tool": "{tool_name}",'
        ' "action": "<action>"}.'
    )


def published_description(spec: Any) -> str:
    """A prepared tool's description as `tools/list` publishes it.

    A multi-action tool's ends with `help_pointer` unless the tool sets
    `help_pointer = False`; a plain tool's is its own.
    """
    tool = spec.tool
    description = str(tool.description)
    if spec.plain is not None or not spec.actions:
        return description
    if not getattr(tool, "help_pointer", True):
        return description
    return description.rstrip() + help_pointer(spec.name)
