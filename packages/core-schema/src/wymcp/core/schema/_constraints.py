"""The constraint markers a typed field carries in `Annotated`: `MinLen`, `Ge`...

Each marker adds its JSON Schema keyword to the field's derived schema; a plain
mapping in `Annotated` is merged as it is (the `json_schema` escape hatch).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


def _kinds(schema: Mapping[str, Any]) -> list[Any]:
    kind = schema.get("type")
    return kind if isinstance(kind, list) else [kind]


@attrs.frozen
class MinLen:
    """At least `value` characters (a string), items (a list) or keys (a dict)."""

    value: int

    def keywords(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword for the field's kind."""
        return {_sized("min", schema): self.value}


@attrs.frozen
class MaxLen:
    """At most `value` characters (a string), items (a list) or keys (a dict)."""

    value: int

    def keywords(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword for the field's kind."""
        return {_sized("max", schema): self.value}


def _sized(bound: str, schema: Mapping[str, Any]) -> str:
    kinds = _kinds(schema)
    if "array" in kinds:
        return f"{bound}Items"
    if "object" in kinds:
        return f"{bound}Properties"
    return f"{bound}Length"


@attrs.frozen
class Ge:
    """A number at least `value` (`minimum`)."""

    value: int | float

    def keywords(self, _: Mapping[str, Any]) -> dict[str, Any]:
        """`minimum`."""
        return {"minimum": self.value}


@attrs.frozen
class Le:
    """A number at most `value` (`maximum`)."""

    value: int | float

    def keywords(self, _: Mapping[str, Any]) -> dict[str, Any]:
        """`maximum`."""
        return {"maximum": self.value}


@attrs.frozen
class Gt:
    """A number above `value` (`exclusiveMinimum`)."""

    value: int | float

    def keywords(self, _: Mapping[str, Any]) -> dict[str, Any]:
        """`exclusiveMinimum`."""
        return {"exclusiveMinimum": self.value}


@attrs.frozen
class Lt:
    """A number below `value` (`exclusiveMaximum`)."""

    value: int | float

    def keywords(self, _: Mapping[str, Any]) -> dict[str, Any]:
        """`exclusiveMaximum`."""
        return {"exclusiveMaximum": self.value}


@attrs.frozen
class Pattern:
    """A string matching the regular expression `value` (`pattern`)."""

    value: str

    def keywords(self, _: Mapping[str, Any]) -> dict[str, Any]:
        """`pattern`."""
        return {"pattern": self.value}


@attrs.frozen
class Format:
    """A string in the named `format` (`date`, `email`, `uri`...)."""

    value: str

    def keywords(self, _: Mapping[str, Any]) -> dict[str, Any]:
        """`format`."""
        return {"format": self.value}


@attrs.frozen
class Description:
    """The field's `description`: what `help` and the refusal's schema show."""

    value: str

    def keywords(self, _: Mapping[str, Any]) -> dict[str, Any]:
        """`description`."""
        return {"description": self.value}


MARKERS = (MinLen, MaxLen, Ge, Le, Gt, Lt, Pattern, Format, Description)
"""Every constraint marker, in the order docs/tools.md lists them."""


def constrained(
    schema: dict[str, Any], extras: tuple[Any, ...]
) -> tuple[dict[str, Any], list[str]]:
    """`schema` with the keywords of `Annotated`'s extras; and what was unknown.

    An extra that is neither a marker nor a mapping is named in the second value
    (registration refuses it: a constraint that would not apply must not pass).
    """
    found = dict(schema)
    unknown: list[str] = []
    for extra in extras:
        if isinstance(extra, MARKERS):
            found.update(extra.keywords(found))
        elif isinstance(extra, Mapping) and all(isinstance(k, str) for k in extra):
            found.update(extra)
        else:
            unknown.append(type(extra).__name__)
    return found, unknown
