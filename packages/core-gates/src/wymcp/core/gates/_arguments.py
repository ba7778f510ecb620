"""The arguments of a multi-action tool, `{"action": ..., "data": {...}}`, checked.

A call whose arguments are not of that shape (no action, a stray key beside them, a
non-string action, non-object data) is refused `invalid_arguments` in one answer.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Mapping
from typing import Any

from wymcp.core.gates import _refusal
from wymcp.core.gates._also import attach, of_refusal
from wymcp.core.gates._bound import FIRST, echo
from wymcp.core.gates._check import gated
from wymcp.core.gates._did_you_mean import Budget, closest
from wymcp.core.gates._paths import render_path
from wymcp.core.schema import ActionSpec, ToolSpec, prepare

_ENVELOPE = ("action", "data")
_IN_MESSAGE = 3


def arguments_refusal(
    tool: object, arguments: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The `invalid_arguments` refusal of a multi-action call, or None if well-formed.

    Args:
        tool: a `Tool` class or instance, or its `ToolSpec` (prepared if needed).
        arguments: the call's whole `arguments` object.

    Returns:
        None when `arguments` holds a string `action`, an object (or absent or
        null) `data` and no other key than those and the root properties of a
        hand-written input schema; then `check(tool, action, data)` gates the rest.
        None too for a tool without actions, whose arguments are its data.
    """
    spec = prepare(tool)
    if spec.plain is not None:
        return None
    if _plain_envelope(arguments):
        return None
    allowed = _root_keys(spec)
    stray = [key for key in arguments if key not in allowed]
    action = arguments.get("action")
    data = arguments.get("data")
    problems: list[str] = []
    if action is None:
        problems.append("'action' is missing")
    elif not isinstance(action, str):
        problems.append(f"'action' is {_kind(action)}, not a string")
    elif action not in spec.actions:
        problems.append(f"'{echo(action)}' is not one of its actions")
    if data is not None and not isinstance(data, dict):
        problems.append(f"'data' is {_kind(data)}, not an object")
    if not stray and not _malformed(action, data):
        return None
    kept = _first(stray)
    found = _suggestions(spec, arguments, kept)
    if stray:
        problems.append(_stray_clause(kept, len(stray)))
        if any(right.startswith("data") for right in found.values()):
            problems.append("an action's fields go inside 'data'")
    refusal = _refusal.invalid_arguments(
        spec,
        action,
        problems=problems,
        stray=kept,
        stray_count=len(stray),
        found=found,
    )
    _also(spec, arguments, refusal)
    return refusal


def _also(
    spec: ToolSpec, arguments: Mapping[str, Any], refusal: dict[str, Any]
) -> None:
    """Add what the action's gates find in the call read as the refusal says.

    The call read so is: the sent action (or the one `did_you_mean` names), and
    `data` (an object, or the object a JSON text holds) with each stray key that
    `did_you_mean` points into `data` moved there. Nothing is added when no
    action or no object can be read.
    """
    shown = refusal.get("did_you_mean", {})
    target = _action_read(spec, arguments, shown)
    data = _data_read(arguments.get("data"))
    if target is None or data is None:
        return
    for key in arguments:
        right = shown.get(render_path((str(key),), "arguments"))
        if isinstance(right, str) and right.startswith("data"):
            field = _field(spec.actions[target], right)
            if field is not None and field not in data:
                data[field] = arguments[key]
    verdict = gated(spec, spec.actions[target], data)
    if verdict.refusal is not None:
        budget = _refusal.REQUEST_PART - _refusal.request_part_size(refusal)
        attach(
            refusal, of_refusal(verdict.refusal), budget=budget, before="input_schema"
        )


def _action_read(
    spec: ToolSpec, arguments: Mapping[str, Any], shown: Mapping[str, str]
) -> str | None:
    """The action the call means: as sent, moved from a typo'd key, or the nearest."""
    action = arguments.get("action")
    if not isinstance(action, str):
        for key, value in arguments.items():
            moved = shown.get(render_path((str(key),), "arguments"))
            if moved == "arguments.action" and isinstance(value, str):
                action = value
    if not isinstance(action, str):
        return None
    if action in spec.actions:
        return action
    return closest(action, sorted(spec.actions), Budget())


