"""Where tasks live: the `TaskStore` interface and its bounded in-memory store.

A store keeps task records and makes each change of state in one step, so a
shared (Redis) store can serve several workers; the running work stays with
the engine that started it, which the store tells of changes made elsewhere.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, Protocol

import attrs

from wymcp.core.server._encoded_json import EncodedJSON
from wymcp.core.server._json_policy import encode_json
from wymcp.core.server._jsonrpc import INTERNAL_ERROR

TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
"""Statuses a task never leaves."""
RECORD_BYTES: Final = 2048
"""What an ended task is charged besides its result and error: about what its
record, its strings and the store's entries for it take (measured by
`tests/core_server/test_task_store.py::test_an_ended_record_costs_about_what_it_is_charged`)."""
MIB: Final = 1024 * 1024
ANSWERS_BYTES: Final = 256 * 1024
"""The most JSON text of answers one `tasks/update` may leave with a task (its
running work takes them once every question it waits on is answered)."""


def task_too_large(size: int, budget: int) -> dict[str, Any]:
    """The error of a task whose result cannot be kept within the budget."""
    return {
        "code": INTERNAL_ERROR,
        "message": (
            f"The task's result takes {size} bytes, more than one caller's ended "
            f"tasks may keep ({budget} bytes, TASK_MEMORY_BUDGET_PER_PRINCIPAL); "
            "ask for less."
        ),
    }


def task_charge(result: EncodedJSON | None, error: dict[str, Any] | None) -> int:
    """The bytes an ended task is counted for: its result, error and record."""
    size = RECORD_BYTES
    if result is not None:
        size += len(result.data)
    if error is not None:
        size += len(encode_json(error))
    return size


class TaskLimitError(Exception):
    """Creating one more task would pass a cap (per principal or in all)."""


class TaskStoreUnavailableError(Exception):
    """The store cannot be reached now: the request is answered 503."""


@attrs.define(eq=False)
class TaskRecord:
    """One task's state: what `tasks/get` shows, plus who may see it.

    `principal` is the creator's `principal_key` (who may see the task);
    `counted_as` is whom its caps count it against: that key, or for a
    caller without one its network address (`docs/tasks.md`, Limits).
    `expires_at` is on the engine's clock; `input_requests` are the
    questions still open (server-minted keys), `answers` those answered and
    not yet taken by the running work, as their JSON text (a memory store
    charges them to the caller's budget until taken). `result` is kept as the JSON text
    written once when the task ended: every `tasks/get` copies it as is.
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
    result: EncodedJSON | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    answers: dict[str, EncodedJSON] = attrs.field(factory=dict)
    counted_as: str | None = None

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
        """Keep a new task; `TaskLimitError` when a cap of running tasks is reached.

        Only running tasks count against `max_tasks` and `max_per_principal`
        (by `record.counted_as`); ended ones are bound by bytes instead.
        """

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

        The task goes back to `working` once no question is open. A store
        that charges waiting answers to the caller's budget raises
        `TaskLimitError` when they would not fit.
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
        result: EncodedJSON | None = None,
        error: dict[str, Any] | None = None,
        message: str | None = None,
    ) -> bool:
        """End a task that has not ended; whether this call ended it.

        The ended task is kept within the byte budgets: the oldest ended
        tasks of its caller, then of all, are forgotten to make room; a
        result larger than one caller's budget ends the task `failed`
        (`too_large`) instead.
        """

    async def aclose(self) -> None:
        """Release what the store holds (connections, background work)."""


