"""Rate and concurrency limits on `tools/call`: the rules and the middleware.

`RateLimiter` asks a `RateStore` once per call whether every matching
`RateRule` admits it, per principal (token subject, else client address).
"""

from __future__ import annotations

import hashlib
import math
import secrets
from collections.abc import Sequence
from typing import Final, Protocol

import attrs

from wymcp.core.schema import RESERVED_NAME
from wymcp.core.server._middleware import CallRecord, CallRefused, Next, Result
from wymcp.core.server._session import principal_key

RATE_LIMITED: Final = "rate_limited"
"""The refusal code (and metrics outcome) of a limited call."""

CONCURRENCY_RETRY: Final = 1.0
"""Seconds a call refused for concurrency is asked to wait (a slot frees when
a running call of the same principal ends, which no store can foresee)."""


@attrs.frozen
class RateRule:
    """One `RATE_LIMITS` rule: `count` calls per `period` seconds with `burst`.

    GCRA: one call every `period / count` seconds on average, and up to
    `burst` calls at once after a quiet spell; `concurrency` caps the calls
    of one principal running at once. `count` 0 means no rate, only the cap.
    `tool` (and `action`) narrow the rule; None matches every call.
    """

    tool: str | None = None
    action: str | None = None
    count: int = 0
    period: float = 1.0
    burst: int = 1
    concurrency: int | None = None

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
        )
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def matches(self, record: CallRecord) -> bool:
        """Whether this rule counts the call `record` names."""
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
    """Whom the limits count: the token's subject, else the client address."""
    subject = record.subject
    if subject is not None:
        return f"sub:{subject}"
    key = principal_key(record.principal)
    if key is not None:
        return f"principal:{key}"
    return f"addr:{record.peer}" if record.peer is not None else "anonymous"


class RateLimiter:
    """The `RATE_LIMITS` middleware: refuses a limited `tools/call`.

    Only `tools/call` is counted; `help` never is. A call that starts a task
    is counted once, when it is made; its concurrency slot is held while the
    request runs (the task's own run is bounded by MAX_TASKS_PER_PRINCIPAL).
    Answers the client sends to the server's requests are not calls.
    """

    def __init__(self, rules: Sequence[RateRule], store: RateStore) -> None:
        self.rules = tuple(rules)
        self.store = store
        self._calls = 0
        self._prefix = secrets.token_hex(8)
        """Makes each call's token unique across workers (Redis slots)."""

    async def __call__(self, call: CallRecord, call_next: Next) -> Result:
        if call.method != "tools/call" or call.tool == RESERVED_NAME:
            return await call_next()
        rules = [rule for rule in self.rules if rule.matches(call)]
        if not rules:
            return await call_next()
        who = principal_of(call)
        checks = [RateCheck(rule, _key(rule, who)) for rule in rules]
        self._calls += 1
        token = f"{self._prefix}.{self._calls}"
        wait = await self.store.acquire(checks, token)
        if wait is not None:
            retry_after_ms = max(1, math.ceil(wait * 1000))
            raise CallRefused(
                RATE_LIMITED,
                f"Too many calls: wait {retry_after_ms} ms, then call again.",
                retry_after_ms=retry_after_ms,
            )
        try:
            return await call_next()
        finally:
            if any(check.rule.concurrency is not None for check in checks):
                await self.store.release(checks, token)


def _key(rule: RateRule, who: str) -> str:
    """`{digest}:tag`: a principal's keys share one Redis cluster slot."""
    digest = hashlib.sha256(who.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return f"{{{digest}}}:{rule.tag}"
