"""What a multi-action tool publishes about its fields: the help pointer, the
generated `data` description (bounded), and `PUBLISH_SCHEMA = "full"`.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from schema_oracle import MODERN, validator
from wymcp.core.gates import check
from wymcp.core.schema import (
    DATA_DESCRIPTION_LIMIT,
    Action,
    Tool,
    data_description,
    full_input_schema,
    prepare,
)
from wymcp.core.server import Engine, EngineOptions
from wymcp_tasks import Todos

LEGACY = "2025-11-25"


class Widgets(Tool):
    name = "widgets"
    description = "Manage widgets."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "list": Action(description="List widgets", properties={}),
        "create": Action(
            description="Create a widget",
            properties={"name": {"type": "string"}, "size": {"type": "integer"}},
            required=["name"],
        ),
        "find": Action(
            description="Find widgets",
            properties={"name": {"type": "string"}, "tag": {"type": "string"}},
            required_one_of=[["name"], ["tag"]],
        ),
    }

    async def run_action(self, action, data, ctx):
        return data


class Quiet(Widgets):
    name = "quiet"
    help_pointer = False


class Plain(Tool):
    name = "plain"
    description = "A plain tool."
    input_schema = {"type": "object", "properties": {"q": {"type": "string"}}}  # noqa: RUF012 - the pinned declaration style

    async def run(self, arguments, ctx):
        return arguments


def published(*tools: object, mode: str = "compact", version: str = MODERN) -> Any:
    engine = Engine(tools=tools, options=EngineOptions(publish_schema=mode))
    return {tool["name"]: tool for tool in engine.published_tools(version)}


def test_a_multi_action_tool_ends_with_a_pointer_to_help():
    tools = published(Widgets(), Quiet(), Plain())
    assert tools["widgets"]["description"] == (
        'Manage widgets. For an action\'s fields, call help with {"tool": "widgets",'
        ' "action": "<action>"}.'
    )
    assert tools["quiet"]["description"] == "Manage widgets."
    assert tools["plain"]["description"] == "A plain tool."


def test_data_names_each_actions_required_fields():
    data = published(Widgets())["widgets"]["inputSchema"]["properties"]["data"]
    assert data == {
        "type": "object",
        "description": (
            "The action's fields. Required, by action: create: name;"
            " find: name or tag; list: none."
        ),
    }


def test_the_demo_publishes_both_without_hand_written_text():
    tasks = published(Todos())["tasks"]
    assert tasks["description"].count("help") == 1
    assert tasks["description"].endswith('{"tool": "tasks", "action": "<action>"}.')
    described = tasks["inputSchema"]["properties"]["data"]["description"]
    assert "create: title;" in described
    assert "search: text;" in described


def thirty_long_actions() -> dict[str, Action]:
    fields = [
        f"a_rather_long_field_name_number_{i:02d}_of_the_action" for i in range(5)
    ]
    return {
        f"an_action_with_a_long_descriptive_name_number_{i:02d}": Action(
            description="Does one thing",
            properties={field: {"type": "string"} for field in fields},
            required=fields,
        )
        for i in range(30)
    }


def test_thirty_long_actions_stay_within_the_bound_and_count_the_rest():
    actions = thirty_long_actions()
    text = data_description(actions)
    assert len(text) <= DATA_DESCRIPTION_LIMIT
    shown = text.count("an_action_with_a_long_descriptive_name_number_")
    assert 0 < shown < 30
    assert text.endswith(f"; and {30 - shown} more actions (see help).")
    doubled = {f"{name}_again": action for name, action in actions.items()}
    assert len(data_description(actions | doubled)) <= DATA_DESCRIPTION_LIMIT


@pytest.mark.parametrize("size", range(1, 90))
def test_every_size_of_name_stays_within_the_bound(size: int):
    actions = {
        f"{i:02d}{'x' * size}": Action(
            description="d",
            properties={"f" * size: {"type": "string"}},
            required=["f" * size],
        )
        for i in range(30)
    }
    text = data_description(actions)
    assert len(text) <= DATA_DESCRIPTION_LIMIT
    assert text.endswith((".", "(see help)."))


def test_a_short_map_is_never_cut():
    assert data_description(Widgets.actions).endswith("list: none.")


@pytest.mark.parametrize("version", [MODERN, LEGACY])
@pytest.mark.parametrize("mode", ["compact", "full"])
def test_every_form_is_a_valid_tool_of_the_official_schema(mode: str, version: str):
    tools = published(Todos(), Widgets(), Plain(), mode=mode, version=version)
    for tool in tools.values():
        errors = list(validator(version, "Tool").iter_errors(tool))
        assert errors == [], tool["name"]
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])


def test_full_publishes_one_branch_per_action():
    schema = published(Widgets(), mode="full")["widgets"]["inputSchema"]
    branches = {b["properties"]["action"]["const"]: b for b in schema["oneOf"]}
    assert sorted(branches) == ["create", "find", "list"]
    assert branches["create"]["properties"]["data"]["required"] == ["name"]
    assert branches["create"]["properties"]["data"]["additionalProperties"] is False
    assert branches["find"]["properties"]["data"]["anyOf"] == [
        {"required": ["name"]},
        {"required": ["tag"]},
    ]
    assert published(Widgets())["widgets"]["inputSchema"].get("oneOf") is None


CALLS = [
    ("create", {"title": "Buy milk"}),
    ("create", {"title": "Buy milk", "priority": 2, "due": "2026-01-02"}),
    ("create", {}),
    ("create", {"titel": "Buy milk"}),
    ("create", {"title": 5}),
    ("create", {"title": "x", "priority": 9}),
    ("list", {}),
    ("list", {"status": "done"}),
    ("list", {"status": "Done"}),
    ("get", {"id": 3}),
    ("get", {"id": "3"}),
    ("get", {}),
    ("search", {"text": "milk", "limit": 5}),
    ("search", {"text": "milk", "limit": 500}),
    ("update", {"id": 1}),
    ("update", {"id": 1, "status": "done"}),
    ("export", {}),
]


@pytest.mark.parametrize(("action", "data"), CALLS)
def test_full_accepts_what_the_gates_accept(action: str, data: dict[str, Any]):
    """The full schema, read by jsonschema, decides as the gates do."""
    schema = full_input_schema(prepare(Todos))
    checker = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    arguments = {"action": action, "data": data}
    gates = check(Todos, action, json.loads(json.dumps(data))).accepted
    assert checker.is_valid(arguments) is gates


def test_full_carries_no_header_annotation_inside_a_combinator():
    class Routed(Widgets):
        name = "routed"
        actions = {  # noqa: RUF012 - the pinned declaration style
            "go": Action(
                description="Go",
                properties={"region": {"type": "string", "x-mcp-header": "Region"}},
            )
        }

    schema = full_input_schema(prepare(Routed))
    assert "x-mcp-header" not in json.dumps(schema["oneOf"])
    assert schema["oneOf"][0]["properties"]["data"]["properties"]["region"] == {
        "type": "string"
    }
