"""Rate and concurrency limits on requests and tool calls: the rules and the middleware.

`RateLimiter` asks a `RateStore` whether every matching `RateRule` admits a
request, per principal (token subject, else client address): the rules with a
`method` first (a refusal is HTTP 429 before dispatch), then the tool rules (a
refusal is a tool result the model reads).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Final, Protocol

import attrs

from wymcp.core.schema import RESERVED_NAME
from wymcp.core.server._client_key import client_key
from wymcp.core.server._jsonrpc import INVALID_REQUEST, RpcError
from wymcp.core.server._middleware import CallRecord, CallRefused, Next, Result
from wymcp.core.server._work_holds import hold_work, release_work

RATE_LIMITED: Final = "rate_limited"
"""The refusal code (and metrics outcome) of a limited call."""

CONCURRENCY_RETRY: Final = 1.0
"""Seconds a call refused for concurrency is asked to wait (a slot frees when
a running call of the same principal ends, which no store can foresee)."""

TOO_MANY_REQUESTS: Final = 429
"""The HTTP status of a request refused before dispatch."""
EVERY_METHOD: Final = "*"
"""A rule's `method` that counts every request reaching a method."""
RATE_METHODS: Final = frozenset(
    {
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "server/discover",
        "subscriptions/listen",
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
        "ping",
        "logging/setLevel",
        EVERY_METHOD,
    }
)
"""The `method` a rule may name: the requests that reach a method (not
`initialize`, notifications, or the client's answers), or `*` for all."""


@attrs.frozen
class RateRule:
    """One `RATE_LIMITS` rule: `count` calls per `period` seconds with `burst`.

    GCRA: one call every `period / count` seconds on average, and up to
    `burst` calls at once after a quiet spell; `concurrency` caps the calls
    of one principal running at once. `count` 0 means no rate, only the cap.
    `tool` (and `action`) narrow the rule; None matches every call. A rule
    with a `method` (one of `RATE_METHODS`) counts requests instead, before
    dispatch, and names no tool.
    """

    tool: str | None = None
    action: str | None = None
    count: int = 0
    period: float = 1.0
    burst: int = 1
    concurrency: int | None = None
    method: str | None = None

    @property
    def interval(self) -> float:
        """Seconds between two calls at the steady rate, or 0 for a rule of none."""
        return self.period / self.count if self.count else 0.0

    @property
    def tag(self) -> str:
        """A short stable name of the rule (keys stay the same across workers)."""
        text = (
            "|".join(map(str, (self.tool, self.action, self.count, self.period)))
            + f"|{self.burst}|{self.concurrency}"
            + ("" if self.method is None else f"|method={self.method}")
        )
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def matches(self, record: CallRecord) -> bool:
        """Whether this rule counts the request or call `record` names."""
        if self.method is not None:
            return self.method in {EVERY_METHOD, record.method}
        if self.tool is None:
            return True
        if not record.known_tool or record.tool != self.tool:
            return False
        return self.action is None or (
            record.known_action and record.action == self.action
        )


@attrs.frozen
class RateCheck:
    """One rule applied to one principal: what a store decides on."""

    rule: RateRule
    key: str
    """`rule.tag` and the principal, hashed: bounded, and no request bytes."""


class RateStore(Protocol):
    """Decides for every check of a call at once, atomically.

    `acquire` returns None when every check admits the call (its rate spent,
    its concurrency slots taken under `token`), else the seconds to wait, and
    then nothing is spent. `release` frees the slots `acquire` took.
    """

    async def acquire(
        self, checks: Sequence[RateCheck], token: str
    ) -> float | None: ...

    async def release(self, checks: Sequence[RateCheck], token: str) -> None: ...


def principal_of(record: CallRecord) -> str:
    """Whom the limits count: the token's subject, else the client address.

    An IPv6 address counts by its /64 (`client_key`, as the tasks, the body
    budget and the off-loop lane count it): one host is commonly given a /64.
    """
    return client_key(record.principal, record.peer)


