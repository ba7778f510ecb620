"""The shape checks of one `Action`: names, groups, defaults, extras, JSON terms.

Each check appends a problem text (without the action prefix) to a list.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import attrs

from wymcp.core.schema._action import Action

_JSON_DEPTH = 256


@attrs.frozen
class ShapeVerdict:
    """Which parts of an action are sound enough to build from."""

    properties: bool
    defaults: bool


def action_problems(action: Action, found: list[str]) -> ShapeVerdict:
    """Check an action's fields; return which parts may be built on."""
    found.extend(_description_problems(action.description))
    properties_ok = _properties_ok(action.properties, found)
    declared = set(action.properties) if properties_ok else set()
    required = _names(action.required, "required", declared, found, check=properties_ok)
    _groups(action.required_one_of, declared, found, check=properties_ok)
    defaults_ok = _defaults_ok(
        action.defaults, declared, required, found, check=properties_ok
    )
    _extras(action, found)
    return ShapeVerdict(properties=properties_ok, defaults=defaults_ok)


def json_problems(where: str, value: object) -> list[str]:
    """Name the first place in `value` JSON cannot carry, if any."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > _JSON_DEPTH:
            return [f"{where} is nested too deeply"]
        if node is None or isinstance(node, (str, bool, int)):
            continue
        if isinstance(node, float):
            if not math.isfinite(node):
                return [f"{where} holds {node!r}, which JSON cannot carry"]
        elif isinstance(node, Mapping):
            if not all(isinstance(key, str) for key in node):
                return [f"{where} holds a non-string key, which JSON cannot carry"]
            stack.extend((sub, depth + 1) for sub in node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend((sub, depth + 1) for sub in node)
        else:
            return [f"{where} holds a {type(node).__name__}, which JSON cannot carry"]
    return []


def breaks_line(text: str) -> bool:
    """Whether `text` holds a line break: anything `str.splitlines()` splits on.

    That is LF, CR, VT, FF, FS, GS, RS, NEL, U+2028 and U+2029.
    """
    return len(f"{text}x".splitlines()) > 1


def line_break_problem(what: str) -> str:
    """The problem text of a name or description that holds a line break."""
    return (
        f"{what} must not contain a newline or other line break (the tools/list"
        " action enum joins action summaries with a newline)"
    )


def _description_problems(description: object) -> list[str]:
    """Problems of an action's description."""
    if not isinstance(description, str) or not description.strip():
        return ["description must be a non-empty string"]
    if breaks_line(description):
        return [line_break_problem("description")]
    return []


def _properties_ok(properties: object, found: list[str]) -> bool:
    """Check `properties` is a mapping of names to schemas JSON can carry."""
    if not isinstance(properties, Mapping):
        found.append("properties must be a mapping of property names to JSON Schemas")
        return False
    ok = True
    for key, schema in properties.items():
        if not isinstance(key, str):
            found.append(f"properties: property name {key!r} must be a string")
            ok = False
        elif not isinstance(schema, (Mapping, bool)):
            found.append(f"properties: the schema of {key!r} must be a JSON object")
            ok = False
        else:
            problems = json_problems(f"properties[{key!r}]", schema)
            found.extend(problems)
            ok = ok and not problems
    return ok


def _is_name_list(value: object) -> bool:
    """Whether `value` is a list (or tuple) of strings."""
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and all(isinstance(item, str) for item in value)
    )


def _names(
    names: object,
    field: str,
    declared: set[str],
    found: list[str],
    *,
    check: bool,
) -> tuple[str, ...]:
    """Check a list of property names: strings, no duplicates, declared."""
    if not _is_name_list(names):
        found.append(f"{field} must be a list of property names (strings)")
        return ()
    listed = tuple(str(name) for name in names)  # type: ignore[attr-defined]
    _repeated_or_undeclared(field, listed, declared, found, check=check)
    return listed


def _repeated_or_undeclared(
    what: str,
    listed: tuple[str, ...],
    declared: set[str],
    found: list[str],
    *,
    check: bool,
) -> None:
    """Report names `listed` twice, and (when `check`) names not `declared`."""
    duplicates = sorted({name for name in listed if listed.count(name) > 1})
    if duplicates:
        found.append(f"{what} has duplicate entries: {duplicates}")
    undeclared = [name for name in listed if name not in declared]
    if check and undeclared:
        found.append(
            f"{what} names properties not declared in properties: {undeclared}"
        )


def _groups(
    groups: object, declared: set[str], found: list[str], *, check: bool
) -> None:
    """Check `required_one_of`: non-empty groups of declared names, no dead groups."""
    if not isinstance(groups, Sequence) or isinstance(groups, str):
        found.append("required_one_of must be a list of lists of property names")
        return
    if not all(_is_name_list(group) for group in groups):
        found.append("required_one_of must be a list of lists of property names")
        return
    listed = [tuple(group) for group in groups]
    if any(not group for group in listed):
        found.append("required_one_of contains an empty group")
    for group in listed:
        _repeated_or_undeclared(
            "required_one_of group", group, declared, found, check=check
        )
    _dead_groups([frozenset(group) for group in listed if group], listed, found)


def _dead_groups(
    sets: list[frozenset[str]], listed: list[tuple[str, ...]], found: list[str]
) -> None:
    """Report duplicate groups and groups that a smaller group always beats."""
    seen: list[frozenset[str]] = []
    for members in sets:
        if members in seen:
            found.append(f"required_one_of has duplicate groups: {sorted(members)}")
        seen.append(members)
    for group in listed:
        smaller = next((o for o in listed if o and set(o) < set(group)), None)
        if smaller is not None:
            found.append(
                f"required_one_of group {list(group)} is a strict superset of"
                f" {list(smaller)} (dead: the smaller group always satisfies first)"
            )


def _defaults_ok(
    defaults: object,
    declared: set[str],
    required: tuple[str, ...],
    found: list[str],
    *,
    check: bool,
) -> bool:
    """Check the shape of `defaults`: declared, not required, JSON values."""
    if not isinstance(defaults, Mapping):
        found.append("defaults must be a mapping of property names to values")
        return False
    ok = True
    for key, value in defaults.items():
        if check and key not in declared:
            found.append(f"defaults: {key!r} is not declared in properties")
            ok = False
        if key in required:
            found.append(
                f"defaults: {key!r} is required, and a default never satisfies required"
            )
            ok = False
        problems = json_problems(f"defaults[{key!r}]", value)
        found.extend(problems)
        ok = ok and not problems
    return ok and check


def _extras(action: Action, found: list[str]) -> None:
    """Check `notes`, `related` and `examples`."""
    notes: object = action.notes
    if notes is not None and not isinstance(notes, str):
        found.append("notes must be a string")
    if not _is_name_list(action.related):
        found.append("related must be a list of strings")
    examples: object = action.examples
    if (
        not isinstance(examples, Sequence)
        or isinstance(examples, str)
        or not all(isinstance(item, Mapping) for item in examples)
    ):
        found.append("examples must be a list of data objects")
        return
    for index, example in enumerate(examples):
        found.extend(json_problems(f"examples[{index}]", example))
