"""What ended tasks may hold (issue 29, items 10, 12 and 13), through the engine.

Results are kept as the JSON text written once and bound by
`task_memory_budget` (in all) and `task_memory_budget_per_principal`; only
running tasks count against the caps, anonymous callers by their address; a
timer sweeps tasks past their TTL with no request to do it.
"""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
import weakref
from typing import Any, ClassVar

from wymcp.core.schema import Tool
from wymcp.core.server import (
    EncodedJSON,
    Engine,
    EngineOptions,
    Exchange,
    Headers,
    MemoryTaskStore,
    TaskRecord,
)

from .conftest import FakeStream, modern_request
from .test_tasks import ASKING, TASKS, Asking, Client, settle

KIB = 1024
MIB = 1024 * KIB
RESULT = 256 * KIB
"""The text each export returns: a result of a little more as JSON."""


class Export(Tool):
    name = "export"
    description = "Returns RESULT bytes of text, as a task."
    task_support = "required"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return str(arguments.get("n", 0)) * RESULT  # a fresh string per call


class Waiting(Tool):
    name = "waiting"
    description = "Runs until cancelled, as a task."
    task_support = "required"
    stopped: ClassVar[list[str]] = []
    stop: ClassVar[asyncio.Event | None] = None

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            Waiting.stopped.append("cancelled")
            if Waiting.stop is not None:
                Waiting.stop.set()
            raise
        return None


def budget_engine(**options: Any) -> Engine:
    return Engine(tools=[Export, Waiting], options=EngineOptions(**options))


async def run_exports(engine: Engine, count: int, peers: int) -> list[str]:
    """`count` exports, from `peers` anonymous addresses in turn, run to their end."""
    ids = []
    for n in range(count):
        client = Client(engine, peer=f"10.0.0.{n % peers}")
        ids.append(await client.create("export", {"n": n % 10}))
        await settle()
    return ids


def traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def test_kept_results_stay_within_the_budget_when_the_calls_double():
    """Twice the exports add no more memory: the budget holds what is kept."""
    engine = budget_engine(
        task_memory_budget=4 * MIB, task_memory_budget_per_principal=2 * MIB
    )
    store = engine._tasks.store
    assert isinstance(store, MemoryTaskStore)
    await run_exports(engine, 4, 4)  # warm-up: code paths and caches
    tracemalloc.start()
    try:
        before = traced()
        await run_exports(engine, 40, 4)  # 10 MiB of results
        once = traced() - before
        await run_exports(engine, 40, 4)  # 10 MiB more
        twice = traced() - before
    finally:
        tracemalloc.stop()
    print(f"40 exports: +{once / MIB:.2f} MiB; 80: +{twice / MIB:.2f} MiB")  # noqa: T201 - the measured figure
    assert store.kept_bytes <= 4 * MIB
    assert once <= 4 * MIB + 512 * KIB
    assert twice <= once + 512 * KIB


async def test_a_caller_past_its_budget_loses_only_its_own_oldest_results():
    engine = budget_engine(
        task_memory_budget=16 * MIB, task_memory_budget_per_principal=MIB
    )
    other = Client(engine, peer="10.0.0.9")
    kept = await other.create("export", {"n": 9})
    await settle()
    flooder = await run_exports(engine, 12, 1)  # 3 MiB from 10.0.0.0
    assert (await other.get(kept))["status"] == "completed"
    flood = Client(engine, peer="10.0.0.0")
    _status, error = await flood.error("tasks/get", {"taskId": flooder[0]})
    assert error["code"] == -32602
    assert "TASK_MEMORY_BUDGET" in error["data"]["reason"]
    newest = await flood.get(flooder[-1])
    assert newest["result"]["content"][0]["text"] == "1" * RESULT


async def test_a_result_too_large_to_keep_fails_its_task_saying_why():
    engine = budget_engine(task_memory_budget_per_principal=128 * KIB)
    client = Client(engine, peer="10.0.0.1")
    task_id = await client.create("export", {})
    await settle()
    failed = await client.get(task_id)
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == -32603
    assert "TASK_MEMORY_BUDGET_PER_PRINCIPAL" in failed["error"]["message"]
    assert "result" not in failed


