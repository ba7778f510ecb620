"""The demo's `tasks` tool: create, list, get, update, complete, delete, search.

Each action is a method marked `@action`; its data class (`_models`) is the
published schema, the gates enforce it, and the method meets a typed instance.
`update` keeps a dict: there an absent field ("leave it") differs from null
("clear it"). Storage is the `TodoStore` LIFESPAN opened (`ctx.state`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date
from os import PathLike
from typing import Any, ClassVar

from wymcp.core.schema import Context, Tool, ToolError, action
from wymcp.core.server import Hint
from wymcp_tasks._export import export_todos
from wymcp_tasks._location import database_path
from wymcp_tasks._models import (
    DESCRIPTION,
    DUE,
    ID,
    MAX_ID,
    PRIORITY,
    PROJECT,
    PROJECT_PATTERN,
    STATUSES,
    TITLE,
    CreateTodo,
    Deleted,
    ExportedTodos,
    ExportTodos,
    ListTodos,
    OneTodo,
    SearchTodos,
    TodoId,
    TodoList,
    TodoView,
)
from wymcp_tasks._store import Todo, TodoStore

__all__ = ["MAX_ID", "PROJECT_PATTERN", "STATUSES", "Todos", "shape_todo", "store_of"]

_NOT_FOUND = (
    'No task has that id. Find ids with tasks {action: "list"} or'
    ' tasks {action: "search", data: {text: ...}}.'
)
_UPDATE_PROPERTIES: dict[str, Any] = {
    "id": {"type": "integer", **ID},
    "title": {"type": "string", **TITLE},
    "description": {"type": ["string", "null"], **DESCRIPTION},
    "status": {"type": "string", "enum": list(STATUSES)},
    "priority": {"type": "integer", **PRIORITY},
    "due": {"type": ["string", "null"], "format": "date", **DUE},
    "project": {"type": ["string", "null"], **PROJECT},
}


def shape_todo(task: Todo, today: date) -> dict[str, Any]:
    """The task as every answer shows it: its fields plus `overdue` on `today`."""
    due = task["due"]
    overdue = task["status"] != "done" and due is not None and due < today.isoformat()
    return {**task, "overdue": overdue}


def store_of(ctx: object, own: TodoStore, *, explicit: bool) -> TodoStore:
    """The store a call uses: LIFESPAN's (`ctx.state`) unless one was named.

    `own` wins when its database was named explicitly, or without LIFESPAN.
    """
    state = getattr(ctx, "state", None)
    if explicit or not isinstance(state, TodoStore):
        return own
    return state


class MissingTodoError(ToolError):
    """No task has the id a call named (its hint points at list)."""

    def __init__(self) -> None:
        super().__init__(_NOT_FOUND)


class Todos(Tool):
    """A task tracker on SQLite: the demo's main tool."""

    name = "tasks"
    title = "Tasks"
    description = (
        "Track tasks: each has a title, a status (open, in_progress, done), a"
        " priority from 1 (most urgent) to 5, an optional due date and project."
    )
    # delete removes a task for good; nothing leaves the local database.
    annotations: ClassVar[Mapping[str, Any]] = {
        "readOnlyHint": False,
        "destructiveHint": True,
        "openWorldHint": False,
    }

    def __init__(
        self,
        *,
        database: str | PathLike[str] | None = None,
        today: Callable[[], date] = date.today,
    ) -> None:
        super().__init__()
        self.store = TodoStore(database_path(database))
        # A database named here wins over the store LIFESPAN opened.
        self.explicit = database is not None
        self._today = today

    def _view(self, task: Todo) -> TodoView:
        return TodoView(**shape_todo(task, self._today()))

    async def _answer(self, store: TodoStore, task: Todo | None) -> OneTodo:
        if task is None:
            raise MissingTodoError
        await store.refresh_overdue(self._today())
        return OneTodo(task=self._view(task))

    async def _listing(self, store: TodoStore, tasks: list[Todo]) -> TodoList:
        await store.refresh_overdue(self._today())
        return TodoList(tasks=[self._view(task) for task in tasks], count=len(tasks))

    @action(
        description="Create a task (open) and return it with its id",
        notes=(
            "A new task starts open. `project` must name a project made with"
            " the projects tool that is not archived; leave it out for none."
        ),
        related=["get", "list", "projects.create"],
        examples=[
            {"title": "Renew the passport", "due": "2026-12-15", "priority": 2},
            {"title": "Write the release notes", "project": "website"},
        ],
    )
    async def create(self, data: CreateTodo, ctx: Context) -> OneTodo:
        """Insert the task."""
        store = store_of(ctx, self.store, explicit=self.explicit)
        task = await store.create_todo(
            title=data.title,
            description=data.description,
            priority=data.priority,
            due=data.due.isoformat() if data.due else None,
            project=data.project,
        )
        return await self._answer(store, task)

    @action(
        name="list",
        description="List tasks, soonest due first, filtered by every field given",
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
    )
    async def list_todos(self, data: ListTodos, ctx: Context) -> TodoList:
        """List by the filters given."""
        store = store_of(ctx, self.store, explicit=self.explicit)
        tasks = await store.list_todos(
            status=data.status,
            priority=data.priority,
            due_before=data.due_before.isoformat() if data.due_before else None,
            due_after=data.due_after.isoformat() if data.due_after else None,
            project=data.project,
            limit=data.limit,
        )
        return await self._listing(store, tasks)

    @action(
        description="Get one task by id",
        related=["update", "complete"],
        examples=[{"id": 1}],
    )
    async def get(self, data: TodoId, ctx: Context) -> OneTodo:
        """Read one task."""
        store = store_of(ctx, self.store, explicit=self.explicit)
        return await self._answer(store, await store.get_todo(data.id))

    @action(
        description="Change some fields of a task and return it",
        properties=_UPDATE_PROPERTIES,
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
    )
    async def update(self, data: dict[str, Any], ctx: Context) -> OneTodo:
        """Apply the changes sent (a dict: absent and null differ here)."""
        store = store_of(ctx, self.store, explicit=self.explicit)
        changes = {key: value for key, value in data.items() if key != "id"}
        task = await store.update_todo(data["id"], changes)
        return await self._answer(store, task)

    @action(
        description="Mark a task done and return it",
        notes="Completing a task that is already done changes nothing.",
        related=["update"],
        examples=[{"id": 1}],
    )
    async def complete(self, data: TodoId, ctx: Context) -> OneTodo:
        """Mark it done."""
        store = store_of(ctx, self.store, explicit=self.explicit)
        return await self._answer(store, await store.complete_todo(data.id))

    @action(
        description="Delete a task for good",
        notes="There is no undo; complete keeps the task in the history instead.",
        related=["complete"],
        examples=[{"id": 1}],
    )
    async def delete(self, data: TodoId, ctx: Context) -> Deleted:
        """Delete it."""
        store = store_of(ctx, self.store, explicit=self.explicit)
        if not await store.delete_todo(data.id):
            raise MissingTodoError
        await store.refresh_overdue(self._today())
        return Deleted(deleted=data.id)

    @action(
        description="Find tasks whose title or description contains a text",
        notes="Plain substring match; ASCII letters match in either case.",
        related=["list", "get"],
        examples=[{"text": "passport"}],
    )
    async def search(self, data: SearchTodos, ctx: Context) -> TodoList:
        """Find by substring."""
        store = store_of(ctx, self.store, explicit=self.explicit)
        return await self._listing(
            store, await store.search_todos(data.text, limit=data.limit)
        )

    @action(
        description="Export every task (or those of one status) as CSV text",
        notes=(
            "Runs as a task when the client declares the tasks extension: the"
            " call answers a task handle at once; poll tasks/get for the CSV."
            " At most 10000 tasks per status."
        ),
        related=["list"],
        examples=[{}, {"status": "open"}],
        task_support="optional",
    )
    async def export(self, data: ExportTodos, ctx: Context) -> ExportedTodos:
        """Build the CSV."""
        store = store_of(ctx, self.store, explicit=self.explicit)
        return await export_todos(store, data.status, ctx)

    def hints(self, action: str, hint_context: Any) -> Sequence[Hint]:
        """Suggest the natural next call.

        After create, how to fetch the task; after list or search, how to complete
        one; after a missing id (`hint_context` is the error), how to find ids.
        """
        if isinstance(hint_context, MissingTodoError):
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
        """Today's date and how many tasks are overdue, beside every answer.

        The count is the one the call's own store work refreshed in a thread.
        """
        today = self._today()
        store = store_of(ctx, self.store, explicit=self.explicit)
        return {"today": today.isoformat(), "overdue": store.count_overdue(today)}


def _first_id(result: Any) -> int | None:
    """The id of the task a result carries (the first listed one), else None."""
    if isinstance(result, Mapping):
        task = result.get("task")
        if task is None and result.get("tasks"):
            task = result["tasks"][0]
        if isinstance(task, Mapping) and isinstance(task.get("id"), int):
            return int(task["id"])
    return None
