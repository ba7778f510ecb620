"""The demo's SQLite store on a temporary file."""

import asyncio
import sqlite3
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any, cast

import pytest

from wymcp_tasks import (
    DATABASE_ENVIRONMENT_VARIABLE,
    StoreError,
    TodoStore,
    database_path,
)
from wymcp_tasks._store import _create_schema


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TodoStore]:
    store = TodoStore(tmp_path / "tasks.sqlite3")
    yield store
    store.close()


async def test_a_created_task_is_open_and_gets_an_id(store: TodoStore) -> None:
    task = await store.create_todo(title="Renew passport", due="2026-12-15")
    assert task["id"] == 1
    assert task["status"] == "open"
    assert task["priority"] == 3
    assert task["due"] == "2026-12-15"
    assert task["completed_at"] is None
    assert await store.get_todo(1) == task


async def test_the_file_is_created_on_first_use(tmp_path: Path) -> None:
    path = tmp_path / "later.sqlite3"
    store = TodoStore(path)
    assert not path.exists()
    await store.list_todos()
    assert path.exists()


async def test_a_second_store_on_the_same_file_sees_the_tasks(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    await TodoStore(path).create_todo(title="Persist me")
    again = TodoStore(path)
    assert [t["title"] for t in await again.list_todos()] == ["Persist me"]


async def test_concurrent_creates_get_distinct_ids(tmp_path: Path) -> None:
    path = tmp_path / "busy.sqlite3"
    stores = [TodoStore(path), TodoStore(path)]
    created = await asyncio.gather(
        *(stores[i % 2].create_todo(title=f"t{i}") for i in range(20))
    )
    assert sorted(task["id"] for task in created) == list(range(1, 21))
    assert len(await stores[0].list_todos(limit=100)) == 20


async def test_list_filters_combine(store: TodoStore) -> None:
    await store.create_project("home")
    await store.create_todo(title="a", due="2026-01-10", priority=1)
    await store.create_todo(title="b", due="2026-01-20", project="home")
    await store.create_todo(title="c", priority=1)
    assert [t["title"] for t in await store.list_todos()] == ["a", "b", "c"]
    assert [t["title"] for t in await store.list_todos(priority=1)] == ["a", "c"]
    assert [t["title"] for t in await store.list_todos(due_before="2026-01-20")] == [
        "a"
    ]
    assert [t["title"] for t in await store.list_todos(due_after="2026-01-10")] == ["b"]
    assert [t["title"] for t in await store.list_todos(project="home")] == ["b"]
    assert [t["title"] for t in await store.list_todos(limit=1)] == ["a"]
    assert await store.list_todos(status="done") == []


async def test_search_matches_substrings_and_treats_wildcards_literally(
    store: TodoStore,
) -> None:
    await store.create_todo(title="Pay 50% deposit")
    await store.create_todo(title="Call Bob", description="about the PASSPORT")
    await store.create_todo(title="x_y")
    assert [t["title"] for t in await store.search_todos("passport")] == ["Call Bob"]
    assert [t["title"] for t in await store.search_todos("50%")] == ["Pay 50% deposit"]
    assert [t["title"] for t in await store.search_todos("_")] == ["x_y"]
    assert await store.search_todos("%") != []
    assert await store.search_todos("nothing like it") == []


async def test_update_stamps_and_clears_completed_at(store: TodoStore) -> None:
    await store.create_todo(title="a", due="2026-01-01")
    done = await store.update_todo(1, {"status": "done", "due": None})
    assert done is not None
    assert done["status"] == "done"
    assert done["due"] is None
    assert done["completed_at"] is not None
    reopened = await store.update_todo(1, {"status": "open"})
    assert reopened is not None
    assert reopened["completed_at"] is None


async def test_complete_is_idempotent(store: TodoStore) -> None:
    await store.create_todo(title="a")
    first = await store.complete_todo(1)
    second = await store.complete_todo(1)
    assert first is not None
    assert second is not None
    assert first["completed_at"] == second["completed_at"]


async def test_missing_tasks_answer_none_or_false(store: TodoStore) -> None:
    assert await store.get_todo(7) is None
    assert await store.update_todo(7, {"title": "x"}) is None
    assert await store.complete_todo(7) is None
    assert await store.delete_todo(7) is False


async def test_delete_removes_the_task(store: TodoStore) -> None:
    await store.create_todo(title="a")
    assert await store.delete_todo(1) is True
    assert await store.get_todo(1) is None


async def test_overdue_counts_open_tasks_due_before_today(store: TodoStore) -> None:
    today = date(2026, 6, 15)
    assert store.count_overdue(today) == 0
    await store.create_todo(title="late", due="2026-06-14")
    await store.create_todo(title="today", due="2026-06-15")
    await store.create_todo(title="undated")
    await store.create_todo(title="late but done", due="2026-01-01")
    await store.complete_todo(4)
    # The hook's count is the one refreshed (in a thread) after the last writes.
    assert await store.refresh_overdue(today) == 1
    assert store.count_overdue(today) == 1


async def test_tasks_need_an_existing_open_project(store: TodoStore) -> None:
    with pytest.raises(StoreError, match="create it first"):
        await store.create_todo(title="a", project="nowhere")
    await store.create_project("site")
    await store.create_todo(title="a", project="site")
    await store.archive_project("site")
    with pytest.raises(StoreError, match="archived"):
        await store.create_todo(title="b", project="site")
    await store.create_todo(title="c")
    with pytest.raises(StoreError, match="archived"):
        await store.update_todo(2, {"project": "site"})
    kept = await store.update_todo(1, {"title": "renamed", "project": "site"})
    assert kept is not None
    assert kept["project"] == "site"


async def test_projects_count_their_tasks_and_hide_when_archived(
    store: TodoStore,
) -> None:
    await store.create_project("site", "The web site")
    await store.create_project("home")
    await store.create_todo(title="a", project="site")
    await store.create_todo(title="b", project="site")
    await store.complete_todo(2)
    listed = await store.list_projects()
    assert [(p["name"], p["open_tasks"], p["done_tasks"]) for p in listed] == [
        ("home", 0, 0),
        ("site", 1, 1),
    ]
    archived = await store.archive_project("home")
    assert archived is not None
    assert archived["archived"] is True
    assert [p["name"] for p in await store.list_projects()] == ["site"]
    assert [p["name"] for p in await store.list_projects(include_archived=True)] == [
        "home",
        "site",
    ]
    assert await store.archive_project("nowhere") is None


async def test_a_project_name_is_taken_once(store: TodoStore) -> None:
    await store.create_project("site")
    with pytest.raises(StoreError, match="exists already"):
        await store.create_project("site")


async def test_an_unopenable_file_is_a_store_error_without_the_path(
    tmp_path: Path,
) -> None:
    store = TodoStore(tmp_path / "missing-dir" / "tasks.sqlite3")
    with pytest.raises(StoreError) as caught:
        await store.list_todos()
    assert "missing-dir" not in str(caught.value)


def test_the_database_path_comes_from_the_argument_then_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(DATABASE_ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert database_path() == tmp_path / "data" / "wymcp-tasks" / "tasks.sqlite3"
    monkeypatch.setenv(DATABASE_ENVIRONMENT_VARIABLE, str(tmp_path / "env.db"))
    assert database_path() == tmp_path / "env.db"
    assert database_path(tmp_path / "arg.db") == tmp_path / "arg.db"


async def test_the_default_file_leaves_the_working_directory_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the demo's WAL files once landed untracked in the tree it was started in
    tree, home = tmp_path / "tree", tmp_path / "home"
    tree.mkdir()
    monkeypatch.chdir(tree)
    monkeypatch.delenv(DATABASE_ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(home))
    store = TodoStore(database_path())  # the folder is made on first use
    try:
        await store.create_todo(title="written")
        assert [t["title"] for t in await store.list_todos()] == ["written"]
    finally:
        store.close()
    assert list(tree.iterdir()) == []
    folder = home / ".local" / "share" / "wymcp-tasks"
    assert "tasks.sqlite3" in {path.name for path in folder.iterdir()}


def test_a_new_file_locked_by_another_store_is_set_up_once_it_is_free(
    tmp_path: Path,
) -> None:
    # Two stores creating the same new file at once: SQLite may answer the
    # switch to WAL "database is locked" at once (it would deadlock); that is
    # retried, not raised to the caller as a failed create.
    real = sqlite3.connect(tmp_path / "shared.sqlite3")
    refusals = iter([sqlite3.OperationalError("database is locked")] * 2)

    class Contended:
        def execute(self, sql: str) -> Any:
            refusal = next(refusals, None)
            if refusal is not None:
                raise refusal
            return real.execute(sql)

        def executescript(self, sql: str) -> Any:
            return real.executescript(sql)

    _create_schema(cast("sqlite3.Connection", Contended()))
    tables = {row[0] for row in real.execute("SELECT name FROM sqlite_master")}
    assert "tasks" in tables
    assert real.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    real.close()


def test_other_database_errors_are_not_retried(tmp_path: Path) -> None:
    class Broken:
        def execute(self, sql: str) -> Any:
            raise sqlite3.OperationalError("disk I/O error")

    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        _create_schema(cast("sqlite3.Connection", Broken()))
