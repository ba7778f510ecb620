"""The refusal payloads: one JSON object per gate, in the tool dialect.

Every refusal has ``error`` (a code), ``message`` (one sentence), ``tool``, ``action``
and ``help`` (a copyable pointer at the help tool); those about a known action also
carry its published ``input_schema``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from wymcp.core.gates._bound import Path, echo
from wymcp.core.gates._paths import render_path
from wymcp.core.gates._value_gate import ValueReport
from wymcp.core.schema import ActionSpec, ToolSpec

_IN_MESSAGE = 3


def help_pointer(tool: str, action: str | None = None) -> str:
    """A copyable help call: ``help {tool: "tasks", action: "create"}``."""
    if action is None:
        return f"help {{tool: {json.dumps(tool, ensure_ascii=False)}}}"
    return (
        f"help {{tool: {json.dumps(tool, ensure_ascii=False)},"
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
    """The refusal of a call in which no ``required_one_of`` group is complete."""
    groups = " OR ".join(f"({' + '.join(group)})" for group in target.required_one_of)
    return _payload(
        spec,
        target,
        "missing_required_group",
        f"At least one of these field groups must be fully present: {groups}.",
        {"required_one_of": [list(group) for group in target.required_one_of]},
    )


def unknown_params(
    spec: ToolSpec, target: ActionSpec, kept: list[Path], count: int
) -> dict[str, Any]:
    """The refusal of keys outside a closed key set (first ten paths and a count)."""
    rendered = [render_path(path, _root(target)) for path in kept]
    return _payload(
        spec,
        target,
        "unknown_params",
        f"Unknown parameter(s) for {_subject(spec, target)}: "
        f"{_listing(rendered, count)}. These are rejected rather than silently"
        " ignored.",
        {"unknown": rendered, "unknown_count": count},
    )


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
    """Where paths start: ``data`` for an action, ``arguments`` for a plain tool."""
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
