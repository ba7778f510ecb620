"""The typed data of the demo's tools: what each action takes and what it answers.

wymcp derives the published input and output schemas from these attrs classes;
the extra JSON Schema keywords (bounds, patterns, descriptions) are in metadata.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

import attrs

Status = Literal["open", "in_progress", "done"]
STATUSES: tuple[Status, ...] = ("open", "in_progress", "done")
MAX_ID = 2**53 - 1
PROJECT_PATTERN = "^[a-z0-9][a-z0-9-]{0,62}$"

ID = {
    "minimum": 1,
    "maximum": MAX_ID,
    "description": "The task's id, as create, list or search returned it.",
}
TITLE = {"minLength": 1, "maxLength": 200}
DESCRIPTION = {"maxLength": 2000}
PRIORITY = {
    "minimum": 1,
    "maximum": 5,
    "description": "1 is the most urgent, 5 the least.",
}
DUE = {"description": "YYYY-MM-DD."}
PROJECT = {
    "pattern": PROJECT_PATTERN,
    "description": "A project name made with the projects tool.",
}


def _schema(**keywords: Any) -> dict[str, Any]:
    """The attrs field metadata carrying extra JSON Schema keywords."""
    return {"json_schema": keywords}


# Inputs ------------------------------------------------------------------


@attrs.frozen
class CreateTodo:
    """A new task; it starts open."""

    title: str = attrs.field(metadata=_schema(**TITLE))
    description: str | None = attrs.field(default=None, metadata=_schema(**DESCRIPTION))
    priority: int = attrs.field(default=3, metadata=_schema(**PRIORITY))
    due: dt.date | None = attrs.field(default=None, metadata=_schema(**DUE))
    project: str | None = attrs.field(default=None, metadata=_schema(**PROJECT))


@attrs.frozen
class ListTodos:
    """The filters of a listing (every one given must match)."""

    status: Status | None = None
    priority: int | None = attrs.field(default=None, metadata=_schema(**PRIORITY))
    due_before: dt.date | None = attrs.field(
        default=None,
        metadata=_schema(description="Only tasks due strictly before this date."),
    )
    due_after: dt.date | None = attrs.field(
        default=None,
        metadata=_schema(description="Only tasks due strictly after this date."),
    )
    project: str | None = attrs.field(default=None, metadata=_schema(**PROJECT))
    limit: int = attrs.field(default=50, metadata=_schema(minimum=1, maximum=200))


@attrs.frozen
class TodoId:
    """One task, by id."""

    id: int = attrs.field(metadata=_schema(**ID))


@attrs.frozen
class SearchTodos:
    """A substring to find in titles and descriptions."""

    text: str = attrs.field(metadata=_schema(minLength=1, maxLength=200))
    limit: int = attrs.field(default=20, metadata=_schema(minimum=1, maximum=100))


@attrs.frozen
class ProjectName:
    """One project, by name."""

    project: str = attrs.field(
        metadata=_schema(
            pattern=PROJECT_PATTERN,
            description="Lowercase letters, digits and dashes, at most 63 characters.",
        )
    )


@attrs.frozen
class CreateProject:
    """A new project."""

    project: str = attrs.field(
        metadata=_schema(
            pattern=PROJECT_PATTERN,
            description="Lowercase letters, digits and dashes, at most 63 characters.",
        )
    )
    description: str | None = attrs.field(default=None, metadata=_schema(maxLength=500))


@attrs.frozen
class ListProjects:
    """One page of projects, by name."""

    include_archived: bool = False
    after: str | None = attrs.field(
        default=None,
        metadata=_schema(
            pattern=PROJECT_PATTERN,
            description="Start after this project name: the last answer's next_after.",
        ),
    )
    limit: int = attrs.field(default=50, metadata=_schema(minimum=1, maximum=200))


# Outputs -----------------------------------------------------------------


@attrs.frozen
class TodoView:
    """One task as every answer shows it, with `overdue` on the server's today."""

    id: int = attrs.field(metadata=_schema(minimum=1))
    title: str
    description: str | None
    status: Status
    priority: int = attrs.field(metadata=_schema(minimum=1, maximum=5))
    due: str | None = attrs.field(metadata=_schema(format="date"))
    project: str | None
    overdue: bool
    created_at: str = attrs.field(metadata=_schema(format="date-time"))
    updated_at: str = attrs.field(metadata=_schema(format="date-time"))
    completed_at: str | None = attrs.field(metadata=_schema(format="date-time"))


@attrs.frozen
class OneTodo:
    """create, get, update and complete answer the task."""

    task: TodoView


@attrs.frozen
class TodoList:
    """list and search answer the tasks and how many there are."""

    tasks: list[TodoView]
    count: int = attrs.field(metadata=_schema(minimum=0))


@attrs.frozen
class ExportTodos:
    """What an export covers: every task, or those of one status."""

    status: Status | None = None


@attrs.frozen
class ExportedTodos:
    """export answers the tasks as CSV text (a header line, one line a task)."""

    count: int = attrs.field(metadata=_schema(minimum=0))
    csv: str


@attrs.frozen
class Deleted:
    """delete answers the id it deleted."""

    deleted: int = attrs.field(metadata=_schema(minimum=1))


@attrs.frozen
class ProjectView:
    """One project with its task counts."""

    name: str
    description: str | None
    archived: bool
    created_at: str = attrs.field(metadata=_schema(format="date-time"))
    open_tasks: int = attrs.field(metadata=_schema(minimum=0))
    done_tasks: int = attrs.field(metadata=_schema(minimum=0))


@attrs.frozen
class OneProject:
    """create and archive answer the project."""

    project: ProjectView


@attrs.frozen
class ProjectList:
    """list answers one page of projects; next_after names the next page."""

    projects: list[ProjectView]
    count: int = attrs.field(metadata=_schema(minimum=0))
    next_after: str | None = attrs.field(
        metadata=_schema(description="Pass as after for the next page; null: last.")
    )