def _data_read(data: object) -> dict[str, Any] | None:
    """`data` as an object: a copy of it, the object a JSON text holds, or `{}`."""
    if data is None:
        return {}
    if isinstance(data, dict):
        return dict(data)
    if isinstance(data, str):
        try:
            parsed = json.loads(data)
        except (ValueError, RecursionError):
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def _field(target: ActionSpec, rendered: str) -> str | None:
    """The field a `data.<field>` path names, if the action declares it."""
    for name in target.root.properties:
        if render_path((name,), "data") == rendered:
            return str(name)
    return None


def _first(stray: list[Any]) -> list[str]:
    """The first ten keys in path order: all-digit keys (numerically), then the rest.

    The rest compare as text, so only the all-digit ones need a sort key; a call with
    100,000 stray keys is ordered with C comparisons alone.
    """
    keys = [key if key.__class__ is str else str(key) for key in stray]
    digits = [key for key in keys if key.isdigit() and key.isascii()]
    if not digits:
        return heapq.nsmallest(FIRST, keys)
    numbered = set(digits)
    kept = heapq.nsmallest(FIRST, digits, key=_numeric)
    if len(kept) < FIRST:
        rest = (key for key in keys if key not in numbered)
        kept += heapq.nsmallest(FIRST - len(kept), rest)
    return kept


def _numeric(digits: str) -> tuple[int, str, str]:
    """An all-digit key's path order: by value, then as sent (`07` before `7`)."""
    value = digits.lstrip("0")
    return (len(value), value, digits)


def _plain_envelope(arguments: Mapping[str, Any]) -> bool:
    """Whether this is the common shape: a string action, object or no data, no more."""
    data = arguments.get("data")
    return (
        isinstance(arguments.get("action"), str)
        and (data is None or isinstance(data, dict))
        and len(arguments) == 1 + ("data" in arguments)
    )


def _malformed(action: object, data: object) -> bool:
    """Whether `action` is no string or `data` no object (null means `{}`)."""
    return not isinstance(action, str) or not (data is None or isinstance(data, dict))


def _root_keys(spec: ToolSpec) -> frozenset[str]:
    """`action`, `data` and the root properties a hand-written schema declares."""
    declared = spec.input_schema.get("properties")
    names = declared if isinstance(declared, Mapping) else {}
    return frozenset({*_ENVELOPE, *names})


def _stray_clause(kept: list[str], count: int) -> str:
    named = ", ".join(f"'{echo(key)}'" for key in kept[:_IN_MESSAGE])
    rest = count - min(len(kept), _IN_MESSAGE)
    if rest > 0:
        named = f"{named} and {rest} more"
    verb = "is" if count == 1 else "are"
    return f"{named} {verb} not among its arguments"


def _suggestions(
    spec: ToolSpec, arguments: Mapping[str, Any], kept: list[str]
) -> dict[str, str]:
    """Where each stray key probably belongs: a field of `data`, or a root key."""
    action = arguments.get("action")
    data = arguments.get("data")
    sent = data if isinstance(data, dict) else {}
    fields = [name for name in _fields(spec, action) if name not in sent]
    field_set = set(fields)
    free = [key for key in sorted(_root_keys(spec)) if key not in arguments]
    budget = Budget()
    found: dict[str, str] = {}
    for key in kept:
        wrong = render_path((key,), "arguments")
        if key in field_set:
            found[wrong] = render_path((key,), "data")
        elif (match := closest(key, free, budget)) is not None:
            found[wrong] = render_path((match,), "arguments")
        elif (match := closest(key, fields, budget)) is not None:
            found[wrong] = render_path((match,), "data")
    return found


def _fields(spec: ToolSpec, action: object) -> list[str]:
    """The data fields of the sent action, or of every action when it names none."""
    if isinstance(action, str) and action in spec.actions:
        return list(spec.actions[action].root.properties)
    seen: dict[str, None] = {}
    for name in sorted(spec.actions):
        seen.update(dict.fromkeys(spec.actions[name].root.properties))
    return list(seen)


def _kind(value: object) -> str:
    """The JSON type of a value, with its article (never the value itself)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return "null" if value is None else f"a {type(value).__name__}"
