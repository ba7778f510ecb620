"""The demo's `tasks` tool: create, list, get, update, complete, delete, search.

Each action is declared with a precise schema; the gates enforce it before
`run_action` runs, so the code below only meets valid data. Storage is
`TaskStore`; this module turns its answers into results, hints and errors.
"""

from collections.abc import Callable, Mapping, Sequence
from datetime import date
from os import PathLike
from typing import Any, ClassVar

from wymcp.core.schema import Action, Tool, ToolError
from wymcp.core.server import Hint
from wymcp_tasks._location import database_path
from wymcp_tasks._store import StoreError, Task, TaskStore

STATUSES = ("open", "in_progress", "done")
MAX_ID = 2**53 - 1
PROJECT_PATTERN = "^[a-z0-9][a-z0-9-]{0,62}$"

_ID = {
    "type": "integer",
    "minimum": 1,
    "maximum": MAX_ID,
    "description": "The task's id, as create, list or search returned it.",
}
_TITLE = {"type": "string", "minLength": 1, "maxLength": 200}
_DESCRIPTION = {"type": "string", "maxLength": 2000}
_PRIORITY = {
    "type": "integer",
    "minimum": 1,
    "maximum": 5,
    "description": "1 is the most urgent, 5 the least.",
}
_DUE = {"type": "string", "format": "date", "description": "YYYY-MM-DD."}
_PROJECT = {
    "type": "string",
    "pattern": PROJECT_PATTERN,
    "description": "A project name made with the projects tool.",
}
_STATUS = {"type": "string", "enum": list(STATUSES)}


