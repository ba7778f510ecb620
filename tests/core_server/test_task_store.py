"""The in-memory task store: caps per principal and in all, expiry by TTL,
records only visible to their principal, memory that stays bounded.
"""

from __future__ import annotations

import pytest

from wymcp.core.server import MemoryTaskStore, TaskRecord
from wymcp.core.server._task_store import TaskLimitError


def record(
    task_id: str, principal: object, now: float, ttl: float = 60.0
) -> TaskRecord:
    return TaskRecord(
        task_id=task_id,
        principal=principal,
        created_at=0.0,
        updated_at=0.0,
        expires_at=now + ttl,
        ttl_ms=int(ttl * 1000),
        poll_interval_ms=1000,
    )


def test_a_record_is_only_found_by_its_principal():
    store = MemoryTaskStore(clock=lambda: 0.0)
    store.create(record("t1", "alice", 0.0))
    assert store.get("t1", "alice") is not None
    assert store.get("t1", "bob") is None
    assert store.get("t1", None) is None
    assert store.get("t2", "alice") is None


def test_the_per_principal_cap_leaves_others_free():
    store = MemoryTaskStore(max_tasks=10, max_per_principal=2, clock=lambda: 0.0)
    store.create(record("a1", "alice", 0.0))
    store.create(record("a2", "alice", 0.0))
    with pytest.raises(TaskLimitError, match="this caller"):
        store.create(record("a3", "alice", 0.0))
    store.create(record("b1", "bob", 0.0))
    assert len(store) == 3


def test_the_total_cap():
    store = MemoryTaskStore(max_tasks=2, max_per_principal=5, clock=lambda: 0.0)
    store.create(record("a1", "alice", 0.0))
    store.create(record("b1", "bob", 0.0))
    with pytest.raises(TaskLimitError, match="the server"):
        store.create(record("c1", "carol", 0.0))


def test_expired_records_are_dropped_and_free_their_slot():
    now = [0.0]
    store = MemoryTaskStore(max_tasks=100, max_per_principal=1, clock=lambda: now[0])
    store.create(record("a1", "alice", now[0], ttl=10.0))
    now[0] = 9.9
    assert store.get("a1", "alice") is not None
    now[0] = 10.0
    assert store.get("a1", "alice") is None
    store.create(record("a2", "alice", now[0], ttl=10.0))
    assert len(store) == 1


def test_memory_stays_bounded_under_churn():
    now = [0.0]
    store = MemoryTaskStore(max_tasks=50, max_per_principal=50, clock=lambda: now[0])
    for n in range(2000):
        now[0] = float(n)
        store.create(record(f"t{n}", f"p{n % 7}", now[0], ttl=20.0))
        assert len(store) <= 21
        assert len(store._expiry) <= 21  # the expiry heap is bounded too
    assert store.sweep() == 0
    now[0] = 10_000.0
    assert store.sweep() == 20
    assert len(store) == 0


def test_an_unhashable_principal_still_counts():
    store = MemoryTaskStore(max_per_principal=1, clock=lambda: 0.0)
    store.create(record("t1", {"sub": "x"}, 0.0))
    with pytest.raises(TaskLimitError):
        store.create(record("t2", {"sub": "x"}, 0.0))
    assert store.get("t1", {"sub": "x"}) is not None
