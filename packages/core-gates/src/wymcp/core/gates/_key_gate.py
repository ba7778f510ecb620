"""The unknown-key gate: keys outside a closed key set, nested objects and items too.

It walks the value root's reach (never into combinators) in path order, so the first
ten paths it meets are the ten a refusal lists; past them it only counts. In lenient
mode it returns the data without those keys, copied where something was dropped.
"""

from __future__ import annotations

from typing import Any

import attrs

from wymcp.core.gates._bound import FIRST, Path, token_key
from wymcp.core.gates._copy_on_write import replaced
from wymcp.core.schema import ValueNode


@attrs.define
class KeyReport:
    """The unknown keys found: the first ten paths in path order, and a count."""

    count: int = 0
    kept: list[Path] = attrs.field(factory=list)

    @property
    def full(self) -> bool:
        """Whether ten paths are kept (the rest are only counted)."""
        return len(self.kept) >= FIRST

    def add(self, path: Path, key: object) -> None:
        """Count one unknown key; keep its path while fewer than ten are kept."""
        self.count += 1
        if len(self.kept) < FIRST:
            self.kept.append((*path, str(key)))


def unknown_keys(
    node: ValueNode, value: object, *, drop: bool
) -> tuple[KeyReport, object]:
    """The unknown keys under `value`, and the value without them if `drop`."""
    report = KeyReport()
    if not node.keyed:
        return report, value
    pruned = _walk(node, value, (), report, drop=drop)
    return report, pruned


def _walk(
    node: ValueNode, value: object, path: Path, report: KeyReport, *, drop: bool
) -> object:
    """Report the unknown keys under `value`; return it pruned (copied) if needed."""
    kind = value.__class__
    if kind is dict:
        return _walk_object(node, value, path, report, drop=drop)  # type: ignore[arg-type]
    if kind is list:
        return _walk_array(node, value, path, report, drop=drop)  # type: ignore[arg-type]
    return value


def _walk_object(
    node: ValueNode,
    value: dict[Any, Any],
    path: Path,
    report: KeyReport,
    *,
    drop: bool,
) -> object:
    """Check one object's keys, then descend, both in path order."""
    properties = node.properties
    stray: list[Any] = []
    if node.closed:
        stray = [key for key in value if key not in properties]
        if stray and node.pattern_nodes:
            stray = [k for k in stray if not _matched(node, str(k))]
    below = [key for key, child in properties.items() if child.keyed and key in value]
    if not stray and not below:
        return value
    visits = [(key, True) for key in stray] + [(key, False) for key in below]
    if len(visits) > 1:
        visits.sort(key=lambda visit: token_key(str(visit[0])))
    result = value
    for key, unknown in visits:
        if unknown:
            report.add(path, key)
            continue
        sub = result[key]
        new = _walk(properties[key], sub, (*path, key), report, drop=drop)
        if new is not sub:
            result = replaced(result, value, key, new)
    if drop and stray:
        dropped = set(stray)
        result = {k: v for k, v in result.items() if k not in dropped}
    return result


def _matched(node: ValueNode, key: str) -> bool:
    """Whether a `patternProperties` pattern matches `key`, as the engine reads it.

    The value gate asks the engine too, so both gates read a pattern in one dialect
    (ECMA 262's non-space class matches U+001C, which Python's `re` counts as a
    space).
    """
    for pattern, _ in node.pattern_nodes:
        try:
            if pattern.is_valid(key):
                return True
        except (ValueError, TypeError):  # pragma: no cover - a str is always read
            continue
    return False


def _walk_array(
    node: ValueNode, value: list[Any], path: Path, report: KeyReport, *, drop: bool
) -> object:
    """Descend into an array's items, in index order."""
    prefix = node.prefix_items
    items = node.items
    if not prefix and (items is None or not items.keyed):
        return value
    if not prefix and items is not None and _flat(items):
        return _walk_flat_items(items, value, path, report, drop=drop)
    result = value
    for index, item in enumerate(value):
        kind = item.__class__
        if kind is not dict and kind is not list:
            continue
        child = prefix[index] if index < len(prefix) else items
        if child is None or not child.keyed:
            continue
        new = _walk(child, item, (*path, index), report, drop=drop)
        if new is not item:
            result = replaced(result, value, index, new)
    return result


def _flat(node: ValueNode) -> bool:
    """A closed key set without patterns and with nothing closed below it."""
    return (
        node.closed
        and not node.pattern_nodes
        and not any(child.keyed for child in node.properties.values())
    )


def _walk_flat_items(
    items: ValueNode, value: list[Any], path: Path, report: KeyReport, *, drop: bool
) -> object:
    """The fast lane for arrays of flat objects: one set difference per item."""
    declared = items.properties.keys()
    result = value
    for index, item in enumerate(value):
        if item.__class__ is not dict:
            continue
        stray = item.keys() - declared
        if not stray:
            continue
        if report.full:
            report.count += len(stray)
        else:
            for key in sorted(stray, key=lambda key: token_key(str(key))):
                report.add((*path, index), key)
        if drop:
            result = replaced(
                result, value, index, {k: v for k, v in item.items() if k not in stray}
            )
    return result
