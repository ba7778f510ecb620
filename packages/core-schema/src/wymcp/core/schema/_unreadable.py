"""Data the schema admits that the action's class cannot hold: where, and why.

After a structuring fails, the data is walked along the class's annotations, each
part structured on its own, to name every offending path (never the value).
"""

from __future__ import annotations

import datetime as dt
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from wymcp.core.schema._echo_limit import ECHO_LIMIT
from wymcp.core.schema._errors import ToolError

FIRST = 10
"""Offending paths kept (the rest are counted), as a refusal keeps them."""

Token = str | int
Path = tuple[Token, ...]
Structure = Callable[[Any, Any], Any]


@attrs.define
class Unreadable:
    """The offending paths found: the first ten (in path order) with their problem."""

    entries: list[tuple[Path, str]] = attrs.field(factory=list)
    count: int = 0

    def add(self, path: Path, problem: Callable[[], str]) -> None:
        """Count an offending path; say its problem only if it is kept."""
        self.count += 1
        if len(self.entries) < FIRST:
            self.entries.append((path, problem()))

    def ordered(self) -> list[tuple[Path, str]]:
        """The kept entries in path order (an index numerically, before a key)."""
        return sorted(self.entries, key=lambda entry: _path_key(entry[0]))


class UnreadableDataError(ToolError):
    """Data an action's schema admitted that its class cannot hold.

    `found` names the offending paths (from `data`) and what each value cannot
    be; the message never quotes a value. A server answers it as an
    `invalid_values` refusal.
    """

    def __init__(self, action: str, found: Unreadable) -> None:
        named = "; ".join(
            f"{_render(path)}: {problem}" for path, problem in found.ordered()[:3]
        )
        more = found.count - min(found.count, 3)
        rest = f" and {more} more" if more > 0 else ""
        super().__init__(
            f"The data of action {action!r} passed its schema but cannot be read"
            f" into its class at {named}{rest}."
        )
        self.action = action
        self.found = found


def locate(structure: Structure, data: object, cls: type) -> Unreadable:
    """Every path of `data` that `structure` cannot read as its annotation says."""
    found = Unreadable()
    _Walk(structure, found).value(data, cls, ())
    if not found.count:
        found.add((), lambda: f"value cannot be read as {_name(cls)}")
    return found


class _Walk:
    """One walk of data along its annotation, structuring part by part."""

    def __init__(self, structure: Structure, found: Unreadable) -> None:
        self.structure = structure
        self.found = found

    def value(self, value: object, annotation: Any, path: Path) -> None:
        """Structure `value`; where it fails, find the parts that fail below."""
        try:
            self.structure(value, annotation)
        except Exception as error:  # noqa: BLE001 - any failure names its path
            self.below(value, annotation, path, error)

    def below(
        self, value: object, annotation: Any, path: Path, error: Exception
    ) -> None:
        """Descend into a container or a class; else the value here is the culprit."""
        before = self.found.count
        inner = _optional_of(annotation)
        origin = typing.get_origin(inner)
        args = typing.get_args(inner)
        if isinstance(value, list) and origin in (list, tuple) and args:
            for index, item in enumerate(value):
                self.value(item, args[0], (*path, index))
        elif isinstance(value, Mapping) and origin is dict and len(args) == 2:  # noqa: PLR2004 - dict[K, V]
            for key, item in value.items():
                self.value(item, args[1], (*path, str(key)))
        elif isinstance(value, Mapping) and attrs.has(inner):
            for field in attrs.fields(inner):
                if field.init and field.name in value:
                    self.value(value[field.name], field.type, (*path, field.name))
        if self.found.count == before:
            self.found.add(path, lambda: _problem(inner, error))


def _optional_of(annotation: Any) -> Any:
    """`X` of `X | None`; any other annotation as it is."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation


def _problem(annotation: Any, error: Exception) -> str:
    """What the value cannot be, from the annotation and the kind of failure."""
    kind = type(error).__name__
    if annotation is float and isinstance(error, OverflowError):
        return "value is too large for a float (a 64-bit double, at most about 1.8e308)"
    if annotation is dt.datetime:
        return "value is not a date-time Python can hold (years 1 to 9999)"
    if annotation is dt.date:
        return "value is not a date Python can hold (years 1 to 9999)"
    if isinstance(annotation, type) and attrs.has(annotation):
        return f"value is refused by class {annotation.__name__} ({kind})"
    return f"value cannot be read as {_name(annotation)} ({kind})"


def _name(annotation: Any) -> str:
    return str(getattr(annotation, "__name__", annotation))[:80]


def _path_key(path: Path) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, token) if isinstance(token, int) else (1, token) for token in path)


def _render(path: Path) -> str:
    """The path from `data`, as a refusal spells it (simply: keys after a dot)."""
    text = "data" + "".join(
        f"[{token}]" if isinstance(token, int) else f".{token}" for token in path
    )
    return text if len(text) <= ECHO_LIMIT else text[: ECHO_LIMIT - 1] + "…"
