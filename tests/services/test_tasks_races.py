"""Writers racing on the same tasks: every answer and every row keep their invariants.

`complete` and `update status` from many threads (and two stores, as two
workers would) on a few rows; a task is done exactly when it has completed_at.
"""

from __future__ import annotations

import random
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from wymcp_tasks import Todo, TodoStore

ROWS = 4
WRITES = 600
STATUSES = ("open", "in_progress", "done")


def _consistent(task: Todo) -> bool:
    return (task["status"] == "done") == (task["completed_at"] is not None)


def test_complete_racing_update_status_keeps_completed_at_in_step(
    tmp_path: Path,
) -> None:
    path = tmp_path / "race.sqlite3"
    stores = [TodoStore(path), TodoStore(path)]
    ids = [
        stores[0]._create_todo(f"t{n}", None, 3, None, None)["id"] for n in range(ROWS)
    ]
    chooser = random.Random(7)  # noqa: S311 -- a reproducible schedule, not a secret
    plan = [
        (chooser.choice(stores), chooser.choice(ids), chooser.choice(STATUSES))
        for _ in range(WRITES)
    ]

    def write(step: tuple[TodoStore, int, str]) -> Todo | None:
        store, task_id, status = step
        return store._update_todo(task_id, {"status": status})

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(write, plan))
    inconsistent_answers = [a for a in answers if a is not None and not _consistent(a)]
    assert inconsistent_answers == []
    with sqlite3.connect(path) as connection:
        rows = connection.execute(
            "SELECT id, status, completed_at FROM tasks ORDER BY id"
        ).fetchall()
    assert len(rows) == ROWS
    bad = [row for row in rows if (row[1] == "done") != (row[2] is not None)]
    assert bad == []
    for store in stores:
        store.close()
