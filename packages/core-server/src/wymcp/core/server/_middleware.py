"""The middleware seam: a chain of user code around each request the engine serves.

Each request that reaches a method handler gets one `CallRecord`; a
`tools/call` names its tool and action there before the chain runs, and its
outcome (ok, the refusing gate, tool_error, tool_raised, call_timeout, …)
after. Metrics, logs and limits read the same record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Final, Protocol, TypeVar

import attrs

from wymcp.core.server._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RpcError,
)

Result = dict[str, Any]
Next = Callable[[], Awaitable[Result]]
"""Run the rest of the chain and the method's handler; its JSON-RPC result."""
_C = TypeVar("_C")

GATES: Final = frozenset(
    {
        "unknown_action",
        "unknown_params",
        "missing_required_fields",
        "missing_required_group",
        "invalid_values",
        "invalid_arguments",
    }
)
"""The codes a gate refuses a call with (the `error` of a refusal)."""

_RPC_OUTCOMES: Final = {
    INVALID_REQUEST: "invalid_request",
    METHOD_NOT_FOUND: "method_not_found",
    INVALID_PARAMS: "invalid_params",
    INTERNAL_ERROR: "internal_error",
}


class Spans(Protocol):
    """The spans of one traced request (`TRACING`): its children and its context."""

    def child(self, kind: str) -> AbstractContextManager[object]:
        """A child span of the request's span (`gates`, `execute_tool`)."""
        ...

    def inject(self, meta: dict[str, Any]) -> None:
        """Put the current trace context in a server->client request's `_meta`."""
        ...


@attrs.define(eq=False)
class CallRecord:
    """One request as the middleware chain, the metrics and the access log see it.

    `method`, `revision` (its name), `id`, `principal`, `peer` (the client's
    address, if the transport knows one) and `session` (its id) are filled
    when the request is opened; for `tools/call`, `tool` and `action` are
    the names as sent (None when absent or not strings) and
    `known_tool`/`known_action` whether the catalogue has them. `outcome` is
    `ok`, the gate or middleware code that refused the call, `tool_error`,
    `tool_raised`, `call_timeout`, `result_too_large`, `unknown_tool`,
    `cancelled`, or the JSON-RPC error's kind (`internal_error` when a
    middleware raised); `refused` says a gate or a
    middleware refused it. `tags` are a middleware's own notes (logged).
    `reason` says which limit answered 503 (`max_sessions`, `max_streams`,
    `max_tasks`, …), else None.
    `spans`, with `TRACING` on, makes the request's child spans.
    """

    method: str | None = None
    revision: str | None = None
    id: str | int | None = None
    principal: object | None = None
    peer: str | None = None
    session: str | None = None
    tool: str | None = None
    action: str | None = None
    known_tool: bool = False
    known_action: bool = False
    outcome: str = "ok"
    refused: bool = False
    tags: dict[str, str] = attrs.Factory(dict)
    spans: Spans | None = None
    reason: str | None = None

    @property
    def subject(self) -> str | None:
        """The principal's subject (never its token), or None without one."""
        subject = getattr(self.principal, "subject", None)
        return subject if isinstance(subject, str) else None

    def refuse(self, code: str) -> None:
        """Record that `code` (a gate's, or a middleware's) refused the call."""
        self.outcome = code
        self.refused = True


class Middleware(Protocol):
    """What `MIDDLEWARE` names: called once per request with its record.

    Return `await call_next()` (or a result of your own); raise `CallRefused`
    to refuse the request.
    """

    def __call__(self, call: CallRecord, call_next: Next) -> Awaitable[Result]: ...


class CallRefused(Exception):  # noqa: N818 - an answer, as `ToolError` is
    """Raised by a middleware to refuse a request.

    A `tools/call` answers a tool refusal (`isError: true`, the JSON
    `{"error": code, "message", "tool", "action", "help"}`) the model can
    read; any other method answers JSON-RPC -32600 with `data.error` the code.
    `code` is a short snake_case word chosen by the middleware (metrics count
    it as the gate `middleware` unless it is one wymcp knows).
    `retry_after_ms`, when given, is in the refusal (`rate_limited`'s hint).
    """

    def __init__(
        self, code: str, message: str, *, retry_after_ms: int | None = None
    ) -> None:
        super().__init__(message)
        self.code = code[:64]
        self.message = message[:500]
        self.retry_after_ms = retry_after_ms


def rpc_outcome(record: CallRecord, error: RpcError) -> str:
    """The outcome of a request answered with `error`."""
    if (
        record.method == "tools/call"
        and record.tool is not None
        and not record.known_tool
    ):
        return "unknown_tool"
    return _RPC_OUTCOMES.get(error.code, "rpc_error")


async def observed(
    record: CallRecord,
    chain: Sequence[Middleware],
    refusal: Callable[[CallRecord, CallRefused], Result],
    handler: Callable[[_C], Awaitable[Result]],
    call: _C,
) -> Result:
    """Run `handler(call)` through `chain` (outermost first), recording the outcome.

    The engine passes this as a `functools.partial` (no closure per request);
    without middleware, untraced and outside a session it awaits the handler
    itself, noting a failure with `note_failure` (no extra await).
    `refusal` turns a middleware's `CallRefused` into the answer.
    """
    try:
        if not chain:
            return await handler(call)
        return await _link(record, chain, 0, lambda: handler(call), refusal)()
    except BaseException as error:
        note_failure(record, error)
        raise


def note_failure(record: CallRecord | None, error: BaseException) -> None:
    """Note in `record` (if any) the outcome of a request its handler raised.

    Noting the same error twice notes the same outcome (the engine may, after
    `observed` did).
    """
    if record is None:
        return
    if isinstance(error, RpcError):
        if not record.refused:
            record.outcome = rpc_outcome(record, error)
    elif isinstance(error, asyncio.CancelledError):
        record.outcome = "cancelled"
    elif isinstance(error, Exception):
        # a middleware (or the handler) raised: the client gets -32603
        record.outcome = "internal_error"
        record.refused = False


def _link(
    record: CallRecord,
    chain: Sequence[Middleware],
    index: int,
    handler: Next,
    refusal: Callable[[CallRecord, CallRefused], Result],
) -> Next:
    if index == len(chain):
        return handler
    middleware = chain[index]
    rest = _link(record, chain, index + 1, handler, refusal)

    async def step() -> Result:
        try:
            return await middleware(record, rest)
        except CallRefused as refused:
            record.refuse(refused.code)
            return refusal(record, refused)

    return step
