"""Shared subschemas of a help answer hoisted into `$defs` when that is smaller.

A subschema met at two or more schema positions (an action's property, an item, a
branch, an output schema's part) is published once under the answer's `$defs` and
referred to as `{"$ref": "#/$defs/<name>"}`; an action's schema with the answer's
`$defs` beside it validates exactly as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Final

_MAPS: Final = ("properties", "patternProperties", "dependentSchemas")
_ONE: Final = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)
_MANY: Final = ("prefixItems", "anyOf", "oneOf", "allOf")
_ROUNDS: Final = 32
"""The most subschemas one answer hoists."""
_NAME: Final = re.compile(r"[^A-Za-z0-9_.-]")


def hoist_shared(payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` with repeated subschemas moved to `$defs`, if that is smaller.

    The schemas are found under each action's `properties` (`actions.<name>`
    or the payload itself), `input_schema` and `output_schema`. Two passes:
    count each subschema's canonical JSON, then replace the repeats that save
    bytes, most saving first, at most 32, none inside or around another chosen
    one. The payload is returned unchanged (the same object) when nothing pays.
    """
    chosen = _chosen(payload)
    if not chosen:
        return payload
    hoisted: dict[str, Any] = json.loads(json.dumps(payload))
    defs: dict[str, Any] = {}
    refs: dict[str, dict[str, Any]] = {}
    for text, hint in chosen:
        key = _free_name(hint, defs)
        defs[key] = json.loads(text)
        refs[text] = {"$ref": f"#/$defs/{key}"}
    for root in _roots(hoisted):
        _replace_below(root, refs)
    hoisted["$defs"] = defs
    return hoisted


def _roots(payload: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The schema roots of a help answer (an action, or each action of a tool)."""
    actions = payload.get("actions")
    if isinstance(actions, dict):
        yield from (a for a in actions.values() if isinstance(a, dict))
    if "properties" in payload:
        yield payload
    for key in ("input_schema", "output_schema"):
        if isinstance(payload.get(key), dict):
            yield payload[key]


def _children(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(a name hint, a subschema) for each schema position directly in `schema`."""
    for key in _MAPS:
        value = schema.get(key)
        if isinstance(value, dict):
            yield from ((k, v) for k, v in value.items() if isinstance(v, dict))
    for key in _ONE:
        value = schema.get(key)
        if isinstance(value, dict):
            yield key, value
    for key in _MANY:
        value = schema.get(key)
        if isinstance(value, list):
            yield from ((key, v) for v in value if isinstance(v, dict))


def _walk(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every subschema below `schema`, depth first."""
    for hint, child in _children(schema):
        yield hint, child
        yield from _walk(child)


def _chosen(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """(JSON, name hint) of the repeats worth hoisting, most saving first."""
    counts: dict[str, int] = {}
    hints: dict[str, str] = {}
    for root in _roots(payload):
        for hint, sub in _walk(root):
            text = _canonical(sub)
            counts[text] = counts.get(text, 0) + 1
            hints.setdefault(text, hint)
    ranked: list[tuple[int, str]] = []
    for text, count in counts.items():
        if "$ref" in text:  # a count of 1 never saves (see `saving`)
            continue
        name = hints[text]
        ref = len('{"$ref":"#/$defs/"}') + len(name) + 2
        saving = count * (len(text) - ref) - (len(text) + len(name) + 4)
        if saving > 0:
            ranked.append((saving, text))
    ranked.sort(key=lambda pair: -pair[0])
    chosen: list[tuple[str, str]] = []
    for _, text in ranked:
        if len(chosen) == _ROUNDS:
            break
        if any(text in other or other in text for other, _ in chosen):
            continue
        chosen.append((text, hints[text]))
    return chosen


def _canonical(schema: dict[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


def _replace_below(schema: dict[str, Any], refs: dict[str, dict[str, Any]]) -> None:
    """Put each ref in place of every subschema below `schema` with its JSON."""
    for key in _MAPS:
        value = schema.get(key)
        if isinstance(value, dict):
            for name, sub in value.items():
                value[name] = _swap(sub, refs)
    for key in _ONE:
        if isinstance(schema.get(key), dict):
            schema[key] = _swap(schema[key], refs)
    for key in _MANY:
        value = schema.get(key)
        if isinstance(value, list):
            schema[key] = [_swap(sub, refs) for sub in value]


def _swap(sub: Any, refs: dict[str, dict[str, Any]]) -> Any:
    if not isinstance(sub, dict):
        return sub
    ref = refs.get(_canonical(sub))
    if ref is not None:
        return dict(ref)
    _replace_below(sub, refs)
    return sub


def _free_name(hint: str, defs: dict[str, Any]) -> str:
    """`hint` made a JSON Pointer-safe name not yet in `defs`."""
    base = _NAME.sub("_", hint)[:64] or "schema"
    name, number = base, 2
    while name in defs:
        name, number = f"{base}_{number}", number + 1
    return name
