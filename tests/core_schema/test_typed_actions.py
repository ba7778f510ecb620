"""@action and typed data: derivation, registration, structuring, typed output."""

from __future__ import annotations

import datetime as dt
import enum
import json
from typing import Any, ClassVar, Literal

import attrs
import jsonschema
import pytest

from wymcp.core.gates import check
from wymcp.core.schema import (
    Action,
    ConfigurationError,
    Context,
    Tool,
    ToolError,
    action,
    prepare,
)
from wymcp.testing import call


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@attrs.frozen
class Line:
    sku: str
    qty: int = attrs.field(metadata={"json_schema": {"minimum": 1}})


@attrs.frozen
class Order:
    customer: str = attrs.field(metadata={"json_schema": {"minLength": 1}})
    lines: list[Line]
    colour: Colour = Colour.RED
    mode: Literal["fast", "slow"] = "slow"
    note: str | None = None
    ratio: float = 0.5
    rush: bool = False
    due: dt.date | None = None
    at: dt.datetime | None = None
    labels: dict[str, int] = attrs.field(factory=dict)
    tags: list[str] = attrs.field(factory=list)


@attrs.frozen
class Receipt:
    customer: str
    total: int
    colour: Colour
    due: dt.date | None


@attrs.frozen
class AddNote:
    text: str = attrs.field(
        metadata={"json_schema": {"minLength": 1, "maxLength": 500}}
    )
    pinned: bool = False
    tags: list[str] = attrs.field(factory=list)


@attrs.frozen
class Note:
    id: int
    text: str


class Shop(Tool):
    name = "shop"
    description = "Take orders."

    seen: ClassVar[list[object]] = []

    @action(description="Place an order", examples=[{"customer": "a", "lines": []}])
    async def place(self, data: Order, ctx: Context) -> Receipt:
        Shop.seen.append(data)
        assert ctx.tool == "shop"
        assert ctx.action == "place"
        return Receipt(
            customer=data.customer,
            total=sum(line.qty for line in data.lines),
            colour=data.colour,
            due=data.due,
        )

    @action(description="List receipts", name="history")
    async def receipts(self, data: AddNote, ctx: Context) -> list[Receipt]:
        del ctx
        if data.text == "refuse":
            raise ToolError("no history today")
        return [Receipt(customer=data.text, total=1, colour=Colour.BLUE, due=None)]


class Notes(Tool):
    name = "notes"
    description = "Keep short notes."

    @action(description="Add a note")
    async def add(self, data: AddNote, ctx: Context) -> Note:
        del ctx
        return Note(id=len(data.tags), text=data.text)


def test_the_derived_schema_is_what_the_class_says():
    spec = prepare(Shop)
    place = spec.actions["place"].published
    assert place["required"] == ["customer", "lines"]
    assert place["defaults"] == {
        "colour": "red",
        "mode": "slow",
        "note": None,
        "ratio": 0.5,
        "rush": False,
        "due": None,
        "at": None,
        "labels": {},
        "tags": [],
    }
    props = place["properties"]
    assert props["customer"] == {"type": "string", "minLength": 1}
    assert props["lines"] == {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "sku": {"type": "string"},
                "qty": {"type": "integer", "minimum": 1},
            },
            "required": ["sku", "qty"],
            "additionalProperties": False,
        },
    }
    assert props["colour"] == {"enum": ["red", "blue"]}
    assert props["mode"] == {"enum": ["fast", "slow"]}
    assert props["note"] == {"type": ["string", "null"]}
    assert props["ratio"] == {"type": "number"}
    assert props["due"] == {"type": ["string", "null"], "format": "date"}
    assert props["at"] == {"type": ["string", "null"], "format": "date-time"}
    assert props["labels"] == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert set(spec.actions) == {"place", "history"}


def test_the_derived_output_schema_combines_every_action():
    spec = prepare(Shop)
    schema = spec.output_schema
    assert schema is not None
    assert schema["type"] == "object"
    receipt, listed = schema["anyOf"]
    assert receipt["required"] == ["customer", "total", "colour", "due"]
    assert listed["properties"]["items"]["items"] == receipt
    jsonschema.Draft202012Validator.check_schema(schema)


