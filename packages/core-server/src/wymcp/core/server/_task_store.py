"""Where tasks live: the `TaskStore` interface and its bounded in-memory store.

A store keeps task records and makes each change of state in one step, so a
shared (Redis) store can serve several workers; the running work stays with
the engine that started it, which the store tells of changes made elsewhere.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, Protocol

import attrs

TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
"""Statuses a task never leaves."""


class TaskLimitError(Exception):
    """Creating one more task would pass a cap (per principal or in all)."""


class TaskStoreUnavailableError(Exception):
    """The store cannot be reached now: the request is answered 503."""


@attrs.define(eq=False)
class TaskRecord:
    """One task's state: what `tasks/get` shows, plus who may see it.

    `principal` is the creator's `principal_key`; `expires_at` is on the
    engine's clock; `input_requests` are the questions still open
    (server-minted keys), `answers` those answered and not yet taken by the
    running work.
    """

    task_id: str
    principal: str | None
    created_at: float
    updated_at: float
    expires_at: float
    ttl_ms: int
    poll_interval_ms: int
    status: str = "working"
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    answers: dict[str, dict[str, Any]] = attrs.field(factory=dict)

    @property
    def terminal(self) -> bool:
        """Whether the task has finished (completed, failed or cancelled)."""
        return self.status in TERMINAL


class TaskEvents(Protocol):
    """What a store tells the engine about the tasks whose work runs here.

    A store forgets a task at its TTL; one still running then is `stopped`.
    """

    def stopped(self, task_id: str) -> None:
        """The task ended elsewhere (cancelled, failed, expired): stop its work."""

    def answered(self, task_id: str) -> None:
        """Answers may have come in for the task's questions: wake its work."""


class TaskStore(Protocol):
    """What the engine needs of a task store.

    Each change is one atomic step that leaves a task which has ended as it
    ended. `get` answers None for a task that does not exist, has expired,
    or belongs to another principal: the three look the same to a caller.
    Every method may raise `TaskStoreUnavailableError`.
    """

    def attach(self, events: TaskEvents) -> None:
        """Tell `events` of changes made elsewhere to the tasks created here."""

    async def create(self, record: TaskRecord) -> None:
        """Keep a new task; `TaskLimitError` when a cap is reached."""

    async def get(self, task_id: str, principal: str | None) -> TaskRecord | None:
        """The live task `task_id` of `principal` as it is now, or None."""

    async def ask(
        self, task_id: str, requests: Mapping[str, dict[str, Any]], at: float
    ) -> bool:
        """Open questions, the task `input_required`; False if it has ended."""

    async def answer(
        self, task_id: str, responses: Mapping[str, dict[str, Any]], at: float
    ) -> bool:
        """Answer open questions (others are ignored); whether any was.

        The task goes back to `working` once no question is open.
        """

    async def take(
        self, task_id: str, keys: Sequence[str]
    ) -> dict[str, dict[str, Any]] | None:
        """Remove and return the answers to `keys`, or None until all are in."""

    async def progress(self, task_id: str, message: str, at: float) -> None:
        """Set a running task's `statusMessage`."""

    async def finish(
        self,
        task_id: str,
        status: str,
        *,
        at: float,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        message: str | None = None,
    ) -> bool:
        """End a task that has not ended; whether this call ended it."""

    async def aclose(self) -> None:
        """Release what the store holds (connections, background work)."""


