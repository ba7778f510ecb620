"""What an engine call reads: the JSON values of its argument, charged to a budget.

The engine reads its whole argument in one C call, and under `anyOf` or a
recursive `$ref` a walk asks it about each subtree again at each level; charging
each call the values it reads (counted up to what `read_budget` has left) bounds
the total. Ints past 2**64 cost the engine a conversion that grows with their digits.
"""

from __future__ import annotations

import contextvars
from typing import Any

from wymcp.core.schema import OverBudgetError, spend_work

WIDE = 2**64
"""Ints at least this large (in magnitude) cost one unit per 64 bits."""
_MINUS_WIDE = -WIDE


def values_in(value: object, cap: int) -> int:
    """The JSON values in `value`, counted until the count passes `cap`."""
    seen = 1
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        kind = node.__class__
        if kind is dict:
            children: Any = node.values()
        elif kind is list:
            children = node
        else:
            continue
        seen += len(children)
        if seen > cap:
            return seen
        if len(children) == 1:
            stack.extend(children)
            continue
        kinds = set(map(type, children))
        if dict in kinds or list in kinds:
            stack.extend(
                c for c in children if c.__class__ is dict or c.__class__ is list
            )
    return seen


class read_budget:  # noqa: N801 - used as a function: `with read_budget(n):`
    """Let the engine calls inside read `units` values in all.

    A class, not a generator: `check_fast` enters one on every call, and
    `contextlib`'s generator costs about 10k instructions more per call.
    Entered, it is itself the running budget (`left`): no second object.
    """

    __slots__ = ("_token", "_units", "left")

    def __init__(self, units: int) -> None:
        self._units = units
        self.left = units
        self._token: contextvars.Token[read_budget | None] | None = None

    def __enter__(self) -> None:
        self.left = self._units
        self._token = _READS.set(self)

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if self._token is not None:
            _READS.reset(self._token)


_READS: contextvars.ContextVar[read_budget | None] = contextvars.ContextVar(
    "wymcp_engine_reads", default=None
)


def spend_reading(value: object) -> None:
    """Spend the values an engine call over `value` reads (none without a budget).

    Raises `OverBudgetError` once the running `read_budget` is spent.
    """
    reads = _READS.get()
    if reads is None:
        return
    kind = value.__class__
    if kind is dict or kind is list:
        reads.left -= values_in(value, max(reads.left, 0))
    else:
        reads.left -= 1
    if reads.left < 0:
        raise OverBudgetError


def spend_values(count: int) -> None:
    """Spend `count` values read, counted by the caller (none without a budget)."""
    reads = _READS.get()
    if reads is None:
        return
    reads.left -= count
    if reads.left < 0:
        raise OverBudgetError


def charge(units: int) -> None:
    """Spend `units` of work already done (none without a budget), never raising.

    For work whose size is known only after it ran (the errors an engine call
    built): the next `spend_reading`/`spend_values` past the budget raises, so
    what the work found is kept.
    """
    reads = _READS.get()
    if reads is not None:
        reads.left -= units


def spend_wide_ints(data: object) -> None:
    """Spend one unit per 64 bits of each int past `WIDE` inside `data`.

    One pass, itself a unit per container, spent `_SPEND_EVERY` units at a
    time; a list of numbers is looked at by `min`/`max` in C first, other
    values one by one (a dict's few values cost less so than sorting them
    by type: this pass runs on every call of a schema with numeric keywords).
    Types are read with `type()`, not `.__class__` (an attribute lookup per
    value), and the bounds are constants: ~30k instructions of the 50-item
    order's ~230k.
    """
    stack: list[Any] = [data]
    push = stack.append
    units = 0
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            children: Any = node.values()
        elif kind is list:
            children = node
            if node and type(node[0]) is int and _narrow(node):
                units += 1  # numbers only, none wide
                continue
        else:
            continue
        units += 1
        for child in children:
            kind = type(child)
            if kind is int:
                if child >= WIDE or child <= _MINUS_WIDE:
                    units += child.bit_length() // 64
            elif kind is dict or kind is list:
                push(child)
        if units >= _SPEND_EVERY:
            spend_work(units)
            units = 0
    spend_work(units)


_SPEND_EVERY = 256
"""Units `spend_wide_ints` gathers before spending them (each spend is a
context-variable lookup): the pass overruns its budget by less than this."""


def _narrow(numbers: list[Any]) -> bool:
    """Whether a list holds numbers only, none past `WIDE` (`max`/`min` in C)."""
    try:
        return bool(min(numbers) > _MINUS_WIDE and max(numbers) < WIDE)
    except TypeError:  # something other than a number
        return False


def holds_float(data: object) -> bool:
    """Whether a float is anywhere inside `data` (one pass, types read in C)."""
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        kind = node.__class__
        if kind is float:
            return True
        if kind is dict:
            children: Any = node.values()
        elif kind is list:
            children = node
        else:
            continue
        kinds = set(map(type, children))
        if float in kinds:
            return True
        if dict in kinds or list in kinds:
            stack.extend(
                c for c in children if c.__class__ is dict or c.__class__ is list
            )
    return False
