"""The demo's `tasks` tool, called as the server calls it: gates, then run_action."""

import asyncio
import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from wymcp.core.gates import check
from wymcp.core.schema import Tool, ToolError, prepare
from wymcp_tasks import DATABASE_ENVIRONMENT_VARIABLE, Projects, Todos

TODAY = date(2026, 6, 15)


@pytest.fixture
def tasks(tmp_path: Path) -> Iterator[Todos]:
    tool = Todos(database=tmp_path / "tasks.sqlite3", today=lambda: TODAY)
    yield tool
    tool.store.close()


async def call(tool: Tool, action: str, data: dict[str, Any] | None = None) -> Any:
    verdict = check(tool, action, data)
    assert verdict.accepted, verdict.refusal
    result = await tool.run_action(action, dict(verdict.data), None)
    # Every answer fits the tool's output schema (jsonschema is the oracle).
    jsonschema.validate(result, prepare(tool).output_schema)
    assert prepare(tool).validate_output(result) == []
    return result


def refusal(tool: Tool, action: str, data: dict[str, Any] | None) -> dict[str, Any]:
    verdict = check(tool, action, data)
    assert not verdict.accepted
    assert verdict.refusal is not None
    assert verdict.refusal["tool"] == tool.name
    return dict(verdict.refusal)


# create ---------------------------------------------------------------------


async def test_create_returns_the_open_task_with_the_default_priority(
    tasks: Todos,
) -> None:
    result = await call(
        tasks, "create", {"title": "Renew passport", "due": "2026-12-15"}
    )
    task = result["task"]
    assert task["id"] == 1
    assert task["title"] == "Renew passport"
    assert task["status"] == "open"
    assert task["priority"] == 3
    assert task["due"] == "2026-12-15"
    assert task["overdue"] is False


async def test_create_marks_a_task_due_before_today_overdue(tasks: Todos) -> None:
    result = await call(tasks, "create", {"title": "Late", "due": "2026-06-14"})
    assert result["task"]["overdue"] is True


async def test_an_integral_float_priority_is_read_as_an_integer(tasks: Todos) -> None:
    result = await call(tasks, "create", {"title": "a", "priority": 2.0})
    assert result["task"]["priority"] == 2
    assert isinstance(result["task"]["priority"], int)


def test_create_without_a_title_is_refused(tasks: Todos) -> None:
    answer = refusal(tasks, "create", {"due": "2026-12-15"})
    assert answer["error"] == "missing_required_fields"
    assert answer["missing"] == ["title"]
    assert answer["action"] == "create"
    assert "help" in answer


def test_create_with_a_misspelt_key_is_refused(tasks: Todos) -> None:
    answer = refusal(tasks, "create", {"title": "a", "titel": "a"})
    assert answer["error"] == "unknown_params"
    assert answer["unknown"] == ["data.titel"]


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"title": "a", "due": "tomorrow"}, "data.due"),
        ({"title": "a", "due": "2026-02-30"}, "data.due"),
        ({"title": "a", "priority": 9}, "data.priority"),
        ({"title": "a", "priority": 0}, "data.priority"),
        ({"title": "a", "priority": "high"}, "data.priority"),
        ({"title": ""}, "data.title"),
        ({"title": "x" * 201}, "data.title"),
        ({"title": "a", "project": "Not A Slug"}, "data.project"),
    ],
)
def test_create_with_a_bad_value_names_its_path(
    tasks: Todos, data: dict[str, Any], path: str
) -> None:
    answer = refusal(tasks, "create", data)
    assert answer["error"] == "invalid_values"
    assert [entry["path"] for entry in answer["errors"]] == [path]


def test_a_refusal_never_quotes_the_bad_value(tasks: Todos) -> None:
    answer = refusal(tasks, "create", {"title": "a", "due": "next-tuesday-ish"})
    assert "next-tuesday-ish" not in str(answer)


def test_an_unknown_action_lists_the_valid_ones(tasks: Todos) -> None:
    answer = refusal(tasks, "archive", {})
    assert answer["error"] == "unknown_action"
    assert answer["valid_actions"] == sorted(prepare(tasks).actions)


async def test_create_in_an_unknown_project_is_a_tool_error(tasks: Todos) -> None:
    with pytest.raises(ToolError, match="create it first"):
        await call(tasks, "create", {"title": "a", "project": "nowhere"})


# list and search ---------------------------------------------------------------


