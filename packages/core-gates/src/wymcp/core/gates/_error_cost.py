"""What asking the engine for its errors about a value may cost, told before asking.

The engine builds every error of a call at once, each with a copy of the value it
refuses and two messages quoting it, and an `anyOf` error holds the errors of every
level below it: a value is weighed by its characters times their depth.
"""

from __future__ import annotations

from typing import Any

ERRORS_WEIGHT = 512 * 1024
"""Most a value may weigh for the engine to be asked for its errors (each error
costs the engine about 20 weight units in memory: at most ~10 MiB a call)."""
_VALUE = 32
"""The weight of one value before its characters (an error's own objects)."""


def errors_fit(value: object, limit: int = ERRORS_WEIGHT) -> bool:
    """Whether the engine's errors about `value` weigh at most `limit`.

    Each value weighs `_VALUE` plus the characters of a string, the digits of an
    int or an object's keys, times its depth (a copy per level of the containers
    around it). One pass, stopped as soon as the weight passes `limit`; a
    container's items are weighed before they are stacked, so the pass holds at
    most `limit / _VALUE` of them.
    """
    weight = _VALUE
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        kind = node.__class__
        if kind is str:
            weight += len(node) * level
        elif kind is int:
            weight += node.bit_length() // 3 * level
        elif kind is dict or kind is list:
            weight += _VALUE * (level + 1) * len(node)
            if weight > limit:
                return False
            children: Any = node
            if kind is dict:
                weight += sum(len(str(key)) for key in node) * (level + 1)
                children = node.values()
            stack.extend((child, level + 1) for child in children)
        if weight > limit:
            return False
    return True
