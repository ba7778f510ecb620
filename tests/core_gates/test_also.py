"""`also`: what the later gates find in the rest of a refused call, in one answer."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from wymcp.core.gates import arguments_refusal, check, plain_refusal
from wymcp.core.schema import Action, Tool

STRING = {"type": "string"}


class Bookmarks(Tool):
    name = "bookmarks"
    description = "Keep bookmarks."
    actions: ClassVar[dict[str, Action]] = {
        "add": Action(
            description="Add a bookmark",
            properties={
                "title": STRING,
                "url": {"type": "string", "format": "uri"},
                "tags": {"type": "array", "items": STRING},
            },
            required=["title", "url"],
        ),
        "find": Action(
            description="Find bookmarks",
            properties={"id": {"type": "integer"}, "title": STRING, "tag": STRING},
            required_one_of=[["id"], ["title", "tag"]],
        ),
        "list": Action(description="List bookmarks", properties={}),
    }

    async def run_action(self, ctx: object, action: str, data: Any) -> Any:
        raise NotImplementedError


class Plain(Tool):
    name = "plain"
    description = "A tool without actions."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"region": STRING, "size": {"type": "integer"}},
        "required": ["region"],
    }

    async def run(self, arguments: dict[str, Any], ctx: object) -> Any:
        raise NotImplementedError


def errors(section: dict[str, Any]) -> dict[str, list[str]]:
    return {entry["path"]: entry["problems"] for entry in section["errors"]}


def test_the_issue_call_names_every_mistake_in_one_answer() -> None:
    refusal = check(Bookmarks, "add", {"titel": "X", "url": 5, "tags": "a"}).refusal
    assert refusal is not None
    assert refusal["error"] == "unknown_params"
    assert refusal["unknown"] == ["data.titel"]
    assert refusal["missing"] == ["title"]
    assert refusal["did_you_mean"] == {"data.titel": "data.title"}
    assert refusal["also"] == {
        "invalid_values": {
            "errors": [
                {"path": "data.tags", "problems": ["value is not of type array"]},
                {"path": "data.url", "problems": ["value is not of type string"]},
            ],
            "error_count": 2,
        }
    }


def test_the_value_a_typo_carries_is_read_where_it_belongs() -> None:
    refusal = check(Bookmarks, "add", {"titel": 3, "url": "https://a.b"}).refusal
    assert refusal is not None
    assert errors(refusal["also"]["invalid_values"]) == {
        "data.title": ["value is not of type string"]
    }


def test_a_key_already_sent_is_not_overwritten_by_a_typo() -> None:
    refusal = check(Bookmarks, "add", {"title": "ok", "titlee": 3, "url": "u:"})
    assert refusal.refusal is not None
    assert "did_you_mean" not in refusal.refusal  # title is sent: no suggestion
    assert "also" not in refusal.refusal


def test_missing_fields_carry_the_values_beside_them() -> None:
    refusal = check(Bookmarks, "add", {"url": 5}).refusal
    assert refusal is not None
    assert refusal["error"] == "missing_required_fields"
    assert refusal["missing"] == ["title"]
    assert errors(refusal["also"]["invalid_values"]) == {
        "data.url": ["value is not of type string"]
    }


def test_an_incomplete_group_is_named_beside_a_typo_and_its_values() -> None:
    refusal = check(Bookmarks, "find", {"titl": 1, "zz": 1}).refusal
    assert refusal is not None
    assert refusal["error"] == "unknown_params"
    assert refusal["also"]["missing_required_group"] == {
        "required_one_of": [["id"], ["title", "tag"]]
    }
    assert errors(refusal["also"]["invalid_values"]) == {
        "data.title": ["value is not of type string"]
    }
    group = check(Bookmarks, "find", {"title": 1}).refusal
    assert group is not None
    assert group["error"] == "missing_required_group"
    assert set(group["also"]) == {"invalid_values"}


def test_a_refusal_with_nothing_more_to_say_has_no_also() -> None:
    for data in ({"titel": "x", "url": "u:"}, {"url": "u:"}, {"title": 1, "url": 2}):
        refusal = check(Bookmarks, "add", data).refusal
        assert refusal is not None
        assert "also" not in refusal


def test_a_misspelt_action_is_named_and_its_data_gated() -> None:
    refusal = check(Bookmarks, "Add", {"titel": "x", "url": 5}).refusal
    assert refusal is not None
    assert refusal["error"] == "unknown_action"
    assert refusal["did_you_mean"] == {"action": "add"}
    assert refusal["also"]["unknown_params"] == {
        "unknown": ["data.titel"],
        "unknown_count": 1,
        "missing": ["title"],
        "did_you_mean": {"data.titel": "data.title"},
    }
    assert errors(refusal["also"]["invalid_values"]) == {
        "data.url": ["value is not of type string"]
    }
    assert list(refusal)[-1] == "help"
    far = check(Bookmarks, "remove", {}).refusal
    assert far is not None
    assert "did_you_mean" not in far
    assert "also" not in far


def test_the_envelope_read_as_the_refusal_says() -> None:
    moved = arguments_refusal(Bookmarks, {"actoin": "add", "title": 1, "url": "u:"})
    assert moved is not None
    assert moved["did_you_mean"] == {
        "arguments.actoin": "arguments.action",
        "arguments.title": "data.title",
        "arguments.url": "data.url",
    }
    assert errors(moved["also"]["invalid_values"]) == {
        "data.title": ["value is not of type string"]
    }
    text = arguments_refusal(Bookmarks, {"action": "add", "data": '{"url": 1}'})
    assert text is not None
    assert text["also"]["missing_required_fields"] == {"missing": ["title"]}
    assert list(text).index("also") < list(text).index("input_schema")


def test_data_that_holds_no_object_adds_nothing() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    for data in ("not json", "[1, 2]", '{"a": ' * 5000, deep, [1], 7):
        refusal = arguments_refusal(Bookmarks, {"action": "add", "data": data})
        assert refusal is not None
        assert refusal["error"] == "invalid_arguments"
        assert "also" not in refusal
    unknown = arguments_refusal(Bookmarks, {"title": "x"})
    assert unknown is not None
    assert "also" not in unknown  # no action: nothing to gate the data against


def test_a_deep_json_text_data_is_refused_bounded() -> None:
    text = '{"title": ' + "[" * 900 + "]" * 900 + ', "url": 1}'
    refusal = arguments_refusal(Bookmarks, {"action": "add", "data": text})
    assert refusal is not None
    assert set(errors(refusal["also"]["invalid_values"])) == {"data.title", "data.url"}


def test_a_plain_tool_names_its_arguments() -> None:
    refusal = check(Plain, None, {"regoin": 5, "size": "2"}).refusal
    assert refusal is not None
    assert refusal["did_you_mean"] == {"arguments.regoin": "arguments.region"}
    assert errors(refusal["also"]["invalid_values"]) == {
        "arguments.region": ["value is not of type string"],
        "arguments.size": ["value is not of type integer"],
    }


def test_lenient_mode_adds_the_values_beside_a_missing_field() -> None:
    verdict = check(Bookmarks, "add", {"zz": 1, "url": 5}, strict=False)
    assert verdict.dropped == ("data.zz",)
    assert verdict.refusal is not None
    assert verdict.refusal["error"] == "missing_required_fields"
    assert errors(verdict.refusal["also"]["invalid_values"]) == {
        "data.url": ["value is not of type string"]
    }


def test_plain_refusal_makes_the_paths_of_also_relative() -> None:
    verdict = check(Bookmarks, "add", {"titel": 3, "url": 5})
    plain = plain_refusal(verdict)
    assert plain is not None
    assert errors(plain["also"]["invalid_values"]) == {
        "title": ["value is not of type string"],
        "url": ["value is not of type string"],
    }


def test_also_never_quotes_a_sent_value() -> None:
    secret = "s3cr3t-value-never-echoed"
    verdict = check(
        Bookmarks, "Add", {"titel": secret, "url": [secret], "tags": secret}
    )
    assert secret not in json.dumps(verdict.refusal)