class RateLimiter:
    """The `RATE_LIMITS` middleware: refuses a limited request or `tools/call`.

    Rules with a `method` count the requests of that method (`*`: every one,
    `help` and task calls included) and refuse one before dispatch: HTTP 429,
    `Retry-After`, JSON-RPC -32600 with `data.error` `rate_limited`. Then the
    tool rules count `tools/call` (never `help`) and refuse with a tool result.
    A call that starts a task is counted once, when it is made; its
    concurrency slot is held while the request runs and until the last worker
    thread its work started returns (`WorkHold`: a call stopped by
    CALL_TIMEOUT or left by its client keeps its slot while its
    `asyncio.to_thread` runs on); the task's own run is bounded by
    MAX_TASKS_PER_PRINCIPAL. The client's answers to the server's requests,
    notifications and `initialize` never reach a method: not counted.
    """

    def __init__(self, rules: Sequence[RateRule], store: RateStore) -> None:
        self.rules = tuple(rules)
        self.store = store
        self._request_rules = tuple(r for r in self.rules if r.method is not None)
        self._tool_rules = tuple(r for r in self.rules if r.method is None)
        self._calls = 0
        self._prefix = secrets.token_hex(8)
        """Makes each call's token unique across workers (Redis slots)."""
        self._releasing: set[asyncio.Task[None]] = set()

    async def __call__(self, call: CallRecord, call_next: Next) -> Result:
        if self._request_rules:
            checks = self._checks(call, self._request_rules)
            if checks:
                token = await self._acquire(checks, call)
                return await self._held(
                    checks, token, lambda: self._tool_limited(call, call_next)
                )
        return await self._tool_limited(call, call_next)

    async def _tool_limited(self, call: CallRecord, call_next: Next) -> Result:
        if call.method != "tools/call" or call.tool == RESERVED_NAME:
            return await call_next()
        checks = self._checks(call, self._tool_rules)
        if not checks:
            return await call_next()
        token = await self._acquire(checks, None)
        return await self._held(checks, token, call_next)

    def _checks(
        self, call: CallRecord, rules: Sequence[RateRule]
    ) -> list[RateCheck] | None:
        matching = [rule for rule in rules if rule.matches(call)]
        if not matching:
            return None
        who = principal_of(call)
        return [RateCheck(rule, _key(rule, who)) for rule in matching]

    async def _acquire(
        self, checks: Sequence[RateCheck], request: CallRecord | None
    ) -> str:
        """Take every check's rate and slot under a new token, or refuse.

        `request` is the record of a request refused before dispatch (429);
        None refuses a tool call with a tool result.
        """
        self._calls += 1
        token = f"{self._prefix}.{self._calls}"
        wait = await self.store.acquire(checks, token)
        if wait is None:
            return token
        retry_after_ms = max(1, math.ceil(wait * 1000))
        if request is None:
            raise CallRefused(
                RATE_LIMITED,
                f"Too many calls: wait {retry_after_ms} ms, then call again.",
                retry_after_ms=retry_after_ms,
            )
        request.refuse(RATE_LIMITED)
        raise RpcError(
            INVALID_REQUEST,
            f"Too many requests: wait {retry_after_ms} ms, then send it again.",
            {"error": RATE_LIMITED, "retry_after_ms": retry_after_ms},
            status=TOO_MANY_REQUESTS,
            headers={"Retry-After": str(math.ceil(retry_after_ms / 1000))},
        )

    async def _held(
        self,
        checks: Sequence[RateCheck],
        token: str,
        run: Callable[[], Awaitable[Result]],
    ) -> Result:
        """Run `run`; its concurrency slots stay taken until its threads return."""
        if not any(check.rule.concurrency is not None for check in checks):
            return await run()
        hold, marked = hold_work()
        try:
            return await run()
        finally:
            release_work(marked)
            # the slot stays taken while a worker thread of the call runs on
            if not hold.when_idle(lambda: self._release_later(checks, token)):
                await self.store.release(checks, token)

    def _release_later(self, checks: Sequence[RateCheck], token: str) -> None:
        """Free the slots of a call whose last worker thread just returned."""
        task = asyncio.get_running_loop().create_task(self.store.release(checks, token))
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)


def _key(rule: RateRule, who: str) -> str:
    """`{digest}:tag`: a principal's keys share one Redis cluster slot."""
    digest = hashlib.sha256(who.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return f"{{{digest}}}:{rule.tag}"
