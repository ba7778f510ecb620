"""`RATE_LIMITS` decided in Redis, so the limits hold across every worker.

One Lua script per decision, on Redis's clock; keys expire when they stop
limiting; a held slot's lease is renewed while its call's work runs. When
Redis fails, `on_error` ("open": this worker's `LocalRates`; "closed":
refuse) decides. Keys and TTLs: `docs/operations.md`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Sequence
from typing import Final

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from wymcp.broker.redis._probe import ProbedRedis
from wymcp.core.server import CONCURRENCY_RETRY, LocalRates, RateCheck

logger = logging.getLogger("wymcp.broker.redis")

PREFIX: Final = "wymcp:rl:"
CLOSED_RETRY: Final = 1.0
"""Seconds a call refused because Redis failed ("closed") is asked to wait."""
_TIMEOUT: Final = 1.0
"""Seconds a decision waits for Redis before the outage policy applies."""

_ACQUIRE: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local lease = tonumber(ARGV[2])
local n = #KEYS / 2
local wait = 0
local arrivals = {}
for i = 1, n do
  local interval = tonumber(ARGV[3 * i])
  local burst = tonumber(ARGV[3 * i + 1])
  local cap = tonumber(ARGV[3 * i + 2])
  if cap > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[2 * i], '-inf', now)
    if redis.call('ZCARD', KEYS[2 * i]) >= cap then
      wait = math.max(wait, tonumber(ARGV[3 * n + 3]))
    end
  end
  if interval > 0 then
    local tat = tonumber(redis.call('GET', KEYS[2 * i - 1]) or now) or now
    if tat < now then tat = now end
    local arrival = tat + interval
    local late = tat - now - interval * (burst - 1)
    if late > 0 then wait = math.max(wait, late) end
    arrivals[i] = arrival
  end
end
if wait > 0 then return tostring(wait) end
for i = 1, n do
  if arrivals[i] then
    local ttl = math.ceil(arrivals[i] - now) + 1
    redis.call('SET', KEYS[2 * i - 1], string.format('%.17g', arrivals[i]), 'PX', ttl)
  end
  if tonumber(ARGV[3 * i + 2]) > 0 then
    redis.call('ZADD', KEYS[2 * i], now + lease, ARGV[1])
    redis.call('PEXPIRE', KEYS[2 * i], math.ceil(lease))
  end
end
return false
"""

_RENEW: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local lease = tonumber(ARGV[2])
for i = 1, #KEYS do
  if redis.call('ZADD', KEYS[i], 'XX', 'CH', now + lease, ARGV[1]) > 0 then
    redis.call('PEXPIRE', KEYS[i], math.ceil(lease))
  end
