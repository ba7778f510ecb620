"""Decide which SQLite file the demo's tools use.

`TASKS_DEMO_DB` names it; otherwise `wymcp-tasks.sqlite3` in the working
directory. Read when a tool is constructed, never at import.
"""

import os
from pathlib import Path

DATABASE_ENVIRONMENT_VARIABLE = "TASKS_DEMO_DB"
DEFAULT_DATABASE_NAME = "wymcp-tasks.sqlite3"


def database_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Return the absolute database path: `explicit`, the variable, or the default."""
    chosen = explicit or os.environ.get(DATABASE_ENVIRONMENT_VARIABLE)
    return Path(chosen or DEFAULT_DATABASE_NAME).expanduser().resolve()