def or_null(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` or null, spelt with single-`type` branches (the portable form)."""
    return {"anyOf": [schema, {"type": "null"}]}


_TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "minimum": 1},
        "title": {"type": "string"},
        "description": or_null({"type": "string"}),
        "status": {"type": "string", "enum": list(STATUSES)},
        "priority": {"type": "integer", "minimum": 1, "maximum": 5},
        "due": or_null({"type": "string", "format": "date"}),
        "project": or_null({"type": "string"}),
        "overdue": {"type": "boolean"},
        "created_at": {"type": "string", "format": "date-time"},
        "updated_at": {"type": "string", "format": "date-time"},
        "completed_at": or_null({"type": "string", "format": "date-time"}),
    },
    "required": [
        "id",
        "title",
        "description",
        "status",
        "priority",
        "due",
        "project",
        "overdue",
        "created_at",
        "updated_at",
        "completed_at",
    ],
    "additionalProperties": False,
}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        "create, get, update and complete answer {task}; list and search answer"
        " {tasks, count}; delete answers {deleted}."
    ),
    "properties": {
        "task": _TASK_SCHEMA,
        "tasks": {"type": "array", "items": _TASK_SCHEMA},
        "count": {"type": "integer", "minimum": 0},
        "deleted": {"type": "integer", "minimum": 1},
    },
    "anyOf": [
        {"required": ["task"]},
        {"required": ["tasks", "count"]},
        {"required": ["deleted"]},
    ],
}

_NOT_FOUND = (
    'No task has that id. Find ids with tasks {action: "list"} or'
    ' tasks {action: "search", data: {text: ...}}.'
)


def shape_task(task: Task, today: date) -> dict[str, Any]:
    """The task as every answer shows it: its fields plus `overdue` on `today`."""
    due = task["due"]
    overdue = task["status"] != "done" and due is not None and due < today.isoformat()
    return {**task, "overdue": overdue}


class MissingTaskError(ToolError):
    """No task has the id a call named (its hint points at list)."""

    def __init__(self) -> None:
        super().__init__(_NOT_FOUND)


def _build_actions() -> dict[str, Action]:
    return {
        "create": Action(
            description="Create a task (open) and return it with its id",
            properties={
                "title": _TITLE,
                "description": _DESCRIPTION,
                "priority": _PRIORITY,
                "due": _DUE,
                "project": _PROJECT,
            },
            required=["title"],
            defaults={"priority": 3},
            notes=(
                "A new task starts open. `project` must name a project made with"
                " the projects tool that is not archived; leave it out for none."
            ),
            related=["get", "list", "projects.create"],
            examples=[
                {"title": "Renew the passport", "due": "2026-12-15", "priority": 2},
                {"title": "Write the release notes", "project": "website"},
            ],
        ),
        "list": Action(
            description="List tasks, soonest due first, filtered by every field given",
            properties={
                "status": _STATUS,
                "priority": _PRIORITY,
                "due_before": {
                    "type": "string",
                    "format": "date",
                    "description": "Only tasks due strictly before this date.",
                },
                "due_after": {
                    "type": "string",
                    "format": "date",
                    "description": "Only tasks due strictly after this date.",
                },
                "project": _PROJECT,
                "limit": {"type": "integer", "minimum": 1, "maximum": 200},
            },
            defaults={"limit": 50},
            notes=(
                "Filters combine with AND. A task with no due date matches neither"
                " due_before nor due_after. Tasks with a due date come first,"
                " then by priority (1 first). Every task carries `overdue`: not"
                " done and due before today (`context.today`)."
            ),
            related=["search", "complete"],
            examples=[
                {},
                {"status": "open", "due_before": "2026-12-01"},
                {"project": "website", "priority": 1, "limit": 10},
            ],
        ),
        "get": Action(
            description="Get one task by id",
            properties={"id": _ID},
            required=["id"],
            related=["update", "complete"],
            examples=[{"id": 1}],
        ),
        "update": Action(
            description="Change some fields of a task and return it",
            properties={
                "id": _ID,
                "title": _TITLE,
                "description": {**_DESCRIPTION, "type": ["string", "null"]},
                "status": _STATUS,
                "priority": _PRIORITY,
                "due": {**_DUE, "type": ["string", "null"]},
                "project": {**_PROJECT, "type": ["string", "null"]},
            },
            required=["id"],
            required_one_of=[
                ["title"],
                ["description"],
                ["status"],
                ["priority"],
                ["due"],
                ["project"],
            ],
            notes=(
                "Send only the fields to change, at least one. null clears"
                " description, due or project. Setting status to done stamps"
                " completed_at; moving it back clears it."
            ),
            related=["complete", "get"],
            examples=[
                {"id": 1, "priority": 1},
                {"id": 1, "status": "in_progress", "due": None},
            ],
        ),
        "complete": Action(
            description="Mark a task done and return it",
            properties={"id": _ID},
            required=["id"],
            notes="Completing a task that is already done changes nothing.",
            related=["update"],
            examples=[{"id": 1}],
        ),
        "delete": Action(
            description="Delete a task for good",
            properties={"id": _ID},
            required=["id"],
            notes="There is no undo; complete keeps the task in the history instead.",
            related=["complete"],
            examples=[{"id": 1}],
        ),
        "search": Action(
            description="Find tasks whose title or description contains a text",
            properties={
                "text": {"type": "string", "minLength": 1, "maxLength": 200},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            },
            required=["text"],
            defaults={"limit": 20},
            notes="Plain substring match; ASCII letters match in either case.",
            related=["list", "get"],
            examples=[{"text": "passport"}],
        ),
    }


class Tasks(Tool):
    """A task tracker on SQLite: the demo's main tool."""

    name = "tasks"
    title = "Tasks"
    description = (
        "Track tasks: each has a title, a status (open, in_progress, done), a"
        " priority from 1 (most urgent) to 5, an optional due date and project."
        " Call help for an action's full schema."
    )
    # delete removes a task for good; nothing leaves the local database.
    annotations: ClassVar[Mapping[str, Any]] = {
        "readOnlyHint": False,
        "destructiveHint": True,
        "openWorldHint": False,
    }
    actions: ClassVar[Mapping[str, Action]] = _build_actions()
    output_schema: ClassVar[dict[str, Any]] = OUTPUT_SCHEMA

    def __init__(
        self,
        *,
        database: str | PathLike[str] | None = None,
        today: Callable[[], date] = date.today,
    ) -> None:
        super().__init__()
        self.store = TaskStore(database_path(database))
        self._today = today

    def _shape(self, task: Task) -> dict[str, Any]:
        return shape_task(task, self._today())

    def _listing(self, tasks: list[Task]) -> dict[str, Any]:
        return {"tasks": [self._shape(task) for task in tasks], "count": len(tasks)}

    def _found(self, task: Task | None) -> dict[str, Any]:
        if task is None:
            raise MissingTaskError
        return {"task": self._shape(task)}

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:  # noqa: ARG002 -- the Tool interface passes ctx
        """Carry out one gated call.

        Raises:
            ToolError: no task has the id, or the project is unknown or archived.
        """
        handlers = {
            "create": self._create,
            "list": self._list,
            "search": self._search,
            "get": self._get,
            "update": self._update,
            "complete": self._complete,
            "delete": self._delete,
        }
        try:
            return await handlers[action](data)
        except StoreError as error:
            raise ToolError(str(error)) from error

    async def _create(self, data: dict[str, Any]) -> dict[str, Any]:
        task = await self.store.create_task(
            title=data["title"],
            description=data.get("description"),
            priority=data["priority"],
            due=data.get("due"),
            project=data.get("project"),
        )
        return self._found(task)

    async def _list(self, data: dict[str, Any]) -> dict[str, Any]:
        filters = ("status", "priority", "due_before", "due_after", "project")
        tasks = await self.store.list_tasks(
            **{key: data[key] for key in filters if key in data}, limit=data["limit"]
        )
        return self._listing(tasks)

    async def _search(self, data: dict[str, Any]) -> dict[str, Any]:
        tasks = await self.store.search_tasks(data["text"], limit=data["limit"])
        return self._listing(tasks)

    async def _get(self, data: dict[str, Any]) -> dict[str, Any]:
        return self._found(await self.store.get_task(data["id"]))

    async def _update(self, data: dict[str, Any]) -> dict[str, Any]:
        changes = {key: value for key, value in data.items() if key != "id"}
        return self._found(await self.store.update_task(data["id"], changes))

    async def _complete(self, data: dict[str, Any]) -> dict[str, Any]:
        return self._found(await self.store.complete_task(data["id"]))

    async def _delete(self, data: dict[str, Any]) -> dict[str, Any]:
        if not await self.store.delete_task(data["id"]):
            raise MissingTaskError
        return {"deleted": data["id"]}

    def hints(self, action: str, hint_context: Any) -> Sequence[Hint]:
        """Suggest the natural next call.

        After create, how to fetch the task; after list or search, how to complete
        one; after a missing id (``hint_context`` is the error), how to find ids.
        """
        if isinstance(hint_context, MissingTaskError):
            return [
                Hint(
                    tool=self.name,
                    action="list",
                    description="List the open tasks with their ids.",
                    example={"status": "open"},
                )
            ]
        if isinstance(hint_context, BaseException):
            return []
        if action == "create":
            return [
                Hint(
                    tool=self.name,
                    action="get",
                    description="Fetch this task again by its id.",
                    example={"id": _first_id(hint_context)},
                )
            ]
        if action in {"list", "search"} and _first_id(hint_context) is not None:
            return [
                Hint(
                    tool=self.name,
                    action="complete",
                    description="Mark a listed task done by its id.",
                    example={"id": _first_id(hint_context)},
                )
            ]
        return []

    def action_context(self, action: str, ctx: Any) -> Mapping[str, Any] | None:  # noqa: ARG002 -- the same answer for every action
        """Today's date and how many tasks are overdue, beside every answer."""
        today = self._today()
        return {"today": today.isoformat(), "overdue": self.store.count_overdue(today)}


def _first_id(result: Any) -> int | None:
    """The id of the task a result carries (the first listed one), else None."""
    if isinstance(result, Mapping):
        task = result.get("task")
        if task is None and result.get("tasks"):
            task = result["tasks"][0]
        if isinstance(task, Mapping) and isinstance(task.get("id"), int):
            return int(task["id"])
    return None
