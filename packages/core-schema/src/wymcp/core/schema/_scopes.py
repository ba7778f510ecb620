"""The OAuth scopes a tool declares for its calls (`Tool.scopes`), checked once.

`scopes` is None (no scope needed), a list of scopes every call needs, or a
mapping from `"*"` (every action) or an action name to a list of scopes.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from types import MappingProxyType

EVERY_ACTION = "*"
"""The key of a `scopes` declaration that applies to every action of the tool."""

SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
"""One scope as RFC 6749 §3.3 spells it: visible ASCII but the quote and backslash."""

_SHOWN = 60


def _shown(value: object) -> str:
    return repr(value[:_SHOWN]) if isinstance(value, str) else type(value).__name__


def _scope_list(where: str, value: object, problems: list[str]) -> frozenset[str]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        problems.append(
            f"{where}: scopes must be a list of strings, not {type(value).__name__} "
            f'(write ["scope"]).'
        )
        return frozenset()
    found: set[str] = set()
    for item in value:
        if not isinstance(item, str) or not SCOPE_TOKEN.fullmatch(item):
            problems.append(
                f"{where}: {_shown(item)} is not a scope (visible ASCII, no spaces, "
                'no " or \\).'
            )
        else:
            found.add(item)
    return frozenset(found)


def declared_scopes(
    declared: object, action_names: Collection[str], problems: list[str]
) -> Mapping[str, frozenset[str]]:
    """Check a `scopes` declaration; return it as key -> scopes (empty ones dropped).

    Each problem is appended to `problems`, naming the key and the fix.
    """
    if declared is None:
        return MappingProxyType({})
    table: dict[str, frozenset[str]] = {}
    if isinstance(declared, Mapping):
        for key, value in declared.items():
            if key != EVERY_ACTION and key not in action_names:
                valid = ", ".join(sorted(action_names)) or "none, a plain tool"
                problems.append(
                    f"scopes: {_shown(key)} is neither '*' nor an action of the tool "
                    f"(actions: {valid})."
                )
                continue
            table[key] = _scope_list(f"scopes[{key!r}]", value, problems)
    else:
        table[EVERY_ACTION] = _scope_list("scopes", declared, problems)
    return MappingProxyType({key: value for key, value in table.items() if value})


def required_scopes(
    declared: Mapping[str, frozenset[str]], action: str | None
) -> frozenset[str]:
    """The scopes one call needs: those of every action plus the action's own."""
    needed = declared.get(EVERY_ACTION, frozenset())
    if action is not None:
        needed |= declared.get(action, frozenset())
    return needed
