"""What asking the engine for its errors about a value may cost, told before asking.

The engine builds every error of a call at once, each a copy of its value, its path
and messages quoting the value and schema: a value is weighed by its characters,
depth and path, times the errors one place of the schema can make (`errors_fit`).
"""

from __future__ import annotations

from typing import Any

from wymcp.core.schema import ValueNode

ERRORS_WEIGHT = 1024 * 1024
"""Most a value may weigh for the engine to be asked for its errors (each error
costs the engine up to about 12 bytes per weight unit: at most ~12 MiB a call)."""
_VALUE = 32
"""The weight of one value before its characters (an error's own objects)."""
_ESCAPED = 6
"""Bytes a character may take in an error's message (`\\u0001`)."""
_PATH = 8
"""Bytes a key's character may take in each error's path (4 in the engine's, 4
in Python's copy of it)."""
VALUES_ASKED = 256
"""Most values (containers and scalars, at any depth) the engine is asked about at
once, whatever the schema: an error no count here foresees then costs at most this
many times what the schema's own keywords can make about one value."""


def errors_fit(
    value: object, limit: int = ERRORS_WEIGHT, *, copies: int = 1, schema_keys: int = 0
) -> bool:
    """Whether the engine's errors about `value` weigh at most `limit`.

    Each value weighs `_VALUE` plus `_ESCAPED` per character of a string or an
    object's keys, or the digits of an int, times its depth (a copy per level of
    the containers around it), plus `_PATH` per character of the keys on its
    path (every error about it holds its path) and per character of
    `schema_keys` per level (the schema's longest key past `_FREE_KEY`: a
    pattern or `$defs` name, which each error's schema and evaluation paths
    repeat once per level), times `copies` (how many errors may quote one
    value: `errors_per_place`). One pass, stopped as soon as the
    weight passes `limit` or the values pass `VALUES_ASKED`; a container's items
    are counted before they are stacked, so the pass holds at most
    `VALUES_ASKED` of them.
    """
    budget = limit // max(copies, 1)
    weight = _VALUE
    values = 1
    stack: list[tuple[Any, int, int]] = [(value, 1, 0)]
    while stack:
        node, level, path = stack.pop()
        weight += _PATH * (path + schema_keys * (level + 1))
        kind = node.__class__
        if kind is str:
            weight += _ESCAPED * len(node) * level
        elif kind is int:
            weight += node.bit_length() // 3 * level
        elif kind is dict or kind is list:
            values += len(node)
            weight += _VALUE * (level + 1) * len(node)
            if weight > budget or values > VALUES_ASKED:
                return False
            if kind is dict:
                keys = [len(str(key)) for key in node]
                weight += _ESCAPED * sum(keys) * (level + 1)
                stack.extend(
                    (child, level + 1, path + size)
                    for child, size in zip(node.values(), keys, strict=True)
                )
            else:
                stack.extend((child, level + 1, path + 8) for child in node)
        if weight > budget:
            return False
    return True


_FREE_KEY = 64
"""Characters of a schema's keys that its errors' paths carry at no charge."""


def schema_keys(schema: object) -> int:
    """The characters of the schema's longest key or `$id` past `_FREE_KEY`.

    Each engine error's schema and evaluation paths hold the keys that led to
    it (a `patternProperties` pattern, a `$defs` name), once per level, and its
    location the `$id` of the resource it is in. 0 if none is that long.
    """
    longest = 0
    pending: list[Any] = [schema]
    while pending:
        top = pending.pop()
        if top.__class__ is dict:
            longest = max(longest, *(len(str(key)) for key in top), 0)
            resource = top.get("$id")
            if isinstance(resource, str):
                longest = max(longest, len(resource))
            pending.extend(top.values())
        elif top.__class__ is list:
            pending.extend(top)
    return max(longest - _FREE_KEY, 0)


PLACES_READ = 4096
"""Most instance places (or nodes in one) `errors_per_place` looks at; past them it
answers a count no value fits (the engine is then not asked: the value is named)."""