async def test_list_filters_and_counts(tasks: Todos, tmp_path: Path) -> None:
    projects = Projects(database=tmp_path / "tasks.sqlite3")
    await call(projects, "create", {"project": "site"})
    await call(tasks, "create", {"title": "a", "due": "2026-06-01", "priority": 1})
    await call(tasks, "create", {"title": "b", "due": "2026-07-01", "project": "site"})
    await call(tasks, "create", {"title": "c"})
    everything = await call(tasks, "list")
    assert everything["count"] == 3
    assert [t["title"] for t in everything["tasks"]] == ["a", "b", "c"]
    overdue = await call(tasks, "list", {"status": "open", "due_before": "2026-06-15"})
    assert [t["title"] for t in overdue["tasks"]] == ["a"]
    later = await call(tasks, "list", {"due_after": "2026-06-15"})
    assert [t["title"] for t in later["tasks"]] == ["b"]
    assert (await call(tasks, "list", {"project": "site"}))["count"] == 1
    assert (await call(tasks, "list", {"priority": 1}))["count"] == 1
    assert (await call(tasks, "list", {"limit": 2}))["count"] == 2


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"status": "finished"}, "data.status"),
        ({"limit": 0}, "data.limit"),
        ({"limit": 201}, "data.limit"),
        ({"due_before": "15/06/2026"}, "data.due_before"),
    ],
)
def test_list_with_a_bad_filter_is_refused(
    tasks: Todos, data: dict[str, Any], path: str
) -> None:
    answer = refusal(tasks, "list", data)
    assert answer["error"] == "invalid_values"
    assert [entry["path"] for entry in answer["errors"]] == [path]


async def test_search_finds_text_in_titles_and_descriptions(tasks: Todos) -> None:
    await call(
        tasks, "create", {"title": "Call Bob", "description": "about the PASSPORT"}
    )
    await call(tasks, "create", {"title": "Buy milk"})
    found = await call(tasks, "search", {"text": "passport"})
    assert [t["title"] for t in found["tasks"]] == ["Call Bob"]
    assert (await call(tasks, "search", {"text": "zzz"}))["count"] == 0


def test_search_needs_some_text(tasks: Todos) -> None:
    assert refusal(tasks, "search", {})["error"] == "missing_required_fields"
    assert refusal(tasks, "search", {"text": ""})["error"] == "invalid_values"


# get, update, complete, delete -----------------------------------------------------


async def test_get_returns_the_task(tasks: Todos) -> None:
    created = await call(tasks, "create", {"title": "a"})
    assert await call(tasks, "get", {"id": 1}) == created


@pytest.mark.parametrize("action", ["get", "complete", "delete"])
async def test_a_missing_id_is_a_tool_error_pointing_at_list(
    tasks: Todos, action: str
) -> None:
    with pytest.raises(ToolError, match="list"):
        await call(tasks, action, {"id": 42})


@pytest.mark.parametrize("action", ["get", "update", "complete", "delete"])
@pytest.mark.parametrize("bad", [0, -1, "1", 2**53, 1.5])
def test_an_id_must_be_a_positive_integer(tasks: Todos, action: str, bad: Any) -> None:
    answer = refusal(
        tasks, action, {"id": bad, "title": "x"} if action == "update" else {"id": bad}
    )
    assert answer["error"] == "invalid_values"
    assert [entry["path"] for entry in answer["errors"]] == ["data.id"]


async def test_update_changes_only_the_given_fields(tasks: Todos) -> None:
    await call(tasks, "create", {"title": "a", "due": "2026-06-01", "priority": 2})
    updated = (await call(tasks, "update", {"id": 1, "title": "b", "due": None}))[
        "task"
    ]
    assert updated["title"] == "b"
    assert updated["due"] is None
    assert updated["priority"] == 2


def test_update_needs_a_field_to_change(tasks: Todos) -> None:
    answer = refusal(tasks, "update", {"id": 1})
    assert answer["error"] == "missing_required_group"


async def test_update_of_a_missing_task_is_a_tool_error(tasks: Todos) -> None:
    with pytest.raises(ToolError):
        await call(tasks, "update", {"id": 9, "title": "b"})


async def test_complete_marks_the_task_done(tasks: Todos) -> None:
    await call(tasks, "create", {"title": "a", "due": "2026-01-01"})
    done = (await call(tasks, "complete", {"id": 1}))["task"]
    assert done["status"] == "done"
    assert done["completed_at"] is not None
    assert done["overdue"] is False


async def test_delete_removes_the_task(tasks: Todos) -> None:
    await call(tasks, "create", {"title": "a"})
    assert await call(tasks, "delete", {"id": 1}) == {"deleted": 1}
    with pytest.raises(ToolError):
        await call(tasks, "get", {"id": 1})


# hints and context -----------------------------------------------------------------


async def test_after_create_the_hint_shows_how_to_get_the_task(tasks: Todos) -> None:
    result = await call(tasks, "create", {"title": "a"})
    await call(tasks, "create", {"title": "b"})
    second = await call(tasks, "create", {"title": "c"})
    [hint] = tasks.hints("create", second)
    assert (hint.tool, hint.action, hint.example) == ("tasks", "get", {"id": 3})
    assert check(tasks, hint.action, hint.example).accepted
    assert tasks.hints("create", result)[0].example == {"id": 1}


async def test_after_list_the_hint_shows_how_to_complete_one(tasks: Todos) -> None:
    assert tasks.hints("list", await call(tasks, "list")) == []
    await call(tasks, "create", {"title": "a"})
    listed = await call(tasks, "list")
    [hint] = tasks.hints("list", listed)
    assert (hint.tool, hint.action, hint.example) == ("tasks", "complete", {"id": 1})
    assert tasks.hints("delete", {"deleted": 1}) == []


