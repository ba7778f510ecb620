"""`x-mcp-header` annotations of a hand-written input schema: reading and the rules.

MCP 2026-07-28 lets a tool route a primitive argument into an `Mcp-Param-<Name>`
header. A client drops a whole tool whose annotations break a rule, so registration
refuses such a schema instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import attrs

ANNOTATION = "x-mcp-header"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_PRIMITIVE_TYPES = frozenset({"string", "integer", "boolean"})
_ONE_SCHEMA = frozenset(
    {
        "items",
        "contains",
        "additionalProperties",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAPS = frozenset(
    {"patternProperties", "dependentSchemas", "$defs", "definitions"}
)


@attrs.frozen
class HeaderAnnotation:
    """One annotated argument: `Mcp-Param-<header>` mirrors the value at `path`.

    Attributes:
        header: the annotation's token (the header name is `Mcp-Param-` + it).
        path: the chain of `properties` keys from the root to the property.
        type: `string`, `integer` or `boolean`.
    """

    header: str
    path: tuple[str, ...]
    type: str


def header_annotations(schema: object) -> tuple[HeaderAnnotation, ...]:
    """Read the valid annotations of `schema`, sorted by path."""
    found = [
        HeaderAnnotation(node[ANNOTATION], path, node["type"])
        for path, node in _positions(schema)
        if path
        and isinstance(node.get(ANNOTATION), str)
        and _TOKEN.fullmatch(node[ANNOTATION])
        and node.get("type") in _PRIMITIVE_TYPES
    ]
    return tuple(sorted(found, key=lambda annotation: annotation.path))


def header_annotation_problems(schema: object) -> list[str]:
    """Name every way the annotations of `schema` break the 2026-07-28 rules."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path, node in _positions(schema):
        if ANNOTATION not in node:
            continue
        if not path:
            problems.append(
                f"{ANNOTATION} sits where only a chain of 'properties' keys may lead"
                " (not the root, items, combinators, $defs or $ref)"
            )
            continue
        where = ".".join(path)
        header = node[ANNOTATION]
        if not isinstance(header, str) or not _TOKEN.fullmatch(header):
            problems.append(
                f"property {where!r}: {ANNOTATION} must be a non-empty RFC 9110 token"
            )
            continue
        kind = node.get("type")
        if not isinstance(kind, str) or kind not in _PRIMITIVE_TYPES:
            problems.append(
                f"property {where!r}: {ANNOTATION} needs a single 'type' of string,"
                " integer or boolean"
            )
        folded = header.lower()
        if folded in seen:
            problems.append(
                f"property {where!r}: {ANNOTATION} {header!r} repeats the header of"
                f" property {seen[folded]!r} (headers compare case-insensitively)"
            )
        else:
            seen[folded] = where
    return problems


def _positions(
    schema: object,
) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Yield every schema position in document order with its properties chain.

    The chain is None once the walk left a pure chain of `properties` keys.
    """
    stack: list[tuple[tuple[str, ...] | None, object]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        below: list[tuple[tuple[str, ...] | None, object]] = []
        for keyword, value in node.items():
            if keyword == "properties" and isinstance(value, dict):
                below.extend(
                    (None if path is None else (*path, str(name)), sub)
                    for name, sub in value.items()
                )
            elif keyword in _ONE_SCHEMA:
                below.append((None, value))
            elif keyword in _SCHEMA_LISTS and isinstance(value, list):
                below.extend((None, sub) for sub in value)
            elif keyword in _SCHEMA_MAPS and isinstance(value, dict):
                below.extend((None, sub) for sub in value.values())
        stack.extend(reversed(below))
