"""Decide which SQLite file the demo's tools use.

`TASKS_DEMO_DB` names it; otherwise `tasks.sqlite3` in the user's data folder
(`$XDG_DATA_HOME/wymcp-tasks`, else `~/.local/share/wymcp-tasks`), never in a
source tree. Read when a tool is constructed, never at import.
"""

import os
from pathlib import Path

DATABASE_ENVIRONMENT_VARIABLE = "TASKS_DEMO_DB"
DEFAULT_DATABASE_NAME = "tasks.sqlite3"
DATA_FOLDER_NAME = "wymcp-tasks"


def default_database_path() -> Path:
    """The default file: one per user, whatever folder the server starts in.

    `wymcp serve` from the repository and a desktop client launching `wymcp
    stdio` share it, and SQLite's `-wal`/`-shm` files land beside it, not in
    the working directory.
    """
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home).expanduser() / DATA_FOLDER_NAME / DEFAULT_DATABASE_NAME


def database_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Return the absolute database path: `explicit`, the variable, or the default.

    The default's folder is made when missing (an `OSError` says why it
    cannot be); a named file's folder must exist.
    """
    chosen = explicit or os.environ.get(DATABASE_ENVIRONMENT_VARIABLE)
    if chosen:
        return Path(chosen).expanduser().resolve()
    path = default_database_path().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    return path