def errors_per_place(node: ValueNode) -> int:
    """How many engine errors may quote one value, at most, for a schema from `node`.

    A place is the nodes applying to one value together, each as many times as
    the schema applies it (two patterns of one schema are two): a node, its
    `allOf` branches and references, the other combinators' branches, the
    conditional and dependent schemas; and below it, for a key, every node's
    property of that name with every pattern of every node (each may match) and
    `unevaluatedProperties`, for a key no property names the patterns with
    `additionalProperties`, for an item the `prefixItems` of its index with
    `items` and `unevaluatedItems`. A node makes one error and one per
    assertion keyword; the answer is the most over every place from `node`.
    """
    most = 1
    errors: dict[int, int] = {}
    seen: set[tuple[int, ...]] = set()
    pending: list[list[ValueNode]] = [[node]]
    while pending:
        place = pending.pop()
        key = tuple(sorted(map(id, place)))
        if key in seen:
            continue
        if len(seen) == PLACES_READ or len(place) > PLACES_READ:
            return ERRORS_WEIGHT
        seen.add(key)
        most = max(most, sum(_errors_at(member, errors) for member in place))
        applying = _applying(place)
        if applying is None:
            return ERRORS_WEIGHT
        pending.extend(group for group in _below(applying) if group)
    return most


def _same_place(node: ValueNode) -> list[ValueNode]:
    """The nodes applying with `node` to its value (combinators, conditional, ...)."""
    found = [*node.all_of, *node.any_of, *node.one_of]
    found.extend(child for _, child in node.dependent)
    found.extend(
        child for child in (node.not_, node.if_, node.then, node.else_) if child
    )
    return found


def _errors_at(node: ValueNode, errors: dict[int, int]) -> int:
    """The errors `node` and the nodes applying with it can make about one value."""
    known = errors.get(id(node))
    if known is not None:
        return known
    errors[id(node)] = 0  # a cycle at one place adds nothing more
    total = 1 + keyword_errors(node)
    total += sum(_errors_at(child, errors) for child in _same_place(node))
    errors[id(node)] = min(total, ERRORS_WEIGHT)
    return errors[id(node)]


def _applying(place: list[ValueNode]) -> list[ValueNode] | None:
    """Every node applying at `place`, as many times as the schema applies it.

    Each member with the nodes applying with it, a node reached by two paths
    (two `$ref`s to one target) listed twice, so that what it applies below
    counts twice too; a cycle back to a node on the path adds nothing. None
    past `PLACES_READ` nodes.
    """
    found: list[ValueNode] = []
    for member in place:
        pending: list[tuple[ValueNode, frozenset[int]]] = [(member, frozenset())]
        while pending:
            top, above = pending.pop()
            if id(top) in above:
                continue
            found.append(top)
            if len(found) > PLACES_READ:
                return None
            path = above | {id(top)}
            pending.extend((child, path) for child in _same_place(top))
    return found


def _below(place: list[ValueNode]) -> list[list[ValueNode]]:
    """The groups of nodes that may apply together to one value below `place`."""
    patterns = [child for node in place for _, child in node.pattern_nodes]
    unevaluated = {
        name: [
            child for node in place for kind, child in node.unevaluated if kind == name
        ]
        for name in ("unevaluatedProperties", "unevaluatedItems")
    }
    names = {name for node in place for name in node.properties}
    groups = [
        [node.properties[name] for node in place if name in node.properties]
        + patterns
        + [
            node.additional  # another node's `additionalProperties` applies too
            for node in place
            if node.additional is not None and name not in node.properties
        ]
        + unevaluated["unevaluatedProperties"]
        for name in names
    ]
    additional = [node.additional for node in place if node.additional is not None]
    groups.append(patterns + additional + unevaluated["unevaluatedProperties"])
    items = [node.items for node in place if node.items is not None]
    longest = max((len(node.prefix_items) for node in place), default=0)
    groups.extend(
        [node.prefix_items[index] for node in place if index < len(node.prefix_items)]
        + items
        + unevaluated["unevaluatedItems"]
        for index in range(longest)
    )
    groups.append(items + unevaluated["unevaluatedItems"])
    return groups


