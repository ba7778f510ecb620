"""What asking the engine for its errors about a value may cost, told before asking.

The engine builds every error of a call at once, each with a copy of the value it
refuses and two messages quoting it (JSON-escaped), and an `anyOf` error holds the
errors of every level below it: a value is weighed by its escaped characters times
their depth, times how many errors one place of the schema can make.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from wymcp.core.schema import ValueNode

ERRORS_WEIGHT = 1024 * 1024
"""Most a value may weigh for the engine to be asked for its errors (each error
costs the engine up to about 12 bytes per weight unit: at most ~12 MiB a call)."""
_VALUE = 32
"""The weight of one value before its characters (an error's own objects)."""
_ESCAPED = 6
"""Bytes a character may take in an error's message (`\\u0001`)."""


def errors_fit(value: object, limit: int = ERRORS_WEIGHT, *, copies: int = 1) -> bool:
    """Whether the engine's errors about `value` weigh at most `limit`.

    Each value weighs `_VALUE` plus `_ESCAPED` per character of a string or an
    object's keys, or the digits of an int, times its depth (a copy per level of
    the containers around it), times `copies` (how many errors may quote one
    value: `errors_per_place`). One pass, stopped as soon as the weight passes
    `limit`; a container's items are weighed before they are stacked, so the pass
    holds at most `limit / _VALUE` of them.
    """
    budget = limit // max(copies, 1)
    weight = _VALUE
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        kind = node.__class__
        if kind is str:
            weight += _ESCAPED * len(node) * level
        elif kind is int:
            weight += node.bit_length() // 3 * level
        elif kind is dict or kind is list:
            weight += _VALUE * (level + 1) * len(node)
            if weight > budget:
                return False
            children: Any = node
            if kind is dict:
                weight += _ESCAPED * sum(len(str(key)) for key in node) * (level + 1)
                children = node.values()
            stack.extend((child, level + 1) for child in children)
        if weight > budget:
            return False
    return True


def errors_per_place(node: ValueNode) -> int:
    """How many engine errors may quote one value, at most, for a schema from `node`.

    The most, over every node reachable from `node`, of the errors one instance
    place can get from the nodes that apply there together (`allOf` branches and
    references, the other combinators' branches, the conditional, dependent
    schemas): one per assertion keyword and one per node. Linear in the schema.
    """
    return max(
        sum(1 + len(here.assertions) for here in _reach(top, _same_place))
        for top in _reach(node, _anywhere)
    )


def _same_place(node: ValueNode) -> list[ValueNode]:
    """The nodes applying at the instance place `node` applies at."""
    found = [*node.all_of, *node.any_of, *node.one_of]
    found.extend(child for _, child in node.dependent)
    found.extend(
        child for child in (node.not_, node.if_, node.then, node.else_) if child
    )
    return found


def _anywhere(node: ValueNode) -> list[ValueNode]:
    """The nodes applying at `node`'s place or below it."""
    return [*node.links(), *(child for _, child in node.unevaluated)]


def _reach(
    node: ValueNode, edges: Callable[[ValueNode], list[ValueNode]]
) -> Iterator[ValueNode]:
    """`node` and every node reached from it by `edges`, each once."""
    seen = {id(node)}
    pending = [node]
    while pending:
        top = pending.pop()
        yield top
        for child in edges(top):
            if id(child) not in seen:
                seen.add(id(child))
                pending.append(child)
