"""The demo's LIFESPAN: one `TodoStore` per worker, opened at start, closed at stop.

Every tool, resource and prompt reads it as `ctx.state`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import date

from wymcp_tasks._location import database_path
from wymcp_tasks._store import TodoStore


@contextlib.asynccontextmanager
async def lifespan(settings: object) -> AsyncIterator[TodoStore]:
    """Open the store `TASKS_DEMO_DB` names (schema, first overdue count)."""
    del settings
    store = TodoStore(database_path())
    await store.refresh_overdue(date.today())  # noqa: DTZ011 -- the tools' own today
    try:
        yield store
    finally:
        store.close()
