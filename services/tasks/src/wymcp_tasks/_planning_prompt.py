"""The `plan` prompt: turn the tasks not done into a plan for the next days.

Its arguments are strings (as prompts' are on the wire), each held to a
pattern by the gates before `render` runs.
"""

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from os import PathLike
from typing import Any, ClassVar

from wymcp.core.schema import Prompt, PromptArgument
from wymcp_tasks._location import database_path
from wymcp_tasks._store import TodoStore
from wymcp_tasks._todos import PROJECT_PATTERN, shape_todo, store_of

DEFAULT_DAYS = 7
# How many tasks of each status the prompt quotes at most.
_QUOTED = 100


class PlanningPrompt(Prompt):
    """Ask the model for a day-by-day plan over the tasks not done."""

    name = "plan"
    title = "Plan the tasks"
    description = (
        "A day-by-day plan over the open and in-progress tasks, overdue ones first,"
        " with the tasks tool calls that would carry it out."
    )
    arguments: ClassVar[Sequence[PromptArgument]] = (
        PromptArgument(
            name="days",
            description=f"How many days to plan, 1 to 31 (default {DEFAULT_DAYS}).",
            schema={"pattern": "^([1-9]|[12][0-9]|3[01])$"},
        ),
        PromptArgument(
            name="project",
            description="Only the tasks of this project.",
            schema={"pattern": PROJECT_PATTERN},
        ),
    )

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

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        """Return one user message quoting the tasks not done, soonest due first."""
        days = int(arguments.get("days", DEFAULT_DAYS))
        project = arguments.get("project")
        today = self._today()
        store = store_of(ctx, self.store, explicit=self.explicit)
        pending = [
            shape_todo(task, today)
            for status in ("in_progress", "open")
            for task in await store.list_todos(
                status=status, project=project, limit=_QUOTED
            )
        ]
        pending.sort(
            key=lambda task: (task["due"] is None, task["due"] or "", task["priority"])
        )
        scope = f" in project {project}" if project else ""
        if not pending:
            return (
                f"Today is {today.isoformat()}. I have no open tasks{scope}. Suggest"
                " how I could use the tasks tool to capture what I need to do in"
                f" the next {days} days."
            )
        overdue = sum(task["overdue"] for task in pending)
        lines = "\n".join(
            json.dumps(_brief(task), ensure_ascii=False) for task in pending
        )
        return (
            f"Today is {today.isoformat()}. Plan my next {days} days{scope}.\n\n"
            f"{_count(len(pending))} not done ({overdue} overdue), one JSON"
            f" object per line, soonest due first:\n{lines}\n\n"
            "Propose what to do on each day, overdue tasks first, no more than a"
            " day can hold. Then list the tasks tool calls that would record the"
            ' plan (for example tasks {action: "update", data: {id, due, priority}}'
            " for tasks to move), so I can confirm them one by one."
        )


def _count(tasks: int) -> str:
    return "This task is" if tasks == 1 else f"These {tasks} tasks are"


def _brief(task: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a plan needs, without timestamps."""
    keys = ("id", "title", "status", "priority", "due", "project", "overdue")
    return {key: task[key] for key in keys}
