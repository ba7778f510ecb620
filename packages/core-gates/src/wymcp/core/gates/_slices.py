"""The engine's verdict on large data, asked in bounded runs so other threads run.

One engine call holds the interpreter for everything it reads (4 MiB: ~0.5 s in
which the event loop cannot run). `node_accepts` answers what a node's validator
answers for the whole value, asking the engine about runs of at most `SLICE` units
and returning to Python between them, where the interpreter can pass to the loop.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from wymcp.core.gates._engine_reads import WIDE
from wymcp.core.schema import ValueNode

SLICE = 16_384
"""Units one engine call may read (a few milliseconds): a JSON value is one; an int
past 2**64 costs 1 + w**2 // 16 more, for its w 64-bit words (its conversion grows
with the square of its digits: 4,299 digits, ~0.5 ms under `multipleOf`)."""
_ERRORS = (ValueError, TypeError, OverflowError, RecursionError, AttributeError)
_SPLIT = frozenset(
    {
        "$id",
        "$anchor",
        "$comment",
        "$defs",
        "definitions",
        "$ref",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "type",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "format",
        "maxItems",
        "minItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
        "propertyNames",
        "properties",
        "patternProperties",
        "additionalProperties",
        "prefixItems",
        "items",
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
"""The keywords of a position split exactly; a position with another (or opaque:
`unevaluated*`, a dynamic or remote reference) is one engine call."""
_BY_KEY = frozenset({"propertyNames", "additionalProperties"})
"""Assertions that read an object's keys one by one (asked in runs of keys)."""


def node_accepts(node: ValueNode, value: object) -> bool:
    """Whether `node`'s validator accepts `value`; no engine call reads past `SLICE`.

    The same verdict as one call: each keyword is asked of the parts it reads, the
    parts that cannot be split (an opaque position, `uniqueItems` and `contains`
    over a large array, a large string) in one call each. If splitting raises
    (data the engine cannot read, nesting deeper than the recursion allows), the
    engine is asked about the whole value, as before; a value it cannot read is
    refused.
    """
    try:
        if cost(value, SLICE) <= SLICE:
            return bool(node.validator.is_valid(value))
        return _holds(node, value)
    except _ERRORS:
        pass
    try:
        return bool(node.validator.is_valid(value))
    except _ERRORS:
        return False


def children_accept(node: ValueNode, value: object) -> bool:
    """What `node.children_valid` answers for `value`, asked in bounded runs."""
    try:
        if cost(value, SLICE) <= SLICE:
            return bool(node.children_valid.is_valid(value))
        return _children(node, value, node.children_valid)
    except _ERRORS:
        pass
    try:
        return bool(node.children_valid.is_valid(value))
    except _ERRORS:
        return False


def cost(value: object, cap: int) -> int:
    """The units of `value` (see `SLICE`), counted until they pass `cap`."""
    seen = 1 + (_wide(value) if value.__class__ is int else 0)
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        kind = node.__class__
        if kind is dict:
            children: Any = list(node.values())
        elif kind is list:
            children = node
        else:
            continue
        seen += len(children)
        if seen > cap:
            return seen
        kinds = set(map(type, children))
        if int in kinds:
            seen += _wide_in(children, kinds)
        if dict in kinds or list in kinds:
            stack.extend(
                c for c in children if c.__class__ is dict or c.__class__ is list
            )
    return seen


def _wide(number: int) -> int:
    """The units an int costs past its own one (0 below `WIDE`)."""
    if -WIDE < number < WIDE:
        return 0
    words = number.bit_length() >> 6
    return 1 + words * words // 16


def _wide_in(children: Any, kinds: set[type]) -> int:
    """The units the ints among `children` cost past their one each."""
    ints = children if len(kinds) == 1 else [c for c in children if c.__class__ is int]
    if max(ints) < WIDE and min(ints) > -WIDE:  # in C
        return 0
    return sum(map(_wide, ints))


def runs(items: list[Any], start: int) -> Iterator[tuple[int, int, bool]]:
    """(a, b, large): runs of `items[start:]` costing at most `SLICE` together.

    `large` marks a lone item costing more, to be split itself. Items holding no
    container are weighed `SLICE` at a time in C; others one by one.
    """
    first, total, index, end = start, 0, start, len(items)
    while index < end:
        stop = min(end, index + SLICE)
        window = items[index:stop]
        kinds = set(map(type, window))
        if dict not in kinds and list not in kinds:
            weight = len(window) + (_wide_in(window, kinds) if int in kinds else 0)
            if weight <= SLICE:
                if total + weight > SLICE:
                    yield first, index, False
                    first, total = index, 0
                total += weight
                index = stop
                continue
        for at in range(index, stop):
            item = items[at]
            weight = cost(item, SLICE)
            if weight > SLICE:
                if first < at:
                    yield first, at, False
                yield at, at + 1, True
                first, total = at + 1, 0
                continue
            if total + weight > SLICE:
                yield first, at, False
                first, total = at, 0
            total += weight
        index = stop
    if first < end:
        yield first, end, False