def test_an_optional_output_field_is_anyof_branches_of_one_type_each():
    receipt = prepare(Shop).output_schema["anyOf"][0]  # type: ignore[index]
    assert receipt["properties"]["due"] == {
        "anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]
    }
    assert receipt["properties"]["colour"] == {"enum": ["red", "blue"]}
    for found in _types(receipt):
        assert not isinstance(found, list), found  # no "type": [..., "null"]
    validator = jsonschema.Draft202012Validator(receipt)
    sample = {"customer": "c", "total": 1, "colour": "red"}
    assert validator.is_valid({**sample, "due": None})
    assert validator.is_valid({**sample, "due": "2026-01-02"})
    assert not validator.is_valid({**sample, "due": 5})


def _types(schema: object) -> list[object]:
    if isinstance(schema, dict):
        own = [schema["type"]] if "type" in schema else []
        return own + [t for value in schema.values() for t in _types(value)]
    if isinstance(schema, list):
        return [t for value in schema for t in _types(value)]
    return []


def test_the_same_gates_refuse_typed_data_naming_every_path():
    verdict = check(
        Shop,
        "place",
        {"customer": "", "lines": [{"sku": "a", "qty": 0, "x": 1}], "colour": "green"},
    )
    assert not verdict.accepted
    assert verdict.refusal["error"] == "unknown_params"
    assert verdict.refusal["unknown"] == ["data.lines[0].x"]
    verdict = check(
        Shop, "place", {"customer": "", "lines": [{"sku": "a", "qty": 0}], "rush": 1}
    )
    assert verdict.refusal["error"] == "invalid_values"
    paths = [e["path"] for e in verdict.refusal["errors"]]
    assert paths == ["data.customer", "data.lines[0].qty", "data.rush"]
    verdict = check(Shop, "place", {"lines": []})
    assert verdict.refusal["error"] == "missing_required_fields"
    assert verdict.refusal["missing"] == ["customer"]


async def test_accepted_data_arrives_as_the_instance_and_the_result_is_structured():
    Shop.seen.clear()
    answer = await call(
        Shop,
        "place",
        {
            "customer": "ann",
            "lines": [{"sku": "a", "qty": 2.0}, {"sku": "b", "qty": 3}],
            "due": "2026-12-01",
            "at": "2026-12-01T10:00:00Z",
            "colour": "blue",
        },
    )
    result = answer.result
    assert result is not None
    assert result["isError"] is False
    expected = {"customer": "ann", "total": 5, "colour": "blue", "due": "2026-12-01"}
    assert result["structuredContent"] == expected
    assert result["content"] == [
        {
            "type": "text",
            "text": '{"customer":"ann","total":5,"colour":"blue","due":"2026-12-01"}',
        }
    ]
    (order,) = Shop.seen
    assert order == Order(
        customer="ann",
        lines=[Line("a", 2), Line("b", 3)],
        colour=Colour.BLUE,
        due=dt.date(2026, 12, 1),
        at=dt.datetime(2026, 12, 1, 10, tzinfo=dt.UTC),
    )
    assert type(order.lines[0].qty) is int


async def test_a_list_of_objects_answers_under_items_and_tool_errors_still_refuse():
    answer = await call(Shop, "history", {"text": "bob"})
    assert answer.result is not None
    assert answer.result["structuredContent"] == {
        "items": [{"customer": "bob", "total": 1, "colour": "blue", "due": None}]
    }
    answer = await call(Shop, "history", {"text": "refuse"})
    assert answer.result is not None
    assert answer.result["isError"] is True
    assert answer.result["content"] == [{"type": "text", "text": "no history today"}]


async def test_the_issue_example_runs():
    answer = await call(Notes, "add", {"text": "hi", "tags": ["a", "b"]})
    assert answer.result is not None
    assert answer.result["structuredContent"] == {"id": 2, "text": "hi"}
    tools = prepare(Notes)
    assert tools.input_schema["properties"]["action"]["enum"] == ["add"]


# Registration problems ---------------------------------------------------


