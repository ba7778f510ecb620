"""The demo's tools as a served call answers them, at both eras (wymcp.testing.call).

The call goes through the engine: gates, result shaping, hints, the action
context and, at 2026-07-28, the mirrored `Mcp-Param-Project` header.
"""

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from wymcp.testing import (
    assert_refused,
    assert_succeeded,
    build_context,
    call,
)
from wymcp_tasks import Projects, Todos

TODAY = date(2026, 6, 15)
REVISIONS = ["2026-07-28", "2025-11-25", "2025-03-26"]


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "tasks.sqlite3"


def shown(answer: Any) -> dict[str, Any]:
    """The first text block: the result plus hints and context."""
    decoded = json.loads(answer.text)
    assert isinstance(decoded, dict)
    return decoded


@pytest.mark.parametrize("revision", REVISIONS)
async def test_create_answers_the_task_a_hint_and_the_context(
    database: Path, revision: str
) -> None:
    tasks = Todos(database=database, today=lambda: TODAY)
    answer = await call(
        tasks,
        "create",
        {"title": "Late", "due": "2026-06-01"},
        ctx=build_context(protocol_version=revision),
    )
    value = assert_succeeded(answer)
    assert value["task"]["overdue"] is True
    text = shown(answer)
    assert text["hints"] == [
        {
            "tool": "tasks",
            "action": "get",
            "description": "Fetch this task again by its id.",
            "example": {"id": value["task"]["id"]},
        }
    ]
    assert text["context"] == {"today": "2026-06-15", "overdue": 1}


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_bad_date_is_refused_with_a_pointer_to_help(
    database: Path, revision: str
) -> None:
    answer = await call(
        Todos(database=database),
        "create",
        {"title": "a", "due": "tomorrow"},
        ctx=build_context(protocol_version=revision),
    )
    refusal = assert_refused(answer, "invalid_values", path="data.due")
    assert refusal["help"] == 'help {tool: "tasks", action: "create"}'


async def test_a_missing_id_answers_is_error_with_a_hint_to_list(
    database: Path,
) -> None:
    answer = await call(Todos(database=database), "get", {"id": 42})
    assert answer.is_error
    payload = shown(answer)
    assert payload["error"].startswith("No task has that id.")
    assert [hint["action"] for hint in payload["hints"]] == ["list"]
    assert "input_schema" not in payload


@pytest.mark.parametrize("revision", REVISIONS)
async def test_projects_route_by_header_at_every_revision(
    database: Path, revision: str
) -> None:
    projects = Projects(database=database)
    answer = await call(
        projects,
        "create",
        {"project": "home"},
        ctx=build_context(protocol_version=revision),
    )
    assert assert_succeeded(answer)["project"]["name"] == "home"
    listed = await call(projects, "list", ctx=build_context(protocol_version=revision))
    assert assert_succeeded(listed)["count"] == 1
