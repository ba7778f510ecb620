"""The Redis task store: the store contract, leases, expiry, and changes made
on one store (one worker) reaching the work running behind another.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from redis_server import free_port
from task_store_contract import CHECKS, QUESTION, blob, record
from wymcp.broker.redis._encoding import encode
from wymcp.broker.redis._task_store import (
    ALL_TASKS,
    KEPT,
    KEPT_BYTES,
    LEASE_PREFIX,
    LOST,
    TASK_PREFIX,
    RedisTaskStore,
)
from wymcp.core.server import EncodedJSON, TaskLimitError, TaskStoreUnavailableError
from wymcp.core.server._task_store import RECORD_BYTES


class Events:
    """A `TaskEvents` that records what the store told it."""

    def __init__(self) -> None:
        self.stops: list[str] = []
        self.answers: list[str] = []
        self.changed = asyncio.Event()

    def stopped(self, task_id: str) -> None:
        self.stops.append(task_id)
        self.changed.set()

    def answered(self, task_id: str) -> None:
        self.answers.append(task_id)
        self.changed.set()


@pytest.fixture
async def db(redis_url: str) -> AsyncIterator[str]:
    """Database 1 of the session's server, empty: caps count only this test."""
    url = redis_url.rsplit("/", 1)[0] + "/1"
    client = aioredis.Redis.from_url(url)
    await client.flushdb()
    try:
        yield url
    finally:
        await client.flushdb()
        await client.aclose()


@pytest.fixture
async def stores(db: str) -> AsyncIterator[Any]:
    """`await make(...)`: a new store on the test's database, closed after."""
    made: list[RedisTaskStore] = []

    async def make(
        *,
        max_tasks: int = 1000,
        max_per_principal: int = 100,
        lease: float = 10.0,
        memory: int = 256 << 20,
        memory_per_principal: int = 32 << 20,
    ) -> RedisTaskStore:
        store = RedisTaskStore(
            db,
            max_tasks=max_tasks,
            max_per_principal=max_per_principal,
            lease=lease,
            memory=memory,
            memory_per_principal=memory_per_principal,
        )
        made.append(store)
        return store

    yield make
    for store in made:
        await store.aclose()


