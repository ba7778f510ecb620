"""A bound on the Python work one check may do where it runs (an event loop).

`work_budget(n)` lets the code inside spend `n` units (a number decided in
Python, a value cast); past them `spend_work` raises `OverBudgetError` and the
caller runs the check again where time is not bounded (a worker thread).
"""

from __future__ import annotations

import contextvars


class OverBudgetError(Exception):
    """Raised inside a check whose budget of Python work is spent."""


class work_budget:  # noqa: N801 - used as a function: `with work_budget(n):`
    """Bound the work of the code inside to `units`; without it, none is bounded.

    Entered, it is itself the running budget (`left`): no second object is
    made per check (one runs on every tool call).
    """

    __slots__ = ("_token", "_units", "left")

    def __init__(self, units: int) -> None:
        self._units = units
        self.left = units
        self._token: contextvars.Token[work_budget | None] | None = None

    def __enter__(self) -> None:
        self.left = self._units
        self._token = _BUDGET.set(self)

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if self._token is not None:
            _BUDGET.reset(self._token)


_BUDGET: contextvars.ContextVar[work_budget | None] = contextvars.ContextVar(
    "wymcp_work_budget", default=None
)


def spend_work(units: int = 1) -> None:
    """Spend `units` of the running budget; raise `OverBudgetError` past it."""
    budget = _BUDGET.get()
    if budget is not None:
        budget.left -= units
        if budget.left < 0:
            raise OverBudgetError
