"""An @action method whose parameters are the fields: the same schema, casting and
gates as the attrs class it stands for; constraints through Annotated markers."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, ClassVar, Literal

import attrs
import pytest

from wymcp.core.schema import (
    ConfigurationError,
    Context,
    Description,
    Format,
    Ge,
    Gt,
    Le,
    Lt,
    MaxLen,
    MinLen,
    Pattern,
    Tool,
    ToolError,
    action,
    prepare,
)
from wymcp.testing import assert_refused, assert_succeeded, build_context, call


@attrs.frozen
class Bookmark:
    title: str
    url: str
    tags: list[str] | None = None
    rank: int = 3


@attrs.frozen
class AddBookmark:
    title: str = attrs.field(
        metadata={"json_schema": {"minLength": 1, "maxLength": 80}}
    )
    url: str = attrs.field(metadata={"json_schema": {"format": "uri"}})
    tags: list[str] | None = None
    rank: int = attrs.field(default=3, metadata={"json_schema": {"minimum": 1}})
    due: dt.date | None = None
    mode: Literal["fast", "slow"] = "slow"


class ClassBookmarks(Tool):
    name = "class_bookmarks"
    description = "Bookmarks, the attrs-class form."

    @action(description="Add a bookmark")
    async def add(self, data: AddBookmark, ctx: Context) -> Bookmark:
        del ctx
        return Bookmark(data.title, data.url, data.tags, data.rank)


class Bookmarks(Tool):
    name = "bookmarks"
    description = "Bookmarks, the parameters form."
    seen: ClassVar[list[dict[str, Any]]] = []

    @action(description="Add a bookmark")
    async def add(  # noqa: PLR0917 - the fields are the parameters
        self,
        title: Annotated[str, MinLen(1), MaxLen(80)],
        ctx: Context,
        url: Annotated[str, Format("uri")],
        tags: list[str] | None = None,
        rank: Annotated[int, Ge(1)] = 3,
        due: dt.date | None = None,
        mode: Literal["fast", "slow"] = "slow",
    ) -> Bookmark:
        Bookmarks.seen.append(
            {"rank": rank, "due": due, "mode": mode, "state": ctx.state}
        )
        return Bookmark(title, url, tags, rank)

    @action(description="List the bookmarks")
    async def every(self) -> list[Bookmark]:
        return [Bookmark("a", "https://a.example")]

    @action(description="Drop one")
    async def drop(self, ids: list[int], ctx: Context) -> None:
        del ctx
        if not ids:
            raise ToolError("nothing to drop")


def test_the_parameters_publish_what_the_attrs_class_publishes():
    by_class = prepare(ClassBookmarks).actions["add"].published
    by_parameters = prepare(Bookmarks).actions["add"].published
    assert by_parameters == by_class
    assert by_parameters["required"] == ["title", "url"]
    assert by_parameters["properties"]["rank"] == {"type": "integer", "minimum": 1}
    assert prepare(Bookmarks).actions["every"].published["properties"] == {}


async def test_a_call_is_cast_and_reaches_the_parameters_with_ctx_anywhere():
    Bookmarks.seen.clear()
    answer = await call(
        Bookmarks,
        "add",
        {"title": "W", "url": "https://w.example", "rank": 2.0, "due": "2026-01-02"},
        ctx=build_context(state="the state"),
    )
    assert assert_succeeded(answer) == {
        "title": "W",
        "url": "https://w.example",
        "tags": None,
        "rank": 2,
    }
    (seen,) = Bookmarks.seen
    assert seen == {
        "rank": 2,
        "due": dt.date(2026, 1, 2),
        "mode": "slow",
        "state": "the state",
    }
    assert type(seen["rank"]) is int
    listed = await call(Bookmarks, "every", {})
    assert assert_succeeded(listed) == {
        "items": [{"title": "a", "url": "https://a.example", "tags": None, "rank": 3}]
    }


async def test_the_gates_refuse_as_for_the_attrs_class():
    for tool in (Bookmarks, ClassBookmarks):
        unknown = await call(tool, "add", {"titel": "x", "url": "https://x.example"})
        refusal = assert_refused(unknown, "unknown_params", path="data.titel")
        assert refusal["missing"] == ["title"]
        assert refusal["did_you_mean"] == {"data.titel": "data.title"}
        bad = await call(tool, "add", {"title": "", "url": "x", "rank": 0})
        refused = assert_refused(bad, "invalid_values")
        assert [e["path"] for e in refused["errors"]] == [
            "data.rank",
            "data.title",
            "data.url",
        ]


async def test_a_tool_error_and_an_empty_answer_pass_through():
    refused = await call(Bookmarks, "drop", {"ids": []})
    assert refused.result is not None
    assert refused.result["isError"] is True
    assert "nothing to drop" in refused.result["content"][0]["text"]
    dropped = await call(Bookmarks, "drop", {"ids": [1]})
    assert dropped.result is not None
    assert dropped.result["isError"] is False


class Marked(Tool):
    name = "marked"
    description = "Every constraint marker."

    @action(description="Take them all")
    async def take(  # noqa: PLR0917 - one parameter per marker
        self,
        code: Annotated[str, Pattern("^[A-Z]{3}$"), Description("Three letters")],
        words: Annotated[list[str], MinLen(1), MaxLen(3)],
        labels: Annotated[dict[str, int], MaxLen(2)],
        ratio: Annotated[float, Gt(0), Lt(1)],
        level: Annotated[int | None, Ge(1), Le(5)] = None,
        raw: Annotated[str, {"minLength": 2, "x-note": "kept"}] = "ab",
    ) -> None:
        del code, words, labels, ratio, level, raw


def test_each_marker_writes_its_keyword_for_the_field_s_kind():
    properties = prepare(Marked).actions["take"].published["properties"]
    assert properties["code"] == {
        "type": "string",
        "pattern": "^[A-Z]{3}$",
        "description": "Three letters",
    }
    assert properties["words"] == {
        "type": "array",
        "items": {"type": "string"},
        "minItems": 1,
        "maxItems": 3,
    }
    assert properties["labels"]["maxProperties"] == 2
    assert properties["ratio"] == {
        "type": "number",
        "exclusiveMinimum": 0,
        "exclusiveMaximum": 1,
    }
    assert properties["level"] == {
        "type": ["integer", "null"],
        "minimum": 1,
        "maximum": 5,
    }
    assert properties["raw"] == {"type": "string", "minLength": 2, "x-note": "kept"}


_TYPE_CHECKING_ONLY = """
from __future__ import annotations

