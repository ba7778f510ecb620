"""The engine's verdict on large data, asked in bounded runs so other threads run.

One engine call holds the interpreter for everything it reads (4 MiB: ~0.5 s in
which the event loop cannot run). `node_accepts` answers what a node's validator
answers for the whole value, asking the engine about runs of at most `SLICE` units
and returning to Python between them, where the interpreter can pass to the loop.
"""

from __future__ import annotations

import marshal
import math
import operator
from bisect import bisect_right
from collections.abc import Generator, Iterator
from decimal import Decimal
from itertools import accumulate, chain, count, repeat
from typing import Any

from wymcp.core.gates._engine_reads import WIDE
from wymcp.core.schema import ValueNode

SLICE = 16_384
"""Units one engine call may read (a few milliseconds): a JSON value is one; an int
past 2**64 costs 1 + w**2 // 16 more, for its w 64-bit words (its conversion grows
with the square of its digits: 4,299 digits, ~0.5 ms under `multipleOf`)."""
_CONTAINERS = (dict, list)
_IS_INT = int.__instancecheck__
"""Whether a value is an int (or a bool: never wide), asked in C by `filter`."""
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
    """The units of `value` (see `SLICE`), counted until they pass `cap`.

    Read a level at a time: the objects (or arrays) of one level are counted
    together in C (their sizes, then their values listed once the count allows),
    so many small objects cost no Python step each (`check_fast` counts every
    call's data this way).
    """
    seen = 1 + (_wide(value) if value.__class__ is int else 0)
    groups: list[list[Any]] = [[value]] if value.__class__ in _CONTAINERS else []
    while groups:
        group = groups.pop()
        kinds = set(map(type, group))
        if len(kinds) > 1:
            groups.append([c for c in group if c.__class__ is dict])
            groups.append([c for c in group if c.__class__ is list])
            continue
        seen += sum(map(len, group))
        if seen > cap:
            return seen  # before the values are listed
        children = list(
            chain.from_iterable(map(dict.values, group) if dict in kinds else group)
        )
        kinds = set(map(type, children))
        if int in kinds:
            seen += _wide_in(children, kinds)
        if dict in kinds or list in kinds:
            groups.append(
                [c for c in children if c.__class__ is dict or c.__class__ is list]
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
    ints = children if len(kinds) == 1 else list(filter(_IS_INT, children))
    if max(ints) < WIDE and min(ints) > -WIDE:  # in C
        return 0
    return sum(map(_wide, ints))


def runs(items: list[Any], start: int) -> Iterator[tuple[int, int, bool]]:
    """(a, b, large): runs of `items[start:]` costing at most `SLICE` together.

    `large` marks a lone item costing more, to be split itself. Items holding no
    container are weighed `SLICE` at a time in C, and so are objects (or arrays)
    holding none (`_flat`); others one by one.
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
        totals = _flat(window, kinds)
        if totals is None:
            totals = list(accumulate(cost(item, SLICE) for item in window))
        first, total = yield from _packed(totals, index, first, total)
        index += len(totals)
    if first < end:
        yield first, end, False


_FLAT = 4 * SLICE
"""Units of flat containers `_flat` weighs at once (their values listed: 0.5 MiB)."""


def _flat(window: list[Any], kinds: set[type]) -> list[int] | None:
    """Running units of the leading items of `window`, if they hold no container.

    For a window of objects only (or arrays only): the units of its first k
    items (each 1 + its values, `_FLAT` at most in all), all counted in C; None
    if one of them holds a container or an int past `WIDE`, or the first alone
    passes `_FLAT` (then `runs` weighs them one by one).
    """
    if len(kinds) != 1 or (kind := next(iter(kinds))) not in _CONTAINERS:
        return None
    totals = list(map(operator.add, accumulate(map(len, window)), count(1)))
    head = bisect_right(totals, _FLAT)
    if head == 0:
        return None
    del totals[head:]
    held = window[:head]
    values = list(chain.from_iterable(map(dict.values, held) if kind is dict else held))
    inner = set(map(type, values))
    if dict in inner or list in inner or (int in inner and _wide_in(values, inner)):
        return None
    return totals


def _packed(
    totals: list[int], index: int, first: int, total: int
) -> Generator[tuple[int, int, bool], None, tuple[int, int]]:
    """The runs `runs` yields over flat items from `index` (running units `totals`).

    `first`, `total`: the run open before them; returns the one open after.
    Each run is found by bisection (no Python step per item).
    """
    done, at, end = 0, 0, len(totals)
    while at < end:
        stop = bisect_right(totals, SLICE - total + done, at)
        if stop > at:
            total += totals[stop - 1] - done
            done, at = totals[stop - 1], stop
            continue
        weight = totals[at] - done
        if weight > SLICE:
            if first < index + at:
                yield first, index + at, False
            yield index + at, index + at + 1, True
            first, total = index + at + 1, 0
        else:
            yield first, index + at, False
            first, total = index + at, weight
        done, at = totals[at], at + 1
    return first, total


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
    same. Items of one plain shape are told apart in C first (`_distinct`);
    otherwise, or when two may be equal, each gets its `_key`. Two equal keys are
    confirmed by the engine on that pair; data `_key` cannot read is asked of the
    engine whole.
    """
    if _distinct(items):
        return True
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
_PLAIN = frozenset({str, int, bool, type(None)})
"""Scalars equal in Python only where the engine calls them equal (but `True == 1`:
they are told apart by type, or the array takes `_key`), and which `marshal`
(version 0: no references, no interning marks) writes one way each."""


def _distinct(items: list[Any]) -> bool:
    """Whether no two items are equal, told in C for arrays of one plain shape.

    The shapes: scalars of `_PLAIN` (the items are their keys; a boolean beside
    an int makes two keys equal, which only sends the array to `_key`); finite
    floats alone (equal floats are equal decimals); arrays, or objects with
    string keys, holding `_PLAIN` values only: the `marshal` bytes of each, its
    keys in the order every object with those keys has (an order that differs
    between two objects of the same keys sends the array to `_key`). False when
    unsure: two items may be equal, or the shape is another. Read in `runs`, so
    each C call reads at most `SLICE` units.
    """
    seen: set[Any] = set()
    every: set[type] = set()
    orders: set[tuple[Any, ...]] = set()
    for first, end, large in runs(items, 0):
        run = items[first:end]
        every.update(map(type, run))
        if large or (len(every) > 1 and not every <= _PLAIN):
            return False
        if every <= _PLAIN:
            seen.update(run)
        elif every == {float}:
            if not all(map(math.isfinite, run)):
                return False
            seen.update(run)
        elif every in ({list}, {dict}):
            if not _plain_inside(run, orders):
                return False
            seen.update(map(marshal.dumps, run, repeat(0)))
        else:
            return False
        if len(seen) < end:
            return False  # two may be equal: `_key` finds them
    return len(set(map(frozenset, orders))) == len(orders)


def _plain_inside(run: list[Any], orders: set[tuple[Any, ...]]) -> bool:
    """Whether arrays (or objects: string keys, orders kept) hold `_PLAIN` only."""
    if run[0].__class__ is list:
        return set(map(type, chain.from_iterable(run))) <= _PLAIN
    if not set(map(type, chain.from_iterable(run))) <= {str}:
        return False
    orders.update(map(tuple, run))
    return set(map(type, chain.from_iterable(map(dict.values, run)))) <= _PLAIN


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