def _holds(node: ValueNode, value: Any) -> bool:
    """`node`'s verdict on a value past `SLICE`, keyword by keyword (may raise).

    Python frames per level of the data are few (loops, a `$ref` alone followed
    in place), so data as deep as `JSON_DEPTH_LIMIT` allows (100) splits at every
    level; past the recursion limit the caller asks the engine whole.
    """
    while node.all_of and node.schema.__class__ is dict and node.schema.keys() == _REF:
        node = node.all_of[0]  # only a `$ref`: its target
    schema = node.schema
    if schema is True or schema is False:
        return schema
    kind = value.__class__
    if (
        (kind is not dict and kind is not list)
        or node.opaque
        or not isinstance(schema, dict)
        or not schema.keys() <= _SPLIT
    ):
        return bool(node.validator.is_valid(value))
    if kind is dict and _lacks(schema, value):
        return False
    for keyword, check in node.assertions:
        if not _asserts(node, keyword, check, value):
            return False
    return (
        _combined(node, value)
        and _conditional(node, value)
        and _children(node, value, node.validator)
    )


_REF = {"$ref"}


def _asserts(node: ValueNode, keyword: str, check: Any, value: Any) -> bool:
    """One assertion on a large container (may raise).

    A container's shape (`type`, `minItems`, ...) is one cheap call; `uniqueItems`
    is decided in Python; an object's keys and a plain `contains` (at least one
    item) are asked in runs; `contains` with other bounds reads the items in one
    call.
    """
    kind = value.__class__
    schema = node.schema
    if kind is list and keyword == "uniqueItems" and schema[keyword] is True:
        return _unique(value, check)
    if kind is list and keyword in _CONTAINS and _plain_contains(schema):
        return any(check.is_valid(value[a:b]) for a, b, _ in runs(value, 0))
    if kind is dict and keyword in _BY_KEY:
        keys = list(value)
        return all(
            check.is_valid(dict.fromkeys(keys[at : at + SLICE]))
            for at in range(0, len(keys), SLICE)
        )
    return bool(check.is_valid(value))


_CONTAINS = frozenset({"contains", "minContains"})


def _plain_contains(schema: dict[str, Any]) -> bool:
    """Whether `contains` asks for one item at least (no other bound)."""
    least = schema.get("minContains", 1)
    return "maxContains" not in schema and least.__class__ is int and least == 1


def assertion_holds(node: ValueNode, keyword: str, check: Any, value: object) -> bool:
    """What one of `node.assertions` answers for `value`, in bounded runs."""
    try:
        if cost(value, SLICE) <= SLICE:
            return bool(check.is_valid(value))
        return _asserts(node, keyword, check, value)
    except _ERRORS:
        pass
    try:
        return bool(check.is_valid(value))
    except _ERRORS:
        return False


def _unique(items: list[Any], check: Any) -> bool:
    """`uniqueItems` over many items, in Python: equal items are equal keys.

    The engine compares numbers as the decimals JSON writes (`1` and `1.0`,
    `1e30` and `10**30` are equal; `2.0**64` and `2**64` are not), objects
    whatever their key order, and never a boolean with a number; `_key` says the
    same. Two equal keys are confirmed by the engine on that pair; data `_key`
    cannot read is asked of the engine whole.
    """
    seen: dict[Any, Any] = {}
    for item in items:
        key = _key(item)
        if key in seen:
            if check.is_valid([seen[key], item]):
                raise ValueError(key)  # not what the engine says: ask it
            return False
        seen[key] = item
    return True


_EXACT = 2.0**53


def _key(value: Any) -> Any:
    """A hashable key, equal for the values the engine calls equal (may raise)."""
    kind = value.__class__
    if kind is str or kind is int or value is None:
        return value
    if kind is float:
        return _float_key(value)
    if kind is bool:
        return ("b", value)
    if kind is list:
        return ("l", tuple(map(_key, value)))
    if kind is dict:
        if any(key.__class__ is not str for key in value):
            raise TypeError(value)
        return ("d", tuple(sorted((key, _key(sub)) for key, sub in value.items())))
    raise TypeError(value)


