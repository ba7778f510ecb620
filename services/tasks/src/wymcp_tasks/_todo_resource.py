"""Each task as an MCP resource: the template `task://{id}`, read as JSON.

Completion suggests existing ids (primary-key ranges, read in a worker thread).
"""

import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from os import PathLike
from typing import Any

from wymcp.core.schema import Resource, ResourceNotFoundError
from wymcp_tasks._location import database_path
from wymcp_tasks._store import TodoStore
from wymcp_tasks._todos import MAX_ID, shape_todo, store_of

_ID = re.compile(r"[1-9][0-9]{0,15}")


class TodoResource(Resource):
    """One task, addressed as `task://<id>`."""

    name = "task"
    uri_template = "task://{id}"
    title = "Task"
    description = "One task as JSON (the same object the tasks tool answers)."
    mime_type = "application/json"

    def __init__(
        self,
        *,
        database: str | PathLike[str] | None = None,
        today: Callable[[], date] = date.today,
    ) -> None:
        super().__init__()
        self.store = TodoStore(database_path(database))
        # A database named here wins over the store LIFESPAN opened.
        self.explicit = database is not None
        self._today = today

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:  # noqa: ARG002 -- the Resource interface
        """Return the task as JSON text.

        Raises:
            ResourceNotFoundError: no task has that id (the server answers as
                for an unknown URI).
        """
        raw = params.get("id", "")
        if not _ID.fullmatch(raw) or int(raw) > MAX_ID:
            raise ResourceNotFoundError("A task URI is task://<id>, id positive.")
        task = await store_of(ctx, self.store, explicit=self.explicit).get_todo(
            int(raw)
        )
        if task is None:
            raise ResourceNotFoundError("No task has that id.")
        return json.dumps(shape_todo(task, self._today()), ensure_ascii=False)

    async def complete(
        self,
        argument: str,
        value: str,
        context: Mapping[str, str],  # noqa: ARG002 -- the Resource interface
    ) -> Sequence[str]:
        """Suggest the ids of existing tasks that start with what was typed."""
        if argument != "id" or len(value) > len(str(MAX_ID)):
            return []
        return [str(todo_id) for todo_id in await self.store.suggest_ids(value)]
