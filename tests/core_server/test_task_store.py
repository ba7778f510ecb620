"""The in-memory task store: the store contract, expiry by TTL, and memory
that stays bounded under churn.
"""

from __future__ import annotations

import pytest

from task_store_contract import CHECKS, blob, record
from wymcp.core.server import MemoryTaskStore


async def make(**caps: int) -> MemoryTaskStore:
    """A store with a clock that never moves (expiry is tested below)."""
    return MemoryTaskStore(clock=lambda: 0.0, **caps)


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
async def test_the_store_contract(check):
    await check(make)


async def test_expired_records_are_dropped_and_free_their_slot():
    now = [0.0]
    store = MemoryTaskStore(max_tasks=100, max_per_principal=1, clock=lambda: now[0])
    first = record("alice", now=now[0], ttl=10.0)
    await store.create(first)
    now[0] = 9.9
    assert await store.get(first.task_id, "alice") is not None
    now[0] = 10.0
    assert await store.get(first.task_id, "alice") is None
    await store.create(record("alice", now=now[0], ttl=10.0))
    assert len(store) == 1


async def test_memory_stays_bounded_under_churn():
    now = [0.0]
    store = MemoryTaskStore(max_tasks=50, max_per_principal=50, clock=lambda: now[0])
    for n in range(2000):
        now[0] = float(n)
        await store.create(record(f"p{n % 7}", now=now[0], ttl=20.0))
        assert len(store) <= 21
        assert len(store._expiry) <= 21  # the expiry heap is bounded too
    assert store.sweep() == 0
    now[0] = 10_000.0
    assert store.sweep() == 20
    assert len(store) == 0


async def test_an_expired_ended_task_no_longer_counts_against_the_budget():
    now = [0.0]
    store = MemoryTaskStore(memory=1 << 20, clock=lambda: now[0])
    short = record("alice", now=now[0], ttl=10.0)
    await store.create(short)
    assert await store.finish(short.task_id, "completed", at=1.0, result=blob(600_000))
    assert store.kept_bytes == 600_000 + 2048
    now[0] = 10.0
    assert store.sweep() == 1
    assert store.kept_bytes == 0
    kept = record("alice", now=now[0], ttl=10.0)
    await store.create(kept)
    assert await store.finish(kept.task_id, "completed", at=2.0, result=blob(600_000))
    assert (await store.get(kept.task_id, "alice")) is not None
