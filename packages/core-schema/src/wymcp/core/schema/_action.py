"""The declaration of one action of a multi-action tool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs


def _as_tuple(value: object) -> object:
    """Freeze a list into a tuple; leave anything else for the registration checks."""
    if isinstance(value, list):
        return tuple(value)
    return value


def _as_groups(value: object) -> object:
    """Freeze a list of lists into a tuple of tuples; leave anything else alone."""
    if isinstance(value, (list, tuple)):
        return tuple(
            tuple(group) if isinstance(group, list) else group for group in value
        )
    return value


@attrs.frozen(kw_only=True, eq=True, hash=False)
class Action:
    """One action of a tool: its description, its property schemas and its key rules.

    Keyword-only; an unknown field is a `TypeError`. The values are checked when the
    tool is prepared (`wymcp.core.schema.prepare`), which names every problem at once.

    Attributes:
        description: one line; joined with the name into the action's summary.
        properties: property name to JSON Schema (Draft 2020-12).
        required: names that must be present (declaration order is kept).
        required_one_of: groups of names; at least one group must be fully present.
        defaults: values merged into the data after every gate passed.
        notes: free text help shows (newlines allowed).
        related: names of related actions or tools help shows.
        examples: example `data` objects help shows.
        task_support: `forbidden`, `optional` or `required`: whether a call
            may run as a task (None: the tool's `task_support`).
    """

    description: str
    properties: Mapping[str, Any]
    required: Sequence[str] = attrs.field(default=(), converter=_as_tuple)
    required_one_of: Sequence[Sequence[str]] = attrs.field(
        default=(), converter=_as_groups
    )
    defaults: Mapping[str, Any] = attrs.field(factory=dict)
    notes: str | None = None
    related: Sequence[str] = attrs.field(default=(), converter=_as_tuple)
    examples: Sequence[Mapping[str, Any]] = attrs.field(default=(), converter=_as_tuple)
    task_support: str | None = None
