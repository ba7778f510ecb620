"""Store tasks and projects in one SQLite file (stdlib sqlite3).

Every call runs its own connection on the store's own threads (never asyncio's
default executor, which tools stopped by CALL_TIMEOUT can fill), so the event
loop never waits on the disk; `count_overdue` (for the sync `action_context`
hook) answers the count `refresh_overdue` made in a thread since the last write.
"""

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TypedDict, TypeVar

from wymcp.core.schema import ToolError

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
-- Rows a racing update left with completed_at out of step with status.
UPDATE tasks SET completed_at = updated_at
    WHERE status = 'done' AND completed_at IS NULL;
UPDATE tasks SET completed_at = NULL
    WHERE status != 'done' AND completed_at IS NOT NULL;
"""

_TODO_COLUMNS = (
    "id, title, description, status, priority, due, project,"
    " created_at, updated_at, completed_at"
)
# The columns `update_todo` may change, in the order it writes them.
_UPDATABLE = ("title", "description", "status", "priority", "due", "project")
# Ordering for lists: dated tasks first (soonest first), then by priority.
_ORDER = "ORDER BY due IS NULL, due, priority, id"
_BUSY_TIMEOUT_SECONDS = 5.0
# Seconds an overdue count stays fresh when this store did not write.
OVERDUE_MAX_AGE = 1.0
# Ids are at most 16 digits (the tools cap them at 2**53 - 1).
_ID_DIGITS = 16
_MAX_ROWID = 2**63 - 1


class Todo(TypedDict):
    """One tracked item as the store returns it (dates and times as ISO 8601 text).

    The code calls it a todo: "task" means MCP's tasks extension. The tool
    (`tasks`), the table and the `task://` URIs keep their names.
    """

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


class StoreError(ToolError):
    """A request the store cannot carry out; the message is safe to show a caller.

    A `ToolError`: raised through a tool, the call answers isError with it.
    """


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _todo(row: sqlite3.Row) -> Todo:
    return Todo(
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


class TodoStore:
    """Todos and projects in the SQLite file at `path` (created on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._ready = False
        self._ready_lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None
        self._reader_lock = threading.Lock()
        # Writers of this process queue here rather than in SQLite's busy loop.
        self._write_lock = threading.Lock()
        # Counts changes, so a cached overdue count knows when it is stale.
        self._writes = 0
        self._overdue: tuple[str, int, int, float] | None = None
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
                _create_schema(connection)
                self._ready = True

    # Todos -----------------------------------------------------------------

    async def create_todo(
        self,
        *,
        title: str,
        description: str | None = None,
        priority: int = 3,
        due: str | None = None,
        project: str | None = None,
    ) -> Todo:
        """Insert a new open task and return it.

        Raises:
            StoreError: the project does not exist or is archived.
        """
        return await self._run(
            self._create_todo, title, description, priority, due, project
        )

    def _create_todo(
        self,
        title: str,
        description: str | None,
        priority: int,
        due: str | None,
        project: str | None,
    ) -> Todo:
        with self._writing(), self._connect() as connection, connection:
            if project is not None:
                self._require_open_project(connection, project)
            now = _now()
            cursor = connection.execute(
                "INSERT INTO tasks (title, description, status, priority, due,"
                " project, created_at, updated_at)"
                " VALUES (?, ?, 'open', ?, ?, ?, ?, ?)",
                (title, description, priority, due, project, now, now),
            )
            todo_id = cursor.lastrowid
            row = connection.execute(
                f"SELECT {_TODO_COLUMNS} FROM tasks WHERE id = ?",  # noqa: S608 -- constant column list
                (todo_id,),
            ).fetchone()
        return _todo(row)

    async def get_todo(self, todo_id: int) -> Todo | None:
        """Return the task with this id, or None."""
        return await self._run(self._get_todo, todo_id)

    def _get_todo(self, todo_id: int) -> Todo | None:
        with self._connect() as connection:
            return self._fetch_todo(connection, todo_id)

    @staticmethod
    def _fetch_todo(connection: sqlite3.Connection, todo_id: int) -> Todo | None:
        row = connection.execute(
            f"SELECT {_TODO_COLUMNS} FROM tasks WHERE id = ?",  # noqa: S608 -- constant column list
            (todo_id,),
        ).fetchone()
        return None if row is None else _todo(row)

    async def list_todos(
        self,
        *,
        status: str | None = None,
        priority: int | None = None,
        due_before: str | None = None,
        due_after: str | None = None,
        project: str | None = None,
        limit: int = 50,
    ) -> list[Todo]:
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
        return await self._run(self._select_todos, clauses, params, limit)

    async def search_todos(self, text: str, *, limit: int = 20) -> list[Todo]:
        """Return tasks whose title or description holds `text` (ASCII case-blind).

        `instr` compares the whole text, so what follows a NUL is found too
        (LIKE stops at the first NUL).
        """
        clauses = [
            (
                "(instr(lower(title), lower(?)) > 0"
                " OR instr(lower(COALESCE(description, '')), lower(?)) > 0)"
            )
        ]
        return await self._run(self._select_todos, clauses, [text, text], limit)

    def _select_todos(
        self, clauses: list[str], params: list[Any], limit: int
    ) -> list[Todo]:
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        query = f"SELECT {_TODO_COLUMNS} FROM tasks {where} {_ORDER} LIMIT ?"  # noqa: S608 -- clauses are constants; values are bound
        with self._connect() as connection:
            rows = connection.execute(query, (*params, limit)).fetchall()
        return [_todo(row) for row in rows]

    async def update_todo(
        self, todo_id: int, changes: Mapping[str, Any]
    ) -> Todo | None:
        """Apply `changes` (only the updatable columns) and return the task, or None.

        Setting `status` to `done` stamps `completed_at`; moving it away clears it.

        Raises:
            StoreError: the new project does not exist or is archived.
        """
        return await self._run(self._update_todo, todo_id, dict(changes))

    def _update_todo(self, todo_id: int, changes: dict[str, Any]) -> Todo | None:
        columns = [name for name in _UPDATABLE if name in changes]
        with (
            self._writing(),
            self._connect() as connection,
            self._immediate(connection),
        ):
            # The read and the write share one write transaction (BEGIN
            # IMMEDIATE), so no writer slips in between them.
            current = self._fetch_todo(connection, todo_id)
            if current is None:
                return None
            project = changes.get("project")
            if project is not None and project != current["project"]:
                self._require_open_project(connection, project)
            assignments = [f"{name} = ?" for name in columns]
            values = [changes[name] for name in columns]
            now = _now()
            if "status" in changes:
                # From the row's own status, in the same statement: done keeps
                # its first completed_at (or gets one), any other status clears it.
                assignments.append(
                    "completed_at = CASE WHEN ? != 'done' THEN NULL"
                    " WHEN status = 'done' THEN COALESCE(completed_at, ?)"
                    " ELSE ? END"
                )
                values.extend((changes["status"], now, now))
            assignments.append("updated_at = ?")
            values.append(now)
            connection.execute(
                f"UPDATE tasks SET {', '.join(assignments)} WHERE id = ?",  # noqa: S608 -- column names come from _UPDATABLE
                (*values, todo_id),
            )
            return self._fetch_todo(connection, todo_id)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold this store's write lock; count the change for the overdue cache."""
        with self._write_lock:
            try:
                yield
            finally:
                self._writes += 1

    @staticmethod
    @contextmanager
    def _immediate(connection: sqlite3.Connection) -> Iterator[None]:
        """One write transaction, taken before the first read (BEGIN IMMEDIATE)."""
        connection.isolation_level = None
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    async def complete_todo(self, todo_id: int) -> Todo | None:
        """Mark the task done (idempotent) and return it, or None."""
        return await self._run(self._update_todo, todo_id, {"status": "done"})

    async def delete_todo(self, todo_id: int) -> bool:
        """Delete the task; False when there was no such task."""
        return await self._run(self._delete_todo, todo_id)

    def _delete_todo(self, todo_id: int) -> bool:
        with self._writing(), self._connect() as connection, connection:
            cursor = connection.execute("DELETE FROM tasks WHERE id = ?", (todo_id,))
            return cursor.rowcount > 0

    def count_overdue(self, today: date) -> int:
        """Count tasks not done whose due date is before `today` (synchronous).

        For the synchronous `action_context` hook: the count `refresh_overdue`
        last made in a worker thread for `today` (each call refreshes it after
        its own store work, so it misses at most a write racing that call).
        Only a store never counted for `today` reads on the caller's thread.
        """
        cached = self._overdue
        if cached is not None and cached[0] == today.isoformat():
            return cached[2]
        return self._count_overdue(today)

    async def refresh_overdue(self, today: date) -> int:
        """Recount the overdue tasks in a worker thread if the count is stale.

        Stale: counted for another day, before this store's last write, or more
        than `OVERDUE_MAX_AGE` seconds ago (other processes write too).
        """
        cached = self._overdue
        if (
            cached is not None
            and cached[:2] == (today.isoformat(), self._writes)
            and time.monotonic() - cached[3] <= OVERDUE_MAX_AGE
        ):
            return cached[2]
        return await self._run(self._count_overdue, today)

    def _count_overdue(self, today: date) -> int:
        writes = self._writes
        rows = self._read_now(
            "SELECT COUNT(*) FROM tasks WHERE status != 'done' AND due < ?",
            (today.isoformat(),),
        )
        count = int(rows[0][0])
        self._overdue = (today.isoformat(), writes, count, time.monotonic())
        return count

    async def suggest_ids(self, prefix: str, *, limit: int = 20) -> list[int]:
        """Return up to `limit` ids, newest first, whose digits start with `prefix`.

        For completion, in a worker thread: an empty prefix matches every id, a
        non-digit one none. Each candidate length is one range of the primary
        key (prefix 12: ids 12, 120-129, 1200-1299, ...), so it reads at most
        `limit` rows per length, never the whole table.
        """
        if prefix and not (prefix.isascii() and prefix.isdigit()):
            return []
        if prefix.startswith("0") or len(prefix) > _ID_DIGITS:
            return []
        return await self._run(self._suggest_ids, prefix, limit)

    def _suggest_ids(self, prefix: str, limit: int) -> list[int]:
        if not prefix:
            rows = self._read_now(
                "SELECT id FROM tasks ORDER BY id DESC LIMIT ?", (limit,)
            )
            return [int(row[0]) for row in rows]
        found: list[int] = []
        start = int(prefix)
        for extra in range(_ID_DIGITS - len(prefix), -1, -1):
            low, high = start * 10**extra, (start + 1) * 10**extra - 1
            rows = self._read_now(
                "SELECT id FROM tasks WHERE id BETWEEN ? AND ? ORDER BY id DESC"
                " LIMIT ?",
                (low, min(high, _MAX_ROWID), limit),
            )
            found.extend(int(row[0]) for row in rows)
        found.sort(reverse=True)
        return found[:limit]

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

    async def list_projects(
        self,
        *,
        include_archived: bool = False,
        after: str | None = None,
        limit: int = 50,
    ) -> list[Project]:
        """Return up to `limit` projects by name (after `after`), with task counts."""
        return await self._run(self._list_projects, include_archived, after, limit)

    def _list_projects(
        self,
        include_archived: bool,  # noqa: FBT001 -- private, positional for to_thread
        after: str | None,
        limit: int,
    ) -> list[Project]:
        clauses = [] if include_archived else ["p.archived = 0"]
        params: list[Any] = []
        if after is not None:
            clauses.append("p.name > ?")
            params.append(after)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._connect() as connection:
            rows = connection.execute(
                f"{_PROJECT_SELECT} {where} GROUP BY p.name ORDER BY p.name LIMIT ?",
                (*params, limit),
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


def _create_schema(connection: sqlite3.Connection) -> None:
    """WAL mode and the tables, retried while another store holds the file.

    Two processes (or stores) opening a new file at once: switching to WAL
    answers "locked" without waiting when SQLite sees the two would deadlock,
    so that is retried until the busy timeout.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_SECONDS
    while True:
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.executescript(_SCHEMA)
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
        else:
            return
