"""`plain_refusal`: a verdict's refusal without the MCP envelope, for REST services.

Paths start at the body itself (`items[3].qty`, not `data.items[3].qty`), and the
`tool`, `action` and `help` fields are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wymcp.core.gates._verdict import Verdict

_ENVELOPE = frozenset({"tool", "action", "help", "input_schema", "message"})
_IN_MESSAGE = 3
ROOT_IN_MESSAGE = "(root)"
"""How a message names the body itself, whose path is the empty string."""


def plain_refusal(verdict: Verdict, *, schema: bool = False) -> dict[str, Any] | None:
    """The refusal of `verdict` as a plain JSON API answers it; None if accepted.

    Args:
        verdict: what `check` answered.
        schema: keep `input_schema` (the accepted fields) in the answer.

    Returns:
        `error` and `message` first, then the code's own fields (`unknown`,
        `missing`, `did_you_mean`, `errors`, `also`, ...) with every path
        relative to the body: `items[3].qty`, `["a.b"]`, and `""` for the
        body itself.
    """
    refusal = verdict.refusal
    if refusal is None:
        return None
    root = "arguments" if refusal.get("action") is None else "data"
    error = refusal.get("error")
    fields: dict[str, Any] = {}
    for key, value in refusal.items():
        if key in _ENVELOPE:
            continue
        fields[key] = _strip_field(key, value, root)
    answer: dict[str, Any] = {
        "error": error,
        "message": _message(refusal, fields),
        **fields,
    }
    if schema and "input_schema" in refusal:
        answer["input_schema"] = refusal["input_schema"]
    return answer


def strip_root(path: str, root: str) -> str:
    """A path from the body: `items[3]`, `["a.b"]`; `""` for the body itself."""
    if path == root:
        return ""
    if path.startswith(f"{root}."):
        return path[len(root) + 1 :]
    if path.startswith(f"{root}["):
        return path[len(root) :]
    return path


def _strip_field(key: str, value: Any, root: str) -> Any:
    """A refusal field with its paths made relative to the body."""
    if key == "unknown" and isinstance(value, list):
        return [strip_root(path, root) for path in value]
    if key == "errors" and isinstance(value, list):
        return [
            {**entry, "path": strip_root(entry["path"], root)}
            if isinstance(entry, Mapping) and isinstance(entry.get("path"), str)
            else entry
            for entry in value
        ]
    if key == "did_you_mean" and isinstance(value, Mapping):
        return {strip_root(k, root): strip_root(v, root) for k, v in value.items()}
    if key == "also" and isinstance(value, Mapping):
        return {
            code: {k: _strip_field(k, v, root) for k, v in section.items()}
            if isinstance(section, Mapping)
            else section
            for code, section in value.items()
        }
    return value


def _message(refusal: Mapping[str, Any], fields: Mapping[str, Any]) -> str:
    """The one-sentence message, reworded where it named the tool or a `data` path."""
    error = refusal.get("error")
    if error == "unknown_params":
        listing = _listing(fields.get("unknown", []), fields.get("unknown_count", 0))
        return (
            f"Unknown field(s): {listing}. These are rejected rather than silently"
            " ignored."
        )
    if error == "invalid_values":
        paths = [entry.get("path", "") for entry in fields.get("errors", [])]
        listing = _listing(paths, fields.get("error_count", 0))
        return f"Invalid value(s) at {listing}; see errors."
    if error == "unknown_action":
        valid = fields.get("valid_actions", [])
        listed = ", ".join(valid) if valid else "(none)"
        action = refusal.get("action")
        if action is None:
            return f"An action is needed. Valid actions: {listed}."
        return f"Unknown action '{action}'. Valid actions: {listed}."
    return str(refusal.get("message", ""))


def _listing(paths: list[str], count: int) -> str:
    """The first three paths and how many more there are."""
    named = ", ".join(path or ROOT_IN_MESSAGE for path in paths[:_IN_MESSAGE])
    rest = count - min(len(paths), _IN_MESSAGE)
    return f"{named} and {rest} more" if rest > 0 else named