class Declared(Tool):
    name = "declared"
    description = "Dict declarations bound to methods."
    actions: ClassVar[dict[str, Action]] = {
        "ping": Action(description="Answer pong", properties={}),
        "echo": Action(
            description="Echo a word",
            properties={"word": {"type": "string"}},
            required=["word"],
        ),
    }

    @action
    async def ping(self, data: dict[str, Any], ctx: Context) -> object:
        del data, ctx
        return "pong"

    @action
    async def echo(self, data: dict[str, Any], ctx: Context) -> object:
        del ctx
        return {"word": data["word"]}


async def test_a_bare_action_binds_a_dict_declaration():
    answer = await call(Declared, "echo", {"word": "hi"})
    assert answer.result is not None
    assert answer.result["content"] == [{"type": "text", "text": '{"word":"hi"}'}]
    answer = await call(Declared, "ping", {})
    assert answer.result is not None
    assert answer.result["content"] == [{"type": "text", "text": "pong"}]


class DictStyle(Tool):
    name = "dictstyle"
    description = "Declared through @action with properties."

    @action(
        description="Add two numbers",
        properties={"a": {"type": "integer"}, "b": {"type": "integer"}},
        required=["a"],
        defaults={"b": 1},
    )
    async def add(self, data: dict[str, Any], ctx: Context) -> object:
        del ctx
        return {"sum": data["a"] + data["b"]}


async def test_action_with_properties_declares_a_dict_style_action():
    answer = await call(DictStyle, "add", {"a": 2})
    assert answer.result is not None
    assert answer.result["content"] == [{"type": "text", "text": '{"sum":3}'}]


class NoCode(Tool):
    name = "nocode"
    description = "One declaration has no code."
    actions: ClassVar[dict[str, Action]] = {
        "ping": Action(description="Answer pong", properties={}),
        "lost": Action(description="Has no method", properties={}),
    }

    @action
    async def ping(self, data: dict[str, Any], ctx: Context) -> object:
        del data, ctx
        return "pong"


class NoDeclaration(Tool):
    name = "nodecl"
    description = "A bare @action with nothing to bind."

    @action
    async def orphan(self, data: dict[str, Any], ctx: Context) -> object:
        del data, ctx
        return None


@attrs.frozen
class Unsupported:
    fine: int
    bad: set[int]


@attrs.frozen
class Mixed:
    either: int | str


class BadTypes(Tool):
    name = "badtypes"
    description = "Types the derivation cannot express."

    @action(description="A set")
    async def sets(self, data: Unsupported, ctx: Context) -> None:
        del data, ctx

    @action(description="A union")
    async def unions(self, data: Mixed, ctx: Context) -> None:
        del data, ctx

    @action(description="Not async")
    def sync(self, data: Mixed, ctx: Context) -> None:
        del data, ctx


class Twice(Tool):
    name = "twice"
    description = "Declared twice."
    actions: ClassVar[dict[str, Action]] = {
        "ping": Action(description="Answer pong", properties={}),
    }

    @action(description="Answer pong", properties={})
    async def ping(self, data: dict[str, Any], ctx: Context) -> object:
        del data, ctx
        return "pong"


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        (
            NoCode,
            [
                (
                    "action 'lost': declared but has no code; mark a method @action or"
                    " define run_action"
                )
            ],
        ),
        (
            NoDeclaration,
            [
                (
                    "action 'orphan': the method is marked @action but has no"
                    " declaration: give @action a description, or declare the action"
                    " in actions"
                )
            ],
        ),
        (
            BadTypes,
            [
                "action 'sets': field 'bad': the type set[int] cannot be expressed",
                (
                    "action 'sync': an @action method must be"
                    " 'async def name(self, data, ctx)' or"
                    " 'async def name(self, ctx: Context, field: type, ...)'"
                ),
                (
                    "action 'unions': field 'either': a union other than Optional[X] /"
                    " X | None cannot be expressed"
                ),
            ],
        ),
        (
            Twice,
            [
                (
                    "action 'ping': declared twice, in actions and by"
                    " @action(description=...); bind the declaration with a bare"
                    " @action instead"
                )
            ],
        ),
    ],
)
def test_registration_refuses_what_it_cannot_bind(tool, expected):
    with pytest.raises(ConfigurationError) as raised:
        prepare(tool)
    assert sorted(raised.value.problems) == expected


