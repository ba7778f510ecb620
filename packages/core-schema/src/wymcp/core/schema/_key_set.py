"""Key-set closure: every object schema reached through properties and items is closed.

The closed form is what help publishes, what refusals carry and what the value gate
validates; the unknown-key gate walks the same reach. Combinators are not entered.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

_OPENNESS_KEYWORDS = ("additionalProperties", "unevaluatedProperties")


def close_schema(schema: object) -> Any:
    """Return a deep copy of `schema` with its reachable object key sets closed.

    An object schema (one with `properties` or `patternProperties`) reached from the
    root through `properties`, `items` and `prefixItems` gets
    `additionalProperties: false` unless its author set `additionalProperties` or
    `unevaluatedProperties`. A schema with neither keyword is a free-form object and
    stays open; `allOf`/`anyOf`/`oneOf`/`not`/`if`/`$ref` are not entered.
    """
    closed = copy.deepcopy(schema)
    for node in reached_schemas(closed):
        if _declares_key_set(node) and not any(k in node for k in _OPENNESS_KEYWORDS):
            node["additionalProperties"] = False
    return closed


def close_properties(properties: Mapping[str, Any]) -> dict[str, Any]:
    """Return the closed form of an action's `properties` mapping."""
    closed = close_schema({"type": "object", "properties": dict(properties)})
    result: dict[str, Any] = closed["properties"]
    return result


def reached_schemas(schema: object) -> Iterator[dict[str, Any]]:
    """Yield every schema dict reached from `schema` through properties and items."""
    stack: list[object] = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield node
        properties = node.get("properties")
        if isinstance(properties, dict):
            stack.extend(properties.values())
        items = node.get("items")
        if isinstance(items, dict):
            stack.append(items)
        prefix = node.get("prefixItems")
        if isinstance(prefix, list):
            stack.extend(prefix)


def _declares_key_set(node: Mapping[str, Any]) -> bool:
    """Whether the schema names its keys (and so can be closed)."""
    return isinstance(node.get("properties"), dict) or isinstance(
        node.get("patternProperties"), dict
    )
