"""`multipleOf` decided on the decimal numbers JSON carries, and cheaply.

A float means the decimal its shortest repr spells (`0.01`, `1.5`); an integer is
exact at any size. The engine decides JSON ints (a multiple of `p/q` in lowest terms
is one of `p`), this module any other number, whole floats too, remembering them.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from wymcp.core.schema._work_budget import spend_work

NOT_MULTIPLE = "value is not a multiple of {}"
UNDECIDED = "value could not be checked against multipleOf"
KEYWORD = "wymcpMultipleOf"
"""The keyword a compiled root checks a number the engine does not decide with."""
MEMO_LIMIT = 4096
"""Most decisions one factor remembers; past it the memory starts again empty."""
_CONDITIONAL = frozenset({"if", "then", "else"})
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_SCHEMAS = frozenset(
    {
        "items",
        "additionalProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "additionalItems",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
    }
)


def decimal_parts(number: float) -> tuple[int, int] | None:
    """`(digits, exponent)`: `number` is `digits * 10**exponent` in JSON.

    An int is itself; a float is read from its shortest repr; None for a float JSON
    cannot carry (inf, NaN).
    """
    if isinstance(number, int):
        return int(number), 0
    text = repr(float(number))
    if text[-1] in "fn":  # inf, -inf, nan
        return None
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    return int(whole + fraction), (int(exponent) if exponent else 0) - len(fraction)


@functools.lru_cache(maxsize=256)
def factor_parts(factor: float) -> tuple[int, int] | None:
    """A positive factor as `(m, s)`: `m / 10**s` in lowest decimal terms."""
    parts = decimal_parts(factor)
    if parts is None or parts[0] <= 0:
        return None
    digits, exponent = parts
    if exponent >= 0:
        return digits * 10**exponent, 0
    while exponent < 0 and digits % 10 == 0:
        digits //= 10
        exponent += 1
    return digits, -exponent


def is_multiple(value: float, m: int, s: int) -> bool | None:
    """Whether a number is a multiple of `m / 10**s`; None if it has no decimal.

    A float is first read by two float operations, exact while `value * 10**s`
    stays under 10**15 (any decimal of at most 15 digits is the shortest repr of
    the double nearest it): the integer `t` nearest that product is the scaled
    decimal exactly when `t / 10**s` gives the float back. Anything else is read
    from the repr with integer arithmetic.
    """
    if isinstance(value, int):
        return bool((int(value) * 10**s) % m == 0)
    if s <= _EXACT_SCALE:
        scale = _SCALES[s]
        scaled = value * scale
        if -_FAST_LIMIT < scaled < _FAST_LIMIT:
            nearest = round(scaled)
            return bool(nearest / scale == value and nearest % m == 0)
    parts = decimal_parts(value)
    if parts is None:
        return None
    digits, exponent = parts
    shift = exponent + s
    if shift >= 0:
        return bool((digits * 10**shift) % m == 0)
    return bool(digits % (m * 10**-shift) == 0)


_EXACT_SCALE = 22
_SCALES = tuple(float(10**power) for power in range(_EXACT_SCALE + 1))
_FAST_LIMIT = 1e15 - 1


def multiple_of_problem(value: object, factor: object) -> str | None:
    """None if `value` is a multiple of `factor` (or not a number), else a text."""
    if value.__class__ is bool or not isinstance(value, (int, float)):
        return None
    if factor.__class__ is bool or not isinstance(factor, (int, float)):
        return UNDECIDED
    parts = factor_parts(factor)
    if parts is None:
        return UNDECIDED
    decided = is_multiple(value, *parts)
    if decided is None:
        return UNDECIDED
    return None if decided else NOT_MULTIPLE.format(repr(factor))


def integer_step(factor: object) -> int | None:
    """The integer `p` of a factor `p/q` in lowest terms (None if not a number)."""
    if factor.__class__ is bool or not isinstance(factor, (int, float)):
        return None
    parts = factor_parts(factor)
    if parts is None:
        return None
    m, s = parts
    return m // math.gcd(m, 10**s)


def decimal_multiples(schema: object) -> object:
    """A copy of `schema` whose `multipleOf` keywords ask the engine first.

    `{"multipleOf": f}` becomes an `allOf` entry `{"if": {"$ref": INTEGER},
    "then": {"if": {"multipleOf": p}, "else": {KEYWORD: f}}, "else": {KEYWORD:
    f}}`: the engine decides an int alone when it is a multiple of `p` (`p/q`
    in lowest terms; for an integer factor, `then` is `{"multipleOf": f}`),
    integer arithmetic, exact, and nanoseconds; any other number reaches
    `KEYWORD`. `INTEGER` (`integer_registry`) is the JSON int alone: a whole
    float (`7.0`, `7e280`) goes to `KEYWORD` too, where it is counted against
    the running work budget and remembered, because the engine's own check of it
    costs up to a microsecond, in one call that holds the interpreter. Only schema
    positions are read (not `enum`, `const`, `default`); a factor that is
    not a positive number is left to the engine, which refuses it when it builds.
    """
    if isinstance(schema, list):
        return [decimal_multiples(sub) for sub in schema]
    if not isinstance(schema, dict):
        return schema
    copied: dict[Any, Any] = {}
    for keyword, value in schema.items():
        if keyword in _SCHEMA_MAPS and isinstance(value, dict):
            copied[keyword] = {
                name: decimal_multiples(sub) for name, sub in value.items()
            }
        elif keyword in _SCHEMA_LISTS and isinstance(value, list):
            copied[keyword] = [decimal_multiples(sub) for sub in value]
        elif keyword in _SCHEMAS and isinstance(value, dict):
            copied[keyword] = decimal_multiples(value)
        else:
            copied[keyword] = value
    factor = copied.get("multipleOf")
    step = integer_step(factor)
    if step is not None:
        del copied["multipleOf"]
        python = {KEYWORD: factor}
        then: dict[str, Any] = (
            {"multipleOf": step}
            if step == factor
            else {"if": {"multipleOf": step}, "else": python}
        )
        decided = {"if": {"$ref": INTEGER}, "then": then, "else": python}
        if not _CONDITIONAL & copied.keys():
            copied.update(decided)
        else:
            branches = copied.get("allOf")
            copied["allOf"] = (
                [*branches, decided] if isinstance(branches, list) else [decided]
            )
    return copied


INTEGER = "urn:wymcp:json-int"
"""The schema of a JSON int alone (not `7.0`): draft 4's `integer`."""


