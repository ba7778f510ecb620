"""Property: a schema derived from an attrs class admits exactly what cattrs structures.

Hypothesis builds attrs classes from the supported types; every instance's
unstructured form passes the `jsonschema` oracle and the gates and structures back
to itself, and every document the derived schema admits structures into the class.
"""

from __future__ import annotations

import datetime as dt
import enum
import itertools
import typing
from typing import Any, Literal

import attrs
import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wymcp.core.gates import check
from wymcp.core.schema import Action, Tool
from wymcp.core.schema._derive import derive_input
from wymcp.core.schema._structuring import make_converter, structurer


class Size(enum.Enum):
    SMALL = "s"
    LARGE = "l"


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


_names = itertools.count()
_SCALARS: list[Any] = [
    str,
    int,
    float,
    bool,
    dt.date,
    dt.datetime,
    Size,
    Level,
    Literal["a", "b"],
    Literal[1, 2, 3],
]


def _types(depth: int) -> st.SearchStrategy[Any]:
    scalars = st.sampled_from(_SCALARS)
    if depth == 0:
        return st.one_of(scalars, scalars.map(lambda t: t | None))
    inner = _types(depth - 1)
    return st.one_of(
        scalars,
        inner.map(lambda t: t | None),
        inner.map(lambda t: list[t]),
        inner.map(lambda t: dict[str, t]),
        _classes(depth - 1),
    )


@st.composite
def _class(draw: st.DrawFn, depth: int) -> type:
    count = draw(st.integers(min_value=0, max_value=4))
    fields: dict[str, Any] = {}
    defaulted = False
    for index in range(count):
        kind = draw(_types(depth))
        # attrs needs defaulted fields after the required ones.
        defaulted = defaulted or draw(st.booleans())
        if defaulted:
            default = draw(_values(kind))
            fields[f"f{index}"] = attrs.field(type=kind, default=default)
        else:
            fields[f"f{index}"] = attrs.field(type=kind)
    return attrs.make_class(f"Generated{next(_names)}", fields, frozen=True)


def _classes(depth: int) -> st.SearchStrategy[type]:
    return _class(depth)


_OFFSETS = st.integers(min_value=-1439, max_value=1439).map(
    lambda minutes: dt.timezone(dt.timedelta(minutes=minutes))
)


def _values(kind: Any) -> st.SearchStrategy[Any]:  # noqa: PLR0911 - one per type
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin is typing.Union or origin is __import__("types").UnionType:
        (rest,) = [a for a in args if a is not type(None)]
        return st.none() | _values(rest)
    if origin is Literal:
        return st.sampled_from(args)
    if origin is list:
        return st.lists(_values(args[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=5), _values(args[1]), max_size=3)
    simple: dict[Any, st.SearchStrategy[Any]] = {
        str: st.text(max_size=10),
        int: st.integers(),
        float: st.floats(allow_nan=False, allow_infinity=False),
        bool: st.booleans(),
        dt.date: st.dates(),
        dt.datetime: st.datetimes(timezones=_OFFSETS),
    }
    if kind in simple:
        return simple[kind]
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return st.sampled_from(list(kind))
    return st.builds(kind, **{f.name: _values(f.type) for f in attrs.fields(kind)})


_DATE_TIMES = st.tuples(
    st.datetimes(),
    st.sampled_from(["T", "t"]),
    st.sampled_from(["Z", "z", "+00:00", "-05:30", "+14:00"]),
    st.integers(min_value=0, max_value=9),
).map(
    lambda parts: (
        f"{parts[0].year:04d}-{parts[0].month:02d}-{parts[0].day:02d}"
        + parts[1]
        + parts[0].strftime("%H:%M:%S")
        + (f".{parts[0].microsecond:06d}000"[: parts[3] + 1] if parts[3] else "")
        + parts[2]
    )
)


def _documents(schema: dict[str, Any]) -> st.SearchStrategy[Any]:  # noqa: C901, PLR0911 - one per keyword
    """JSON documents a derived schema admits (a generator for the subset derived)."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kinds = schema.get("type")
    if isinstance(kinds, list):
        return st.one_of(*(_documents({**schema, "type": kind}) for kind in kinds))
    if kinds == "null":
        return st.none()
    if kinds == "boolean":
        return st.booleans()
    if kinds == "integer":
        return st.integers() | st.integers(-(2**53), 2**53).map(float)
    if kinds == "number":
        return st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    if kinds == "string":
        if schema.get("format") == "date":
            return st.dates().map(lambda d: d.isoformat())
        if schema.get("format") == "date-time":
            return _DATE_TIMES
        return st.text(max_size=10)
    if kinds == "array":
        return st.lists(_documents(schema["items"]), max_size=3)
    assert kinds == "object", schema
    properties = schema.get("properties")
    if properties is None:
        return st.dictionaries(
            st.text(max_size=5), _documents(schema["additionalProperties"]), max_size=3
        )
    required = set(schema.get("required", ()))
    return st.fixed_dictionaries(
        {k: _documents(v) for k, v in properties.items() if k in required},
        optional={k: _documents(v) for k, v in properties.items() if k not in required},
    )


@st.composite
def _class_and_instance(draw: st.DrawFn) -> tuple[type, Any]:
    cls = draw(_class(2))
    return cls, draw(_values(cls))


def _tool_for(cls: type) -> Tool:
    derived = derive_input(cls, make_converter().unstructure)

    class Generated(Tool):
        name = "generated"
        description = "A generated tool."
        actions = {  # noqa: RUF012 - one class per example
            "go": Action(
                description="Take the generated data",
                properties=derived.properties,
                required=derived.required,
                defaults=derived.defaults,
            )
        }

        async def run_action(self, action: str, data: Any, ctx: Any) -> object:
            raise NotImplementedError

    return Generated()


def _oracle(cls: type) -> jsonschema.Draft202012Validator:
    derived = derive_input(cls, make_converter().unstructure)
    schema = {
        "type": "object",
        "properties": derived.properties,
        "required": list(derived.required),
        "additionalProperties": False,
    }
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(_class_and_instance())
def test_every_instance_is_admitted_and_structures_back_to_itself(pair):
    cls, instance = pair
    converter = make_converter()
    document = converter.unstructure(instance)
    assert list(_oracle(cls).iter_errors(document)) == []
    verdict = check(_tool_for(cls), "go", document)
    assert verdict.accepted, verdict.refusal
    assert structurer(converter, cls, "go")(verdict.data) == instance


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_every_admitted_document_structures_into_the_class(data):
    cls = data.draw(_class(1))
    derived = derive_input(cls, make_converter().unstructure)
    schema = {
        "type": "object",
        "properties": derived.properties,
        "required": list(derived.required),
        "additionalProperties": False,
    }
    document = data.draw(_documents(schema))
    oracle = _oracle(cls)
    assert list(oracle.iter_errors(document)) == []
    verdict = check(_tool_for(cls), "go", document)
    assert verdict.accepted, verdict.refusal
    converter = make_converter()
    instance = structurer(converter, cls, "go")(verdict.data)
    assert isinstance(instance, cls)
    again = converter.unstructure(instance)
    assert list(oracle.iter_errors(again)) == []
