"""The rate and concurrency state of `RATE_LIMITS` in this process's memory.

Exact within one process. The rate state is one float per (rule, principal)
in an LRU of at most `max_keys` entries; the concurrency counts hold only the
principals with a call running.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Final

from wymcp.core.server._rate_limits import CONCURRENCY_RETRY, RateCheck

MAX_KEYS: Final = 10_000
"""The most (rule, principal) rate states kept; the least recently used go."""


class LocalRates:
    """GCRA and concurrency counts in memory; see the module docstring."""

    def __init__(
        self, *, max_keys: int = MAX_KEYS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_keys = max_keys
        self.clock = clock
        self._arrivals: OrderedDict[str, float] = OrderedDict()
        """Each key's theoretical arrival time (GCRA's one number)."""
        self._running: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._arrivals) + len(self._running)

    async def acquire(self, checks: Sequence[RateCheck], token: str) -> float | None:  # noqa: ARG002 - counts, not tokens
        """Spend every check's rate and take its slot, or the seconds to wait."""
        return self.decide(checks)

    def decide(self, checks: Sequence[RateCheck]) -> float | None:
        """`acquire`, synchronously: one decision, nothing spent when refused."""
        now = self.clock()
        wait = 0.0
        arrivals: list[tuple[str, float]] = []
        for check in checks:
            rule = check.rule
            cap = rule.concurrency
            if cap is not None and self._running.get(check.key, 0) >= cap:
                wait = max(wait, CONCURRENCY_RETRY)
            if rule.count:
                interval = rule.interval
                due = max(self._arrivals.get(check.key, now), now)
                # compared before adding `interval`: (now + i) - now - i is not
                # always 0 in floating point, and a fresh key was refused
                late = due - now - interval * (rule.burst - 1)
                if late > 0:
                    wait = max(wait, late)
                arrivals.append((check.key, due + interval))
        if wait > 0:
            return wait
        for key, arrival in arrivals:
            self._arrivals[key] = arrival
            self._arrivals.move_to_end(key)
        while len(self._arrivals) > self.max_keys:
            self._arrivals.popitem(last=False)
        for check in checks:
            if check.rule.concurrency is not None:
                self._running[check.key] = self._running.get(check.key, 0) + 1
        return None

    def hold(self, checks: Sequence[RateCheck]) -> None:
        """Count a call admitted elsewhere (a Redis slot) as running here."""
        for check in checks:
            if check.rule.concurrency is not None:
                self._running[check.key] = self._running.get(check.key, 0) + 1

    async def release(self, checks: Sequence[RateCheck], token: str) -> None:  # noqa: ARG002 - the RateStore signature
        """Free the concurrency slots `acquire` took."""
        self.free(checks)

    def free(self, checks: Sequence[RateCheck]) -> None:
        """`release`, synchronously."""
        for check in checks:
            if check.rule.concurrency is None:
                continue
            left = self._running.get(check.key, 0) - 1
            if left > 0:
                self._running[check.key] = left
            else:
                self._running.pop(check.key, None)