class Overridden(Tool):
    name = "overridden"
    description = "run_action handles what no method does."
    actions: ClassVar[dict[str, Action]] = {
        "legacy": Action(description="Handled by run_action", properties={}),
    }

    @action(description="Handled by a method", properties={})
    async def modern(self, data: dict[str, Any], ctx: Context) -> object:
        del data, ctx
        return "method"

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        del data, ctx
        return f"run_action {action}"


async def test_run_action_stays_available_beside_bound_methods():
    legacy = await call(Overridden, "legacy", {})
    modern = await call(Overridden, "modern", {})
    assert legacy.result is not None
    assert modern.result is not None
    assert legacy.result["content"][0]["text"] == "run_action legacy"
    assert modern.result["content"][0]["text"] == "method"


class Collector(Tool):
    name = "collector"
    description = "Keeps what it was given."
    kept: ClassVar[list[AddNote]] = []

    @action(description="Keep a note")
    async def keep(self, data: AddNote, ctx: Context) -> None:
        del ctx
        data.tags.append("mutated")
        Collector.kept.append(data)


async def test_every_call_gets_its_own_instance_even_of_a_factory_default():
    await call(Collector, "keep", {"text": "a"})
    await call(Collector, "keep", {"text": "b"})
    first, second = Collector.kept
    assert first.tags == ["mutated"]
    assert second.tags == ["mutated"]
    assert first.tags is not second.tags


async def test_run_action_called_directly_runs_the_bound_method():
    assert await Notes().run_action("add", {"text": "x", "tags": ["a"]}, None) == {
        "id": 1,
        "text": "x",
    }
    with pytest.raises(NotImplementedError, match="has no @action method"):
        await Notes().run_action("nothing", {}, None)


@attrs.frozen
class When:
    at: dt.datetime


class Clock(Tool):
    name = "clock"
    description = "Read a time."

    @action(description="Echo a time")
    async def echo(self, data: When, ctx: Context) -> When:
        del ctx
        return data


@pytest.mark.parametrize(
    ("sent", "read"),
    [
        ("2026-12-31t23:59:60z", "2026-12-31T23:59:59+00:00"),
        ("2026-01-02T03:04:05.1+05:30", "2026-01-02T03:04:05.100000+05:30"),
    ],
)
async def test_rfc_3339_times_read_as_python_reads_them(sent, read):
    answer = await call(Clock, "echo", {"at": sent})
    assert answer.result is not None
    assert answer.result["structuredContent"] == {"at": read}


class Misdeclared(Tool):
    name = "misdeclared"
    description = "A class whose converter refuses what its schema admits."

    @action(description="Take a note")
    async def take(self, data: AddNote, ctx: Context) -> None:
        del data, ctx


async def test_data_the_class_cannot_read_is_a_tool_error_without_the_value():
    from wymcp.core.schema._bindings import BINDINGS

    spec = prepare(Misdeclared)
    binding = vars(spec.tool)[BINDINGS]["take"]

    def refuse(data: object) -> object:
        raise ValueError(f"cannot read {data!r}")

    object.__setattr__(binding, "structure", refuse)
    answer = await call(spec.tool, "take", {"text": "SECRET-VALUE"})
    assert answer.result is not None
    assert answer.result["isError"] is True
    text = answer.result["content"][0]["text"]
    assert "SECRET-VALUE" not in text
    assert "could not be read into its class (ValueError)" in text


_TYPE_CHECKING_ONLY = """
from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from wymcp.core.schema import Tool, action

if TYPE_CHECKING:
    from wymcp.core.schema import Context


@attrs.frozen
class Ping:
    word: str


class Pinger(Tool):
    name = "pinger"
    description = "Answer pong."

    @action(description="Answer the word")
    async def ping(self, data: Ping, ctx: Context) -> Ping:
        return data
"""