async def test_a_poll_copies_the_kept_text_and_never_encodes_the_result_again():
    engine = budget_engine()
    client = Client(engine, peer="10.0.0.1")
    task_id = await client.create("export", {"n": 3})
    await settle()
    shown = []
    for rid in (1, 2):
        body, headers = modern_request(
            "tasks/get", {"taskId": task_id}, rid, meta=_meta()
        )
        headers.append(("Mcp-Name", task_id))
        exchange = Exchange(method="POST", headers=Headers.of(headers), body=body)
        reply = await engine.post(exchange, FakeStream())
        shown.append(reply.body["result"]["result"])
    first, second = shown
    assert isinstance(first, EncodedJSON)
    assert second is first  # the same bytes, handed out again
    assert first.value()["content"][0]["text"] == "3" * RESULT


def _meta() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": TASKS,
    }


async def test_cancelled_tasks_free_their_slot_at_once():
    """100 instantly cancelled calls leave the caller (and everyone) free."""
    engine = budget_engine(max_tasks=10, max_tasks_per_principal=3)
    flooder = Client(engine, peer="10.0.0.66")
    for _ in range(100):
        task_id = await flooder.create("waiting")
        assert (await flooder.result("tasks/cancel", {"taskId": task_id})) is not None
    other = Client(engine, peer="10.0.0.1")
    assert await other.create("waiting")


async def test_anonymous_callers_are_counted_by_address():
    engine = budget_engine(max_tasks=10, max_tasks_per_principal=3)
    flooder = Client(engine, peer="10.0.0.66")
    for _ in range(3):
        await flooder.create("waiting")
    reply = await flooder.send("tools/call", {"name": "waiting", "arguments": {}})
    assert reply.status == 503
    assert "this caller runs as many tasks" in reply.body["error"]["message"]
    other = Client(engine, peer="10.0.0.1")
    assert await other.create("waiting")  # another address is not locked out
    signed = Client(engine, principal="alice", peer="10.0.0.66")
    assert await signed.create("waiting")  # a principal is counted as itself


async def test_work_past_its_ttl_stops_on_an_idle_server():
    """No request comes: the sweeping timer stops the work and forgets the task."""
    now = [1000.0]
    store = MemoryTaskStore(clock=lambda: now[0], sweep_every=0.01)
    engine = budget_engine(clock=lambda: now[0], task_ttl=60.0, task_store=store)
    Waiting.stopped.clear()
    Waiting.stop = asyncio.Event()
    await Client(engine, peer="10.0.0.1").create("waiting")
    await settle()
    now[0] += 61.0
    await asyncio.wait_for(Waiting.stop.wait(), 5.0)  # a bound on waiting only
    assert Waiting.stopped == ["cancelled"]
    assert len(store) == 0
    assert engine._tasks.running == {}
    await engine.aclose()


async def test_closing_the_engine_cancels_the_sweeping_timer():
    store = MemoryTaskStore(sweep_every=0.01)
    engine = budget_engine(task_store=store)
    await Client(engine, peer="10.0.0.1").create("waiting")
    assert store._sweeper is not None
    await engine.aclose()
    assert store._sweeper is None
    await asyncio.sleep(0.05)
    assert store._sweeper is None  # not armed again


async def test_an_ended_record_costs_about_what_it_is_charged():
    """RECORD_BYTES is at least what an ended task with a small result takes."""
    store = MemoryTaskStore(max_tasks=10_000, max_per_principal=10_000)
    result = EncodedJSON(b'{"content":[{"type":"text","text":"ok"}],"isError":false}')
    count = 2000
    tracemalloc.start()
    try:
        before = traced()
        for n in range(count):
            task = TaskRecord(
                task_id=f"{n:032x}",
                principal=None,
                counted_as=f"peer:10.0.{n // 256}.{n % 256}",
                created_at=1_700_000_000.0 + n,
                updated_at=1_700_000_000.0 + n,
                expires_at=3600.0 + n,
                ttl_ms=3_600_000,
                poll_interval_ms=1000,
            )
            await store.create(task)
            await store.finish(task.task_id, "completed", at=1.0 + n, result=result)
        each = (traced() - before) / count
    finally:
        tracemalloc.stop()
    print(f"an ended record with a small result: {each:.0f} bytes")  # noqa: T201 - the measured figure
    assert each <= 2048


