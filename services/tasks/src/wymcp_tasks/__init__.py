"""The wymcp demo: a task tracker on SQLite, served by `wymcp serve`.

`Tasks` and `Projects` are the tools; `settings` is the settings module the
README's serve command names. Storage lives in one SQLite file chosen by
`WYMCP_TASKS_DB` (default: `./wymcp-tasks.sqlite3`).
"""

from wymcp_tasks._location import DATABASE_ENVIRONMENT_VARIABLE, database_path
from wymcp_tasks._projects import Projects
from wymcp_tasks._store import Project, StoreError, Task, TaskStore
from wymcp_tasks._tasks import Tasks

__all__ = [
    "DATABASE_ENVIRONMENT_VARIABLE",
    "Project",
    "Projects",
    "StoreError",
    "Task",
    "TaskStore",
    "Tasks",
    "database_path",
]
