"""`arguments_refusal`: a multi-action call's root mistakes, refused in one answer."""

import json
from typing import Any

import pytest

from wymcp.core.gates import arguments_refusal, check
from wymcp.core.schema import Action, Tool, prepare


class Bookmarks(Tool):
    name = "bookmarks"
    description = "Keep bookmarks"
    actions = {  # noqa: RUF012 - the pinned declaration style
        "add": Action(
            description="Add a bookmark",
            properties={
                "url": {"type": "string"},
                "title": {"type": "string"},
            },
            required=["url", "title"],
        ),
        "remove": Action(
            description="Remove a bookmark",
            properties={"url": {"type": "string"}, "reason": {"type": "string"}},
            required=["url"],
        ),
    }

    async def run_action(self, action, data, ctx):
        return data


class Plain(Tool):
    name = "plain"
    description = "No actions"
    input_schema = {  # noqa: RUF012 - the pinned declaration style
        "type": "object",
        "properties": {"q": {"type": "string"}},
    }

    async def run(self, arguments, ctx):
        return arguments


class Routed(Tool):
    """A multi-action tool whose hand-written schema declares a root header key."""

    name = "routed"
    description = "Routed by region"
    input_schema = {  # noqa: RUF012 - the pinned declaration style
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["go"]},
            "data": {"type": "object"},
            "region": {"type": "string", "x-mcp-header": "Region"},
        },
        "required": ["action"],
    }
    actions = {"go": Action(description="Go", properties={})}  # noqa: RUF012 - the pinned declaration style

    async def run_action(self, action, data, ctx):
        return data


def request_part(refusal: dict[str, Any]) -> int:
    kept = {
        k: v for k, v in refusal.items() if k not in ("input_schema", "valid_actions")
    }
    return len(json.dumps(kept).encode())


@pytest.mark.parametrize(
    "arguments",
    [
        {"action": "add", "data": {"url": "u", "title": "t"}},
        {"action": "add"},
        {"action": "add", "data": None},
        {"action": "nope", "data": {}},
    ],
)
def test_a_well_formed_call_is_left_to_the_gates(arguments):
    assert arguments_refusal(Bookmarks, arguments) is None


def test_a_tool_without_actions_takes_its_arguments_as_data():
    assert arguments_refusal(Plain, {"anything": 1}) is None


def test_root_keys_a_hand_written_schema_declares_are_allowed():
    assert arguments_refusal(Routed, {"action": "go", "region": "eu"}) is None
    refusal = arguments_refusal(Routed, {"action": "go", "regoin": "eu"})
    assert refusal is not None
    assert refusal["did_you_mean"] == {"arguments.regoin": "arguments.region"}


def test_data_fields_sent_bare_are_pointed_into_data():
    refusal = arguments_refusal(Bookmarks, {"url": "https://x.test", "title": "T"})
    assert refusal == {
        "error": "invalid_arguments",
        "message": (
            "Tool 'bookmarks' takes arguments 'action' (one of: add, remove) and"
            " 'data' (an object holding the action's fields): 'action' is missing;"
            " 'title', 'url' are not among its arguments; an action's fields go"
            " inside 'data'."
        ),
        "tool": "bookmarks",
        "action": None,
        "valid_actions": ["add", "remove"],
        "unknown": ["arguments.title", "arguments.url"],
        "unknown_count": 2,
        "did_you_mean": {
            "arguments.title": "data.title",
            "arguments.url": "data.url",
        },
        "input_schema": dict(prepare(Bookmarks).input_schema),
        "help": 'help {tool: "bookmarks"}',
    }


def test_a_stray_key_beside_action_and_data():
    refusal = arguments_refusal(
        Bookmarks, {"action": "remove", "data": {"url": "u"}, "reasn": "old"}
    )
    assert refusal is not None
    assert refusal["action"] == "remove"
    assert refusal["unknown"] == ["arguments.reasn"]
    assert refusal["did_you_mean"] == {"arguments.reasn": "data.reason"}