async def test_a_forgotten_result_is_freed_without_the_cycle_collector():
    """Issue 29 attack F2: an ended task's run held its result through a cycle.

    `_Run.ctx` -> `ToolContext.task_starter` (the run's bound method) -> the
    run -> its record -> the result: only `gc.collect()` freed a result the
    store had forgotten. With the collector off, a forgotten result goes at
    once, and twice the exports add no more memory.
    """
    engine = budget_engine(
        task_memory_budget=4 * MIB, task_memory_budget_per_principal=MIB
    )
    store = engine._tasks.store
    assert isinstance(store, MemoryTaskStore)
    await run_exports(engine, 4, 1)  # warm-up
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        await run_exports(engine, 4, 1)
        watched = weakref.ref(next(iter(store.records())))
        await run_exports(engine, 16, 1)  # 5 MiB from one caller, 1 MiB kept
        assert watched() is None  # the forgotten record (and its result) freed
        once = tracemalloc.get_traced_memory()[0] - before
        await run_exports(engine, 20, 1)
        twice = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        gc.enable()
    print(f"gc off, 20 exports: +{once / MIB:.2f} MiB; 40: +{twice / MIB:.2f} MiB")  # noqa: T201 - the measured figure
    assert store.kept_bytes <= MIB
    assert once <= MIB + 512 * KIB
    assert twice <= once + 512 * KIB


ANSWER = json.dumps({"action": "accept", "content": {"confirm": [[]] * 50_000}})
"""An answer of ~200 KB of JSON that takes ~2.8 MB as Python values."""


async def half_answer(client: Client, count: int) -> list[int]:
    """`count` tasks asking two things; one answered large, never the other."""
    statuses = []
    for _ in range(count):
        task_id = await client.create("asking", caps=ASKING)
        await settle()
        first = min((await client.get(task_id, caps=ASKING))["inputRequests"])
        reply = await client.send(
            "tasks/update",
            {"taskId": task_id, "inputResponses": {first: json.loads(ANSWER)}},
            caps=ASKING,
        )
        statuses.append(reply.status)
    return statuses


async def test_answers_waiting_for_a_half_answered_task_are_charged_to_the_budget():
    """Issue 29, attack F4: a client answers one of two questions, largely.

    The work waits for the other answer until TASK_TTL; the answer it holds
    was in no budget (24 MiB per 1 MiB update). Answers waiting are kept as
    their JSON text and charged to the caller's budget: past it, an update
    is refused 503, twice the tasks add no memory, and another caller can
    still answer its own task.
    """
    engine = Engine(
        tools=[Asking],
        options=EngineOptions(
            task_memory_budget=8 * MIB, task_memory_budget_per_principal=MIB
        ),
    )
    flooder = Client(engine, peer="10.0.0.66")
    await half_answer(flooder, 2)  # warm-up
    tracemalloc.start()
    try:
        before = traced()
        first = await half_answer(flooder, 8)
        once = traced() - before
        second = await half_answer(flooder, 8)
        twice = traced() - before
    finally:
        tracemalloc.stop()
    print(f"8 half-answered tasks: +{once / MIB:.2f} MiB; 16: +{twice / MIB:.2f} MiB")  # noqa: T201 - the measured figure
    assert 503 in first
    assert set(second) == {503}  # the caller's budget is full of its answers
    assert once <= MIB + 512 * KIB
    assert twice <= once + 512 * KIB
    other = Client(engine, peer="10.0.0.1")
    assert await half_answer(other, 1) == [200]


async def test_an_answer_larger_than_a_task_keeps_is_refused_saying_why():
    engine = Engine(tools=[Asking], options=EngineOptions())
    client = Client(engine, peer="10.0.0.1")
    task_id = await client.create("asking", caps=ASKING)
    await settle()
    first = min((await client.get(task_id, caps=ASKING))["inputRequests"])
    huge = {"action": "accept", "content": {"confirm": "x" * 300_000}}
    _status, error = await client.error(
        "tasks/update",
        {"taskId": task_id, "inputResponses": {first: huge}},
        caps=ASKING,
    )
    assert error["code"] == -32602
    assert "more than a task keeps waiting" in error["data"]["reason"]
    still = await client.get(task_id, caps=ASKING)
    assert first in still["inputRequests"]  # not taken: the client may answer again


async def test_anonymous_ipv6_callers_are_counted_by_their_64():
    """Issue 29, attack F6: a host holds a whole IPv6 /64; counted per address,
    it could take every slot. Its addresses share one caller's cap."""
    engine = budget_engine(max_tasks=10, max_tasks_per_principal=3)
    for n in range(3):
        await Client(engine, peer=f"2001:db8:1:2::{n + 1}").create("waiting")
    same_64 = Client(engine, peer="2001:db8:1:2:ffff::9")
    reply = await same_64.send("tools/call", {"name": "waiting", "arguments": {}})
    assert reply.status == 503
    assert "this caller runs as many tasks" in reply.body["error"]["message"]
    assert await Client(engine, peer="2001:db8:1:3::1").create("waiting")
    assert await Client(engine, peer="::ffff:10.0.0.1").create("waiting")
    assert await Client(engine, peer="::ffff:10.0.0.2").create("waiting")
