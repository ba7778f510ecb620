"""The built-in help tool: three levels, and errors naming the valid targets."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from wymcp.core.schema import Action, Tool


class Widgets(Tool):
    name = "widgets"
    description = "Manage widgets."
    actions: ClassVar[dict[str, Action]] = {
        "create": Action(
            description="Create a widget",
            properties={"name": {"type": "string"}},
            required=["name"],
            notes="Names are unique.",
            related=["list"],
            examples=[{"name": "w"}],
        ),
        "list": Action(description="List widgets", properties={}),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        return []

    def action_context(self, action: str, ctx: Any) -> dict[str, Any] | None:
        return {"count": 3} if action == "list" else None


class Zero(Tool):
    name = "zero"
    description = "Takes nothing."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return "ok"


class Broken(Tool):
    name = "broken"
    description = "A bad action context."
    actions: ClassVar[dict[str, Action]] = {
        "go": Action(description="Go", properties={})
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        return {}

    def action_context(self, action: str, ctx: Any) -> Any:
        return "not a mapping"


@pytest.fixture
def wire(make_wire):
    return make_wire(Widgets, Zero, Broken)


async def ask(wire, arguments: Any = None):
    params: dict[str, Any] = {"name": "help"}
    if arguments is not None:
        params["arguments"] = arguments
    reply, _ = await wire.modern("tools/call", params)
    return reply


async def test_help_is_listed_last_with_a_description(wire):
    reply, _ = await wire.modern("tools/list")
    last = reply.body["result"]["tools"][-1]
    assert last["name"] == "help"
    assert last["description"].startswith("Get details")
    assert last["inputSchema"]["additionalProperties"] is False


async def test_the_index_lists_every_tool_and_its_action_summaries(wire):
    reply = await ask(wire)
    index = wire.result_json(reply)
    assert [t["tool"] for t in index["tools"]] == ["widgets", "zero", "broken", "help"]
    assert index["tools"][0]["actions"] == [
        "create: Create a widget",
        "list: List widgets",
    ]
    assert index["tools"][-1]["actions"] == []
    assert reply.body["result"]["isError"] is False


async def test_the_tool_level_renders_every_action(wire):
    payload = wire.result_json(await ask(wire, {"tool": "widgets"}))
    create = payload["actions"]["create"]
    assert create["description"] == "Create a widget"
    assert create["required"] == ["name"]
    assert create["notes"] == "Names are unique."
    assert create["related"] == ["list"]
    assert create["examples"] == [{"name": "w"}]
    assert "notes" not in payload["actions"]["list"]
    assert payload["actions"]["list"]["required"] == []


async def test_the_tool_level_of_a_plain_tool_shows_its_schema(wire):
    payload = wire.result_json(await ask(wire, {"tool": "zero"}))
    assert payload["actions"] == {}
    assert payload["input_schema"]["type"] == "object"


async def test_help_about_help(wire):
    payload = wire.result_json(await ask(wire, {"tool": "help"}))
    assert payload["actions"] == {}


async def test_the_action_level_carries_the_action_context(wire):
    payload = wire.result_json(await ask(wire, {"tool": "widgets", "action": "list"}))
    assert payload["tool"] == "widgets"
    assert payload["action"] == "list"
    assert payload["context"] == {"count": 3}
    payload = wire.result_json(await ask(wire, {"tool": "widgets", "action": "create"}))
    assert "context" not in payload


async def test_an_unknown_tool_names_the_valid_tools(wire):
    reply = await ask(wire, {"tool": "nope", "action": "create"})
    assert reply.body["result"]["isError"] is True
    payload = wire.result_json(reply)
    assert payload["error"] == "unknown_tool"
    assert payload["valid_tools"] == ["broken", "help", "widgets", "zero"]
    assert payload["help"] == "help {}"


async def test_an_action_without_a_tool_is_missing_tool(wire):
    payload = wire.result_json(await ask(wire, {"action": "create"}))
    assert payload["error"] == "missing_tool"
    assert "valid_tools" in payload


async def test_an_unknown_action_is_the_shared_unknown_action_refusal(wire):
    reply = await ask(wire, {"tool": "widgets", "action": "nope"})
    payload = wire.result_json(reply)
    assert payload["error"] == "unknown_action"
    assert payload["valid_actions"] == ["create", "list"]


async def test_a_misspelt_action_points_at_the_one_meant_and_gates_no_data(wire):
    payload = wire.result_json(await ask(wire, {"tool": "widgets", "action": "Create"}))
    assert payload["error"] == "unknown_action"
    assert payload["did_you_mean"] == {"action": "create"}
    assert "also" not in payload  # help sent no data: no missing field to name


@pytest.mark.parametrize(
    ("arguments", "error", "paths"),
    [
        ({"tol": "x"}, "unknown_params", ["arguments.tol"]),
        ({"tool": "widgets", "actions": "x"}, "unknown_params", ["arguments.actions"]),
        ({"tool": 3}, "invalid_values", ["arguments.tool"]),
        ({"tool": None}, "invalid_values", ["arguments.tool"]),
        ({"tool": "widgets", "action": []}, "invalid_values", ["arguments.action"]),
    ],
)
async def test_misspelled_or_mistyped_arguments_are_tool_execution_errors(
    wire, arguments, error, paths
):
    reply = await ask(wire, arguments)
    assert reply.body["result"]["isError"] is True
    refusal = wire.result_json(reply)
    assert refusal["error"] == error
    assert refusal["tool"] == "help"
    found = refusal.get("unknown") or [e["path"] for e in refusal["errors"]]
    assert found == paths
    assert refusal["help"] == 'help {tool: "help"}'


async def test_a_misspelled_help_argument_gets_did_you_mean(wire):
    refusal = wire.result_json(await ask(wire, {"tol": "widgets", "acton": "list"}))
    assert refusal["did_you_mean"] == {
        "arguments.acton": "arguments.action",
        "arguments.tol": "arguments.tool",
    }
    assert refusal["message"].startswith("Unknown parameter(s) for tool 'help'")


async def test_help_refusals_are_tool_results_in_a_session(wire):
    sid = await wire.initialize()
    reply, _ = await wire.session(
        sid, "tools/call", {"name": "help", "arguments": {"tool": 3}}
    )
    assert reply.status == 200
    assert reply.body["result"]["isError"] is True
    assert wire.result_json(reply)["error"] == "invalid_values"


async def test_a_raising_action_context_answers_tool_raised(wire):
    reply = await ask(wire, {"tool": "broken", "action": "go"})
    assert reply.body["result"]["isError"] is True
    assert wire.result_json(reply)["errorType"] == "tool_raised"


async def test_help_works_in_a_session(wire):
    sid = await wire.initialize("2025-03-26")
    reply, _ = await wire.session(
        sid, "tools/call", {"name": "help"}, version="2025-03-26"
    )
    assert "tools" in wire.result_json(reply)


def test_what_help_renders_is_a_copy_no_caller_can_use_to_change_the_spec():
    from wymcp.core.schema import prepare
    from wymcp.core.server._help import render_action

    spec = prepare(Widgets).actions["create"]
    rendered = render_action(spec)
    rendered["properties"]["name"]["type"] = "integer"
    rendered["required"].append("x")
    rendered["examples"][0]["name"] = 5
    again = render_action(spec)
    assert again["properties"]["name"] == {"type": "string"}
    assert again["required"] == ["name"]
    assert again["examples"] == [{"name": "w"}]
    assert spec.published["properties"]["name"] == {"type": "string"}