from typing import TYPE_CHECKING

from wymcp.core.schema import Tool, action

if TYPE_CHECKING:
    from wymcp.core.schema import Context


class Echo(Tool):
    name = "echo"
    description = "Echo a word."

    @action(description="Echo")
    async def say(self, word: str, ctx: Context[int], times: int = 1) -> None:
        del ctx
        if times < 1 or not word:
            raise AssertionError
"""


async def test_ctx_is_recognised_by_an_annotation_that_cannot_be_resolved(
    tmp_path, monkeypatch
):
    (tmp_path / "echo_module.py").write_text(_TYPE_CHECKING_ONLY)
    monkeypatch.syspath_prepend(str(tmp_path))
    import echo_module

    published = prepare(echo_module.Echo).actions["say"].published
    assert list(published["properties"]) == ["word", "times"]
    answer = await call(echo_module.Echo, "say", {"word": "hi"})
    assert answer.result is not None
    assert answer.result["isError"] is False


class WrongDefault(Tool):
    name = "wrong_default"
    description = "A default its own constraint refuses."

    @action(description="Take")
    async def take(self, size: Annotated[int, Le(10)] = 50) -> None:
        del size


class Unbindable(Tool):
    name = "unbindable"
    description = "Parameters that cannot be fields."

    @action(description="Untyped")
    async def untyped(self, ctx: Context, size) -> None:
        del ctx, size

    @action(description="Star")
    async def star(self, *sizes: int) -> None:
        del sizes

    @action(description="Two contexts")
    async def twice(self, ctx: Context, other: Context) -> None:
        del ctx, other

    @action(description="Unknown marker")
    async def marker(self, size: Annotated[int, "big"]) -> None:
        del size


def test_registration_proves_the_defaults_and_names_what_cannot_bind():
    with pytest.raises(ConfigurationError) as wrong:
        prepare(WrongDefault)
    assert list(wrong.value.problems) == [
        "action 'take': defaults: 'size' is refused by its property schema"
    ]
    with pytest.raises(ConfigurationError) as raised:
        prepare(Unbindable)
    problems = [p for p in raised.value.problems if "must define run_action" not in p]
    assert sorted(problems) == [
        (
            "action 'marker': field 'size': Annotated carries str, which is no"
            " constraint marker (MinLen, MaxLen, Ge, Le, Gt, Lt, Pattern, Format,"
            " Description) nor a JSON Schema mapping"
        ),
        (
            "action 'star': parameter 'sizes': *args, **kwargs and positional-only"
            " parameters cannot be fields; name each field"
        ),
        "action 'twice': two parameters are annotated Context: 'ctx'",
        (
            "action 'untyped': parameter 'size' has no annotation: a field needs its"
            " type, ctx needs ': Context'"
        ),
    ]


class Collector(Tool):
    name = "collector"
    description = "Keeps what it got."
    kept: ClassVar[list[list[str]]] = []

    @action(description="Keep")
    async def keep(self, tags: list[str] = []) -> None:  # noqa: B006 - the case
        tags.append("mutated")
        Collector.kept.append(tags)


async def test_a_mutable_default_is_a_fresh_copy_for_every_call():
    await call(Collector, "keep", {})
    await call(Collector, "keep", {})
    assert Collector.kept == [["mutated"], ["mutated"]]
