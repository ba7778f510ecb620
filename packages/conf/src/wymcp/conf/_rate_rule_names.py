"""W018: a `RATE_LIMITS` rule naming a tool or an action the catalogue lacks.

Such a rule never applies (a typo leaves the tool unlimited); a warning, not
an error, since a tool may be added while the server runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from wymcp.conf._problems import WARNING, CheckMessage, echo_limit

if TYPE_CHECKING:
    from wymcp.core.server import Engine

RATE_RULE_NAMES_UNKNOWN: Final = "wymcp.W018"


def rate_rule_name_warnings(
    rules: Iterable[object], engine: Engine
) -> list[CheckMessage]:
    """W018 per rule whose `tool` (or `action`) the engine does not serve."""
    actions = {spec.name: spec.actions for spec in engine.tool_specs}
    found: list[CheckMessage] = []
    for rule in rules:
        tool = getattr(rule, "tool", None)
        action = getattr(rule, "action", None)
        if tool is None:
            continue
        if tool not in actions:
            what = f"tool {tool[: echo_limit()]!r}, which is not served"
        elif action is not None and action not in actions[tool]:
            what = (
                f"action {action[: echo_limit()]!r} of tool {tool[: echo_limit()]!r}, "
                "which that tool lacks"
            )
        else:
            continue
        found.append(
            CheckMessage(
                WARNING,
                RATE_RULE_NAMES_UNKNOWN,
                f"A RATE_LIMITS rule names the {what}: it limits nothing.",
                "Spell the tool and action as tools/list does (`wymcp tools`).",
            )
        )
    return found
