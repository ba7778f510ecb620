"""The unknown-key gate: keys outside a closed key set, nested objects and items too.

It walks the data along the value root's reach (``properties``, ``items``,
``prefixItems``; never into combinators) and reports every key a closed object
schema does not declare. In lenient mode it returns the data without those keys.
"""

from __future__ import annotations

from typing import Any

from wymcp.core.gates._bound import Path
from wymcp.core.schema import ValueNode


def unknown_keys(
    node: ValueNode, value: object, *, drop: bool
) -> tuple[list[Path], object]:
    """Every unknown key's path, and the value without them when ``drop`` is set."""
    found: list[Path] = []
    if not node.keyed:
        return found, value
    pruned = _walk(node, value, (), found, drop=drop)
    return found, pruned


def _walk(
    node: ValueNode, value: object, path: Path, found: list[Path], *, drop: bool
) -> object:
    """Report the unknown keys under ``value``; return it pruned (copied) if needed."""
    if isinstance(value, dict):
        return _walk_object(node, value, path, found, drop=drop)
    if isinstance(value, list) and (node.items is not None or node.prefix_items):
        return _walk_array(node, value, path, found, drop=drop)
    return value


def _walk_object(
    node: ValueNode,
    value: dict[Any, Any],
    path: Path,
    found: list[Path],
    *,
    drop: bool,
) -> object:
    """Check one object's keys against its node, then descend into its properties."""
    result = value
    if node.closed:
        stray = [
            key
            for key in value
            if key not in node.properties
            and not any(p.search(str(key)) for p in node.patterns)
        ]
        found.extend((*path, str(key)) for key in stray)
        if drop and stray:
            result = {k: v for k, v in value.items() if k not in stray}
    for key, child in node.properties.items():
        if not child.keyed or key not in result:
            continue
        sub = result[key]
        new = _walk(child, sub, (*path, key), found, drop=drop)
        if new is not sub:
            if result is value:
                result = dict(value)
            result[key] = new
    return result


def _walk_array(
    node: ValueNode, value: list[Any], path: Path, found: list[Path], *, drop: bool
) -> object:
    """Descend into an array's items."""
    result = value
    prefix = node.prefix_items
    items = node.items
    if not prefix and (items is None or not items.keyed):
        return value
    for index, item in enumerate(value):
        kind = item.__class__
        if kind is not dict and kind is not list:
            continue
        child = prefix[index] if index < len(prefix) else items
        if child is None or not child.keyed:
            continue
        new = _walk(child, item, (*path, index), found, drop=drop)
        if new is not item:
            if result is value:
                result = list(value)
            result[index] = new
    return result