_SILENT = frozenset(
    {
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$recursiveAnchor",
        "$vocabulary",
        "$comment",
        "$defs",
        "definitions",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "properties",
        "patternProperties",
        "prefixItems",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
    }
)
"""Keywords that make no error of their own: annotations, and those whose
subschemas are nodes (their errors are counted at those nodes)."""
_QUOTED = 32
"""Bytes of the schema an error quotes that cost as much as one more error."""


def keyword_errors(node: ValueNode) -> int:
    """How many errors the node's own keywords can make about one value, at most.

    Each keyword that makes errors counts one, plus one per entry of every list
    and object it holds at any depth (`required` makes an error per missing
    name, `dependentRequired` per name of each list, a subschema no node stands
    for per keyword; `propertyNames` makes its errors for every key, each
    holding the whole object, so it counts `VALUES_ASKED` times); and the node
    counts one more per `_QUOTED` bytes of its whole schema, subschemas and
    annotations included (an `enum`, `const` or `pattern` error quotes its
    value, a `not` error its whole subschema). The count does not depend on
    knowing the keyword. A keyword whose subschemas are nodes makes its errors
    at those nodes, unless the node does not stand for it (`items` as a list,
    a `$ref` the schema does not resolve); a dynamic reference, whose target
    the data chooses, or a reference inside a subschema no node stands for,
    counts as no value fitting (`ERRORS_WEIGHT`).
    """
    schema = node.schema
    if not isinstance(schema, dict):
        return 0
    if "$dynamicRef" in schema or "$recursiveRef" in schema:
        return ERRORS_WEIGHT
    count = _quoted(schema) // _QUOTED
    for keyword, held in schema.items():
        if keyword in _SILENT or _stood_for(node, keyword):
            continue
        if keyword == "$ref":
            return ERRORS_WEIGHT  # a target outside the document: not a node
        made = 1 + _entries(held)
        if keyword == "propertyNames":
            made *= VALUES_ASKED  # per key, each error a copy of the whole object
        count += made
        if count >= ERRORS_WEIGHT:
            return ERRORS_WEIGHT
    return min(count, ERRORS_WEIGHT)


def _stood_for(node: ValueNode, keyword: str) -> bool:
    """Whether a node stands for the subschema(s) `keyword` holds."""
    if keyword == "$ref":
        branches = node.schema.get("allOf")
        return len(node.all_of) > (len(branches) if isinstance(branches, list) else 0)
    if keyword == "items":
        return node.items is not None
    if keyword == "additionalProperties":
        return node.additional is not None
    return keyword in ("unevaluatedProperties", "unevaluatedItems") and any(
        name == keyword for name, _ in node.unevaluated
    )


def _entries(value: object) -> int:
    """Entries of the lists and objects in `value`, at any depth.

    The entries under a `propertyNames` count `VALUES_ASKED` times (its errors
    are made for every key, each holding the whole object).
    """
    entries = 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending and entries < ERRORS_WEIGHT:
        top, times = pending.pop()
        kind = top.__class__
        if kind is dict:
            if "$ref" in top or "$dynamicRef" in top or "$recursiveRef" in top:
                return ERRORS_WEIGHT
            entries += len(top) * times
            pending.extend(
                (held, times * VALUES_ASKED if key == "propertyNames" else times)
                for key, held in top.items()
            )
        elif kind is list:
            entries += len(top) * times
            pending.extend((held, times) for held in top)
    return min(entries, ERRORS_WEIGHT)


def _quoted(schema: object) -> int:
    """Characters of the keys, strings and other scalars in `schema`, at any depth."""
    size = 0
    pending: list[Any] = [schema]
    while pending and size < ERRORS_WEIGHT * _QUOTED:
        top = pending.pop()
        kind = top.__class__
        if kind is dict:
            size += sum(len(str(key)) + 4 for key in top)
            pending.extend(top.values())
        elif kind is list:
            size += len(top)
            pending.extend(top)
        else:
            size += len(str(top))
    return size
