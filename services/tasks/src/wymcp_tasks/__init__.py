"""The wymcp demo: a task tracker on SQLite, served by `wymcp serve`.

`Todos` and `Projects` are the tools (typed `@action` methods), `TodoResource`
serves each task as `task://{id}`, `PlanningPrompt` is the `plan` prompt;
`settings` is the settings module the README's serve command names. Storage is
one SQLite file chosen by `TASKS_DEMO_DB`, opened once per worker by `lifespan`.
"""

from wymcp_tasks._lifespan import lifespan
from wymcp_tasks._location import DATABASE_ENVIRONMENT_VARIABLE, database_path
from wymcp_tasks._planning_prompt import PlanningPrompt
from wymcp_tasks._projects import Projects
from wymcp_tasks._store import Project, StoreError, Todo, TodoStore
from wymcp_tasks._todo_resource import TodoResource
from wymcp_tasks._todos import Todos

__all__ = [
    "DATABASE_ENVIRONMENT_VARIABLE",
    "PlanningPrompt",
    "Project",
    "Projects",
    "StoreError",
    "Todo",
    "TodoResource",
    "TodoStore",
    "Todos",
    "database_path",
    "lifespan",
]
