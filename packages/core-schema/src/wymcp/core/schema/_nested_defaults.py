"""Proving the defaults nested attrs classes add, each against its own field's schema.

A top-level default is checked with the action's defaults; a field of a nested class
is filled by cattrs when a call leaves it out, so registration proves it here.
"""

from __future__ import annotations

from collections.abc import Iterable

from wymcp.core.schema._action_checks import json_problems
from wymcp.core.schema._derive import NestedDefault
from wymcp.core.schema._value_root import build_problem, compile_schema

_BUILD_ERRORS = (ValueError, TypeError, OverflowError, RecursionError)
_MESSAGE = 200


class NestedDefaultsError(Exception):
    """Defaults of nested fields their own schema refuses; `problems` names each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def prove_nested_defaults(nested: Iterable[NestedDefault]) -> None:
    """Raise `NestedDefaultsError` naming every nested default its schema refuses."""
    problems: list[str] = []
    for default in nested:
        where = f"field {default.path!r}"
        found = json_problems(f"{where}: its default", default.value)
        if found:
            problems.extend(found)
            continue
        try:
            errors = list(compile_schema(default.schema).iter_errors(default.value))
        except _BUILD_ERRORS as error:
            problems.append(
                f"{where}: its default cannot be checked: {build_problem(error)}"
            )
            continue
        if errors:
            message = str(errors[0].message).splitlines()[0][:_MESSAGE]
            problems.append(
                f"{where}: its default is refused by the field's schema ({message})"
            )
    if problems:
        raise NestedDefaultsError(problems)
