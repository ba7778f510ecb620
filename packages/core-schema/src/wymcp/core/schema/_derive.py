"""Deriving JSON Schema from an attrs class: the input properties and output schemas.

One function per direction; anything the derivation cannot express raises
`DerivationError` naming the field path, which registration turns into a problem.
"""

from __future__ import annotations

import copy
import datetime as dt
import enum
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from wymcp.core.schema._constraints import constrained

JSON_SCHEMA_METADATA = "json_schema"
"""The attrs field metadata key whose mapping is merged into the field's schema."""
CONSTRAINTS_METADATA = "wymcp_constraints"
"""The attrs field metadata key holding `Annotated` extras lifted off its type."""

_SCALARS: dict[type, str] = {str: "string", bool: "boolean", int: "integer"}
_FORMATS: dict[type, str] = {dt.datetime: "date-time", dt.date: "date"}
_LISTS = (list, typing.List, tuple)  # noqa: UP006 - the origins a list[...] may have
_DICTS = (dict, typing.Dict)  # noqa: UP006 - the origins a dict[...] may have
_DEPTH = 32


class DerivationError(Exception):
    """A type the derivation cannot express; `path` names the field."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"field {path!r}: {problem}")
        self.path = path
        self.problem = problem


@attrs.frozen
class NestedDefault:
    """The default of a field of a nested class: where, its field's schema, its JSON."""

    path: str
    schema: dict[str, Any]
    value: Any


@attrs.frozen
class Derived:
    """An attrs class's input: closed properties, required names, JSON defaults.

    `nested` holds the defaults of the nested classes' fields (published as the
    `default` of their field's schema), which registration proves; `filled`
    the same JSON defaults by class and field name, which a call that leaves a
    nested field out gets (structured anew, so never an instance another call saw).
    """

    properties: dict[str, Any]
    required: tuple[str, ...]
    defaults: dict[str, Any]
    nested: tuple[NestedDefault, ...] = ()
    filled: dict[type, dict[str, Any]] = attrs.field(factory=dict)


@attrs.define
class _Sink:
    """Collects the defaults nested classes add, written as JSON."""

    unstructure: Callable[[Any], Any] | None
    found: list[NestedDefault] = attrs.field(factory=list)
    filled: dict[type, dict[str, Any]] = attrs.field(factory=dict)

    def add(
        self,
        owner: type,
        field: attrs.Attribute[Any],
        path: str,
        schema: dict[str, Any],
    ) -> Any:
        """Record the default of `owner`'s `field` at `path`; return its JSON.

        A factory is called once per class and field, however many paths reach it.
        """
        own = self.filled.setdefault(owner, {})
        if field.name in own:
            written = own[field.name]
        else:
            value = _default_value(field, path)
            written = self.unstructure(value) if self.unstructure else value
            own[field.name] = written
        self.found.append(NestedDefault(path, schema, written))
        return copy.deepcopy(written)


def derive_input(cls: type, unstructure: Callable[[Any], Any] | None = None) -> Derived:
    """The action declaration parts of the data class `cls`.

    Required names are the fields without a default; defaults (factories called once)
    are unstructured by `unstructure` into JSON values.
    """
    fields = _fields(cls, cls.__name__)
    sink = _Sink(unstructure)
    properties: dict[str, Any] = {}
    required: list[str] = []
    defaults: dict[str, Any] = {}
    for field in fields:
        properties[field.name] = _field_schema(field, field.name, 0, sink)
        if field.default is attrs.NOTHING:
            required.append(field.name)
        else:
            value = _default_value(field, field.name)
            defaults[field.name] = unstructure(value) if unstructure else value
    filled = {**sink.filled, cls: {**sink.filled.get(cls, {}), **defaults}}
    return Derived(
        properties, tuple(required), defaults, tuple(sink.found), filled=filled
    )


