"""A bound on the Python work one check may do where it runs (an event loop).

`work_budget(n)` lets the code inside spend `n` units (a number decided in
Python, a value cast); past them `spend_work` raises `OverBudgetError` and the
caller runs the check again where time is not bounded (a worker thread).
"""

from __future__ import annotations

import contextvars


class OverBudgetError(Exception):
    """Raised inside a check whose budget of Python work is spent."""


class _Budget:
    __slots__ = ("left",)

    def __init__(self, units: int) -> None:
        self.left = units


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "wymcp_work_budget", default=None
)


class work_budget:  # noqa: N801 - used as a function: `with work_budget(n):`
    """Bound the work of the code inside to `units`; without it, none is bounded."""

    __slots__ = ("_token", "_units")

    def __init__(self, units: int) -> None:
        self._units = units
        self._token: contextvars.Token[_Budget | None] | None = None

    def __enter__(self) -> None:
        self._token = _BUDGET.set(_Budget(self._units))

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _BUDGET.reset(self._token)


def spend_work(units: int = 1) -> None:
    """Spend `units` of the running budget; raise `OverBudgetError` past it."""
    budget = _BUDGET.get()
    if budget is not None:
        budget.left -= units
        if budget.left < 0:
            raise OverBudgetError
