"""`@action`: binding an action's declaration to the method that carries it out.

The decorator only marks the method; registration reads the mark, derives the
schema from the annotations and refuses what cannot be bound.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, overload

import attrs

MARK = "__wymcp_action__"
"""The attribute `@action` sets on the function it marks."""

F = TypeVar("F", bound=Callable[..., Any])


@attrs.frozen(kw_only=True)
class ActionMark:
    """What `@action` was given; `description` None binds a dict declaration."""

    name: str | None = None
    description: str | None = None
    properties: Mapping[str, Any] | None = None
    required: Sequence[str] = ()
    required_one_of: Sequence[Sequence[str]] = ()
    defaults: Mapping[str, Any] | None = None
    notes: str | None = None
    related: Sequence[str] = ()
    examples: Sequence[Mapping[str, Any]] = ()
    task_support: str | None = None


@overload
def action(method: F, /) -> F: ...


@overload
def action(
    *,
    name: str | None = None,
    description: str | None = None,
    properties: Mapping[str, Any] | None = None,
    required: Sequence[str] = (),
    required_one_of: Sequence[Sequence[str]] = (),
    defaults: Mapping[str, Any] | None = None,
    notes: str | None = None,
    related: Sequence[str] = (),
    examples: Sequence[Mapping[str, Any]] = (),
    task_support: str | None = None,
) -> Callable[[F], F]: ...


def action(
    method: F | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    properties: Mapping[str, Any] | None = None,
    required: Sequence[str] = (),
    required_one_of: Sequence[Sequence[str]] = (),
    defaults: Mapping[str, Any] | None = None,
    notes: str | None = None,
    related: Sequence[str] = (),
    examples: Sequence[Mapping[str, Any]] = (),
    task_support: str | None = None,
) -> F | Callable[[F], F]:
    """Mark `async def name(self, data, ctx)` as the code of one action.

    With `description` the decorator declares the action: its input schema comes
    from `data`'s attrs class, or from `properties`/`required`/`defaults`
    when `data` is a plain `dict`. Without one (`@action` bare) it binds the
    method to the declaration of the same name in the tool's `actions`. The
    action's name is the method's unless `name` is given. A return annotation
    that is an attrs class (or a list of them) derives the output schema.
    `task_support` (`forbidden`, `optional`, `required`) says whether a
    call may run as a task (SEP-2663).
    """
    mark = ActionMark(
        name=name,
        description=description,
        properties=properties,
        required=tuple(required),
        required_one_of=tuple(tuple(group) for group in required_one_of),
        defaults=defaults,
        notes=notes,
        related=tuple(related),
        examples=tuple(examples),
        task_support=task_support,
    )

    def decorate(function: F) -> F:
        setattr(function, MARK, mark)
        return function

    if method is not None:
        return decorate(method)
    return decorate