def derive_output(annotation: object) -> tuple[dict[str, Any], bool]:
    """The output schema of a return annotation, and whether it is a list of objects.

    An attrs class gives its object schema; `list[Cls]` gives an object with one
    `items` array (structured content is an object in every revision).
    """
    origin = typing.get_origin(annotation)
    if origin in _LISTS and origin is not tuple:
        (item,) = typing.get_args(annotation) or (None,)
        if isinstance(item, type) and attrs.has(item):
            return {
                "type": "object",
                "properties": {
                    "items": {"type": "array", "items": _object(item, "items", 0, None)}
                },
                "required": ["items"],
                "additionalProperties": False,
            }, True
    if isinstance(annotation, type) and attrs.has(annotation):
        return _object(annotation, "", 0, None), False
    raise DerivationError("return", "must be an attrs class or a list of them")


def is_output_annotation(annotation: object) -> bool:
    """Whether a return annotation asks for a derived output schema."""
    if isinstance(annotation, type) and attrs.has(annotation):
        return True
    if typing.get_origin(annotation) is list:
        args = typing.get_args(annotation)
        return len(args) == 1 and isinstance(args[0], type) and attrs.has(args[0])
    return False


def _fields(cls: type, path: str) -> tuple[attrs.Attribute[Any], ...]:
    try:
        attrs.resolve_types(cls)
    except NameError as error:
        raise DerivationError(
            path, f"an annotation cannot be resolved ({error})"
        ) from None
    return tuple(field for field in attrs.fields(cls) if field.init)


def _object(cls: type, path: str, depth: int, sink: _Sink | None) -> dict[str, Any]:
    """The closed object schema of a nested attrs class.

    The fields without a default are required; for an input (a `sink`) each
    default is published as the `default` of its field's schema.
    """
    if depth > _DEPTH:
        raise DerivationError(path, "nested too deeply (a recursive class?)")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for field in _fields(cls, path or cls.__name__):
        where = f"{path}.{field.name}" if path else field.name
        own = _field_schema(field, where, depth + 1, sink)
        if field.default is attrs.NOTHING:
            required.append(field.name)
        elif sink is not None:
            own = {**own, "default": sink.add(cls, field, where, own)}
        properties[field.name] = own
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _field_schema(
    field: attrs.Attribute[Any], path: str, depth: int, sink: _Sink | None
) -> dict[str, Any]:
    if field.type is None:
        raise DerivationError(path, "has no type annotation")
    schema = _schema(field.type, path, depth, sink)
    lifted = field.metadata.get(CONSTRAINTS_METADATA)
    if lifted is not None:
        schema = _constrained(schema, lifted, path)
    extra = field.metadata.get(JSON_SCHEMA_METADATA)
    if extra is not None:
        if not isinstance(extra, Mapping) or not all(isinstance(k, str) for k in extra):
            raise DerivationError(
                path, f"metadata[{JSON_SCHEMA_METADATA!r}] must be a mapping"
            )
        schema.update(extra)
    return schema


def _schema(  # noqa: C901 - one branch per supported type
    annotation: Any, path: str, depth: int, sink: _Sink | None
) -> dict[str, Any]:
    if depth > _DEPTH:
        raise DerivationError(path, "nested too deeply (a recursive class?)")
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _annotated(annotation, path, depth, sink)
    if origin is typing.Union or origin is types.UnionType:
        return _optional(args, path, depth, sink)
    if origin is typing.Literal:
        return _literal_of(args, path, output=sink is None)
    if origin in _LISTS:
        if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):  # noqa: PLR2004 - tuple[X, ...]
            raise DerivationError(path, "only tuple[X, ...] can be expressed")
        if not args:
            raise DerivationError(path, "a list needs its item type: list[X]")
        items = _schema(args[0], f"{path}[]", depth + 1, sink)
        return {"type": "array", "items": items}
    if origin in _DICTS:
        if len(args) != 2 or args[0] is not str:  # noqa: PLR2004 - dict[K, V]
            raise DerivationError(path, "only dict[str, X] can be expressed")
        return {
            "type": "object",
            "additionalProperties": _schema(args[1], f"{path}{{}}", depth + 1, sink),
        }
    if origin is not None or not isinstance(annotation, type):
        raise DerivationError(path, f"the type {annotation!r} cannot be expressed")
    return _plain(annotation, path, depth, sink)


