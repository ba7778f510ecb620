"""Tool calls run as tasks (SEP-2663): creation, questions, the end, cancelling.

The engine owns one `Tasks`: it keeps the running work of the tasks this
process started and writes their state to a `TaskStore`.
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import itertools
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from wymcp.core.server._context import (
    CAPABILITY_OF,
    Asker,
    InputRequest,
    MissingCapabilityError,
    ToolContext,
)
from wymcp.core.server._jsonrpc import (
    INTERNAL_ERROR,
    MISSING_CAPABILITY,
    RpcError,
)
from wymcp.core.server._session import principal_key
from wymcp.core.server._task_failure import TaskFailedError
from wymcp.core.server._task_store import TaskLimitError, TaskRecord, TaskStore
from wymcp.core.server._toolcall import InputRequired

_log = logging.getLogger("wymcp.core.server")

EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The extension identifier under `capabilities.extensions`."""

_STATUS_LIMIT: Final = 200
"""Longest `statusMessage` a task shows (a tool's progress note is cut)."""

_SHUTDOWN: Final = "The server stopped before the task finished; start it again."


def client_has_tasks(capabilities: Mapping[str, Any]) -> bool:
    """Whether a request's client capabilities declare the tasks extension."""
    extensions = capabilities.get("extensions")
    return isinstance(extensions, Mapping) and EXTENSION in extensions


