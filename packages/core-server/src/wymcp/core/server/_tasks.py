"""Tool calls run as tasks (SEP-2663): creation, questions, the end, cancelling.

The engine owns one `Tasks`: it keeps the running work of the tasks this
process started and makes each change of state through a `TaskStore`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from wymcp.core.server._call_tool import InputRequired
from wymcp.core.server._encoded_json import EncodedJSON
from wymcp.core.server._json_policy import encode_json
from wymcp.core.server._jsonrpc import (
    INTERNAL_ERROR,
    RpcError,
    invalid_params,
    missing_capability,
    unavailable,
)
from wymcp.core.server._peer_group import peer_group
from wymcp.core.server._session import principal_key
from wymcp.core.server._task_failure import TaskFailedError
from wymcp.core.server._task_store import (
    ANSWERS_BYTES,
    TaskLimitError,
    TaskRecord,
    TaskStore,
    TaskStoreUnavailableError,
)
from wymcp.core.server._tool_context import (
    InputRequest,
    MissingCapabilityError,
    ToolContext,
    require_capabilities,
)

_log = logging.getLogger("wymcp.core.server")

EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The extension identifier under `capabilities.extensions`."""

_STATUS_LIMIT: Final = 200
"""Longest `statusMessage` a task shows (a tool's progress note is cut)."""

_SHUTDOWN: Final = "The server stopped before the task finished; start it again."
_UNWRITABLE: Final = "Internal error: the task's result could not be written as JSON."
_UNWRITABLE_ERRORS: Final = (TypeError, ValueError, OverflowError, RecursionError)


def client_has_tasks(capabilities: Mapping[str, Any]) -> bool:
    """Whether a request's client capabilities declare the tasks extension."""
    extensions = capabilities.get("extensions")
    return isinstance(extensions, Mapping) and EXTENSION in extensions


def missing_tasks() -> RpcError:
    """-32021 naming the tasks extension as the required capability."""
    return missing_capability({"extensions": {EXTENSION: {}}})


