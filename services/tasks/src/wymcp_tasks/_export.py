"""The demo's export: every task as CSV, built status by status with progress.

Long enough on a large database to run as a task (SEP-2663): the client gets
a task handle at once and polls for the CSV.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Final

from wymcp_tasks._models import STATUSES, ExportedTodos
from wymcp_tasks._store import TodoStore

MAX_EXPORT: Final = 10_000
"""Most tasks one export carries (per status), so its result stays bounded."""

COLUMNS: Final = ("id", "title", "status", "priority", "due", "project")


async def export_todos(store: TodoStore, status: str | None, ctx: Any) -> ExportedTodos:
    """The tasks (of `status`, or all) as CSV, reporting progress per status."""
    wanted = [status] if status is not None else list(STATUSES)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    count = 0
    for done, one in enumerate(wanted, start=1):
        tasks = await store.list_todos(status=one, limit=MAX_EXPORT)
        for task in tasks:
            writer.writerow(["" if task[c] is None else task[c] for c in COLUMNS])
        count += len(tasks)
        await ctx.report_progress(done, len(wanted), f"Exported the {one} tasks")
    return ExportedTodos(count=count, csv=out.getvalue())