def _annotated(
    annotation: Any, path: str, depth: int, sink: _Sink | None
) -> dict[str, Any]:
    """`Annotated[X, ...]`: X's schema with the constraint markers' keywords."""
    base = _schema(typing.get_args(annotation)[0], path, depth, sink)
    return _constrained(base, annotation.__metadata__, path)


def _constrained(
    base: dict[str, Any], extras: tuple[Any, ...], path: str
) -> dict[str, Any]:
    schema, unknown = constrained(base, extras)
    if unknown:
        raise DerivationError(
            path,
            f"Annotated carries {', '.join(unknown)}, which is no constraint"
            " marker (MinLen, MaxLen, Ge, Le, Gt, Lt, Pattern, Format,"
            " Description) nor a JSON Schema mapping",
        )
    return schema


def _optional(
    args: tuple[Any, ...], path: str, depth: int, sink: _Sink | None
) -> dict[str, Any]:
    rest = [a for a in args if a is not type(None)]
    if len(rest) != 1 or len(rest) == len(args):
        raise DerivationError(
            path, "a union other than Optional[X] / X | None cannot be expressed"
        )
    inner = _schema(rest[0], path, depth, sink)
    return _nullable(inner) if sink is not None else _or_null(inner)


def _literal_of(args: tuple[Any, ...], path: str, *, output: bool) -> dict[str, Any]:
    if not args or not all(isinstance(a, (str, int, bool)) or a is None for a in args):
        raise DerivationError(path, "Literal values must be str, int, bool or None")
    literal = _literal(list(args))
    if output and isinstance(literal.get("type"), list):
        return {"enum": literal["enum"]}  # an output is never cast: enum says all
    return literal


def _plain(
    annotation: type, path: str, depth: int, sink: _Sink | None
) -> dict[str, Any]:
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    if annotation is float:
        return {"type": "number"}
    if annotation in _FORMATS:
        return {"type": "string", "format": _FORMATS[annotation]}
    if issubclass(annotation, enum.Enum):
        values = [member.value for member in annotation]
        if not values or not all(isinstance(v, (str, int)) for v in values):
            raise DerivationError(path, "an Enum's values must be str or int")
        return {"enum": values}
    if attrs.has(annotation):
        return _object(annotation, path, depth, sink)
    raise DerivationError(path, f"the type {annotation.__name__} cannot be expressed")


def _literal(values: list[Any]) -> dict[str, Any]:
    """The schema of a `Literal`; with an int among its values it says its types.

    JSON Schema's `enum` admits `2.0` for `2`; the `type` that says integer
    makes the gate hand the class the int (the cast rule), as for an `int` field.
    """
    if not any(type(value) is int for value in values):
        return {"enum": values}
    kinds = [_LITERAL_KINDS[type(value)] for value in values]
    unique = list(dict.fromkeys(kinds))
    return {"type": unique[0] if len(unique) == 1 else unique, "enum": values}


_LITERAL_KINDS: dict[type, str] = {
    str: "string",
    int: "integer",
    bool: "boolean",
    type(None): "null",
}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """Admit null without a combinator (the key gates do not enter combinators)."""
    if "enum" in schema:
        values = list(schema["enum"])
        if None not in values:
            values.append(None)
        schema = {**schema, "enum": values}
        if "type" not in schema:
            return schema
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "null" not in kinds:
        kinds = [*kinds, "null"]
    return {**schema, "type": kinds}


def _or_null(schema: dict[str, Any]) -> dict[str, Any]:
    """An output's `X | None`: `anyOf` a branch of one `type` each.

    Outputs are never gated by key, so the combinator costs nothing there, and a
    client mapping schemas onto a single-`type` dialect (Gemini's OpenAPI
    subset; the Inspector's `--strict` lint) reads it where `["string",
    "null"]` is refused.
    """
    if "enum" in schema and "type" not in schema:
        values = list(schema["enum"])
        return {"enum": values if None in values else [*values, None]}
    if schema.get("type") == "null":
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def _default_value(field: attrs.Attribute[Any], path: str) -> object:
    default = field.default
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        factory: Any = default
        if factory.takes_self:
            raise DerivationError(
                path, "a default factory that takes self cannot be published"
            )
        return factory.factory()
    return default
