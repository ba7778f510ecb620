"""The store's reads stay bounded as the table grows, and find text past a NUL.

Completion reads primary-key ranges (not every row), `projects list` pages,
search compares whole texts. Growth is shown by SQLite's own instruction count
(a progress handler) on a table ten times larger, within one run.
"""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path

from wymcp_tasks import TodoStore

_NOW = "2026-06-15T00:00:00Z"


def _fill(path: Path, count: int) -> None:
    with sqlite3.connect(path) as connection:
        connection.executemany(
            "INSERT INTO tasks (title, status, priority, created_at, updated_at)"
            " VALUES (?, 'open', 3, ?, ?)",
            ((f"t{n}", _NOW, _NOW) for n in range(count)),
        )


async def _instructions(store: TodoStore, prefix: str) -> tuple[int, list[int]]:
    counted = [0]

    def tick() -> int:
        counted[0] += 1
        return 0

    await store.suggest_ids("1")  # opens the reading connection
    assert store._reader is not None
    store._reader.set_progress_handler(tick, 10)
    found = await store.suggest_ids(prefix)
    store._reader.set_progress_handler(None, 10)
    return counted[0], found


async def test_completion_reads_do_not_grow_with_the_table(tmp_path: Path) -> None:
    path = tmp_path / "big.sqlite3"
    store = TodoStore(path)
    await store.create_todo(title="first")
    _fill(path, 3_000)
    small, found = await _instructions(store, "7")
    assert found[:3] == [799, 798, 797]
    assert len(found) == 20
    _fill(path, 27_000)
    large, found = await _instructions(store, "7")
    assert found[:3] == [7999, 7998, 7997]
    # Ten times the rows: a scan would cost about ten times the instructions.
    assert large < small * 2, (small, large)
    store.close()


async def test_text_after_a_nul_is_searchable(tmp_path: Path) -> None:
    store = TodoStore(tmp_path / "nul.sqlite3")
    await store.create_todo(title="before\x00after", description="x\x00Tail")
    assert [t["title"] for t in await store.search_todos("after")] == [
        "before\x00after"
    ]
    assert len(await store.search_todos("tail")) == 1
    assert len(await store.search_todos("e\x00a")) == 1
    assert await store.search_todos("missing") == []
    store.close()


async def test_projects_list_is_paged(tmp_path: Path) -> None:
    store = TodoStore(tmp_path / "projects.sqlite3")
    for name in ("c", "a", "b", "d"):
        await store.create_project(name)
    first = await store.list_projects(limit=2)
    assert [p["name"] for p in first] == ["a", "b"]
    rest = await store.list_projects(after="b", limit=10)
    assert [p["name"] for p in rest] == ["c", "d"]
    store.close()


async def test_the_overdue_count_is_read_on_the_loop_only_when_cold(
    tmp_path: Path,
) -> None:
    today = date(2026, 6, 15)
    store = TodoStore(tmp_path / "overdue.sqlite3")
    await store.create_todo(title="late", due="2026-06-01")
    assert await store.refresh_overdue(today) == 1
    other = TodoStore(store.path)
    await other.create_todo(title="later", due="2026-06-02")
    reads: list[str] = []
    original = store._read_now

    def counted(query: str, params: tuple[object, ...]) -> list[object]:
        reads.append(query)
        return original(query, params)

    store._read_now = counted  # type: ignore[method-assign]
    # Warm for today: the hook answers the count the last refresh made, without
    # a read on the caller's thread, even though a write happened since.
    assert store.count_overdue(today) == 1
    assert reads == []
    await store.create_todo(title="mine", due="2026-06-03")
    assert await store.refresh_overdue(today) == 3
    assert len(reads) == 1
    # A new day is cold: one read.
    assert store.count_overdue(date(2026, 6, 16)) == 3
    assert len(reads) == 2
    store.close()
    other.close()