def integer_resource() -> tuple[str, dict[str, Any]]:
    """`INTEGER` and its schema, for the registry every exact validator reads."""
    return INTEGER, {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "integer",
    }


class DecimalMultipleOf:
    """`KEYWORD` as the engine calls it (`keywords=` option): one factor.

    A decision is remembered per value (at most `MEMO_LIMIT`), so an array of one
    number repeated costs one decision; each call spends the running check's budget.
    """

    def __init__(
        self, parent_schema: dict[str, Any], value: Any, schema_path: list[str | int]
    ) -> None:
        """Keep the factor; a factor that is not a positive number refuses to build."""
        del parent_schema, schema_path
        if value.__class__ is bool or not isinstance(value, (int, float)):
            raise ValueError("multipleOf must be a number")
        parts = factor_parts(value)
        if parts is None:
            raise ValueError("multipleOf must be strictly greater than 0")
        self.m, self.s = parts
        self.text = NOT_MULTIPLE.format(repr(value))
        self.memo: dict[object, bool | None] = {}

    def validate(self, instance: Any) -> None:
        """Raise `ValueError` with the problem text when `instance` fails."""
        spend_work()
        kind = instance.__class__
        if kind is not float and kind is not int:
            if kind is bool or not isinstance(instance, (int, float)):
                return
            instance = int(instance) if isinstance(instance, int) else float(instance)
        memo = self.memo
        decided = memo.get(instance, _UNKNOWN)
        if decided is _UNKNOWN:
            decided = is_multiple(instance, self.m, self.s)
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            memo[instance] = decided
        if decided is None:
            raise ValueError(UNDECIDED)
        if not decided:
            raise ValueError(self.text)


_UNKNOWN = object()
