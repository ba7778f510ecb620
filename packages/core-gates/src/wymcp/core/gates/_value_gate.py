"""The value gate: every value checked against the action's compiled value root.

An accepted call costs one engine call. A refused one is walked in path order,
skipping what the engine accepts, so the work is one cheap check per offending value;
only the first ten paths get problem texts. Also: the integer cast, at any depth.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

import attrs

from wymcp.core.gates._bound import FIRST, Path, echo, path_key, token_key
from wymcp.core.gates._catalogue import UNCHECKABLE, keyword_text, problem_text
from wymcp.core.schema import ValueNode

_CHECK_ERRORS = (ValueError, TypeError, OverflowError, RecursionError, AttributeError)
LEAF_ERRORS = 1000
"""How many engine errors a subtree the engine walks whole may cost (the rest of
that subtree goes uncounted, and the refusal says the count is partial)."""


@attrs.define
class ValueReport:
    """What the value gate found: the first ten paths with their problems, a count.

    ``partial`` says the count stopped short inside a subtree the engine walks whole
    (under a combinator), after ``LEAF_ERRORS`` engine errors.
    """

    count: int = 0
    entries: list[tuple[Path, list[str]]] = attrs.field(factory=list)
    partial: bool = False

    @property
    def full(self) -> bool:
        """Whether ten paths are kept (the rest are only counted)."""
        return len(self.entries) >= FIRST

    def add(self, path: Path, problems: Callable[[], list[str]]) -> None:
        """Count an offending path; ask for its problems only if it is kept."""
        self.count += 1
        if len(self.entries) < FIRST:
            self.entries.append((path, problems()))


def is_valid(validator: Any, value: object) -> bool:
    """Ask the engine; a value it cannot read counts as invalid."""
    try:
        return bool(validator.is_valid(value))
    except _CHECK_ERRORS:
        return False


def value_errors(root: ValueNode, data: object) -> ValueReport | None:
    """None when the root accepts ``data``; else the bounded report of its errors."""
    if is_valid(root.validator, data):
        return None
    report = ValueReport()
    _visit(root, data, (), report)
    if report.count == 0:
        report.add((), lambda: [UNCHECKABLE])
    return report


def _visit(node: ValueNode, value: object, path: Path, report: ValueReport) -> None:
    """Report the offending paths under ``value``, in path order."""
    if node.shallow is None:
        _leaf(node.validator, value, path, report)
        return
    before = report.count
    if not is_valid(node.shallow, value):
        report.add(path, lambda: _own_problems(node, value))
        if node.inner is not None and is_valid(node.inner, value):
            return
    if isinstance(value, dict):
        keys = sorted((key for key in value if key in node.properties), key=token_key)
        for key in keys:
            child = node.properties[key]
            if not is_valid(child.validator, value[key]):
                _visit(child, value[key], (*path, key), report)
    elif isinstance(value, list):
        _visit_items(node, value, path, report)
    if report.count == before:
        _leaf(node.validator, value, path, report)


def _visit_items(
    node: ValueNode, value: list[Any], path: Path, report: ValueReport
) -> None:
    """Report the offending items of an array, in index order.

    Items the engine accepts cost one engine call each; once ten paths are kept, a
    refused scalar item (whose only offending path is itself) is just counted.
    """
    prefix = node.prefix_items
    items = node.items
    for index, item in enumerate(value):
        element = prefix[index] if index < len(prefix) else items
        if element is None or is_valid(element.validator, item):
            continue
        kind = item.__class__
        if report.full and kind is not dict and kind is not list:
            report.count += 1
            continue
        _visit(element, item, (*path, index), report)


def _leaf(validator: Any, value: object, path: Path, report: ValueReport) -> None:
    """Report a subtree the engine walks whole: its errors grouped by path."""
    groups: dict[Path, list[Any]] = {}
    try:
        errors = itertools.islice(validator.iter_errors(value), LEAF_ERRORS + 1)
        for seen, error in enumerate(errors):
            if seen == LEAF_ERRORS:
                report.partial = True
                break
            groups.setdefault(tuple(error.instance_path), []).append(error)
    except _CHECK_ERRORS:
        report.add(path, lambda: [UNCHECKABLE])
        return
    if not groups:
        report.add(path, lambda: [UNCHECKABLE])
        return
    for relative in sorted(groups, key=path_key):
        report.add((*path, *relative), functools.partial(_texts, groups[relative]))


def _own_problems(node: ValueNode, value: object) -> list[str]:
    """The texts of a node's own failing keywords, asked one keyword at a time.

    The engine's yes/no answers are cheap whatever the value's size; its error
    messages serialise the value, so they are asked for only as a fallback.
    """
    texts: list[str] = []
    schema = node.schema
    if node.keyword_checks is not None and isinstance(schema, dict):
        texts.extend(
            keyword_text(keyword, schema)
            for keyword, validator in node.keyword_checks
            if not is_valid(validator, value)
        )
        if isinstance(value, dict):
            texts.extend(_missing_texts(schema, value))
    if texts:
        return _bounded(texts)
    try:
        return _texts(list(node.shallow.iter_errors(value)))
    except _CHECK_ERRORS:
        return [UNCHECKABLE]


def _missing_texts(schema: dict[str, Any], value: dict[Any, Any]) -> list[str]:
    """``required`` and ``dependentRequired`` read directly from the object."""
    names: list[object] = []
    required = schema.get("required")
    if isinstance(required, list):
        names.extend(name for name in required if name not in value)
    dependent = schema.get("dependentRequired")
    if isinstance(dependent, dict):
        for key, needed in dependent.items():
            if key in value and isinstance(needed, list):
                names.extend(name for name in needed if name not in value)
    return [echo(f"property '{name}' is required") for name in names]


def _texts(errors: list[Any]) -> list[str]:
    """The catalogue texts of engine errors, bounded."""
    return _bounded([problem_text(error) for error in errors])


def _bounded(found: list[str]) -> list[str]:
    """Deduplicated, sorted texts; at most ten, then ``and N more``."""
    texts = sorted(set(found)) or [UNCHECKABLE]
    if len(texts) > FIRST:
        return [*texts[:FIRST], f"and {len(texts) - FIRST} more"]
    return texts


def cast_integers(node: ValueNode, value: object) -> object:
    """Return ``value`` with whole floats cast to int where the schema says integer.

    Containers are copied only where something changed; the caller's data is never
    modified.
    """
    if not node.casts:
        return value
    kind = value.__class__
    if kind is float:
        return _cast_number(node, value)  # type: ignore[arg-type]
    if kind is dict:
        return _cast_object(node, value)  # type: ignore[arg-type]
    if kind is list:
        return _cast_array(node, value)  # type: ignore[arg-type]
    return value


def _cast_number(node: ValueNode, value: float) -> object:
    """A whole float where the schema says integer becomes an int."""
    if node.integer and value.is_integer():
        return int(value)
    return value


def _cast_object(node: ValueNode, value: dict[Any, Any]) -> dict[Any, Any]:
    """Cast inside an object's declared properties."""
    result = value
    for key in node.integer_keys:
        number = value.get(key)
        if number.__class__ is float and number.is_integer():
            if result is value:
                result = dict(value)
            result[key] = int(number)
    for key, child in node.deeper_keys:
        if key in value:
            sub = value[key]
            new = cast_integers(child, sub)
            if new is not sub:
                if result is value:
                    result = dict(value)
                result[key] = new
    return result