end
return 0
"""

_RELEASE: Final = """
for i = 1, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 0
"""


class RedisRates:
    """The `RateStore` of every worker: see the module docstring."""

    def __init__(
        self,
        url: str,
        *,
        lease: float,
        on_error: str = "open",
        client: aioredis.Redis | None = None,
    ) -> None:
        self.client: aioredis.Redis = client or ProbedRedis.from_url(
            url, socket_timeout=_TIMEOUT, socket_connect_timeout=_TIMEOUT
        )
        self.lease = lease
        self.on_error = on_error
        self.local = LocalRates()
        """This worker's own limits, what "open" falls back to."""
        self._local_tokens: set[str] = set()
        """Calls admitted by `local` (released there); at most those running."""
        self._down = False
        self._release_failing = False
        """A release failed and was logged: the next ones are not (one per outage)."""
        self._renewing: dict[str, asyncio.Task[None]] = {}
        """The lease renewal of each slot held in Redis, by call token."""
        self._acquire = self.client.register_script(_ACQUIRE)
        self._renew = self.client.register_script(_RENEW)
        self._release = self.client.register_script(_RELEASE)

    async def acquire(self, checks: Sequence[RateCheck], token: str) -> float | None:
        """One atomic decision in Redis; on failure, the outage policy."""
        keys: list[str] = []
        args: list[str | float | int] = [token, self.lease * 1000]
        for check in checks:
            rule = check.rule
            keys += [f"{PREFIX}{check.key}:r", f"{PREFIX}{check.key}:c"]
            args += [rule.interval * 1000, rule.burst, rule.concurrency or 0]
        args.append(CONCURRENCY_RETRY * 1000)
        try:
            waited = await self._acquire(keys=keys, args=args)
        except (RedisError, OSError) as error:
            return self._failed(error, checks, token)
        if self._down:
            self._down = False
            logger.warning("wymcp: RATE_LIMITS are decided in Redis again")
        if waited is None:
            keys = [f"{PREFIX}{c.key}:c" for c in checks if c.rule.concurrency]
            if keys:
                self._renewing[token] = asyncio.create_task(
                    self._keep(keys, token), name="wymcp-rate-lease"
                )
                # counted here too, so an outage's local decisions see the
                # calls this worker already runs under a Redis slot
                self.local.hold(checks)
            return None
        return float(waited) / 1000

    async def _keep(self, keys: list[str], token: str) -> None:
        """Renew the slot's lease every third of it until the call releases it.

        One script per renewal (`ZADD XX` and `PEXPIRE` per key); a failed
        renewal is tried again a third of a lease later, so one outage
        shorter than two thirds of the lease loses no slot.
        """
        while True:
            await asyncio.sleep(self.lease / 3)
            try:
                await self._renew(keys=keys, args=[token, self.lease * 1000])
            except (RedisError, OSError) as error:
                self._log_release_failure(error, "renewed")
            else:
                self._release_failing = False

    def _failed(
        self, error: Exception, checks: Sequence[RateCheck], token: str
    ) -> float | None:
        if not self._down:
            self._down = True
            logger.error(
                "wymcp: RATE_LIMITS: Redis failed (%s); calls are %s until it "
                "answers (RATE_LIMIT_ON_REDIS_ERROR = %r)",
                type(error).__name__,
                "decided by this worker's own limits"
                if self.on_error == "open"
                else "refused",
                self.on_error,
            )
        if self.on_error != "open":
            return CLOSED_RETRY
        wait = self.local.decide(checks)
        if wait is None and any(c.rule.concurrency is not None for c in checks):
            self._local_tokens.add(token)
        return wait

    async def release(self, checks: Sequence[RateCheck], token: str) -> None:
        """Free the slots the call took (a lapsed lease frees them anyway)."""
        if token in self._local_tokens:
            self._local_tokens.discard(token)
            self.local.free(checks)
            return
        renewal = self._renewing.pop(token, None)
        if renewal is not None:
            self.local.free(checks)
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal
        keys = [f"{PREFIX}{c.key}:c" for c in checks if c.rule.concurrency]
        try:
            await self._release(keys=keys, args=[token])
        except (RedisError, OSError) as error:
            self._log_release_failure(error, "freed")
        else:
            self._release_failing = False

    def _log_release_failure(self, error: Exception, verb: str) -> None:
        """One warning per outage, not one traceback per call."""
        if self._release_failing:
            return
        self._release_failing = True
        logger.warning(
            "wymcp: RATE_LIMITS: a concurrency slot could not be %s in Redis "
            "(%s: %s); it lapses after %g s. Logged once until a release succeeds.",
            verb,
            type(error).__name__,
            str(error)[:200],
            self.lease,
        )

    async def aclose(self) -> None:
        """Stop renewing leases (those slots lapse) and close the connections."""
        renewals = list(self._renewing.values())
        self._renewing.clear()
        for renewal in renewals:
            renewal.cancel()
        await asyncio.gather(*renewals, return_exceptions=True)
        await self.client.aclose()


def lease_for(call_timeout: float | None) -> float:
    """Seconds a concurrency slot is held at most (a crashed worker's lapse)."""
    return 600.0 if call_timeout is None else max(60.0, math.ceil(call_timeout * 2))