def missing_tasks() -> RpcError:
    """-32021 naming the tasks extension as the required capability."""
    return RpcError(
        MISSING_CAPABILITY,
        "Missing required client capability",
        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


@functools.lru_cache(maxsize=64)
def _second(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def _iso(timestamp: float) -> str:
    """ISO 8601 in UTC to the millisecond (`2026-07-28T10:30:00.123Z`)."""
    seconds = int(timestamp)
    millis = int((timestamp - seconds) * 1000)
    return f"{_second(seconds)}.{millis:03d}Z"


def task_json(record: TaskRecord, *, detailed: bool) -> dict[str, Any]:
    """The wire `Task`; `detailed` adds `inputRequests`, `result` or `error`."""
    created = _iso(record.created_at)
    updated = created if record.updated_at == record.created_at else None
    shape: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": created,
        "lastUpdatedAt": updated or _iso(record.updated_at),
        "ttlMs": record.ttl_ms,
        "pollIntervalMs": record.poll_interval_ms,
    }
    if record.status_message is not None:
        shape["statusMessage"] = record.status_message
    if detailed:
        if record.status == "input_required":
            shape["inputRequests"] = dict(record.input_requests)
        elif record.status == "completed" and record.result is not None:
            shape["result"] = record.result
        elif record.status == "failed" and record.error is not None:
            shape["error"] = record.error
    return shape


class _Run:
    """One call that may become a task: its record once started, its work."""

    def __init__(
        self,
        tasks: Tasks,
        ctx: ToolContext,
        principal: object | None,
        capabilities: Mapping[str, Any],
    ) -> None:
        self.tasks = tasks
        self.ctx = ctx
        self.principal = principal
        self.capabilities = capabilities
        self.record: TaskRecord | None = None
        self.job: asyncio.Task[dict[str, Any]] | None = None
        self.started: asyncio.Event | None = None
        """Set when a prelude's `ctx.start_task()` created the task."""

    def start(self) -> bool:
        """Create the task (once): the call goes on in the background."""
        if self.record is None:
            self.record = self.tasks.create(self.principal)
            self.tasks.register(self)
            record = self.record
            self.ctx.become_task(
                self.tasks.asker(record, self.capabilities),
                lambda done, total, note: self.tasks.progress(
                    record, done, total, note
                ),
            )
            if self.started is not None:
                self.started.set()
        return True

    async def execute(self, work: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        """Run the call; once it is a task, its end goes to the task record."""
        try:
            result = await work
        except asyncio.CancelledError:
            if self.record is not None:
                self.tasks.finish(self.record, "failed", error=_stopped())
            raise
        except (TaskFailedError, InputRequired, MissingCapabilityError) as ended:
            if self.record is None:
                raise
            self.tasks.finish(self.record, "failed", error=_error_of(ended))
            return {}
        except Exception:
            if self.record is None:
                raise
            _log.exception("task %s raised", self.record.task_id)
            self.tasks.finish(self.record, "failed", error=_internal())
            return {}
        if self.record is not None:
            self.tasks.finish(self.record, "completed", result=result)
        return result


def _error_of(ended: Exception) -> dict[str, Any]:
    if isinstance(ended, TaskFailedError):
        return ended.to_json()
    if isinstance(ended, MissingCapabilityError):
        return {
            "code": MISSING_CAPABILITY,
            "message": "Missing required client capability",
            "data": {"requiredCapabilities": ended.required},
        }
    return _internal()


def _internal() -> dict[str, Any]:
    return {"code": INTERNAL_ERROR, "message": "Internal error: the task failed."}


def _stopped() -> dict[str, Any]:
    return {"code": INTERNAL_ERROR, "message": _SHUTDOWN}


class Tasks:
    """The tasks of one engine: their store and the work running here."""

    def __init__(
        self,
        store: TaskStore,
        *,
        ttl: float,
        poll_interval_ms: int,
        clock: Callable[[], float],
        wall_clock: Callable[[], float],
        retry_after: int = 5,
    ) -> None:
        self.store = store
        self.running: dict[str, _Run] = {}
        self._deadlines: list[tuple[float, str]] = []
        """(expires_at, task_id) of the running tasks, as a heap."""
        self._wakeups: dict[str, asyncio.Event] = {}
        self._ttl = ttl
        self._poll_interval_ms = poll_interval_ms
        self._clock = clock
        self._wall_clock = wall_clock
        self._retry_after = retry_after

    # ---------------------------------------------------------------- records

    def create(self, principal: object | None) -> TaskRecord:
        """A new `working` task of `principal`, stored; 503 at a cap.

        The record keeps the principal's stable key (its subject), so a
        refreshed token of the same caller keeps seeing its tasks.
        """
        self._expire_running()
        now = self._wall_clock()
        record = TaskRecord(
            task_id=secrets.token_urlsafe(18),
            principal=principal_key(principal),
            created_at=now,
            updated_at=now,
            expires_at=self._clock() + self._ttl,
            ttl_ms=round(self._ttl * 1000),
            poll_interval_ms=self._poll_interval_ms,
        )
        try:
            self.store.create(record)
        except TaskLimitError as error:
            raise RpcError(
                INTERNAL_ERROR,
                f"Too many tasks: {error}. Retry when some have finished or expired.",
                status=503,
                headers={"Retry-After": str(self._retry_after)},
            ) from None
        return record

    def get(self, task_id: str, principal: object | None) -> TaskRecord | None:
        """The live task of `principal`, or None (unknown, expired or not theirs)."""
        self._expire_running()
        return self.store.get(task_id, principal_key(principal))

    def _touch(self, record: TaskRecord, status: str) -> None:
        record.status = status
        record.updated_at = self._wall_clock()
        self.store.save(record)

    def finish(
        self,
        record: TaskRecord,
        status: str,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        message: str | None = None,
    ) -> None:
        """End a task (a task already ended keeps its end)."""
        self.running.pop(record.task_id, None)
        wakeup = self._wakeups.pop(record.task_id, None)
        if wakeup is not None:
            wakeup.set()
        if record.terminal:
            return
        record.result = result
        record.error = error
        record.status_message = message
        record.input_requests.clear()
        record.answers.clear()
        self._touch(record, status)

    def progress(
        self, record: TaskRecord, done: float, total: float | None, note: str | None
    ) -> None:
        """Show a running task's progress as its `statusMessage`."""
        if record.terminal:
            return
        shown = f"{done:g}" if total is None else f"{done:g} of {total:g}"
        text = f"{note} ({shown})" if note else f"Progress: {shown}"
        record.status_message = text[:_STATUS_LIMIT]
        record.updated_at = self._wall_clock()
        self.store.save(record)

    def cancel(self, record: TaskRecord) -> None:
        """Cancel a task that has not ended and stop its work."""
        if record.terminal:
            return
        run = self.running.get(record.task_id)
        self.finish(record, "cancelled", message="Cancelled at the client's request.")
        if run is not None and run.job is not None:
            run.job.cancel()

    def register(self, run: _Run) -> None:
        """Keep a started run; its TTL is watched from a heap."""
        assert run.record is not None  # noqa: S101 - only a started run
        self.running[run.record.task_id] = run
        heapq.heappush(self._deadlines, (run.record.expires_at, run.record.task_id))

    def _expire_running(self) -> None:
        """Stop the work of tasks past their TTL: O(log n) per expired task."""
        now = self._clock()
        while self._deadlines and self._deadlines[0][0] <= now:
            _, task_id = heapq.heappop(self._deadlines)
            run = self.running.get(task_id)
            if run is None or run.record is None:
                continue
            self.finish(run.record, "failed", error=_expired())
            if run.job is not None:
                run.job.cancel()

    # ---------------------------------------------------------------- asking

    def asker(self, record: TaskRecord, capabilities: Mapping[str, Any]) -> Asker:
        """The `ctx.ask` of a task: park it `input_required` until answered."""
        rounds = itertools.count(1)

        async def ask(
            requests: dict[str, InputRequest], state: Any
        ) -> dict[str, dict[str, Any]]:
            del state
            missing: dict[str, Any] = {
                CAPABILITY_OF[r.method]: {}
                for r in requests.values()
                if CAPABILITY_OF.get(r.method, r.method) not in capabilities
            }
            if missing:
                raise MissingCapabilityError(missing)
            number = next(rounds)
            minted = {f"{key}-{number}": key for key in requests}
            for key, original in minted.items():
                record.input_requests[key] = requests[original].to_json()
            self._touch(record, "input_required")
            wakeup = self._wakeups.setdefault(record.task_id, asyncio.Event())
            while not record.terminal and not all(k in record.answers for k in minted):
                wakeup.clear()
                await wakeup.wait()
            if record.terminal:
                raise asyncio.CancelledError
            answers = {
                original: record.answers.pop(k) for k, original in minted.items()
            }
            if not record.input_requests:
                self._touch(record, "working")
            return answers

        return ask

    def update(self, record: TaskRecord, responses: Mapping[str, Any]) -> None:
        """Take the answers to open questions; others are ignored."""
        taken = False
        for key, answer in responses.items():
            if key in record.input_requests and isinstance(answer, dict):
                del record.input_requests[key]
                record.answers[key] = answer
                taken = True
        if not taken:
            return
        if not record.input_requests and record.status == "input_required":
            self._touch(record, "working")
        else:
            record.updated_at = self._wall_clock()
            self.store.save(record)
        wakeup = self._wakeups.get(record.task_id)
        if wakeup is not None:
            wakeup.set()

    # ------------------------------------------------------------------ calls

    async def call(
        self,
        work: Callable[[], Awaitable[dict[str, Any]]],
        ctx: ToolContext,
        *,
        principal: object | None,
        capabilities: Mapping[str, Any],
        prelude: bool,
    ) -> dict[str, Any]:
        """Run a call that may be a task; its CreateTaskResult, or its result.

        Without `prelude` the task is created before the tool runs; with it
        the tool runs in the request until it awaits `ctx.start_task()`.
        """
        run = _Run(self, ctx, principal, capabilities)
        ctx.task_starter = run.start
        if not prelude:
            run.start()
        job = asyncio.ensure_future(run.execute(work()))
        run.job = job
        if run.record is None:
            run.started = asyncio.Event()
            waiter = asyncio.ensure_future(run.started.wait())
            try:
                await asyncio.wait({job, waiter}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                job.cancel()
                raise
            finally:
                waiter.cancel()
        if run.record is None:
            return job.result()
        return {"resultType": "task", **task_json(run.record, detailed=False)}

    async def aclose(self) -> None:
        """Stop the work of every running task; each ends `failed`."""
        for run in list(self.running.values()):
            if run.record is not None:
                self.finish(run.record, "failed", error=_stopped())
            if run.job is not None:
                run.job.cancel()


def _expired() -> dict[str, Any]:
    return {
        "code": INTERNAL_ERROR,
        "message": "The task ran past its time to live (ttlMs) and was stopped.",
    }
