"""`also`: what the later gates find in the rest of a call an earlier gate refused.

So that a refused call costs one round, not one per gate, a refusal carries, keyed by
the code each later gate would answer, that gate's own fields for the rest of the
call, bounded as the gate bounds them and within the refusal's 4,000-byte budget.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from wymcp.core.gates._bound import Path
from wymcp.core.gates._paths import render_path
from wymcp.core.gates._value_gate import value_errors
from wymcp.core.schema import ActionSpec

ALSO = "also"
MISSING = "missing_required_fields"
GROUP = "missing_required_group"
VALUES = "invalid_values"
_SECTION_FIELDS = {
    "unknown_params": ("unknown", "unknown_count", "missing", "did_you_mean"),
    MISSING: ("missing",),
    GROUP: ("required_one_of",),
    VALUES: ("errors", "error_count", "error_count_partial"),
}
"""Each code's own fields, in the order a section carries them."""


def moved(pruned: object, data: object, renames: Sequence[tuple[Path, str]]) -> object:
    """`pruned` (the data without its unknown keys) with each rename applied.

    A rename `(path, key)` moves the value sent at `path` to `key` beside it.
    `pruned` is a copy wherever a key was left out, so the objects holding an
    unknown key (and those above them) are the gate's own and can be changed; a
    target already present (sent, or filled by an earlier rename) is left alone.
    """
    for path, key in renames:
        parent = _at(pruned, path[:-1])
        if isinstance(parent, dict) and key not in parent:
            parent[key] = _at(data, path)
    return pruned


def _at(value: object, path: Path) -> object:
    for token in path:
        if isinstance(value, dict):
            value = value.get(token)
        elif isinstance(value, list) and isinstance(token, int):
            value = value[token]
        else:
            return None
    return value


def sections(
    target: ActionSpec, rest: object, *, skip: Iterable[str] = ()
) -> dict[str, dict[str, Any]]:
    """What the required, `required_one_of` and value gates find in `rest`.

    The required gate names the absent required keys; the group gate reads the
    keys as they will be once those are sent; the value gate reads the values
    sent (the action's root has no `required`, so absent keys are no problem
    of its own). `skip` leaves out codes the refusal already answers.
    """
    found: dict[str, dict[str, Any]] = {}
    if not isinstance(rest, dict):
        return found
    left_out = set(skip)
    missing = [name for name in target.required if name not in rest]
    if missing and MISSING not in left_out:
        found[MISSING] = {"missing": missing}
    groups = target.required_one_of
    present = rest.keys() | set(missing)
    if (
        groups
        and GROUP not in left_out
        and not any(all(name in present for name in group) for group in groups)
    ):
        found[GROUP] = {"required_one_of": [list(group) for group in groups]}
    report = value_errors(target.root, rest)
    if report is not None and VALUES not in left_out:
        root = "arguments" if target.action is None else "data"
        section: dict[str, Any] = {
            "errors": [
                {"path": render_path(path, root), "problems": problems}
                for path, problems in report.entries
            ],
            "error_count": report.count,
        }
        if report.partial:
            section["error_count_partial"] = True
        found[VALUES] = section
    return found


def of_refusal(refusal: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A refusal read as sections: its own code's fields, then its `also`."""
    code = refusal.get("error")
    fields = _SECTION_FIELDS.get(code) if isinstance(code, str) else None
    found: dict[str, dict[str, Any]] = {}
    if fields is not None:
        found[str(code)] = {k: refusal[k] for k in fields if k in refusal}
    found.update(refusal.get(ALSO, {}))
    return found


def attach(
    payload: dict[str, Any],
    found: dict[str, dict[str, Any]],
    *,
    budget: int,
    before: str,
) -> None:
    """Add `also` (if any) so the request-dependent part stays within `budget`.

    `budget` is what the payload's request-dependent part may still grow by.
    Past it, listed entries are dropped from the end (their counts stay), then
    whole sections from the end.
    """
    if not found:
        return
    found = {code: dict(section) for code, section in found.items()}
    room = budget - len(f', "{ALSO}": ')
    while found and len(json.dumps(found)) > room:
        if not _trim(found):
            found.popitem()
    if not found:
        return
    ordered: dict[str, Any] = {}
    for key, value in payload.items():
        if key == before:
            ordered[ALSO] = found
        ordered[key] = value
    ordered.setdefault(ALSO, found)
    payload.clear()
    payload.update(ordered)


def _trim(found: dict[str, dict[str, Any]]) -> bool:
    """Drop the last listed entry of the last section that lists some; False if none."""
    for section in reversed(found.values()):
        for key in ("errors", "unknown", "did_you_mean", "missing"):
            listed = section.get(key)
            if listed:
                if isinstance(listed, dict):
                    listed = dict(listed)
                    listed.popitem()
                else:
                    listed = listed[:-1]
                section[key] = listed
                return True
    return False
