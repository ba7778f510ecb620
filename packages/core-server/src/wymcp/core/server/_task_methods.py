"""The methods of the tasks extension: `tasks/get`, `tasks/update`, `tasks/cancel`.

Each needs the extension in the request's client capabilities (else -32021);
a task that is unknown, expired or another principal's is -32602.
"""

from __future__ import annotations

from typing import Any

from wymcp.core.server._call import Call
from wymcp.core.server._jsonrpc import invalid_params
from wymcp.core.server._task_store import TaskRecord
from wymcp.core.server._tasks import Tasks, client_has_tasks, missing_tasks, task_json


class TaskMethods:
    """Handlers of the tasks methods over one engine's `Tasks`."""

    def __init__(self, tasks: Tasks) -> None:
        self._tasks = tasks

    async def _record(self, call: Call) -> TaskRecord:
        if not client_has_tasks(call.capabilities):
            raise missing_tasks()
        task_id = call.params.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise invalid_params("params.taskId must be a non-empty string.")
        record = await self._tasks.get(task_id, call.principal)
        if record is None:
            raise invalid_params(
                "Unknown taskId: no such task for this caller (a task is "
                "forgotten once its ttlMs has passed, or sooner when newer ended "
                "tasks needed its room: TASK_MEMORY_BUDGET)."
            )
        return record

    async def get(self, call: Call) -> dict[str, Any]:
        """`tasks/get`: the task, with its questions, result or error inlined."""
        return task_json(await self._record(call), detailed=True)

    async def update(self, call: Call) -> dict[str, Any]:
        """`tasks/update`: answers to open questions; an empty ack."""
        record = await self._record(call)
        responses = call.params.get("inputResponses")
        if not isinstance(responses, dict):
            raise invalid_params("params.inputResponses must be an object.")
        await self._tasks.update(record, responses)
        return {}

    async def cancel(self, call: Call) -> dict[str, Any]:
        """`tasks/cancel`: stop the task if it has not ended; an empty ack."""
        await self._tasks.cancel(await self._record(call))
        return {}