def _cast_array(node: ValueNode, value: list[Any]) -> list[Any]:
    """Cast inside an array's items."""
    items = node.items
    if not node.prefix_items and items is not None and _flat(items):
        return _cast_flat_items(items, value)
    result = value
    prefix = node.prefix_items
    for index, item in enumerate(value):
        child = prefix[index] if index < len(prefix) else items
        if child is not None and child.casts:
            new = cast_integers(child, item)
            if new is not item:
                if result is value:
                    result = list(value)
                result[index] = new
    return result


def _flat(node: ValueNode) -> bool:
    """Whether all there is to cast in ``node`` is itself or its integer keys."""
    return (
        not node.deeper_keys
        and not (node.items is not None and node.items.casts)
        and not any(child.casts for child in node.prefix_items)
    )


def _cast_flat_items(items: ValueNode, value: list[Any]) -> list[Any]:
    """The fast lane: items that are integers, or objects with integer keys only.

    One comprehension finds the items holding a float; only those are cast.
    """
    keys = items.integer_keys
    if not keys:
        hits = [i for i, item in enumerate(value) if item.__class__ is float]
    elif len(keys) == 1 and not items.integer:
        key = keys[0]
        hits = [
            i
            for i, item in enumerate(value)
            if item.__class__ is dict and item.get(key).__class__ is float
        ]
    else:
        hits = [
            i
            for i, item in enumerate(value)
            if item.__class__ is float
            or (
                item.__class__ is dict
                and any(item.get(k).__class__ is float for k in keys)
            )
        ]
    if not hits:
        return value
    result = list(value)
    for index in hits:
        result[index] = cast_integers(items, value[index])
    return result