@pytest.fixture
async def raw(db: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(db)
    yield client
    await client.aclose()


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
async def test_the_store_contract(check, stores):
    await check(stores)


async def test_caps_hold_across_workers(stores):
    one = await stores(max_tasks=3, max_per_principal=2)
    two = await stores(max_tasks=3, max_per_principal=2)
    await one.create(record("sub:alice"))
    await two.create(record("sub:alice"))
    with pytest.raises(Exception, match="this caller"):
        await one.create(record("sub:alice"))
    await one.create(record("sub:bob"))
    with pytest.raises(Exception, match="the server"):
        await two.create(record("sub:carol"))


async def test_a_task_lives_as_long_as_its_ttl_then_frees_its_slot(stores, raw):
    store = await stores(max_tasks=1)
    short = record("sub:alice", ttl=0.3)
    await store.create(short)
    assert 0 < await raw.pttl(TASK_PREFIX + short.task_id) <= 300
    assert await store.get(short.task_id, "sub:alice") is not None
    for _ in range(100):
        if not await raw.exists(TASK_PREFIX + short.task_id):
            break
        await asyncio.sleep(0.05)
    assert await store.get(short.task_id, "sub:alice") is None
    # the expired task no longer counts against MAX_TASKS
    await store.create(record("sub:alice"))
    assert await raw.zcard(ALL_TASKS) == 1


async def test_an_expired_ended_task_no_longer_counts_against_the_budget(stores, raw):
    store = await stores(memory=1 << 20, memory_per_principal=1 << 20)
    short = record("sub:alice", ttl=0.3)
    await store.create(short)
    assert await store.finish(short.task_id, "completed", at=1.0, result=blob(600_000))
    assert int(await raw.hget(KEPT_BYTES, "*")) == 600_000 + 2048
    for _ in range(100):
        if not await raw.exists(TASK_PREFIX + short.task_id):
            break
        await asyncio.sleep(0.05)
    kept = record("sub:alice")
    await store.create(kept)  # 600 KB more: fits only if the expired one left
    assert await store.finish(kept.task_id, "completed", at=2.0, result=blob(600_000))
    assert int(await raw.hget(KEPT_BYTES, "*")) == 600_000 + 2048
    assert await raw.zcard(KEPT) == 1
    assert (await store.get(kept.task_id, "sub:alice")).status == "completed"


async def test_a_running_task_whose_lease_ran_out_is_failed_by_its_reader(stores, raw):
    worker = await stores(lease=10.0)
    reader = await stores(max_per_principal=1)
    task = record("sub:alice")
    await worker.create(task)
    assert await raw.exists(LEASE_PREFIX + task.task_id)
    await raw.delete(LEASE_PREFIX + task.task_id)  # as if the worker died
    failed = await reader.get(task.task_id, "sub:alice")
    assert failed is not None
    assert failed.status == "failed"
    assert failed.error == {"code": -32603, "message": LOST}
    assert failed.updated_at >= failed.created_at
    # failed, it no longer runs: its caller may start another at once
    assert await raw.zcard(ALL_TASKS) == 0
    await reader.create(record("sub:alice"))


async def test_the_worker_renews_its_leases_and_hears_it_lost_one(stores, raw):
    worker = await stores(lease=10.0)
    events = Events()
    worker.attach(events)
    kept, lost = record("sub:a"), record("sub:a")
    await worker.create(kept)
    await worker.create(lost)
    await raw.pexpire(LEASE_PREFIX + kept.task_id, 50)
    await raw.delete(LEASE_PREFIX + lost.task_id)
    await (await stores()).get(lost.task_id, "sub:a")  # a reader fails it
    await worker.renew()
    assert await raw.pttl(LEASE_PREFIX + kept.task_id) > 5000
    assert events.stops == [lost.task_id]
    assert events.answers == [kept.task_id]  # a running task looks for answers
    # a lease that ran out unread is renewed: nobody has failed the task
    await raw.delete(LEASE_PREFIX + kept.task_id)
    await worker.renew()
    assert await raw.exists(LEASE_PREFIX + kept.task_id)
    assert (await worker.get(kept.task_id, "sub:a")).status == "working"


async def test_a_cancel_on_another_worker_reaches_the_running_one(stores):
    worker = await stores()
    other = await stores()
    events = Events()
    worker.attach(events)
    task = record("sub:a")
    await worker.create(task)  # starts listening
    await asyncio.sleep(0.2)  # the subscription is in place
    assert await other.finish(task.task_id, "cancelled", at=1.0, message="Stop.")
    await asyncio.wait_for(events.changed.wait(), 5)
    assert events.stops == [task.task_id]
    late = EncodedJSON(b"{}")
    assert not await worker.finish(task.task_id, "completed", at=2.0, result=late)
    assert (await other.get(task.task_id, "sub:a")).status == "cancelled"


async def test_answers_on_another_worker_wake_the_running_one(stores):
    worker = await stores()
    other = await stores()
    events = Events()
    worker.attach(events)
    task = record("sub:a")
    await worker.create(task)
    await asyncio.sleep(0.2)
    assert await worker.ask(task.task_id, {"q-1": QUESTION}, 1.0)
    assert await other.answer(task.task_id, {"q-1": {"action": "accept"}}, 2.0)
    await asyncio.wait_for(events.changed.wait(), 5)
    assert events.answers == [task.task_id]
    assert await worker.take(task.task_id, ["q-1"]) == {"q-1": {"action": "accept"}}


async def test_an_end_redis_cannot_take_is_written_when_it_can(stores, raw):
    worker = await stores()
    task = record("sub:a")
    await worker.create(task)
    real = worker._finish

    async def down(**_: Any) -> Any:
        raise TaskStoreUnavailableError

    worker._finish = down
    result = EncodedJSON(b'{"content":[],"isError":false}')
    assert await worker.finish(task.task_id, "completed", at=3.0, result=result)
    assert (await worker.get(task.task_id, "sub:a")).status == "working"
    worker._finish = real
    await worker.renew()
    done = await worker.get(task.task_id, "sub:a")
    assert (done.status, done.result) == ("completed", result)
    assert not await raw.exists(LEASE_PREFIX + task.task_id)


async def test_odd_task_ids_never_reach_redis(stores):
    store = await stores()
    for task_id in ("", "a" * 65, "x y", "é", "a\nb", "*"):
        assert await store.get(task_id, None) is None


async def test_what_is_stored_is_json_and_the_principal_key(stores, raw):
    store = await stores()
    task = record('sub:"quoted"')
    await store.create(task)
    stored = await raw.hgetall(TASK_PREFIX + task.task_id)
    assert json.loads(stored[b"p"]) == 'sub:"quoted"'
    assert stored[b"s"] == b"working"


async def test_redis_down_is_unavailable_not_a_hang():
    store = RedisTaskStore(
        f"redis://127.0.0.1:{free_port()}/0",
        max_tasks=10,
        max_per_principal=10,
        lease=10.0,
    )
    try:
        with pytest.raises(TaskStoreUnavailableError):
            await store.create(record("sub:a"))
        with pytest.raises(TaskStoreUnavailableError):
            await store.get("abc", "sub:a")
        with pytest.raises(TaskStoreUnavailableError):
            await store.finish("abc", "cancelled", at=1.0)
    finally:
        await store.aclose()


async def test_polls_of_an_ended_task_share_the_result_still_held(stores):
    """Issue 29, attack F1: each poll read its own copy of a kept result.

    While an answer still holds the result (its client has not read it), a
    poll of the same task gets that same object, not one more copy; once
    nothing holds it, the next poll reads it afresh.
    """
    store = await stores()
    task = record("sub:alice")
    await store.create(task)
    assert await store.finish(task.task_id, "completed", at=1.0, result=blob(300_000))
    first = await store.get(task.task_id, "sub:alice")
    second = await store.get(task.task_id, "sub:alice")
    assert first is not None
    assert second is not None
    assert first.result is not None
    assert second.result is first.result
    held = first.result.data
    del first, second
    again = await store.get(task.task_id, "sub:alice")
    assert again is not None
    assert again.result is not None
    assert again.result.data == held


async def test_concurrent_polls_read_a_result_from_redis_once(stores, raw):
    """Issue 29, attack F1 with BROKER: 40 unread polls of a 15 MiB result
    each read it from Redis at once (Redis peak 212 MiB, worker +735 MiB).

    Polls of one ended task while its result is being read, or still held
    by an answer, read the task without it and share the one copy: ten at
    once send Redis's result bytes about once, not ten times.
    """
    store = await stores()
    task = record("sub:alice")
    await store.create(task)
    size = 300_000
    assert await store.finish(task.task_id, "completed", at=1.0, result=blob(size))

    async def sent() -> int:
        return int((await raw.info("stats"))["total_net_output_bytes"])

    before = await sent()
    polls = await asyncio.gather(
        *(store.get(task.task_id, "sub:alice") for _ in range(10))
    )
    grown = await sent() - before
    first = polls[0]
    assert first is not None
    assert first.result is not None
    assert all(poll is not None and poll.result is first.result for poll in polls)
    assert len(first.result.data) == size
    assert grown < 2 * size  # before: ten copies
    stranger = await store.get(task.task_id, "sub:mallory")
    assert stranger is None  # sharing never skips the principal's check


async def test_a_dead_workers_tasks_free_their_callers_slots_with_their_leases(stores):
    """Issue 29, attack F5: running tasks were counted until their TTL.

    A worker killed with its tasks running stops renewing their leases; the
    caps count running tasks by live lease, so the caller can start tasks
    on another worker once the leases ran out, with no `tasks/get` of the
    dead ones. A live worker's renewals keep its tasks counted.
    """
    live = await stores(max_per_principal=2, lease=0.3)
    held = [record("sub:alice", ttl=3600.0) for _ in range(2)]
    for task in held:
        await live.create(task)
    await asyncio.sleep(1.0)  # three lease periods, renewed every 0.1 s
    other = await stores(max_per_principal=2, lease=0.3)
    with pytest.raises(Exception, match="this caller"):
        await other.create(record("sub:alice"))
    await live.aclose()  # as if killed: no end written, no lease renewed
    await asyncio.sleep(0.5)  # the leases run out
    await other.create(record("sub:alice"))  # its slots are free again
    await other.create(record("sub:alice"))
    with pytest.raises(Exception, match="this caller"):
        await other.create(record("sub:alice"))


async def test_answers_waiting_are_charged_to_the_redis_budget(stores, raw):
    """Issue 29, attack F4 with BROKER: a half-answered task's answer sat in
    Redis outside every budget until TASK_TTL (+62 MiB of a 64 MB Redis).

    Waiting answers count in `wymcp:tasks-kept-bytes` with the ended tasks:
    past the caller's budget an answer is refused and nothing is written;
    taking, ending or expiring the task gives the bytes back.
    """
    store = await stores(memory=4 << 20, memory_per_principal=1 << 20)
    answer = {"action": "accept", "content": {"confirm": "x" * 200_000}}
    tasks, answered = [], []
    for n in range(8):
        task = record("sub:alice", ttl=1.5 if n == 0 else 60.0)
        await store.create(task)
        await store.ask(task.task_id, {"a-1": QUESTION, "b-1": QUESTION}, 1.0)
        tasks.append(task)
        try:
            answered.append(await store.answer(task.task_id, {"a-1": answer}, 2.0))
        except TaskLimitError:
            answered.append(False)
    assert answered == [True] * 5 + [False] * 3
    each = len(encode(answer))

    async def charged() -> int:
        return int(await raw.hget(KEPT_BYTES, "*") or 0)

    assert await charged() == 5 * each
    other = record("sub:bob")  # another caller is not locked out
    await store.create(other)
    await store.ask(other.task_id, {"a-1": QUESTION}, 1.0)
    assert await store.answer(other.task_id, {"a-1": answer}, 2.0)
    assert await charged() == 6 * each
    assert await store.finish(tasks[2].task_id, "cancelled", at=3.0)  # ended
    assert await charged() == 5 * each + RECORD_BYTES  # the ended record instead
    second = tasks[1]  # answered in full, then taken by its work
    assert await store.answer(second.task_id, {"b-1": answer}, 4.0)
    assert await store.take(second.task_id, ["a-1", "b-1"]) is not None
    assert await charged() == 4 * each + RECORD_BYTES
    await asyncio.sleep(1.6)  # the first task expired with its answer waiting
    assert await store.answer(tasks[5].task_id, {"a-1": answer}, 5.0)
    assert await charged() == 4 * each + RECORD_BYTES  # its bytes gave way
