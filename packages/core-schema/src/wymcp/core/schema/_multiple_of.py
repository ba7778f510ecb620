"""``multipleOf`` decided exactly: integers by integer arithmetic, floats as fractions.

The engine divides in floating point, which accepts non-multiples above 2**53; every
root compiles ``multipleOf`` as this keyword instead. A value that cannot be decided
exactly (an infinite float) is refused with the seed's text.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

NOT_MULTIPLE = "value is not a multiple of {}"
UNDECIDED = "value could not be checked against multipleOf"


def multiple_of_problem(value: object, factor: object) -> str | None:
    """None if ``value`` is a multiple of ``factor`` (or not a number), else a text."""
    if value.__class__ is bool or not isinstance(value, (int, float)):
        return None
    if factor.__class__ is bool or not isinstance(factor, (int, float)):
        return UNDECIDED
    try:
        if isinstance(value, int) and isinstance(factor, int):
            remainder: object = value % factor
        else:
            remainder = Fraction(value) % Fraction(factor)
    except (ValueError, TypeError, OverflowError, ZeroDivisionError):
        return UNDECIDED
    if remainder == 0:
        return None
    return NOT_MULTIPLE.format(_spelled(factor))


def _spelled(factor: object) -> str:
    """The factor as JSON spells it (``3``, ``0.5``)."""
    return repr(factor) if isinstance(factor, (int, float)) else str(factor)


class ExactMultipleOf:
    """The ``multipleOf`` keyword as the engine calls it (``keywords=`` option)."""

    def __init__(
        self, parent_schema: dict[str, Any], value: Any, schema_path: list[str | int]
    ) -> None:
        """Keep the factor; a factor that is not a positive number refuses to build."""
        del parent_schema, schema_path
        if value.__class__ is bool or not isinstance(value, (int, float)):
            raise ValueError("multipleOf must be a number")
        if not value > 0:
            raise ValueError("multipleOf must be strictly greater than 0")
        self.factor = value

    def validate(self, instance: Any) -> None:
        """Raise ``ValueError`` with the problem text when ``instance`` fails."""
        problem = multiple_of_problem(instance, self.factor)
        if problem is not None:
            raise ValueError(problem)