async def test_ctx_may_be_annotated_with_a_type_checking_only_import(
    tmp_path, monkeypatch
):
    (tmp_path / "pinger_module.py").write_text(_TYPE_CHECKING_ONLY)
    monkeypatch.syspath_prepend(str(tmp_path))
    import pinger_module

    answer = await call(pinger_module.Pinger, "ping", {"word": "pong"})
    assert answer.result is not None
    assert answer.result["structuredContent"] == {"word": "pong"}


async def test_help_shows_a_typed_action_s_output_and_no_plain_input_schema():
    from wymcp.testing import connect

    async with connect(tools=[Shop]) as client:
        tool_level = await client.help("shop")
        action_level = await client.help("shop", "history")
    shown = json.loads(tool_level.text)
    assert "input_schema" not in shown
    assert set(shown["actions"]) == {"history", "place"}
    one = json.loads(action_level.text)
    assert one["output_schema"] == prepare(Shop).output_schema["anyOf"][1]
    assert one["output_schema"]["properties"]["items"]["type"] == "array"


def test_action_summaries_list_the_actions_at_action_declares():
    from wymcp.core.schema import action_summaries

    expected = ["history: List receipts", "place: Place an order"]
    assert action_summaries(Shop) == expected
    assert action_summaries(Shop()) == expected
    assert action_summaries(prepare(Shop)) == expected
    enum = prepare(Shop).input_schema["properties"]["action"]
    assert enum["enum"] == ["history", "place"]
    assert enum["description"].splitlines() == expected


@attrs.frozen
class Pick:
    level: Literal[1, 2]
    maybe: Literal[1, "x"] | None = None


class Picker(Tool):
    name = "picker"
    description = "Pick a level."

    seen: ClassVar[list[Pick]] = []

    @action(description="Pick one")
    async def pick(self, data: Pick, ctx: Context) -> None:
        del ctx
        Picker.seen.append(data)


async def test_an_integer_literal_receives_an_int_for_a_whole_float():
    Picker.seen.clear()
    answer = await call(Picker, "pick", {"level": 2.0, "maybe": 1.0})
    assert answer.result is not None
    assert answer.result["isError"] is False, answer.result
    (pick,) = Picker.seen
    assert pick == Pick(level=2, maybe=1)
    assert type(pick.level) is int
    assert type(pick.maybe) is int
    refused = check(Picker, "pick", {"level": 2.5})
    assert refused.refusal["error"] == "invalid_values"


@attrs.frozen
class Visit:
    on: dt.date
    weight: float = 1.0


@attrs.frozen
class Trip:
    start: dt.datetime
    visits: list[Visit]
    ratio: float = 0.5
    by_name: dict[str, dt.date] = attrs.field(factory=dict)


class Planner(Tool):
    name = "planner"
    description = "Plan trips."

    seen: ClassVar[list[Trip]] = []

    @action(description="Plan a trip")
    async def plan(self, data: Trip, ctx: Context) -> None:
        del ctx
        Planner.seen.append(data)


async def test_values_the_class_cannot_hold_are_refused_by_path_without_the_value():
    Planner.seen.clear()
    huge = int("9" * 400)
    answer = await call(
        Planner,
        "plan",
        {
            "start": "0000-01-01T00:00:00Z",
            "visits": [{"on": "2026-01-02"}, {"on": "0000-03-04", "weight": huge}],
            "ratio": huge,
            "by_name": {"a b": "0000-05-06"},
        },
    )
    assert Planner.seen == []
    assert answer.result is not None
    assert answer.result["isError"] is True
    text = answer.result["content"][0]["text"]
    assert "0000" not in text
    assert "9999999" not in text
    refusal = json.loads(text)
    assert refusal["error"] == "invalid_values"
    assert refusal["tool"] == "planner"
    assert refusal["action"] == "plan"
    assert refusal["help"] == 'help {tool: "planner", action: "plan"}'
    assert refusal["input_schema"] == prepare(Planner).actions["plan"].published
    assert refusal["error_count"] == 5
    date = "value is not a date Python can hold (years 1 to 9999)"
    double = "value is too large for a float (a 64-bit double, at most about 1.8e308)"
    assert refusal["errors"] == [
        {"path": 'data.by_name["a b"]', "problems": [date]},
        {"path": "data.ratio", "problems": [double]},
        {
            "path": "data.start",
            "problems": ["value is not a date-time Python can hold (years 1 to 9999)"],
        },
        {"path": "data.visits[1].on", "problems": [date]},
        {"path": "data.visits[1].weight", "problems": [double]},
    ]
    assert "data.by_name" in refusal["message"]


