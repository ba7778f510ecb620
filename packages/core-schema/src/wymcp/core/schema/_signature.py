"""The fields of an `@action` method's own parameters, as an attrs class.

`async def add(self, ctx: Context, title: str, tags: list[str] | None = None)`
declares the fields `title` and `tags`: this module builds the attrs class
those parameters describe, so the schema, casting and gates are the class form's.
"""

from __future__ import annotations

import copy
import inspect
import re
import typing
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from wymcp.core.schema._context import Context
from wymcp.core.schema._derive import CONSTRAINTS_METADATA

_CTX_TEXT = re.compile(r"(?:[A-Za-z_]\w*\.)*Context(?:\[.*\])?")
"""A `ctx` annotation written as text that names `Context` (`Context[State]`)."""
_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


class SignatureError(Exception):
    """A method whose parameters cannot be fields; the message is the problem."""


@attrs.frozen
class Fields:
    """What a method's parameters declare: the data class, `ctx`'s name, the call."""

    data_class: type
    ctx: str | None
    names: tuple[str, ...]

    def caller(
        self, function: Callable[..., Awaitable[Any]]
    ) -> Callable[[object, Any, object], Awaitable[Any]]:
        """`function` called as `(tool, data, ctx)` with `data` an instance."""
        names = self.names
        ctx_name = self.ctx

        def call(tool: object, data: Any, ctx: object) -> Awaitable[Any]:
            arguments = {name: getattr(data, name) for name in names}
            if ctx_name is not None:
                arguments[ctx_name] = ctx
            return function(tool, **arguments)

        return call


def is_context(annotation: object) -> bool:
    """Whether a (resolved, or unresolvable text) annotation names `Context`."""
    if isinstance(annotation, str):
        return bool(_CTX_TEXT.fullmatch(annotation.replace(" ", "")))
    return annotation is Context or typing.get_origin(annotation) is Context


def resolve(function: Callable[..., Any], name: str) -> object:
    """The annotation of one parameter (or `return`), resolved; its text if not.

    Each is resolved alone so that `ctx`'s may name a type imported under
    `TYPE_CHECKING` only. `Annotated` extras are kept.
    """
    raw = inspect.get_annotations(function)
    if name not in raw:
        return inspect.Parameter.empty
    holder = type("Annotations", (), {"__annotations__": {name: raw[name]}})
    try:
        hints = typing.get_type_hints(
            holder,
            globalns=vars(inspect.getmodule(function) or typing),
            include_extras=True,
        )
    except Exception as error:  # noqa: BLE001 - any failure to resolve is the author's
        if isinstance(raw[name], str):
            return raw[name]
        raise SignatureError(
            f"the annotation of {name!r} cannot be resolved"
            f" ({type(error).__name__}: {error})"
        ) from None
    return hints[name]


def signature_fields(function: Callable[..., Any], label: str) -> Fields:
    """The data class the parameters after `self` declare (`ctx` aside).

    A parameter annotated `Context` (or `Context[State]`) is `ctx`, wherever
    it stands; every other one is a field, required when it has no default.
    """
    parameters = list(inspect.signature(function).parameters.values())[1:]
    ctx: str | None = None
    fields: dict[str, Any] = {}
    for parameter in parameters:
        if parameter.kind not in _KINDS:
            raise SignatureError(
                f"parameter {parameter.name!r}: *args, **kwargs and positional-only"
                " parameters cannot be fields; name each field"
            )
        annotation = resolve(function, parameter.name)
        if is_context(annotation):
            if ctx is not None:
                raise SignatureError(f"two parameters are annotated Context: {ctx!r}")
            ctx = parameter.name
            continue
        if annotation is inspect.Parameter.empty:
            raise SignatureError(
                f"parameter {parameter.name!r} has no annotation: a field needs its"
                " type, ctx needs ': Context'"
            )
        if isinstance(annotation, str):
            raise SignatureError(
                f"the annotation of {parameter.name!r} cannot be resolved"
                f" ({annotation})"
            )
        fields[parameter.name] = _field(annotation, parameter.default)
    data_class = attrs.make_class(
        f"{label}Data", fields, kw_only=True, frozen=True, slots=True
    )
    data_class.__module__ = getattr(function, "__module__", __name__)
    return Fields(data_class, ctx, tuple(fields))


def _field(annotation: Any, default: Any) -> Any:
    """One field; a parameter's own `Annotated` extras go to its metadata.

    cattrs then reads the plain type (a mapping among the extras is unhashable).
    """
    metadata: dict[str, Any] = {}
    if typing.get_origin(annotation) is typing.Annotated:
        metadata[CONSTRAINTS_METADATA] = annotation.__metadata__
        annotation = typing.get_args(annotation)[0]
    if default is inspect.Parameter.empty:
        return attrs.field(type=annotation, metadata=metadata)
    if isinstance(default, (list, dict, set)):
        return attrs.field(
            type=annotation,
            default=attrs.Factory(lambda: copy.deepcopy(default)),
            metadata=metadata,
        )
    return attrs.field(type=annotation, default=default, metadata=metadata)
