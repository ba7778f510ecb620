"""What every `TaskStore` must do, as checks any store's tests run.

`tests/core_server/test_task_store.py` runs them on `MemoryTaskStore`,
`tests/broker/test_tasks_store.py` on the Redis store: the engine relies on
exactly this, whichever store holds its tasks.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from wymcp.core.server import (
    EncodedJSON,
    TaskLimitError,
    TaskRecord,
    TaskStore,
    encode_json,
)

MakeStore = Callable[..., Awaitable[TaskStore]]
"""`await make(max_tasks=..., max_per_principal=..., memory=...,
memory_per_principal=...)`: a new, empty store."""
KIB = 1024
RECORD = 2048
"""What each ended task is charged besides its result (`RECORD_BYTES`)."""

_ids = itertools.count()


def record(
    principal: str | None,
    *,
    ttl: float = 60.0,
    now: float = 0.0,
    peer: str | None = None,
) -> TaskRecord:
    """A new `working` task of `principal` (an id no other test uses).

    Counted against the principal, or without one against `peer`.
    """
    counted = f"principal:{principal}" if principal is not None else None
    if counted is None and peer is not None:
        counted = f"peer:{peer}"
    return TaskRecord(
        counted_as=counted,
        task_id=f"contract{next(_ids)}x{id(object()):x}",
        principal=principal,
        created_at=1_700_000_000.25,
        updated_at=1_700_000_000.25,
        expires_at=now + ttl,
        ttl_ms=int(ttl * 1000),
        poll_interval_ms=1000,
    )


QUESTION: dict[str, Any] = {"method": "elicitation/create", "params": {"m": 1}}


async def a_record_is_only_found_by_its_principal(make: MakeStore) -> None:
    store = await make()
    alice = record("sub:alice")
    anonymous = record(None)
    await store.create(alice)
    await store.create(anonymous)
    found = await store.get(alice.task_id, "sub:alice")
    assert found is not None
    assert (found.task_id, found.status, found.principal) == (
        alice.task_id,
        "working",
        "sub:alice",
    )
    assert (found.ttl_ms, found.poll_interval_ms) == (60_000, 1000)
    assert found.created_at == pytest.approx(1_700_000_000.25)
    assert await store.get(alice.task_id, "sub:bob") is None
    assert await store.get(alice.task_id, None) is None
    assert await store.get(anonymous.task_id, "sub:alice") is None
    assert await store.get(anonymous.task_id, None) is not None
    assert await store.get("never-made", "sub:alice") is None


async def the_per_principal_cap_leaves_others_free(make: MakeStore) -> None:
    store = await make(max_tasks=10, max_per_principal=2)
    await store.create(record("sub:alice"))
    await store.create(record("sub:alice"))
    with pytest.raises(TaskLimitError, match="this caller"):
        await store.create(record("sub:alice"))
    await store.create(record("sub:bob"))


async def the_total_cap(make: MakeStore) -> None:
    store = await make(max_tasks=2, max_per_principal=5)
    await store.create(record("sub:alice"))
    await store.create(record("sub:bob"))
    with pytest.raises(TaskLimitError, match="the server"):
        await store.create(record("sub:carol"))


async def questions_answers_and_taking_them(make: MakeStore) -> None:
    store = await make()
    task = record("sub:alice")
    await store.create(task)
    assert await store.ask(task.task_id, {"a-1": QUESTION, "b-1": QUESTION}, 5.0)
    parked = await store.get(task.task_id, "sub:alice")
    assert parked is not None
    assert parked.status == "input_required"
    assert parked.input_requests == {"a-1": QUESTION, "b-1": QUESTION}
    assert parked.updated_at == pytest.approx(5.0)
    assert await store.take(task.task_id, ["a-1", "b-1"]) is None
    # an answer to a question never asked is ignored
    assert not await store.answer(task.task_id, {"zz-1": {"action": "accept"}}, 6.0)
    assert await store.answer(task.task_id, {"a-1": {"action": "accept"}}, 6.0)
    half = await store.get(task.task_id, "sub:alice")
    assert half is not None
    assert (half.status, list(half.input_requests)) == ("input_required", ["b-1"])
    assert await store.take(task.task_id, ["a-1", "b-1"]) is None
    # answering again an answered question changes nothing
    assert not await store.answer(task.task_id, {"a-1": {"action": "decline"}}, 7.0)
    assert await store.answer(task.task_id, {"b-1": {"action": "cancel"}}, 8.0)
    going = await store.get(task.task_id, "sub:alice")
    assert going is not None
    assert (going.status, going.input_requests) == ("working", {})
    taken = await store.take(task.task_id, ["a-1", "b-1"])
    assert taken == {"a-1": {"action": "accept"}, "b-1": {"action": "cancel"}}
    assert await store.take(task.task_id, ["a-1"]) is None  # taken once


async def an_end_is_kept(make: MakeStore) -> None:
    store = await make()
    task = record("sub:alice")
    await store.create(task)
    await store.progress(task.task_id, "Half way (1 of 2)", 2.0)
    shown = await store.get(task.task_id, "sub:alice")
    assert shown is not None
    assert shown.status_message == "Half way (1 of 2)"
    assert await store.ask(task.task_id, {"a-1": QUESTION}, 3.0)
    assert await store.finish(task.task_id, "cancelled", at=4.0, message="Stop.")
    result = EncodedJSON(b'{"content":[{"type":"text","text":"late"}]}')
    assert not await store.finish(task.task_id, "completed", at=5.0, result=result)
    assert not await store.ask(task.task_id, {"b-2": QUESTION}, 6.0)
    assert not await store.answer(task.task_id, {"a-1": {"action": "accept"}}, 6.0)
    await store.progress(task.task_id, "ignored", 7.0)
    ended = await store.get(task.task_id, "sub:alice")
    assert ended is not None
    assert (ended.status, ended.status_message, ended.result) == (
        "cancelled",
        "Stop.",
        None,
    )
    assert ended.input_requests == {}
    assert ended.updated_at == pytest.approx(4.0)
    assert ended.terminal


async def a_result_and_an_error_are_kept_as_given(make: MakeStore) -> None:
    store = await make()
    done, failed = record("sub:alice"), record("sub:alice")
    await store.create(done)
    await store.create(failed)
    result = {
        "content": [{"type": "text", "text": "é\u2028\x00 ünïcode"}],
        "structuredContent": {"n": 1.5, "big": 10**30, "none": None},
        "isError": False,
    }
    error = {"code": -32603, "message": "broken", "data": {"why": ["x"]}}
    written = EncodedJSON(encode_json(result))
    assert await store.finish(done.task_id, "completed", at=9.0, result=written)
    assert await store.finish(failed.task_id, "failed", at=9.0, error=error)
    got = await store.get(done.task_id, "sub:alice")
    assert got is not None
    assert (got.status, got.result, got.error) == ("completed", written, None)
    assert got.result is not None
    assert got.result.value() == result
    got = await store.get(failed.task_id, "sub:alice")
    assert got is not None
    assert (got.status, got.result, got.error) == ("failed", None, error)


def blob(size: int) -> EncodedJSON:
    """A result whose JSON text takes `size` bytes."""
    text = encode_json({"content": [{"type": "text", "text": ""}]})
    filler = "x" * (size - len(text))
    return EncodedJSON(encode_json({"content": [{"type": "text", "text": filler}]}))


async def ended_tasks_leave_the_caps(make: MakeStore) -> None:
    """Only running tasks count: a caller whose tasks ended can start more,
    and one anonymous caller's tasks never count against another's."""
    store = await make(max_tasks=3, max_per_principal=2)
    first, second = record(None, peer="10.0.0.1"), record(None, peer="10.0.0.1")
    await store.create(first)
    await store.create(second)
    with pytest.raises(TaskLimitError, match="this caller"):
        await store.create(record(None, peer="10.0.0.1"))
    await store.create(record(None, peer="10.0.0.2"))  # another address: free
    with pytest.raises(TaskLimitError, match="the server"):
        await store.create(record(None, peer="10.0.0.3"))
    assert await store.finish(first.task_id, "cancelled", at=1.0)
    assert await store.finish(second.task_id, "completed", at=1.0, result=blob(100))
    await store.create(record(None, peer="10.0.0.1"))
    await store.create(record(None, peer="10.0.0.1"))
    kept = await store.get(second.task_id, None)
    assert kept is not None
    assert kept.status == "completed"


async def a_callers_oldest_ended_tasks_make_room_for_its_new_ones(
    make: MakeStore,
) -> None:
    store = await make(memory=1000 * KIB, memory_per_principal=100 * KIB)
    alice = [record("sub:alice") for _ in range(5)]
    bob = record("sub:bob")
    for task in [*alice, bob]:
        await store.create(task)
    assert await store.finish(bob.task_id, "completed", at=1.0, result=blob(40 * KIB))
    for task in alice:  # 40 KiB + 2 KiB each: two fit in alice's 100 KiB
        assert await store.finish(
            task.task_id, "completed", at=2.0, result=blob(40 * KIB)
        )
    gone = [await store.get(task.task_id, "sub:alice") is None for task in alice]
    assert gone == [True, True, True, False, False]
    assert await store.get(bob.task_id, "sub:bob") is not None


async def the_oldest_ended_tasks_of_all_make_room(make: MakeStore) -> None:
    store = await make(memory=100 * KIB, memory_per_principal=100 * KIB)
    tasks = [record(f"sub:p{n}") for n in range(4)]
    for task in tasks:
        await store.create(task)
    for task in tasks:
        assert await store.finish(
            task.task_id, "completed", at=1.0, result=blob(40 * KIB)
        )
    gone = [
        await store.get(task.task_id, f"sub:p{n}") is None
        for n, task in enumerate(tasks)
    ]
    assert gone == [True, True, False, False]


async def a_result_over_the_callers_budget_fails_its_task(make: MakeStore) -> None:
    store = await make(memory=1000 * KIB, memory_per_principal=100 * KIB)
    task, kept = record("sub:alice"), record("sub:alice")
    await store.create(task)
    await store.create(kept)
    assert await store.finish(kept.task_id, "completed", at=1.0, result=blob(KIB))
    assert await store.finish(task.task_id, "completed", at=2.0, result=blob(120 * KIB))
    failed = await store.get(task.task_id, "sub:alice")
    assert failed is not None
    assert (failed.status, failed.result) == ("failed", None)
    assert failed.error is not None
    assert failed.error["code"] == -32603
    assert "TASK_MEMORY_BUDGET_PER_PRINCIPAL" in failed.error["message"]
    assert await store.get(kept.task_id, "sub:alice") is not None  # nothing evicted


CHECKS = [
    a_record_is_only_found_by_its_principal,
    the_per_principal_cap_leaves_others_free,
    the_total_cap,
    questions_answers_and_taking_them,
    an_end_is_kept,
    a_result_and_an_error_are_kept_as_given,
    ended_tasks_leave_the_caps,
    a_callers_oldest_ended_tasks_make_room_for_its_new_ones,
    the_oldest_ended_tasks_of_all_make_room,
    a_result_over_the_callers_budget_fails_its_task,
]
"""Every check of the contract, for `pytest.mark.parametrize`."""
