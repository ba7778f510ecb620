"""The demo's `projects` tool: create, list and archive the projects tasks belong to.

Its input schema is written by hand so that `data.project` carries the
`x-mcp-header` annotation `Project`: a 2026-07-28 client mirrors the project
into an `Mcp-Param-Project` header, and a proxy can route on it. The actions
themselves are typed `@action` methods (`_models`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any, ClassVar

from wymcp.core.schema import Context, Tool, ToolError, action
from wymcp.core.server import Hint
from wymcp_tasks._location import database_path
from wymcp_tasks._models import (
    CreateProject,
    ListProjects,
    OneProject,
    ProjectList,
    ProjectName,
    ProjectView,
)
from wymcp_tasks._store import Project, TodoStore
from wymcp_tasks._todos import store_of

PROJECT_HEADER = "Project"

_SUMMARIES = {
    "archive": "Archive a project so it takes no new tasks",
    "create": "Create a project that tasks can be filed under",
    "list": "List projects by name with their open and done task counts",
}

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {
            "type": "string",
            "enum": sorted(_SUMMARIES),
            "description": "\n".join(
                f"{name}: {_SUMMARIES[name]}" for name in sorted(_SUMMARIES)
            ),
        },
        "data": {
            "type": "object",
            "properties": {
                "project": {
                    "type": "string",
                    "x-mcp-header": PROJECT_HEADER,
                    "description": "The project the call is about (create, archive).",
                },
            },
        },
    },
    "required": ["action"],
    "additionalProperties": False,
}


class Projects(Tool):
    """Projects that group tasks; the `project` argument is routable by header."""

    name = "projects"
    title = "Projects"
    description = (
        "Group tasks into projects. The project name is mirrored into the"
        " Mcp-Param-Project header, so a proxy can route on it."
    )
    # Archiving keeps the project and its tasks; nothing is deleted.
    annotations: ClassVar[Mapping[str, Any]] = {
        "readOnlyHint": False,
        "destructiveHint": False,
        "openWorldHint": False,
    }
    input_schema: ClassVar[dict[str, Any]] = INPUT_SCHEMA

    def __init__(self, *, database: str | PathLike[str] | None = None) -> None:
        super().__init__()
        self.store = TodoStore(database_path(database))
        # A database named here wins over the store LIFESPAN opened.
        self.explicit = database is not None

    @action(
        description=_SUMMARIES["archive"],
        notes="Its tasks stay and can still be listed, updated and completed.",
        related=["list"],
        examples=[{"project": "website"}],
    )
    async def archive(self, data: ProjectName, ctx: Context) -> OneProject:
        """Archive the project (idempotent)."""
        archived = await store_of(
            ctx, self.store, explicit=self.explicit
        ).archive_project(data.project)
        if archived is None:
            raise ToolError(
                'No project by that name; see them with projects {action: "list"}.'
            )
        return _one(archived)

    @action(
        description=_SUMMARIES["create"],
        notes='Then file tasks with tasks {action: "create", data: {project: ...}}.',
        related=["list", "tasks.create"],
        examples=[{"project": "website", "description": "The new site"}],
    )
    async def create(self, data: CreateProject, ctx: Context) -> OneProject:
        """Create the project; a name taken already is refused."""
        store = store_of(ctx, self.store, explicit=self.explicit)
        return _one(await store.create_project(data.project, data.description))

    @action(
        name="list",
        description=_SUMMARIES["list"],
        notes=(
            "One page of at most `limit` projects; when next_after is not null,"
            " pass it as `after` for the next page."
        ),
        related=["create"],
        examples=[{}, {"include_archived": True}, {"after": "website", "limit": 10}],
    )
    async def list_projects(self, data: ListProjects, ctx: Context) -> ProjectList:
        """One page of projects by name."""
        projects = await store_of(
            ctx, self.store, explicit=self.explicit
        ).list_projects(
            include_archived=data.include_archived,
            after=data.after,
            limit=data.limit + 1,
        )
        page = projects[: data.limit]
        more = len(projects) > data.limit
        return ProjectList(
            projects=[ProjectView(**project) for project in page],
            count=len(page),
            next_after=page[-1]["name"] if more else None,
        )

    def hints(self, action: str, hint_context: Any) -> Sequence[Hint]:
        """After create, how to file a task under the new project."""
        if action == "create" and isinstance(hint_context, Mapping):
            return [
                Hint(
                    tool="tasks",
                    action="create",
                    description="File a task under this project.",
                    example={
                        "title": "First task",
                        "project": hint_context["project"]["name"],
                    },
                )
            ]
        return []


def _one(project: Project) -> OneProject:
    return OneProject(project=ProjectView(**project))