@attrs.frozen
class Positive:
    n: int = attrs.field(validator=attrs.validators.gt(0))


@attrs.frozen
class Positives:
    items: list[Positive]


class Counter(Tool):
    name = "counter"
    description = "Count."

    @action(description="Count items")
    async def count(self, data: Positives, ctx: Context) -> None:
        del data, ctx


async def test_a_value_a_class_validator_refuses_is_refused_at_the_object():
    answer = await call(Counter, "count", {"items": [{"n": 1}, {"n": -5}]})
    assert answer.result is not None
    refusal = json.loads(answer.result["content"][0]["text"])
    assert refusal["error"] == "invalid_values"
    assert refusal["errors"] == [
        {
            "path": "data.items[1]",
            "problems": ["value is refused by class Positive (ValueError)"],
        }
    ]
    assert "-5" not in answer.result["content"][0]["text"]


async def test_a_direct_run_raises_the_error_naming_the_path():
    from wymcp.core.schema import UnreadableDataError

    tool = prepare(Planner).tool
    data = {"start": "2026-01-01T00:00:00Z", "visits": [{"on": "0000-01-01"}]}
    with pytest.raises(UnreadableDataError) as caught:
        await tool.run_action("plan", data, None)
    assert caught.value.found.count == 1
    assert "data.visits[0].on: value is not a date" in str(caught.value)
    assert "0000" not in str(caught.value)


@attrs.frozen
class Days:
    days: list[dt.date]


class Calendar(Tool):
    name = "calendar"
    description = "Keep days."

    @action(description="Keep days")
    async def keep(self, data: Days, ctx: Context) -> None:
        del data, ctx