def _float_key(number: float) -> object:
    """A float's key: the decimal its repr writes, an int when whole."""
    if not math.isfinite(number):
        raise ValueError(number)  # not JSON: the engine decides
    if not number.is_integer():
        return number  # equal to no int, and to no other float
    if -_EXACT < number < _EXACT:
        return int(number)
    return int(Decimal(repr(number)))


def _accepts(node: ValueNode, value: object) -> bool:
    """`node`'s verdict on any value: one call if small, else split (may raise)."""
    if cost(value, SLICE) <= SLICE:
        return bool(node.validator.is_valid(value))
    return _holds(node, value)


def _combined(node: ValueNode, value: Any) -> bool:
    """`allOf` (and `$ref`), `anyOf`, `oneOf`, `not` (loops: few frames a level)."""
    for branch in node.all_of:
        if not _holds(branch, value):
            return False
    if node.any_of:
        for branch in node.any_of:
            if _holds(branch, value):
                break
        else:
            return False
    if node.one_of and not _one_of(node.one_of, value):
        return False
    return node.not_ is None or not _holds(node.not_, value)


def _conditional(node: ValueNode, value: Any) -> bool:
    """`if`/`then`/`else` and `dependentSchemas`."""
    if node.if_ is not None:
        chosen = node.then if _holds(node.if_, value) else node.else_
        if chosen is not None and not _holds(chosen, value):
            return False
    if value.__class__ is dict:
        for key, sub in node.dependent:
            if key in value and not _holds(sub, value):
                return False
    return True


def _one_of(branches: tuple[ValueNode, ...], value: Any) -> bool:
    """Whether exactly one branch accepts `value` (stops at a second)."""
    hits = 0
    for branch in branches:
        hits += _holds(branch, value)
        if hits > 1:
            break
    return hits == 1


def _lacks(schema: dict[str, Any], value: dict[Any, Any]) -> bool:
    """Whether the object lacks a `required` (or `dependentRequired`) name."""
    required = schema.get("required", ())
    if any(name not in value for name in required):
        return True
    dependent = schema.get("dependentRequired", {})
    return any(
        key in value and any(name not in value for name in needed)
        for key, needed in dependent.items()
    )


def _children(node: ValueNode, value: Any, whole: Any) -> bool:
    """Properties, patterns, `additionalProperties`; `prefixItems`, `items`.

    `whole` is the validator asked about all of `value` where it cannot be split:
    the node's, or its `children_valid` (which leaves boolean `items` out).
    """
    if value.__class__ is list:
        return _items(node, value, whole)
    if value.__class__ is not dict or node.children_valid is None:
        return bool(whole.is_valid(value))
    if not (node.properties or node.pattern_nodes or node.additional is not None):
        return True
    keys = list(value)
    values = list(value.values())
    for first, end, large in runs(values, 0):
        if large:
            for child in _applying(node, keys[first]):
                if not _holds(child, values[first]):
                    return False
        elif not node.children_valid.is_valid(
            dict(zip(keys[first:end], values[first:end], strict=True))
        ):
            return False
    return True


def _items(node: ValueNode, value: list[Any], whole: Any) -> bool:
    """`prefixItems` item by item, then the other items in runs under `items`."""
    prefix = node.prefix_items
    items = node.items
    for child, item in zip(prefix, value, strict=False):
        if not _accepts(child, item):
            return False
    if items is None or len(value) <= len(prefix):
        return True
    if items.schema is True or items.schema is False:
        return items.schema or whole is not node.validator
    if node.items_valid is None:
        return bool(whole.is_valid(value))
    return _tail(items, node.items_valid, value, len(prefix))


def _tail(items: ValueNode, validator: Any, value: list[Any], start: int) -> bool:
    """The items from `start` under `items`: runs in one call each, large ones split."""
    for first, end, large in runs(value, start):
        if large:
            if not _holds(items, value[first]):
                return False
        elif not validator.is_valid(value[first:end]):
            return False
    return True


def _applying(node: ValueNode, key: str) -> list[ValueNode]:
    """The positions a node applies to one key's value."""
    found: list[ValueNode] = []
    if key in node.properties:
        found.append(node.properties[key])
    found.extend(
        child for pattern, child in node.pattern_nodes if pattern.is_valid(key)
    )
    if not found and node.additional is not None:
        found.append(node.additional)
    return found
