"""The demo's `projects` tool: its actions and its routable, hand-written schema."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from wymcp.core.gates import check
from wymcp.core.schema import HeaderAnnotation, Tool, ToolError, prepare
from wymcp_tasks import Projects, Todos


@pytest.fixture
def projects(tmp_path: Path) -> Iterator[Projects]:
    tool = Projects(database=tmp_path / "tasks.sqlite3")
    yield tool
    tool.store.close()


async def call(tool: Tool, action: str, data: dict[str, Any] | None = None) -> Any:
    verdict = check(tool, action, data)
    assert verdict.accepted, verdict.refusal
    result = await tool.run_action(action, dict(verdict.data), None)
    jsonschema.validate(result, prepare(tool).output_schema)
    assert prepare(tool).validate_output(result) == []
    return result


async def test_create_list_and_archive(projects: Projects) -> None:
    created = await call(
        projects, "create", {"project": "website", "description": "The new site"}
    )
    assert created["project"]["name"] == "website"
    assert created["project"]["archived"] is False
    await call(projects, "create", {"project": "home"})
    listed = await call(projects, "list")
    assert [p["name"] for p in listed["projects"]] == ["home", "website"]
    assert listed["count"] == 2
    archived = await call(projects, "archive", {"project": "home"})
    assert archived["project"]["archived"] is True
    assert [p["name"] for p in (await call(projects, "list"))["projects"]] == [
        "website"
    ]
    everything = await call(projects, "list", {"include_archived": True})
    assert everything["count"] == 2


async def test_after_create_the_hint_files_a_task_under_the_project(
    projects: Projects, tmp_path: Path
) -> None:
    created = await call(projects, "create", {"project": "site"})
    [hint] = projects.hints("create", created)
    assert (hint.tool, hint.action) == ("tasks", "create")
    assert hint.example["project"] == "site"
    tasks = Todos(database=tmp_path / "tasks.sqlite3")
    verdict = check(tasks, hint.action, hint.example)
    assert verdict.accepted
    await tasks.run_action(hint.action, dict(verdict.data), None)
    assert projects.hints("list", await call(projects, "list")) == []


async def test_the_list_counts_each_projects_tasks(
    projects: Projects, tmp_path: Path
) -> None:
    tasks = Todos(database=tmp_path / "tasks.sqlite3")
    await call(projects, "create", {"project": "site"})
    await tasks.run_action(
        "create", {"title": "a", "priority": 3, "project": "site"}, None
    )
    await tasks.run_action(
        "create", {"title": "b", "priority": 3, "project": "site"}, None
    )
    await tasks.run_action("complete", {"id": 2}, None)
    [site] = (await call(projects, "list"))["projects"]
    assert (site["open_tasks"], site["done_tasks"]) == (1, 1)


async def test_an_archived_project_takes_no_new_tasks(
    projects: Projects, tmp_path: Path
) -> None:
    tasks = Todos(database=tmp_path / "tasks.sqlite3")
    await call(projects, "create", {"project": "old"})
    await call(projects, "archive", {"project": "old"})
    with pytest.raises(ToolError, match="archived"):
        await tasks.run_action(
            "create", {"title": "a", "priority": 3, "project": "old"}, None
        )


async def test_a_taken_name_is_a_tool_error(projects: Projects) -> None:
    await call(projects, "create", {"project": "site"})
    with pytest.raises(ToolError, match="exists already"):
        await call(projects, "create", {"project": "site"})


async def test_archiving_an_unknown_project_is_a_tool_error(projects: Projects) -> None:
    with pytest.raises(ToolError, match="list"):
        await call(projects, "archive", {"project": "nowhere"})


@pytest.mark.parametrize("name", ["", "Upper", "has space", "-dash-first", "x" * 64])
def test_a_project_name_is_a_short_slug(projects: Projects, name: str) -> None:
    verdict = check(projects, "create", {"project": name})
    assert not verdict.accepted
    assert verdict.refusal is not None
    assert verdict.refusal["error"] == "invalid_values"
    assert [e["path"] for e in verdict.refusal["errors"]] == ["data.project"]


def test_create_and_archive_need_the_project(projects: Projects) -> None:
    for action in ("create", "archive"):
        verdict = check(projects, action, {})
        assert verdict.refusal is not None
        assert verdict.refusal["missing"] == ["project"]


def test_the_project_is_routable_by_header(projects: Projects) -> None:
    spec = prepare(projects)
    assert spec.header_annotations == (
        HeaderAnnotation(header="Project", path=("data", "project"), type="string"),
    )
    published = spec.input_schema
    assert (
        published["properties"]["data"]["properties"]["project"]["x-mcp-header"]
        == "Project"
    )
    assert published["properties"]["action"]["enum"] == ["archive", "create", "list"]


def test_the_hand_written_schema_matches_the_action_summaries(
    projects: Projects,
) -> None:
    from wymcp.core.schema import action_summaries

    spec = prepare(projects)
    description = spec.input_schema["properties"]["action"]["description"]
    assert description.split("\n") == action_summaries(spec)