@pytest.mark.parametrize("size", [20_000, 40_000])
def test_many_unreadable_values_cost_a_bounded_memory(size):
    import tracemalloc

    from wymcp.core.schema import UnreadableDataError, action_reader

    read = action_reader(prepare(Calendar).tool, "keep")
    assert read is not None
    data = {"days": ["0000-01-01"] * size}
    tracemalloc.start()
    try:
        with pytest.raises(UnreadableDataError) as caught:
            read(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.found.count == size
    assert len(caught.value.found.entries) == 10
    assert peak < 256 * 1024, f"{peak} bytes to refuse {size} values"


@attrs.frozen
class Limits:
    n: int = attrs.field(default=500, metadata={"json_schema": {"maximum": 100}})
    tags: list[str] = attrs.field(factory=lambda: [1, 2])
    ok: int = attrs.field(default=5, metadata={"json_schema": {"maximum": 100}})


@attrs.frozen
class Holder:
    limits: Limits
    many: list[Limits] = attrs.field(factory=list)


class Defaulted(Tool):
    name = "defaulted"
    description = "A nested class whose defaults break its schema."

    seen: ClassVar[list[Holder]] = []

    @action(description="Hold limits")
    async def hold(self, data: Holder, ctx: Context) -> None:
        del ctx
        Defaulted.seen.append(data)


class TopDefaulted(Tool):
    name = "top_defaulted"
    description = "The same class at the top level."

    @action(description="Take limits")
    async def take(self, data: Limits, ctx: Context) -> None:
        del data, ctx


def test_a_nested_default_its_schema_refuses_is_refused_at_registration():
    with pytest.raises(ConfigurationError) as raised:
        prepare(Defaulted)
    assert raised.value.tool == "defaulted"
    problems = sorted(raised.value.problems)
    assert len(problems) == 4
    assert problems[0].startswith(
        "action 'hold': field 'limits.n': its default is refused by the field's"
        " schema (500 is greater than the maximum of 100"
    )
    assert problems[1].startswith(
        "action 'hold': field 'limits.tags': its default is refused by the field's"
        " schema (1 is not of type"
    )
    assert problems[2].startswith("action 'hold': field 'many[].n': its default")
    assert problems[3].startswith("action 'hold': field 'many[].tags': its default")
    with pytest.raises(ConfigurationError) as top:
        prepare(TopDefaulted)
    assert sorted(top.value.problems) == [
        "action 'take': defaults: 'n' is refused by its property schema",
        "action 'take': defaults: 'tags' is refused by its property schema",
    ]


@attrs.frozen
class Window:
    size: int = attrs.field(default=10, metadata={"json_schema": {"maximum": 100}})
    unit: Literal["s", "ms"] = "s"


@attrs.frozen
class Watch:
    window: Window
    windows: list[Window] = attrs.field(factory=list)


class Watcher(Tool):
    name = "watcher"
    description = "Sound nested defaults."

    seen: ClassVar[list[Watch]] = []

    @action(description="Watch")
    async def watch(self, data: Watch, ctx: Context) -> None:
        del ctx
        Watcher.seen.append(data)


async def test_sound_nested_defaults_are_published_and_received():
    published = prepare(Watcher).actions["watch"].published["properties"]
    window = published["window"]["properties"]
    assert window["size"] == {"type": "integer", "maximum": 100, "default": 10}
    assert window["unit"] == {"enum": ["s", "ms"], "default": "s"}
    assert published["window"].get("required") is None
    Watcher.seen.clear()
    answer = await call(Watcher, "watch", {"window": {}})
    assert answer.result is not None
    assert answer.result["isError"] is False
    assert Watcher.seen == [Watch(window=Window(size=10, unit="s"))]


@attrs.frozen
class Labels:
    # one list object, shared by every Labels() built without tags
    tags: list[str] = attrs.field(default=[])
    by_key: dict[str, list[str]] = attrs.field(default={"a": []})


@attrs.frozen
class Labelled:
    labels: Labels = attrs.field(factory=Labels)
    each: list[Labels] = attrs.field(factory=list)


class Labeller(Tool):
    name = "labeller"
    description = "Appends to the lists it is given."

    @action(description="Label")
    async def label(self, data: Labelled, ctx: Context) -> dict[str, Any]:
        del ctx
        for labels in (data.labels, *data.each):
            labels.tags.append("seen")
            labels.by_key["a"].append("seen")
        return {"tags": [labels.tags for labels in (data.labels, *data.each)]}


@pytest.mark.parametrize(
    "data",
    [{}, {"labels": {}}, {"labels": {"tags": []}}, {"each": [{}, {"tags": []}, {}]}],
)
async def test_every_call_gets_fresh_nested_defaults_at_any_depth(data):
    for _ in range(3):
        answer = await call(Labeller, "label", data)
        assert answer.result is not None
        tags = json.loads(answer.result["content"][0]["text"])["tags"]
        assert all(one == ["seen"] for one in tags), tags
    assert Labels().tags == []
    assert Labels().by_key == {"a": []}


class Underivable(Tool):
    name = "underivable"
    description = "Its only action's data cannot be derived."

    @action(description="Take")
    async def take(self, data: Unsupported, ctx: Context) -> None:
        del data, ctx


def test_a_typed_action_that_cannot_bind_reports_only_its_own_problem():
    with pytest.raises(ConfigurationError) as raised:
        prepare(Underivable)
    assert list(raised.value.problems) == [
        "action 'take': field 'bad': the type set[int] cannot be expressed"
    ]


def test_action_binding_is_the_one_lookup_a_call_dispatches_by() -> None:
    """A typed action's binding reads data into its class; a plain tool has none."""
    from wymcp.core.schema import action_binding

    binding = action_binding(prepare(Calendar).tool, "keep")
    assert binding is not None
    assert binding.structure is not None
    assert binding.read({"days": ["2026-01-02"]}) == Days(days=[dt.date(2026, 1, 2)])
    assert action_binding(prepare(Calendar).tool, "nothing") is None

    class Plain(Tool):
        name = "plain"
        description = "A tool without @action methods."

        async def run(self, data: dict[str, Any], ctx: object) -> object:
            del ctx
            return data

    assert action_binding(prepare(Plain).tool, "any") is None