async def test_after_a_missing_id_the_hint_shows_how_to_find_ids(tasks: Todos) -> None:
    with pytest.raises(ToolError) as missing:
        await call(tasks, "get", {"id": 5})
    [hint] = tasks.hints("get", missing.value)
    assert (hint.action, hint.example) == ("list", {"status": "open"})
    assert check(tasks, hint.action, hint.example).accepted
    with pytest.raises(ToolError) as unknown_project:
        await call(tasks, "create", {"title": "a", "project": "nowhere"})
    assert tasks.hints("create", unknown_project.value) == []


async def test_the_action_context_counts_overdue_tasks(tasks: Todos) -> None:
    assert tasks.action_context("list", None) == {"today": "2026-06-15", "overdue": 0}
    await call(tasks, "create", {"title": "late", "due": "2026-06-01"})
    await call(tasks, "create", {"title": "later", "due": "2026-07-01"})
    assert tasks.action_context("create", None) == {"today": "2026-06-15", "overdue": 1}


# declaration and storage -----------------------------------------------------------


def test_every_action_documents_itself(tasks: Todos) -> None:
    for name, spec in prepare(tasks).actions.items():
        action = spec.action
        assert action is not None
        assert "\n" not in action.description, name
        assert action.examples, name
        for example in action.examples:
            verdict = check(tasks, name, example)
            assert verdict.accepted, (name, example, verdict.refusal)


def test_tools_list_publishes_the_compact_schema(tmp_path: Path) -> None:
    spec = prepare(Todos(database=tmp_path / "t.db"))
    assert spec.input_schema["properties"]["action"]["enum"] == [
        "complete",
        "create",
        "delete",
        "export",
        "get",
        "list",
        "search",
        "update",
    ]
    assert spec.input_schema["properties"]["data"] == {
        "type": "object",
        "description": (
            "The action's fields. Required, by action: complete: id; create: title;"
            " delete: id; export: none; get: id; list: none; search: text; update:"
            " id, and title or description or status or priority or due or project."
        ),
    }
    # Derived from the return annotations: {task}, {tasks, count}, {deleted},
    # {count, csv}.
    assert spec.output_schema is not None
    answers = spec.output_schema["anyOf"]
    assert [sorted(a["required"]) for a in answers] == [
        ["task"],
        ["count", "tasks"],
        ["deleted"],
        ["count", "csv"],
    ]


async def test_two_tool_instances_on_one_file_share_the_tasks(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    first = Todos(database=path)
    await call(first, "create", {"title": "Persist me"})
    second = Todos(database=path)
    assert (await call(second, "get", {"id": 1}))["task"]["title"] == "Persist me"


def test_the_database_is_chosen_when_the_tool_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATABASE_ENVIRONMENT_VARIABLE, str(tmp_path / "first.db"))
    first = Todos()
    monkeypatch.setenv(DATABASE_ENVIRONMENT_VARIABLE, str(tmp_path / "second.db"))
    assert first.store.path == tmp_path / "first.db"
    assert Todos().store.path == tmp_path / "second.db"
    assert not (tmp_path / "first.db").exists()


async def test_export_runs_as_a_task_and_answers_the_csv(tmp_path: Path) -> None:
    from wymcp.core.server import (
        MODERN,
        TASKS_EXTENSION,
        Engine,
        Exchange,
        Headers,
        encode_json,
    )

    tool = Todos(database=tmp_path / "t.db")
    await tool.store.create_todo(
        title="Renew, the passport",
        description=None,
        priority=2,
        due=None,
        project=None,
    )
    await tool.store.create_todo(
        title="Done one", description=None, priority=3, due=None, project=None
    )
    await tool.store.complete_todo(2)
    engine = Engine(tools=[tool])

    class Sink:
        async def open(self, headers: Any = None) -> None:
            del headers

        async def send(self, message: Any, *, event_id: str | None = None) -> None:
            del message, event_id

    async def post(method: str, params: dict[str, Any], name: str) -> Any:
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {TASKS_EXTENSION: {}}
            },
        }
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": method,
            "params": {**params, "_meta": meta},
        }
        headers = [
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", method),
            ("Mcp-Name", name),
        ]
        exchange = Exchange(method="POST", headers=Headers.of(headers), body=body)
        reply = await engine.post(exchange, Sink())
        return json.loads(encode_json(reply.body))["result"]  # as a transport writes it

    created = await post(
        "tools/call",
        {"name": "tasks", "arguments": {"action": "export", "data": {}}},
        "tasks",
    )
    assert created["resultType"] == "task"
    got = created
    for _ in range(500):
        got = await post("tasks/get", {"taskId": created["taskId"]}, created["taskId"])
        if got["status"] != "working":
            break
        await asyncio.sleep(0.01)
    assert got["status"] == "completed", got
    exported = got["result"]["structuredContent"]
    assert exported["count"] == 2
    assert exported["csv"].splitlines() == [
        "id,title,status,priority,due,project",
        '1,"Renew, the passport",open,2,,',
        "2,Done one,done,3,,",
    ]