@functools.lru_cache(maxsize=64)
def _second(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


@functools.lru_cache(maxsize=256)
def _iso(timestamp: float) -> str:
    """ISO 8601 in UTC to the millisecond (`2026-07-28T10:30:00.123Z`).

    Cached: a task polled again shows the same two times.
    """
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

    __slots__ = (
        "capabilities",
        "ctx",
        "ended",
        "job",
        "peer",
        "principal",
        "record",
        "rounds",
        "started",
        "tasks",
    )

    def __init__(
        self,
        tasks: Tasks,
        ctx: ToolContext,
        principal: object | None,
        capabilities: Mapping[str, Any],
        peer: str | None,
    ) -> None:
        self.tasks = tasks
        self.ctx: ToolContext | None = ctx
        """Until the task starts: the context then holds the run, not back."""
        self.principal = principal
        self.peer = peer
        self.capabilities = capabilities
        self.record: TaskRecord | None = None
        self.job: asyncio.Task[dict[str, Any]] | None = None
        self.started: asyncio.Event | None = None
        """Set when a prelude's `ctx.start_task()` created the task."""
        self.ended = False
        """Whether the task has ended, here or elsewhere: its end is written."""
        self.rounds = 0
        """How many times the work has asked (the minted keys' suffix)."""

    async def start(self) -> bool:
        """Create the task (once): the call goes on in the background."""
        if self.record is None:
            self.record = await self.tasks.create(self.principal, self.peer)
            self.tasks.register(self)
            self.became_task()
            if self.started is not None:
                self.started.set()
        return True

    def became_task(self) -> None:
        """The call's context asks through the task from now on.

        The run lets go of the context: the context holds the run (its
        `task_starter`, asker and progress are the run's methods), and a
        cycle back would keep an ended task's record and result alive after
        the store forgot them, until the cycle collector ran (issue 29, F2).
        """
        ctx, self.ctx = self.ctx, None
        assert ctx is not None  # noqa: S101 - a run becomes a task once
        ctx.become_task(self.ask, self.progress)

    async def ask(
        self, requests: dict[str, InputRequest], state: Any
    ) -> dict[str, dict[str, Any]]:
        """The `ctx.ask` of the task: park it `input_required` until answered."""
        del state
        return await self.tasks.ask(self, requests)

    async def progress(
        self, done: float, total: float | None, note: str | None
    ) -> None:
        """Progress becomes the task's `statusMessage`."""
        await self.tasks.progress(self, done, total, note)

    async def execute(
        self, work: Callable[[], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any]:
        """Run the call; once it is a task, its end goes to the task record.

        `work` is called here, so a task cancelled before it starts leaves
        no coroutine behind that was never awaited.
        """
        try:
            result = await work()
        except asyncio.CancelledError:
            if self.record is not None:
                await self.tasks.finish(self, "failed", error=_stopped())
            raise
        except (TaskFailedError, InputRequired, MissingCapabilityError) as ended:
            if self.record is None:
                raise
            await self.tasks.finish(self, "failed", error=_error_of(ended))
            return {}
        except Exception:
            if self.record is None:
                raise
            _log.exception("task %s raised", self.record.task_id)
            await self.tasks.finish(self, "failed", error=_internal())
            return {}
        if self.record is not None:
            await self.tasks.finish(self, "completed", result=result)
        return result


def _error_of(ended: Exception) -> dict[str, Any]:
    if isinstance(ended, TaskFailedError):
        return ended.to_json()
    if isinstance(ended, MissingCapabilityError):
        return missing_capability(ended.required).to_error()
    return _internal()


def _internal() -> dict[str, Any]:
    return {"code": INTERNAL_ERROR, "message": "Internal error: the task failed."}


def _stopped() -> dict[str, Any]:
    return {"code": INTERNAL_ERROR, "message": _SHUTDOWN}


class Tasks:
    """The tasks of one engine: their store and the work running here.

    It is the store's `TaskEvents`: a task ended or answered on another
    worker reaches the work running here through `stopped` and `answered`.
    """

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
        self._wakeups: dict[str, asyncio.Event] = {}
        self._ttl = ttl
        self._ttl_ms = round(ttl * 1000)
        self._poll_interval_ms = poll_interval_ms
        self._clock = clock
        self._wall_clock = wall_clock
        self._retry_after = retry_after
        store.attach(self)

    def _unavailable(self) -> RpcError:
        return unavailable(
            "Service unavailable: the task store cannot be reached. Retry later.",
            self._retry_after,
            "task_store_unavailable",
        )

    # ---------------------------------------------------------------- records

    async def create(
        self, principal: object | None, peer: str | None = None
    ) -> TaskRecord:
        """A new `working` task of `principal`, stored; 503 at a cap.

        The record keeps the principal's stable key (its subject), so a
        refreshed token of the same caller keeps seeing its tasks. Its caps
        count it against that key, or without a principal against `peer`
        (the caller's network address, an IPv6 one by its /64): one
        anonymous client cannot fill the caps of every other
        (`docs/tasks.md`, Limits).
        """
        now = self._wall_clock()
        key = None if principal is None else principal_key(principal)
        if key is not None:
            counted_as: str | None = "principal:" + key
        else:
            counted_as = None if peer is None else "peer:" + peer_group(peer)
        record = TaskRecord(
            task_id=os.urandom(16).hex(),
            principal=key,
            counted_as=counted_as,
            created_at=now,
            updated_at=now,
            expires_at=self._clock() + self._ttl,
            ttl_ms=self._ttl_ms,
            poll_interval_ms=self._poll_interval_ms,
        )
        try:
            await self.store.create(record)
        except TaskLimitError as error:
            raise unavailable(
                f"Too many tasks: {error}. Retry when some have finished or expired.",
                self._retry_after,
                "max_tasks",
            ) from None
        except TaskStoreUnavailableError:
            raise self._unavailable() from None
        return record

    async def get(self, task_id: str, principal: object | None) -> TaskRecord | None:
        """The live task of `principal`, or None (unknown, expired or not theirs)."""
        key = None if principal is None else principal_key(principal)
        try:
            return await self.store.get(task_id, key)
        except TaskStoreUnavailableError:
            raise self._unavailable() from None

    def _forget(self, run: _Run) -> None:
        """The run's task has ended: it no longer runs here, its asks wake."""
        run.ended = True
        if run.record is not None:
            task_id = run.record.task_id
            self.running.pop(task_id, None)
            wakeup = self._wakeups.pop(task_id, None)
            if wakeup is not None:
                wakeup.set()

    async def finish(
        self,
        run: _Run,
        status: str,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        """End the task of a run here (a task already ended keeps its end)."""
        if run.ended or run.record is None:
            return
        self._forget(run)
        encoded = None
        if result is not None:
            try:
                encoded = EncodedJSON(encode_json(result))
            except _UNWRITABLE_ERRORS:
                _log.exception(
                    "task %s ended with what JSON cannot hold", run.record.task_id
                )
                status, error = (
                    "failed",
                    {"code": INTERNAL_ERROR, "message": _UNWRITABLE},
                )
        try:
            await self.store.finish(
                run.record.task_id,
                status,
                at=self._wall_clock(),
                result=encoded,
                error=error,
            )
        except TaskStoreUnavailableError:
            _log.warning(
                "task %s ended %s, but the task store cannot be reached",
                run.record.task_id,
                status,
            )

    async def progress(
        self, run: _Run, done: float, total: float | None, note: str | None
    ) -> None:
        """Show a running task's progress as its `statusMessage`."""
        if run.ended or run.record is None:
            return
        shown = f"{done:g}" if total is None else f"{done:g} of {total:g}"
        text = f"{note} ({shown})" if note else f"Progress: {shown}"
        try:
            await self.store.progress(
                run.record.task_id, text[:_STATUS_LIMIT], self._wall_clock()
            )
        except TaskStoreUnavailableError:
            _log.debug("a task's progress was not stored: no task store")

    async def cancel(self, record: TaskRecord) -> None:
        """Cancel a task that has not ended and stop its work, wherever it runs."""
        if record.terminal:
            return
        try:
            await self.store.finish(
                record.task_id,
                "cancelled",
                at=self._wall_clock(),
                message="Cancelled at the client's request.",
            )
        except TaskStoreUnavailableError:
            raise self._unavailable() from None
        self.stopped(record.task_id)

    def stopped(self, task_id: str) -> None:
        """The task ended elsewhere or expired: stop its work if it runs here."""
        run = self.running.get(task_id)
        if run is None:
            return
        self._forget(run)
        if run.job is not None:
            run.job.cancel()

    def answered(self, task_id: str) -> None:
        """Answers may be in for the task: wake its work if it waits here."""
        wakeup = self._wakeups.get(task_id)
        if wakeup is not None:
            wakeup.set()

    def register(self, run: _Run) -> None:
        """Keep a started run; the store tells `stopped` when its TTL passes."""
        assert run.record is not None  # noqa: S101 - only a started run
        self.running[run.record.task_id] = run

    # ---------------------------------------------------------------- asking

    async def ask(
        self, run: _Run, requests: dict[str, InputRequest]
    ) -> dict[str, dict[str, Any]]:
        """Park a task `input_required` until every question is answered."""
        assert run.record is not None  # noqa: S101 - only a started run asks
        require_capabilities(requests.values(), run.capabilities)
        run.rounds += 1
        minted = {f"{key}-{run.rounds}": key for key in requests}
        task_id = run.record.task_id
        asked = {key: requests[original].to_json() for key, original in minted.items()}
        try:
            opened = await self.store.ask(task_id, asked, self._wall_clock())
        except TaskStoreUnavailableError:
            raise TaskFailedError(
                INTERNAL_ERROR,
                "The task store could not be reached to ask the client.",
            ) from None
        if not opened:
            raise asyncio.CancelledError
        wakeup = self._wakeups.setdefault(task_id, asyncio.Event())
        keys = list(minted)
        while True:
            if run.ended:
                raise asyncio.CancelledError
            wakeup.clear()
            try:
                answers = await self.store.take(task_id, keys)
            except TaskStoreUnavailableError:
                answers = None  # the store wakes its tasks again when it can
            if answers is not None:
                return {minted[key]: answer for key, answer in answers.items()}
            if not run.ended:
                await wakeup.wait()

    async def update(self, record: TaskRecord, responses: Mapping[str, Any]) -> None:
        """Take the answers to open questions; others are ignored."""
        chosen = {
            key: answer
            for key, answer in responses.items()
            if key in record.input_requests and isinstance(answer, dict)
        }
        if not chosen:
            return
        size = sum(len(encode_json(answer)) for answer in chosen.values())
        if size > ANSWERS_BYTES:
            raise invalid_params(
                f"The answers take {size} bytes, more than a task keeps waiting "
                f"({ANSWERS_BYTES} bytes); answer with less."
            )
        try:
            taken = await self.store.answer(record.task_id, chosen, self._wall_clock())
        except TaskLimitError as error:
            raise unavailable(
                f"Too many answers waiting: {error}. Retry when the tasks took them.",
                self._retry_after,
                "task_memory",
            ) from None
        except TaskStoreUnavailableError:
            raise self._unavailable() from None
        if taken:
            self.answered(record.task_id)

    # ------------------------------------------------------------------ calls

    async def call(
        self,
        work: Callable[[], Awaitable[dict[str, Any]]],
        ctx: ToolContext,
        *,
        principal: object | None,
        capabilities: Mapping[str, Any],
        prelude: bool,
        peer: str | None = None,
    ) -> dict[str, Any]:
        """Run a call that may be a task; its CreateTaskResult, or its result.

        Without `prelude` the task is created before the tool runs; with it
        the tool runs in the request until it awaits `ctx.start_task()`.
        """
        run = _Run(self, ctx, principal, capabilities, peer)
        ctx.task_starter = run.start
        if not prelude:
            record = run.record = await self.create(principal, peer)
            self.register(run)
            run.became_task()
            run.job = asyncio.get_running_loop().create_task(run.execute(work))
            at = _iso(record.created_at)
            return {
                "resultType": "task",
                "taskId": record.task_id,
                "status": "working",
                "createdAt": at,
                "lastUpdatedAt": at,
                "ttlMs": record.ttl_ms,
                "pollIntervalMs": record.poll_interval_ms,
            }
        job = asyncio.get_running_loop().create_task(run.execute(work))
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
            ctx.task_starter = None  # ended as a plain call: no cycle keeps it
            run.ctx = None
            return job.result()
        created = task_json(run.record, detailed=False)
        created["resultType"] = "task"
        return created

    async def aclose(self) -> None:
        """Stop the work of every running task; each ends `failed`."""
        runs = list(self.running.values())
        if runs:
            ends = await asyncio.gather(
                *(self.finish(run, "failed", error=_stopped()) for run in runs),
                return_exceptions=True,
            )
            for end in ends:
                if isinstance(end, Exception):
                    _log.error("ending a task at shutdown failed", exc_info=end)
        for run in runs:
            if run.job is not None:
                run.job.cancel()
        await self.store.aclose()