class MemoryTaskStore:
    """Tasks in one process's memory, bounded.

    At most `max_tasks` records in all and `max_per_principal` per principal;
    a record is dropped once its TTL has passed (checked on every create and
    get). Memory: O(max_tasks) records, each as large as its result. `get`
    hands out the stored record itself, so nothing is copied.
    """

    def __init__(
        self,
        *,
        max_tasks: int = 1000,
        max_per_principal: int = 100,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._records: dict[str, TaskRecord] = {}
        self._expiry: list[tuple[float, str]] = []
        """(expires_at, task_id) as a heap: a sweep pops only what expired."""
        self._per_principal: dict[str | None, int] = {}
        self._max_tasks = max_tasks
        self._max_per_principal = max_per_principal
        self._clock = clock
        self._events: TaskEvents | None = None

    def __len__(self) -> int:
        return len(self._records)

    def attach(self, events: TaskEvents) -> None:
        """Tell `events` of running tasks dropped at their TTL."""
        self._events = events

    def _drop(self, record: TaskRecord) -> None:
        if self._records.pop(record.task_id, None) is None:
            return
        if not record.terminal and self._events is not None:
            self._events.stopped(record.task_id)
        key = record.principal
        left = self._per_principal.get(key, 1) - 1
        if left:
            self._per_principal[key] = left
        else:
            self._per_principal.pop(key, None)

    def sweep(self) -> int:
        """Drop every expired record; how many were dropped.

        Amortised O(log n) per record: the heap yields the expired ones first.
        """
        now = self._clock()
        dropped = 0
        while self._expiry and self._expiry[0][0] <= now:
            expires_at, task_id = heapq.heappop(self._expiry)
            record = self._records.get(task_id)
            if record is not None and record.expires_at == expires_at:
                self._drop(record)
                dropped += 1
        return dropped

    async def create(self, record: TaskRecord) -> None:
        """Keep a new task; `TaskLimitError` when a cap is reached."""
        if self._expiry and self._expiry[0][0] <= self._clock():
            self.sweep()
        key = record.principal
        if len(self._records) >= self._max_tasks:
            raise TaskLimitError("the server holds as many tasks as it may")
        held = self._per_principal.get(key, 0)
        if held >= self._max_per_principal:
            raise TaskLimitError("this caller holds as many tasks as it may")
        self._records[record.task_id] = record
        heapq.heappush(self._expiry, (record.expires_at, record.task_id))
        self._per_principal[key] = held + 1

    def _live(self, task_id: str) -> TaskRecord | None:
        record = self._records.get(task_id)
        if record is not None and record.expires_at <= self._clock():
            self._drop(record)
            return None
        return record

    async def get(self, task_id: str, principal: str | None) -> TaskRecord | None:
        """The live task `task_id` of `principal`, or None."""
        if self._expiry and self._expiry[0][0] <= self._clock():
            self.sweep()  # an expired record's entry is due: it is dropped here
        record = self._records.get(task_id)
        if record is None or record.principal != principal:
            return None
        return record

    async def ask(
        self, task_id: str, requests: Mapping[str, dict[str, Any]], at: float
    ) -> bool:
        """Open questions, the task `input_required`; False if it has ended."""
        record = self._live(task_id)
        if record is None or record.terminal:
            return False
        record.input_requests.update(requests)
        record.status = "input_required"
        record.updated_at = at
        return True

    async def answer(
        self, task_id: str, responses: Mapping[str, dict[str, Any]], at: float
    ) -> bool:
        """Answer open questions (others are ignored); whether any was."""
        record = self._live(task_id)
        if record is None or record.terminal:
            return False
        taken = False
        for key, answer in responses.items():
            if record.input_requests.pop(key, None) is not None:
                record.answers[key] = answer
                taken = True
        if taken:
            if not record.input_requests and record.status == "input_required":
                record.status = "working"
            record.updated_at = at
        return taken

    async def take(
        self, task_id: str, keys: Sequence[str]
    ) -> dict[str, dict[str, Any]] | None:
        """Remove and return the answers to `keys`, or None until all are in."""
        record = self._records.get(task_id)
        if record is None or not all(key in record.answers for key in keys):
            return None
        return {key: record.answers.pop(key) for key in keys}

    async def progress(self, task_id: str, message: str, at: float) -> None:
        """Set a running task's `statusMessage`."""
        record = self._records.get(task_id)
        if record is not None and not record.terminal:
            record.status_message = message
            record.updated_at = at

    async def finish(
        self,
        task_id: str,
        status: str,
        *,
        at: float,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        message: str | None = None,
    ) -> bool:
        """End a task that has not ended; whether this call ended it."""
        record = self._records.get(task_id)
        if record is None or record.terminal:
            return False
        record.status = status
        record.updated_at = at
        record.result = result
        record.error = error
        record.status_message = message
        record.input_requests.clear()
        record.answers.clear()
        return True

    def records(self) -> Iterator[TaskRecord]:
        """Every record still held."""
        return iter(list(self._records.values()))

    async def aclose(self) -> None:
        """Nothing to release."""
