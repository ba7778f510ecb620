"""The refusal payloads: one JSON object per gate, in the tool dialect.

Every refusal has `error` (a code), `message` (one sentence), `tool`, `action`
and `help` (a copyable pointer at the help tool); those about a known action also
carry its published `input_schema`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

from wymcp.core.gates._bound import FIRST, Path, echo
from wymcp.core.gates._did_you_mean import Budget, data_matches
from wymcp.core.gates._paths import render_path
from wymcp.core.gates._value_gate import ValueReport
from wymcp.core.schema import RESERVED_NAME, ActionSpec, ToolSpec

_IN_MESSAGE = 3
REQUEST_PART = 4000
"""Bytes (as JSON) the request-dependent part of a refusal may take: under 4 KiB."""
_DECLARED = frozenset({"input_schema", "valid_actions"})


def help_pointer(tool: str, action: str | None = None) -> str:
    """A copyable help call: `help {tool: "tasks", action: "create"}`."""
    if action is None:
        return f"{RESERVED_NAME} {{tool: {json.dumps(tool, ensure_ascii=False)}}}"
    return (
        f"{RESERVED_NAME} {{tool: {json.dumps(tool, ensure_ascii=False)},"
        f" action: {json.dumps(action, ensure_ascii=False)}}}"
    )


def unknown_action(spec: ToolSpec, action: object) -> dict[str, Any]:
    """The refusal of an action the tool does not declare (or of a missing one)."""
    valid = sorted(spec.actions)
    listed = ", ".join(valid) if valid else "(none)"
    if action is None:
        message = f"Tool '{spec.name}' needs an action. Valid actions: {listed}."
        sent = None
    else:
        sent = echo(action if isinstance(action, str) else f"<{type(action).__name__}>")
        message = (
            f"Unknown action '{sent}' for tool '{spec.name}'. Valid actions: {listed}."
        )
    return {
        "error": "unknown_action",
        "message": message,
        "tool": spec.name,
        "action": sent,
        "valid_actions": valid,
        "help": help_pointer(spec.name),
    }


def missing_required(
    spec: ToolSpec, target: ActionSpec, missing: Sequence[str]
) -> dict[str, Any]:
    """The refusal of a call that lacks required properties."""
    return _payload(
        spec,
        target,
        "missing_required_fields",
        f"Required fields missing: {', '.join(missing)}.",
        {"missing": list(missing)},
    )


def missing_group(spec: ToolSpec, target: ActionSpec) -> dict[str, Any]:
    """The refusal of a call in which no `required_one_of` group is complete."""
    groups = " OR ".join(f"({' + '.join(group)})" for group in target.required_one_of)
    return _payload(
        spec,
        target,
        "missing_required_group",
        f"At least one of these field groups must be fully present: {groups}.",
        {"required_one_of": [list(group) for group in target.required_one_of]},
    )


def unknown_params(
    spec: ToolSpec,
    target: ActionSpec,
    kept: list[Path],
    count: int,
    data: object = None,
    *,
    matches: Sequence[tuple[Path, str]] | None = None,
) -> dict[str, Any]:
    """The refusal of keys outside a closed key set (first ten paths and a count).

    With the sent `data`, it also names the required fields absent (`missing`,
    declaration order) and the declared key each unknown key is probably a typo of
    (`did_you_mean`), each field only when it has something to say, so one round
    fixes what the later gates would refuse next. `matches` are the typos
    already found (`data_matches`); without them they are looked for here.
    """
    name = _root(target)
    rendered = [render_path(path, name) for path in kept]
    extra: dict[str, Any] = {"unknown": rendered, "unknown_count": count}
    if isinstance(data, dict):
        missing = [field for field in target.required if field not in data]
        if missing:
            extra["missing"] = missing
    payload = _payload(
        spec,
        target,
        "unknown_params",
        f"Unknown parameter(s) for {_subject(spec, target)}: "
        f"{_listing(rendered, count)}. These are rejected rather than silently"
        " ignored.",
        extra,
    )
    if isinstance(data, dict):
        if matches is None:
            matches = data_matches(target.root, data, kept, Budget())
        found = {
            render_path(path, name): render_path((*path[:-1], match), name)
            for path, match in matches
        }
        suggest(payload, found, before="input_schema")
    return payload


def suggest(payload: dict[str, Any], found: dict[str, str], *, before: str) -> None:
    """Add `did_you_mean` (if any) while the request-dependent part stays bounded.

    Entries are added in order, at most ten, each only if the part of the payload
    that depends on the request still serialises within `REQUEST_PART` bytes.
    """
    if not found:
        return
    size = request_part_size(payload) + len(', "did_you_mean": {}')
    kept: dict[str, str] = {}
    for wrong, right in found.items():
        cost = len(json.dumps(wrong)) + len(json.dumps(right)) + 4
        if len(kept) == FIRST or size + cost > REQUEST_PART:
            break
        kept[wrong] = right
        size += cost
    if not kept:
        return
    ordered = {}
    for key, value in payload.items():
        if key == before:
            ordered["did_you_mean"] = kept
        ordered[key] = value
    ordered.setdefault("did_you_mean", kept)
    payload.clear()
    payload.update(ordered)


def request_part_size(payload: dict[str, Any]) -> int:
    """The JSON size of a refusal without what comes from the declaration alone."""
    return len(json.dumps({k: v for k, v in payload.items() if k not in _DECLARED}))


def invalid_values(
    spec: ToolSpec, target: ActionSpec, report: ValueReport
) -> dict[str, Any]:
    """The refusal of values the schema refuses (first ten paths and a count)."""
    errors = [
        {"path": render_path(path, _root(target)), "problems": problems}
        for path, problems in report.entries
    ]
    rendered = [render_path(path, _root(target)) for path, _ in report.entries]
    partial = " (counting stopped early)" if report.partial else ""
    return _payload(
        spec,
        target,
        "invalid_values",
        f"Invalid value(s) for {_subject(spec, target)} at "
        f"{_listing(rendered, report.count)}{partial}; see errors.",
        {"errors": errors, "error_count": report.count},
    )


def root_name(target: ActionSpec) -> str:
    """Where paths start: `data` for an action, `arguments` for a plain tool."""
    return _root(target)


def _root(target: ActionSpec) -> str:
    return "arguments" if target.action is None else "data"


def _subject(spec: ToolSpec, target: ActionSpec) -> str:
    if target.action is None:
        return f"tool '{spec.name}'"
    return f"action '{target.name}'"


def _listing(rendered: list[str], count: int) -> str:
    """Name the first few paths and how many more there are."""
    named = ", ".join(rendered[:_IN_MESSAGE])
    rest = count - min(len(rendered), _IN_MESSAGE)
    return f"{named} and {rest} more" if rest > 0 else named


def _payload(
    spec: ToolSpec,
    target: ActionSpec,
    error: str,
    message: str,
    extra: dict[str, Any],
) -> dict[str, Any]:
    """Assemble a refusal about a known action (or a plain tool's arguments)."""
    action = None if target.action is None else target.name
    return {
        "error": error,
        "message": message,
        "tool": spec.name,
        "action": action,
        **extra,
        "input_schema": target.published_copy(),
        "help": help_pointer(spec.name, action),
    }


def invalid_arguments(
    spec: ToolSpec,
    action: object,
    *,
    problems: Sequence[str],
    stray: Sequence[str],
    stray_count: int,
    found: dict[str, str],
) -> dict[str, Any]:
    """The refusal of a multi-action call whose arguments are not `{action, data}`.

    `problems` are clauses already bounded by the caller; `stray` the first ten
    root keys that are no argument (in path order), `found` the suggestions.
    """
    valid = sorted(spec.actions)
    listed = ", ".join(valid) if valid else "(none)"
    message = (
        f"Tool '{spec.name}' takes arguments 'action' (one of: {listed}) and 'data'"
        f" (an object holding the action's fields): {'; '.join(problems)}."
    )
    payload: dict[str, Any] = {
        "error": "invalid_arguments",
        "message": message,
        "tool": spec.name,
        "action": echo(action) if isinstance(action, str) else None,
        "valid_actions": valid,
    }
    if stray_count:
        payload["unknown"] = [render_path((key,), "arguments") for key in stray]
        payload["unknown_count"] = stray_count
    payload["input_schema"] = copy.deepcopy(dict(spec.input_schema))
    payload["help"] = help_pointer(spec.name)
    suggest(payload, found, before="input_schema")
    return payload
