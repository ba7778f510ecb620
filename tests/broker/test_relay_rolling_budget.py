"""BROKER: the relay budget holds over any 10 s, not per fixed window (issue 29).

Before, a counter expiring with its window let a session (or client) relay
`RELAY_BUDGET` at the end of one window and again at the start of the next:
twice the budget within about a second. Now every charge counts for 10-11 s
wherever a window would start, and `Retry-After` says when room is back.
"""

from __future__ import annotations

import asyncio
import secrets
import time

import redis.asyncio as aioredis

from broker.test_relay import answer
from wymcp.broker.redis._encoding import encode
from wymcp.broker.redis._relay import RELAY_LIMIT
from wymcp.broker.redis._relay_routes import (
    BODY_PREFIX,
    BUDGET_PREFIX,
    CLIENT_BUDGET_PREFIX,
    MIN_CHARGE,
    RELAY_BUDGET,
    RELAY_SLICE_MS,
    RELAY_SLICES,
    RELAY_WINDOW_MS,
    OverBudget,
    RelayRoutes,
    Room,
    Sent,
)

CANCELS = RELAY_BUDGET // MIN_CHARGE
"""Cancels (each charged `MIN_CHARGE`) one budget holds: 2,048."""
LONGEST_WAIT = (RELAY_WINDOW_MS + RELAY_SLICE_MS) // 1000
"""Seconds a charge counts at most, so the longest `Retry-After`."""


async def _until(started: float, seconds: float) -> None:
    await asyncio.sleep(max(0.0, started + seconds - time.monotonic()))


async def _burst(
    routes: RelayRoutes, session: str, client: str, count: int
) -> list[Sent | OverBudget]:
    return [await routes.cancel(session, client, b"c" * 64) for _ in range(count)]


async def test_the_budget_at_a_window_s_end_and_again_at_the_next_s_start_is_refused(
    redis_url,
):
    """Before: 2 x 2,048 cancels relayed within ~1.5 s (the window ends at 10 s)."""
    probe = aioredis.Redis.from_url(redis_url)
    routes = RelayRoutes(probe, "here", 60_000)
    session, client = secrets.token_urlsafe(32), secrets.token_hex(12)
    try:
        assert await routes.cancel(session, client, b"c" * 64) is Sent.RELAYED
        started = time.monotonic()  # the old window ended 10 s after this charge
        await _until(started, 8.5)
        late = await _burst(routes, session, client, CANCELS - 1)
        assert late == [Sent.RELAYED] * (CANCELS - 1)  # the whole budget, late
        await _until(started, 10.2)  # a fixed window has just begun anew
        early = await _burst(routes, session, client, CANCELS)
        relayed = early.count(Sent.RELAYED)
        # 10 s from 8.5 s holds all of `late`: only the first cancel's 4 KiB
        # (charged at 0 s, counted until 10-11 s) may have come back
        assert relayed <= 1, relayed  # before: 2,048
        await _until(started, 11.2)  # the first cancel counts no longer
        more = await _burst(routes, session, client, 2)
        assert relayed + more.count(Sent.RELAYED) == 1  # its 4 KiB, once
        refused = more[-1]
        assert isinstance(refused, OverBudget)
        # room comes back when `late`'s first slice stops counting, ≥ 18.5 s
        elapsed = time.monotonic() - started
        assert 18.5 - elapsed <= refused.retry_after <= LONGEST_WAIT, elapsed
        await _until(time.monotonic(), refused.retry_after)
        assert await routes.cancel(session, client, b"c" * 64) is Sent.RELAYED
        # each budget: a hash of the slices counted (the older ones deleted)
        for key in (f"{BUDGET_PREFIX}{{{session}}}", CLIENT_BUDGET_PREFIX + client):
            assert await probe.hlen(key) <= RELAY_SLICES + 1
            assert await probe.memory_usage(key) <= 512  # 12 slices: 256 B
    finally:
        await probe.aclose()


async def test_a_client_s_fresh_session_gets_no_fresh_rolling_budget(redis_url):
    probe = aioredis.Redis.from_url(redis_url)
    routes = RelayRoutes(probe, "here", 60_000)
    client = secrets.token_hex(12)
    sessions = [secrets.token_urlsafe(32) for _ in range(2)]
    try:
        first = await _burst(routes, sessions[0], client, CANCELS)
        assert first == [Sent.RELAYED] * CANCELS
        refused = await routes.cancel(sessions[1], client, b"c" * 64)
        assert isinstance(refused, OverBudget)
        assert 1 <= refused.retry_after <= LONGEST_WAIT
    finally:
        await probe.aclose()


async def test_an_answer_over_the_room_left_is_told_when_it_would_fit(redis_url):
    """The room is read before the answer is encoded; the wait is for its size."""
    probe = aioredis.Redis.from_url(redis_url)
    routes = RelayRoutes(probe, "here", 60_000)
    session = secrets.token_urlsafe(32)
    rids = [f"srv-Rolling{n:04d}" for n in range(9)]
    size = RELAY_LIMIT - 4096
    try:
        for rid in rids:
            await routes.asked_here(session, rid)
        started = time.monotonic()
        for rid in rids[:7]:
            body = encode(answer(rid, {"t": "x" * (size - 60)}))
            assert await routes.answer(session, rid, b"h", body) is Sent.RELAYED
        room = await routes.outstanding(session, rids[7])
        assert isinstance(room, Room)
        assert room.budget == RELAY_BUDGET - sum(b for _, b in room.frees)
        assert room.refusal(room.budget) is None  # what is left fits at once
        too_big = room.refusal(room.budget + 1)
        assert isinstance(too_big, OverBudget)  # one byte more: the oldest slice
        # the first answer counts for 10 s at least after it was charged
        elapsed = time.monotonic() - started
        assert 10 - elapsed <= too_big.retry_after <= LONGEST_WAIT, elapsed
    finally:
        for rid in rids:
            routes.forget(session, rid)
        await routes.aclose()
        for key in await probe.keys(f"{BODY_PREFIX}{{{session}}}:*"):
            await routes.take(key.decode())  # uncounted from the bodies' share
        await probe.aclose()