class MemoryTaskStore:
    """Tasks in one process's memory, bounded by count and by bytes.

    At most `max_tasks` running tasks in all and `max_per_principal` per
    caller (`TaskRecord.counted_as`). Ended tasks are kept until their TTL
    within `memory` bytes in all and `memory_per_principal` per caller, each
    counted as `task_charge` says (its result's JSON text, its error and
    `RECORD_BYTES`): to make room the oldest ended tasks of the caller go
    first, then the oldest of all. Answers waiting for a running task's work
    are kept as JSON text and charged to the same budgets until taken (an
    answer past them is refused). Memory: O(`max_tasks`) running records
    plus `memory` bytes. A timer sweeps expired records every `sweep_every`
    seconds while any is held, so work past its TTL stops on an idle server
    too; `aclose` cancels it. `get` hands out the stored record itself.
    """

    def __init__(
        self,
        *,
        max_tasks: int = 1000,
        max_per_principal: int = 100,
        memory: int = 256 * MIB,
        memory_per_principal: int = 32 * MIB,
        clock: Callable[[], float] = time.monotonic,
        sweep_every: float = 1.0,
    ) -> None:
        self._records: dict[str, TaskRecord] = {}
        self._expiry: list[tuple[float, str]] = []
        """(expires_at, task_id) as a heap: a sweep pops only what expired."""
        self._running: dict[str | None, int] = {}
        """Running tasks per caller (`counted_as`)."""
        self._running_total = 0
        self._ended: dict[str, int] = {}
        """Ended tasks kept, oldest end first, with the bytes each is charged."""
        self._ended_of: dict[str | None, dict[str, None]] = {}
        """The ended tasks of each caller, oldest end first."""
        self._bytes = 0
        self._bytes_of: dict[str | None, int] = {}
        """Bytes charged in all and per caller: ended tasks and answers waiting."""
        self._waiting: dict[str, int] = {}
        """Running tasks holding answers not yet taken, with their bytes."""
        self._max_tasks = max_tasks
        self._max_per_principal = max_per_principal
        self._memory = memory
        self._memory_per_principal = memory_per_principal
        self._clock = clock
        self._sweep_every = sweep_every
        self._sweeper: asyncio.TimerHandle | None = None
        self._closed = False
        self._events: TaskEvents | None = None

    def __len__(self) -> int:
        return len(self._records)

    @property
    def kept_bytes(self) -> int:
        """The bytes the ended tasks held are charged (at most `memory`)."""
        return self._bytes

    def attach(self, events: TaskEvents) -> None:
        """Tell `events` of running tasks dropped at their TTL."""
        self._events = events

    # ------------------------------------------------------------ counting

    def _uncount_running(self, key: str | None) -> None:
        self._running_total -= 1
        left = self._running.get(key, 1) - 1
        if left:
            self._running[key] = left
        else:
            self._running.pop(key, None)

    def _unwait(self, task_id: str, key: str | None, size: int | None = None) -> None:
        """Uncharge `size` bytes of a task's waiting answers (None: all)."""
        held = self._waiting.pop(task_id, 0)
        freed = held if size is None else min(size, held)
        if held - freed > 0:
            self._waiting[task_id] = held - freed
        self._bytes -= freed
        left = self._bytes_of.get(key, 0) - freed
        if left > 0:
            self._bytes_of[key] = left
        else:
            self._bytes_of.pop(key, None)

    def _uncharge(self, task_id: str, key: str | None) -> None:
        size = self._ended.pop(task_id, 0)
        self._bytes -= size
        left = self._bytes_of.get(key, 0) - size
        if left > 0:
            self._bytes_of[key] = left
        else:
            self._bytes_of.pop(key, None)
        own = self._ended_of.get(key)
        if own is not None:
            own.pop(task_id, None)
            if not own:
                del self._ended_of[key]

    def _drop(self, record: TaskRecord) -> None:
        if self._records.pop(record.task_id, None) is None:
            return
        if record.terminal:
            self._uncharge(record.task_id, record.counted_as)
            return
        self._unwait(record.task_id, record.counted_as)
        self._uncount_running(record.counted_as)
        if self._events is not None:
            self._events.stopped(record.task_id)

    def _make_room(self, key: str | None, size: int) -> None:
        """Forget the oldest ended tasks until `size` more bytes fit."""
        own = self._ended_of.get(key)
        while own and self._bytes_of.get(key, 0) + size > self._memory_per_principal:
            self._drop(self._records[next(iter(own))])
        while self._ended and self._bytes + size > self._memory:
            self._drop(self._records[next(iter(self._ended))])

    # ------------------------------------------------------------ sweeping

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

    def _tick(self) -> None:
        self._sweeper = None
        self.sweep()
        self._arm()

    def _arm(self) -> None:
        """Sweep again in `sweep_every` seconds, while any record is held."""
        if self._sweeper is None and self._records and not self._closed:
            loop = asyncio.get_running_loop()
            self._sweeper = loop.call_later(self._sweep_every, self._tick)

    # --------------------------------------------------------------- steps

    async def create(self, record: TaskRecord) -> None:
        """Keep a new task; `TaskLimitError` when a cap of running tasks is reached."""
        if self._expiry and self._expiry[0][0] <= self._clock():
            self.sweep()
        key = record.counted_as
        if self._running_total >= self._max_tasks:
            raise TaskLimitError("the server runs as many tasks as it may")
        held = self._running.get(key, 0)
        if held >= self._max_per_principal:
            raise TaskLimitError("this caller runs as many tasks as it may")
        self._records[record.task_id] = record
        if len(self._expiry) > 2 * len(self._records) + 64:
            # entries of forgotten records: rebuilt, so the heap stays O(records)
            self._expiry = [(r.expires_at, r.task_id) for r in self._records.values()]
            heapq.heapify(self._expiry)
        else:
            heapq.heappush(self._expiry, (record.expires_at, record.task_id))
        self._running[key] = held + 1
        self._running_total += 1
        self._arm()

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
        kept = {
            key: EncodedJSON(encode_json(answer))
            for key, answer in responses.items()
            if key in record.input_requests
        }
        if not kept:
            return False
        size = sum(len(text) for text in kept.values())
        who = record.counted_as
        self._make_room(who, size)
        if (
            self._bytes_of.get(who, 0) + size > self._memory_per_principal
            or self._bytes + size > self._memory
        ):
            raise TaskLimitError(
                "the answers waiting for this caller's tasks fill its budget "
                "(TASK_MEMORY_BUDGET_PER_PRINCIPAL)"
            )
        self._waiting[task_id] = self._waiting.get(task_id, 0) + size
        self._bytes += size
        self._bytes_of[who] = self._bytes_of.get(who, 0) + size
        for key, text in kept.items():
            del record.input_requests[key]
            record.answers[key] = text
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
        texts = [record.answers.pop(key) for key in keys]
        self._unwait(task_id, record.counted_as, sum(len(text) for text in texts))
        return {key: text.value() for key, text in zip(keys, texts, strict=True)}

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
        result: EncodedJSON | None = None,
        error: dict[str, Any] | None = None,
        message: str | None = None,
    ) -> bool:
        """End a task that has not ended, kept within the byte budgets.

        Whether this call ended it; see `TaskStore.finish` for the budgets.
        """
        record = self._records.get(task_id)
        if record is None or record.terminal:
            return False
        key = record.counted_as
        size = task_charge(result, error)
        if size > min(self._memory_per_principal, self._memory):
            kept = size - RECORD_BYTES if result is None else len(result.data)
            status, result, message = "failed", None, None
            error = task_too_large(kept, min(self._memory_per_principal, self._memory))
            size = task_charge(None, error)
        self._uncount_running(key)
        self._unwait(task_id, key)
        self._make_room(key, size)
        record.status = status
        record.updated_at = at
        record.result = result
        record.error = error
        record.status_message = message
        record.input_requests.clear()
        record.answers.clear()
        self._ended[task_id] = size
        self._ended_of.setdefault(key, {})[task_id] = None
        self._bytes += size
        self._bytes_of[key] = self._bytes_of.get(key, 0) + size
        return True

    def records(self) -> Iterator[TaskRecord]:
        """Every record still held."""
        return iter(list(self._records.values()))

    async def aclose(self) -> None:
        """Stop the sweeping timer."""
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
