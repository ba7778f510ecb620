"""Where tasks live: the `TaskStore` interface and its bounded in-memory store.

A store keeps task records only (JSON-able state); the running work stays
with the engine that started it, so a shared (Redis) store can follow.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterator
from typing import Any, Final, Protocol

import attrs

TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
"""Statuses a task never leaves."""


class TaskLimitError(Exception):
    """Creating one more task would pass a cap (per principal or in all)."""


@attrs.define(eq=False)
class TaskRecord:
    """One task's state: what `tasks/get` shows, plus who may see it.

    `expires_at` is on the store's clock; `input_requests` are the questions
    still open (server-minted keys), `answers` those answered and not yet
    taken by the running work.
    """

    task_id: str
    principal: object | None
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


class TaskStore(Protocol):
    """What the engine needs of a task store.

    `get` answers None for a task that does not exist, has expired, or
    belongs to another principal: the three look the same to a caller.
    """

    def create(self, record: TaskRecord) -> None:
        """Keep a new task; `TaskLimitError` when a cap is reached."""

    def get(self, task_id: str, principal: object | None) -> TaskRecord | None:
        """The live task `task_id` of `principal`, or None."""

    def save(self, record: TaskRecord) -> None:
        """Store a changed record (a no-op for a store holding the object)."""

    def records(self) -> Iterator[TaskRecord]:
        """Every live record (for shutdown and tests)."""


class MemoryTaskStore:
    """Tasks in one process's memory, bounded.

    At most `max_tasks` records in all and `max_per_principal` per principal;
    a record is dropped once its TTL has passed (checked on every create and
    get). Memory: O(max_tasks) records, each as large as its result.
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
        self._per_principal: dict[object, int] = {}
        self._max_tasks = max_tasks
        self._max_per_principal = max_per_principal
        self._clock = clock

    def __len__(self) -> int:
        return len(self._records)

    def _key(self, principal: object | None) -> object:
        try:
            hash(principal)
        except TypeError:
            return repr(principal)
        return principal

    def _drop(self, record: TaskRecord) -> None:
        if self._records.pop(record.task_id, None) is None:
            return
        key = self._key(record.principal)
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

    def create(self, record: TaskRecord) -> None:
        """Keep a new task; `TaskLimitError` when a cap is reached."""
        self.sweep()
        key = self._key(record.principal)
        if len(self._records) >= self._max_tasks:
            raise TaskLimitError("the server holds as many tasks as it may")
        if self._per_principal.get(key, 0) >= self._max_per_principal:
            raise TaskLimitError("this caller holds as many tasks as it may")
        self._records[record.task_id] = record
        heapq.heappush(self._expiry, (record.expires_at, record.task_id))
        self._per_principal[key] = self._per_principal.get(key, 0) + 1

    def get(self, task_id: str, principal: object | None) -> TaskRecord | None:
        """The live task `task_id` of `principal`, or None."""
        record = self._records.get(task_id)
        if record is None:
            return None
        if record.expires_at <= self._clock():
            self._drop(record)
            return None
        if record.principal != principal:
            return None
        return record

    def save(self, record: TaskRecord) -> None:
        """The record is held by reference: nothing to write."""
        del record

    def records(self) -> Iterator[TaskRecord]:
        """Every record still held."""
        return iter(list(self._records.values()))