def test_a_misspelled_envelope_key():
    refusal = arguments_refusal(Bookmarks, {"actoin": "add", "Data": {}})
    assert refusal is not None
    assert refusal["did_you_mean"] == {
        "arguments.Data": "arguments.data",
        "arguments.actoin": "arguments.action",
    }


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"action": 5}, "'action' is a number, not a string"),
        ({"action": ["add"]}, "'action' is an array, not a string"),
        ({"action": True}, "'action' is a boolean, not a string"),
        ({"action": None}, "'action' is missing"),
        ({"action": "add", "data": [1]}, "'data' is an array, not an object"),
        ({"action": "add", "data": "x"}, "'data' is a string, not an object"),
        ({"action": "add", "data": 0}, "'data' is a number, not an object"),
    ],
)
def test_each_root_mistake_is_said_without_the_value(arguments, said):
    refusal = arguments_refusal(Bookmarks, arguments)
    assert refusal is not None
    assert refusal["error"] == "invalid_arguments"
    assert said in refusal["message"]
    assert "unknown" not in refusal
    assert refusal["help"] == 'help {tool: "bookmarks"}'


def test_every_root_mistake_of_one_call_is_named_at_once():
    refusal = arguments_refusal(
        Bookmarks, {"action": "delete", "data": "x", "extra": 1}
    )
    assert refusal is not None
    message = refusal["message"]
    assert "'delete' is not one of its actions" in message
    assert "'data' is a string, not an object" in message
    assert "'extra' is not among its arguments" in message
    assert refusal["action"] == "delete"


def test_no_sent_value_is_quoted():
    refusal = arguments_refusal(
        Bookmarks, {"action": 123456789, "data": "SECRET-VALUE", "url": "SECRET-URL"}
    )
    text = json.dumps(refusal)
    assert "SECRET" not in text
    assert "123456789" not in text


def test_the_refusal_hands_out_a_copy_of_the_schema():
    refusal = arguments_refusal(Bookmarks, {})
    assert refusal is not None
    refusal["input_schema"]["properties"]["action"]["enum"].append("evil")
    again = arguments_refusal(Bookmarks, {})
    assert again is not None
    assert again["input_schema"]["properties"]["action"]["enum"] == ["add", "remove"]
    assert prepare(Bookmarks).input_schema["properties"]["action"]["enum"] == [
        "add",
        "remove",
    ]


def test_hostile_root_keys_get_a_bounded_answer():
    many = {f"k{i}": i for i in range(100_000)}
    refusal = arguments_refusal(Bookmarks, many)
    assert refusal is not None
    assert refusal["unknown_count"] == 100_000
    assert refusal["unknown"][:3] == ["arguments.k0", "arguments.k1", "arguments.k10"]
    assert len(refusal["unknown"]) == 10
    assert "and 99997 more" in refusal["message"]
    assert request_part(refusal) < 4096
    long_keys = {ch * 60_000: 1 for ch in "abcdefghij"}
    long_keys["action"] = "x" * 60_000
    refusal = arguments_refusal(Bookmarks, long_keys)
    assert refusal is not None
    assert len(refusal["action"]) == 120
    assert all(len(path) <= 120 for path in refusal["unknown"])
    assert request_part(refusal) < 4096
    escaped = {f"{chr(1) * 100}{i}": 1 for i in range(50)}
    refusal = arguments_refusal(Bookmarks, escaped)
    assert refusal is not None
    assert request_part(refusal) < 4096


def test_check_still_answers_a_direct_call_with_no_action():
    refusal = check(Bookmarks, None, {}).refusal
    assert refusal is not None
    assert refusal["error"] == "unknown_action"


def test_stray_keys_are_listed_in_path_order_digits_first():
    keys = ["b", "10", "a", "9", "Z", "007", "k"]
    refusal = arguments_refusal(Bookmarks, dict.fromkeys(keys, 1))
    assert refusal is not None
    assert refusal["unknown"] == [
        'arguments["007"]',
        'arguments["9"]',
        'arguments["10"]',
        "arguments.Z",
        "arguments.a",
        "arguments.b",
        "arguments.k",
    ]
    digits = {str(i): 1 for i in range(30, 0, -1)}
    refusal = arguments_refusal(Bookmarks, digits)
    assert refusal is not None
    assert refusal["unknown"][:3] == [
        'arguments["1"]',
        'arguments["2"]',
        'arguments["3"]',
    ]
