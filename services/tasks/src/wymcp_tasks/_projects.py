"""The demo's `projects` tool: create, list and archive the projects tasks belong to.

Its input schema is written by hand so that `data.project` carries the
`x-mcp-header` annotation `Project`: a 2026-07-28 client mirrors the project
into an `Mcp-Param-Project` header, and a proxy can route on it.
"""

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any, ClassVar

from wymcp.core.schema import Action, Tool, ToolError
from wymcp.core.server import Hint
from wymcp_tasks._location import database_path
from wymcp_tasks._store import Project, StoreError, TaskStore
from wymcp_tasks._tasks import PROJECT_PATTERN, or_null

PROJECT_HEADER = "Project"

_NAME = {
    "type": "string",
    "pattern": PROJECT_PATTERN,
    "description": "Lowercase letters, digits and dashes, at most 63 characters.",
}

_ACTIONS: dict[str, Action] = {
    "archive": Action(
        description="Archive a project so it takes no new tasks",
        properties={"project": _NAME},
        required=["project"],
        notes="Its tasks stay and can still be listed, updated and completed.",
        related=["list"],
        examples=[{"project": "website"}],
    ),
    "create": Action(
        description="Create a project that tasks can be filed under",
        properties={
            "project": _NAME,
            "description": {"type": "string", "maxLength": 500},
        },
        required=["project"],
        notes='Then file tasks with tasks {action: "create", data: {project: ...}}.',
        related=["list", "tasks.create"],
        examples=[{"project": "website", "description": "The new site"}],
    ),
    "list": Action(
        description="List projects by name with their open and done task counts",
        properties={"include_archived": {"type": "boolean"}},
        defaults={"include_archived": False},
        related=["create"],
        examples=[{}, {"include_archived": True}],
    ),
}

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {
            "type": "string",
            "enum": sorted(_ACTIONS),
            "description": "\n".join(
                f"{name}: {_ACTIONS[name].description}" for name in sorted(_ACTIONS)
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

_PROJECT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "description": or_null({"type": "string"}),
        "archived": {"type": "boolean"},
        "created_at": {"type": "string", "format": "date-time"},
        "open_tasks": {"type": "integer", "minimum": 0},
        "done_tasks": {"type": "integer", "minimum": 0},
    },
    "required": [
        "name",
        "description",
        "archived",
        "created_at",
        "open_tasks",
        "done_tasks",
    ],
    "additionalProperties": False,
}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        "create and archive answer {project}; list answers {projects, count}."
    ),
    "properties": {
        "project": _PROJECT_SCHEMA,
        "projects": {"type": "array", "items": _PROJECT_SCHEMA},
        "count": {"type": "integer", "minimum": 0},
    },
    "anyOf": [{"required": ["project"]}, {"required": ["projects", "count"]}],
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
    actions: ClassVar[Mapping[str, Action]] = _ACTIONS
    input_schema: ClassVar[dict[str, Any]] = INPUT_SCHEMA
    output_schema: ClassVar[dict[str, Any]] = OUTPUT_SCHEMA

    def __init__(self, *, database: str | PathLike[str] | None = None) -> None:
        super().__init__()
        self.store = TaskStore(database_path(database))

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:  # noqa: ARG002 -- the Tool interface passes ctx
        """Carry out one gated call.

        Raises:
            ToolError: the project exists already (create) or does not (archive).
        """
        handlers = {
            "create": self._create,
            "list": self._list,
            "archive": self._archive,
        }
        try:
            return await handlers[action](data)
        except StoreError as error:
            raise ToolError(str(error)) from error

    async def _create(self, data: dict[str, Any]) -> dict[str, Any]:
        created = await self.store.create_project(
            data["project"], data.get("description")
        )
        return _one(created)

    async def _list(self, data: dict[str, Any]) -> dict[str, Any]:
        projects = await self.store.list_projects(
            include_archived=data["include_archived"]
        )
        return {"projects": projects, "count": len(projects)}

    async def _archive(self, data: dict[str, Any]) -> dict[str, Any]:
        archived = await self.store.archive_project(data["project"])
        if archived is None:
            raise ToolError(
                'No project by that name; see them with projects {action: "list"}.'
            )
        return _one(archived)

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


def _one(project: Project) -> dict[str, Any]:
    return {"project": project}
