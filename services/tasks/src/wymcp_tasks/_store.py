"""Store tasks and projects in one SQLite file (stdlib sqlite3).

Every mutating or listing call opens its own connection on the store's own
threads (never asyncio's default executor, which stopped tools can fill), so
the loop never waits on the disk. `count_overdue`, the one synchronous read,
is an indexed COUNT in WAL mode, called by the sync `action_context` hook.
"""

import asyncio
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TypedDict, TypeVar

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS projects (
    name TEXT PRIMARY KEY,
    description TEXT,
    archived INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    description TEXT,
    status TEXT NOT NULL,
    priority INTEGER NOT NULL,
    due TEXT,
    project TEXT REFERENCES projects(name),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    completed_at TEXT
);
CREATE INDEX IF NOT EXISTS tasks_status_due ON tasks(status, due);
CREATE INDEX IF NOT EXISTS tasks_pending_due ON tasks(due) WHERE status != 'done';
CREATE INDEX IF NOT EXISTS tasks_project ON tasks(project);
"""

_TASK_COLUMNS = (
    "id, title, description, status, priority, due, project,"
    " created_at, updated_at, completed_at"
)
# The columns `update_task` may change, in the order it writes them.
_UPDATABLE = ("title", "description", "status", "priority", "due", "project")
# Ordering for lists: dated tasks first (soonest first), then by priority.
_ORDER = "ORDER BY due IS NULL, due, priority, id"
_BUSY_TIMEOUT_SECONDS = 5.0


class Task(TypedDict):
    """One task as the store returns it (dates and times as ISO 8601 text)."""

    id: int
    title: str
    description: str | None
    status: str
    priority: int
    due: str | None
    project: str | None
    created_at: str
    updated_at: str
    completed_at: str | None


class Project(TypedDict):
    """One project with its task counts."""

    name: str
    description: str | None
    archived: bool
    created_at: str
    open_tasks: int
    done_tasks: int


class StoreError(Exception):
    """A request the store cannot carry out; the message is safe to show a caller."""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _task(row: sqlite3.Row) -> Task:
    return Task(
        id=row["id"],
        title=row["title"],
        description=row["description"],
        status=row["status"],
        priority=row["priority"],
        due=row["due"],
        project=row["project"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        completed_at=row["completed_at"],
    )


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class TaskStore:
    """Tasks and projects in the SQLite file at `path` (created on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._ready = False
        self._ready_lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None
        self._reader_lock = threading.Lock()
        # Its own threads (as many as asyncio's default executor has): a tool
        # stopped by CALL_TIMEOUT while a thread of the default executor still
        # blocks cannot take the threads every query needs.
        self._threads = ThreadPoolExecutor(
            max_workers=min(32, (os.cpu_count() or 1) + 4),
            thread_name_prefix="wymcp-tasks-store",
        )

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        """Run one blocking call on the store's threads."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, function, *args)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            connection = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_SECONDS)
        except sqlite3.OperationalError as error:
            raise StoreError(
                "The task database cannot be opened; the server log names the file."
            ) from error
        with closing(connection):
            connection.row_factory = sqlite3.Row
            connection.execute("PRAGMA foreign_keys = ON")
            self._ensure_schema(connection)
            try:
                yield connection
            except UnicodeEncodeError as error:
                # JSON may carry a lone surrogate ("\ud800"); UTF-8 cannot hold it.
                raise StoreError(
                    "Text must be valid Unicode: a lone surrogate cannot be stored."
                ) from error

    def _ensure_schema(self, connection: sqlite3.Connection) -> None:
        if self._ready:
            return
        with self._ready_lock:
            if not self._ready:
                connection.execute("PRAGMA journal_mode = WAL")
                connection.executescript(_SCHEMA)
                self._ready = True

    # Tasks -----------------------------------------------------------------

    async def create_task(
        self,
        *,
        title: str,
        description: str | None = None,
        priority: int = 3,
        due: str | None = None,
        project: str | None = None,
    ) -> Task:
        """Insert a new open task and return it.

        Raises:
            StoreError: the project does not exist or is archived.
        """
        return await self._run(
            self._create_task, title, description, priority, due, project
        )

    def _create_task(
        self,
        title: str,
        description: str | None,
        priority: int,
        due: str | None,
        project: str | None,
    ) -> Task:
        with self._connect() as connection, connection:
            if project is not None:
                self._require_open_project(connection, project)
            now = _now()
            cursor = connection.execute(
                "INSERT INTO tasks (title, description, status, priority, due,"
                " project, created_at, updated_at)"
                " VALUES (?, ?, 'open', ?, ?, ?, ?, ?)",
                (title, description, priority, due, project, now, now),
            )
            task_id = cursor.lastrowid
            row = connection.execute(
                f"SELECT {_TASK_COLUMNS} FROM tasks WHERE id = ?",  # noqa: S608 -- constant column list
                (task_id,),
            ).fetchone()
        return _task(row)

    async def get_task(self, task_id: int) -> Task | None:
        """Return the task with this id, or None."""
        return await self._run(self._get_task, task_id)

    def _get_task(self, task_id: int) -> Task | None:
        with self._connect() as connection:
            return self._fetch_task(connection, task_id)

    @staticmethod
    def _fetch_task(connection: sqlite3.Connection, task_id: int) -> Task | None:
        row = connection.execute(
            f"SELECT {_TASK_COLUMNS} FROM tasks WHERE id = ?",  # noqa: S608 -- constant column list
            (task_id,),
        ).fetchone()
        return None if row is None else _task(row)

    async def list_tasks(
        self,
        *,
        status: str | None = None,
        priority: int | None = None,
        due_before: str | None = None,
        due_after: str | None = None,
        project: str | None = None,
        limit: int = 50,
    ) -> list[Task]:
        """Return the tasks matching every given filter, soonest due first.

        `due_before` and `due_after` are exclusive ISO dates; a task with no
        due date matches neither.
        """
        clauses: list[str] = []
        params: list[Any] = []
        for clause, value in (
            ("status = ?", status),
            ("priority = ?", priority),
            ("due < ?", due_before),
            ("due > ?", due_after),
            ("project = ?", project),
        ):
            if value is not None:
                clauses.append(clause)
                params.append(value)
        return await self._run(self._select_tasks, clauses, params, limit)

    async def search_tasks(self, text: str, *, limit: int = 20) -> list[Task]:
        """Return tasks whose title or description holds `text` (ASCII case-blind)."""
        pattern = f"%{_escape_like(text)}%"
        clauses = ["(title LIKE ? ESCAPE '\\' OR description LIKE ? ESCAPE '\\')"]
        return await self._run(self._select_tasks, clauses, [pattern, pattern], limit)

    def _select_tasks(
        self, clauses: list[str], params: list[Any], limit: int
    ) -> list[Task]:
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        query = f"SELECT {_TASK_COLUMNS} FROM tasks {where} {_ORDER} LIMIT ?"  # noqa: S608 -- clauses are constants; values are bound
        with self._connect() as connection:
            rows = connection.execute(query, (*params, limit)).fetchall()
        return [_task(row) for row in rows]

    async def update_task(
        self, task_id: int, changes: Mapping[str, Any]
    ) -> Task | None:
        """Apply `changes` (only the updatable columns) and return the task, or None.

        Setting `status` to `done` stamps `completed_at`; moving it away clears it.

        Raises:
            StoreError: the new project does not exist or is archived.
        """
        return await self._run(self._update_task, task_id, dict(changes))

    def _update_task(self, task_id: int, changes: dict[str, Any]) -> Task | None:
        columns = [name for name in _UPDATABLE if name in changes]
        with self._connect() as connection, connection:
            current = self._fetch_task(connection, task_id)
            if current is None:
                return None
            project = changes.get("project")
            if project is not None and project != current["project"]:
                self._require_open_project(connection, project)
            assignments = [f"{name} = ?" for name in columns]
            values = [changes[name] for name in columns]
            if "status" in changes and changes["status"] != current["status"]:
                assignments.append("completed_at = ?")
                values.append(_now() if changes["status"] == "done" else None)
            assignments.append("updated_at = ?")
            values.append(_now())
            connection.execute(
                f"UPDATE tasks SET {', '.join(assignments)} WHERE id = ?",  # noqa: S608 -- column names come from _UPDATABLE
                (*values, task_id),
            )
            return self._fetch_task(connection, task_id)

    async def complete_task(self, task_id: int) -> Task | None:
        """Mark the task done (idempotent) and return it, or None."""
        return await self._run(self._update_task, task_id, {"status": "done"})

    async def delete_task(self, task_id: int) -> bool:
        """Delete the task; False when there was no such task."""
        return await self._run(self._delete_task, task_id)

    def _delete_task(self, task_id: int) -> bool:
        with self._connect() as connection, connection:
            cursor = connection.execute("DELETE FROM tasks WHERE id = ?", (task_id,))
            return cursor.rowcount > 0

    def count_overdue(self, today: date) -> int:
        """Count tasks not done whose due date is before `today` (synchronous).

        Runs on the caller's thread: see `_read_now`.
        """
        rows = self._read_now(
            "SELECT COUNT(*) FROM tasks WHERE status != 'done' AND due < ?",
            (today.isoformat(),),
        )
        return int(rows[0][0])

    def suggest_ids(self, prefix: str, *, limit: int = 20) -> list[int]:
        """Return up to `limit` ids, newest first, whose digits start with `prefix`.

        Synchronous, for completion: an empty or non-digit prefix matches every
        id or none.
        """
        if prefix and not (prefix.isascii() and prefix.isdigit()):
            return []
        rows = self._read_now(
            "SELECT id FROM tasks WHERE CAST(id AS TEXT) LIKE ? ORDER BY id DESC"
            " LIMIT ?",
            (f"{prefix}%", limit),
        )
        return [int(row[0]) for row in rows]

    def _read_now(self, query: str, params: tuple[Any, ...]) -> list[Any]:
        """Run a small read on the caller's thread over one long-lived connection.

        For the synchronous hooks (action context, completion): indexed reads in
        WAL mode, which never wait for a writer.
        """
        with self._reader_lock:
            if self._reader is None:
                with self._connect():  # creates the file and the schema
                    pass
                self._reader = sqlite3.connect(
                    self.path, timeout=_BUSY_TIMEOUT_SECONDS, check_same_thread=False
                )
            return self._reader.execute(query, params).fetchall()

    def close(self) -> None:
        """Close the long-lived reading connection, if open (the file stays)."""
        with self._reader_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    # Projects --------------------------------------------------------------

    @staticmethod
    def _require_open_project(connection: sqlite3.Connection, name: str) -> None:
        row = connection.execute(
            "SELECT archived FROM projects WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            raise StoreError(
                "No project by that name; create it first with"
                ' projects {action: "create", data: {project: ...}}.'
            )
        if row["archived"]:
            raise StoreError("That project is archived; it takes no new tasks.")

    async def create_project(
        self, name: str, description: str | None = None
    ) -> Project:
        """Create a project and return it.

        Raises:
            StoreError: a project by that name exists.
        """
        return await self._run(self._create_project, name, description)

    def _create_project(self, name: str, description: str | None) -> Project:
        with self._connect() as connection, connection:
            try:
                connection.execute(
                    "INSERT INTO projects (name, description, created_at)"
                    " VALUES (?, ?, ?)",
                    (name, description, _now()),
                )
            except sqlite3.IntegrityError as error:
                raise StoreError(
                    "A project by that name exists already; pick another name."
                ) from error
            project = self._fetch_project(connection, name)
        if project is None:  # pragma: no cover -- just inserted in this transaction
            raise StoreError("The project vanished while it was being created.")
        return project

    async def list_projects(self, *, include_archived: bool = False) -> list[Project]:
        """Return projects by name, with their open and done task counts."""
        return await self._run(self._list_projects, include_archived)

    def _list_projects(self, include_archived: bool) -> list[Project]:  # noqa: FBT001 -- private, positional for run_in_executor
        where = "" if include_archived else "WHERE p.archived = 0"
        with self._connect() as connection:
            rows = connection.execute(
                f"{_PROJECT_SELECT} {where} GROUP BY p.name ORDER BY p.name"
            ).fetchall()
        return [_project(row) for row in rows]

    async def archive_project(self, name: str) -> Project | None:
        """Archive the project (idempotent) and return it, or None."""
        return await self._run(self._archive_project, name)

    def _archive_project(self, name: str) -> Project | None:
        with self._connect() as connection, connection:
            connection.execute(
                "UPDATE projects SET archived = 1 WHERE name = ?", (name,)
            )
            return self._fetch_project(connection, name)

    @staticmethod
    def _fetch_project(connection: sqlite3.Connection, name: str) -> Project | None:
        row = connection.execute(
            f"{_PROJECT_SELECT} WHERE p.name = ? GROUP BY p.name", (name,)
        ).fetchone()
        return None if row is None else _project(row)


_PROJECT_SELECT = (
    "SELECT p.name, p.description, p.archived, p.created_at,"
    " COALESCE(SUM(t.status != 'done'), 0) AS open_tasks,"
    " COALESCE(SUM(t.status = 'done'), 0) AS done_tasks"
    " FROM projects p LEFT JOIN tasks t ON t.project = p.name"
)


def _project(row: sqlite3.Row) -> Project:
    return Project(
        name=row["name"],
        description=row["description"],
        archived=bool(row["archived"]),
        created_at=row["created_at"],
        open_tasks=int(row["open_tasks"]),
        done_tasks=int(row["done_tasks"]),
    )
