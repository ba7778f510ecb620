"""The floats of a call's data counted before the engine reads it on the event loop.

Under ``multipleOf`` the engine decides an integer in nanoseconds but pays 0.2-1 us
for a whole float (more the larger its exponent), and Python decides every other
float: ``spend_floats`` charges them all to the running work budget first.
"""

from __future__ import annotations

import operator
from typing import Any

from wymcp.core.schema import spend_work

_CONTAINERS = frozenset({dict, list})


def spend_floats(data: object) -> None:
    """Spend one unit of the running budget per float and per container in ``data``.

    A container's scalars are counted in C (``map(type, ...)``); each container
    costs one Python step and one unit, so past the budget the scan stops
    (``OverBudgetError``) after at most that many containers. Memory: the stack of
    containers not yet read (their references only).
    """
    stack: list[Any] = [data]
    while stack:
        value = stack.pop()
        spend_work()
        items = value.values() if value.__class__ is dict else value
        kinds = set(map(type, items))
        if float in kinds:
            spend_work(operator.countOf(map(type, items), float))
        if kinds & _CONTAINERS:
            stack.extend(
                item
                for item in items
                if item.__class__ is dict or item.__class__ is list
            )
