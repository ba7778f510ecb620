"""BROKER: a client's answer or cancel relayed to the worker running its call.

Only answers to questions outstanding (registered by the worker that asked),
and cancels, are relayed; an answer is capped at `RELAY_LIMIT` bytes, its body
kept in a key and only its head published, on the asking worker's own
channel; a cancel is relayed short. A session relays at most `RELAY_BUDGET`
bytes per window (429 past it). A flood of big answers on one worker leaves a
client of the other answered.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import redis.asyncio as aioredis

from broker.test_processes import _listening, _serve, write_settings
from broker.test_shared_sessions import (
    app,
    call,
    initialize,
    initialized,
    post,
    session_headers,
)
from loop_watchdog import LoopWatchdog
from redis_server import free_port
from wymcp.broker.redis._relay import RELAY_LIMIT, pack, unpack
from wymcp.broker.redis._relay_routes import (
    BODY_PREFIX,
    BODY_TTL_MS,
    RELAY_BUDGET,
    RELAY_SLICE_MS,
    RELAY_WINDOW_MS,
    RelayRoutes,
    asked_key,
)
from wymcp.broker.redis._sessions import RELAY_CHANNEL
from wymcp.core.server import Session, answered_or_cancelled

ASKED = "srv-AbCdEfGhIjK"  # the shape `asked_id` makes, asked by nobody here


def answer(rid: object, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def slow_to_decode(size: int) -> bytes:
    """An answer to `ASKED` of about `size` bytes of JSON, slow to decode.

    Written as bytes: encoding it with `json` would hold the test's loop.
    """
    items = b",".join([b"[0.5]"] * (size // 6))
    return b'{"jsonrpc":"2.0","id":"%s","result":{"a":[%s]}}' % (ASKED.encode(), items)


def test_a_head_is_read_without_its_body():
    payload = pack("S" * 43, "c", "r\n1", {"jsonrpc": "2.0"})
    assert payload is not None
    head = unpack(payload[: payload.index(b"{")] + b"not json at all")
    assert head is not None
    assert (head.session_id, head.kind, head.key) == ("S" * 43, "c", "r\n1")
    session = Session(id="S" * 43, protocol_version="2025-11-25")
    assert not head.wanted_by(session)
    session.in_flight["r\n1"] = object()  # type: ignore[assignment]
    assert head.wanted_by(session)
    for broken in (b"", b"no newline", b"\n\n{}", b"S\nx1\n{}", b"S\na[1]\n{}"):
        assert unpack(broken) is None


def test_the_longest_id_of_the_widest_characters_fits_a_head():
    rid = "\U0001f600" * 200  # 200 characters, each two escapes as ASCII JSON
    assert answered_or_cancelled(_cancel_of(rid)) == ("c", rid)
    payload = pack("S" * 43, "c", rid, _cancel_of(rid))
    assert payload is not None
    head = unpack(payload)
    assert head is not None
    assert head.key == rid


def _cancel_of(rid: str | int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": rid},
    }


def test_a_message_over_the_limit_is_not_packed():
    assert pack("S" * 43, "a", ASKED, answer(ASKED, {"t": "x" * RELAY_LIMIT})) is None
    small = pack("S" * 43, "a", ASKED, answer(ASKED, {"t": "x" * 1000}))
    assert small is not None
    assert len(small) < 1200


async def post_big(client, sid: str, body: dict[str, Any] | bytes) -> Any:
    """POST a large body (as a stream: aiohttp warns about large raw bytes)."""
    data = io.BytesIO(body if isinstance(body, bytes) else json.dumps(body).encode())
    return await client.post("/mcp", data=data, headers=session_headers(sid))


async def relayed_on(redis_url: str) -> tuple[aioredis.Redis, Any]:
    """A listener of every relay channel: the shared one and each worker's."""
    probe = aioredis.Redis.from_url(redis_url)
    listener = probe.pubsub()
    await listener.psubscribe(RELAY_CHANNEL + "*")
    await listener.get_message(timeout=1.0)  # the subscribe confirmation
    return probe, listener


async def ask_elsewhere(probe: aioredis.Redis, sid: str, *rids: str) -> None:
    """Register questions of `sid` as asked by a worker named `elsewhere`."""
    routes = RelayRoutes(probe, "elsewhere", 60_000)
    for rid in rids:
        await routes.asked_here(sid, rid)


async def test_answers_to_ids_this_server_never_makes_are_not_relayed(
    aiohttp_client, redis_url
):
    one = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    await initialized(one, sid)
    probe, listener = await relayed_on(redis_url)
    try:
        for rid in ("srv-else", "x" * 200, 3):
            assert (await post(one, sid, answer(rid, {}))).status == 202
        assert await listener.get_message(timeout=0.3) is None
    finally:
        await listener.aclose()
        await probe.aclose()


async def test_an_answer_to_no_question_outstanding_is_not_relayed(
    aiohttp_client, redis_url
):
    """The attack of issue 29 (attack 3, finding 3): an id of the asked shape.

    Before, any answer to a `srv-` id was published to every worker.
    """
    one = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    await initialized(one, sid)
    probe, listener = await relayed_on(redis_url)
    try:
        big = answer(ASKED, {"t": "x" * (RELAY_LIMIT - 1000)})
        assert (await post_big(one, sid, big)).status == 202
        assert await listener.get_message(timeout=0.3) is None
        assert not await probe.keys(BODY_PREFIX + "*")
    finally:
        await listener.aclose()
        await probe.aclose()


async def test_an_answer_goes_once_to_the_asking_worker_as_a_head(
    aiohttp_client, redis_url
):
    one = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    await initialized(one, sid)
    probe, listener = await relayed_on(redis_url)
    try:
        await ask_elsewhere(probe, sid, ASKED)
        big = answer(ASKED, {"t": "x" * (RELAY_LIMIT - 1000)})
        assert (await post_big(one, sid, big)).status == 202
        message = await listener.get_message(timeout=2.0)
        assert message is not None
        assert message["channel"] == f"{RELAY_CHANNEL}:elsewhere".encode()
        assert len(message["data"]) < 200  # the head, not the body
        head = unpack(message["data"])
        assert head is not None
        assert (head.session_id, head.key) == (sid, ASKED)
        body_key = message["data"][head.start :]
        assert body_key.startswith(BODY_PREFIX.encode())
        assert 0 < await probe.pttl(body_key) <= BODY_TTL_MS
        assert len(await probe.get(body_key)) > RELAY_LIMIT - 1000
        # the question is answered: a second answer to it goes nowhere
        assert not await probe.exists(asked_key(sid, ASKED))
        assert (await post_big(one, sid, big)).status == 202
        assert await listener.get_message(timeout=0.3) is None
    finally:
        await probe.delete(body_key)
        await listener.aclose()
        await probe.aclose()


async def test_a_session_relays_at_most_its_budget_then_gets_429(
    aiohttp_client, redis_url
):
    one = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    await initialized(one, sid)
    probe = aioredis.Redis.from_url(redis_url)
    rids = [f"srv-Budget{n:05d}" for n in range(10)]
    try:
        await ask_elsewhere(probe, sid, *rids)
        statuses = []
        for rid in rids:
            body = answer(rid, {"t": "x" * (RELAY_LIMIT - 4096)})
            response = await post_big(one, sid, body)
            statuses.append(response.status)
        fits = RELAY_BUDGET // (RELAY_LIMIT - 4096 + 60)
        assert statuses == [202] * fits + [429] * (len(rids) - fits)
        # room is back when the first answer stops counting: 10-11 s after it
        wait = (RELAY_WINDOW_MS + RELAY_SLICE_MS) // 1000
        assert 1 <= int(response.headers["Retry-After"]) <= wait
        error = (await response.json())["error"]
        assert str(RELAY_BUDGET) in error["message"]
        assert "x" * 100 not in error["message"]
        # Redis holds the relayed bodies (nobody took them), each expiring
        kept = await probe.keys(f"{BODY_PREFIX}{{{sid}}}:*")
        assert len(kept) == fits
        used = sum([await probe.memory_usage(key) for key in kept])
        assert used < RELAY_BUDGET + 64 * 1024, used
        # a refused answer's question still waits: it may be answered later
        assert await probe.exists(asked_key(sid, rids[-1]))
        assert (await call(one, sid)).status == 200  # the session lives on
    finally:
        for key in await probe.keys(BODY_PREFIX + "*"):
            await probe.delete(key)
        await probe.aclose()


async def test_a_cancel_is_relayed_short_whatever_was_posted(aiohttp_client, redis_url):
    one = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    await initialized(one, sid)
    probe, listener = await relayed_on(redis_url)
    try:
        cancel = _cancel_of("r-1")
        cancel["params"]["reason"] = "y" * 500_000
        cancel["params"]["extra"] = ["z"] * 100_000
        assert (await post_big(one, sid, cancel)).status == 202
        message = await listener.get_message(timeout=2.0)
        assert message is not None
        assert message["channel"] == RELAY_CHANNEL.encode()
        assert len(message["data"]) < 2048
        head = unpack(message["data"])
        assert head is not None
        relayed = json.loads(message["data"][head.start :])
        assert relayed["params"] == {"requestId": "r-1", "reason": "y" * 1024}
    finally:
        await listener.aclose()
        await probe.aclose()


async def test_an_answer_too_large_to_relay_is_refused_413_and_not_published(
    aiohttp_client, redis_url
):
    one = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    await initialized(one, sid)
    probe, listener = await relayed_on(redis_url)
    try:
        await ask_elsewhere(probe, sid, ASKED)
        big = answer(ASKED, {"t": "x" * (RELAY_LIMIT + 1)})
        response = await post_big(one, sid, big)
        assert response.status == 413
        error = (await response.json())["error"]
        assert str(RELAY_LIMIT) in error["message"]
        assert "x" * 100 not in error["message"]  # nothing sent is echoed
        assert await listener.get_message(timeout=0.3) is None
        # the session lives on
        assert (await call(one, sid)).status == 200
    finally:
        await listener.aclose()
        await probe.aclose()


async def test_a_flood_of_big_answers_on_one_worker_leaves_the_other_answering(
    aiohttp_client, redis_url, loop_watchdog: LoopWatchdog
):
    one = await aiohttp_client(app(redis_url))
    two = await aiohttp_client(app(redis_url))
    flooder = await initialize(one)
    await initialized(one, flooder)
    victim = await initialize(two)
    await initialized(two, victim)
    relayed = slow_to_decode(RELAY_LIMIT - 4096)
    refused = slow_to_decode(RELAY_LIMIT * 5 // 2)  # both fit BODY_MEMORY_BUDGET
    statuses: list[int] = []

    async def flood(body: bytes) -> None:
        statuses.extend([(await post_big(one, flooder, body)).status for _ in range(8)])

    flooding = [asyncio.ensure_future(flood(b)) for b in (relayed, refused)]
    latencies: list[float] = []
    for rid in range(2, 12):
        started = time.monotonic()
        assert (await call(two, victim, rid)).status == 200
        latencies.append(time.monotonic() - started)
        await asyncio.sleep(0.05)
    await asyncio.gather(*flooding)
    assert max(latencies) < 1.5, latencies
    assert set(statuses) == {202}  # answers to nothing: dropped, not relayed


def test_reading_a_head_costs_the_same_whatever_the_body():
    """A worker not holding the question reads the head only: body size is free."""

    def cost(body_size: int) -> float:
        payload = pack("S" * 43, "c", "x" * 200, {"t": "y" * body_size})
        assert payload is not None
        best = float("inf")
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(200):
                unpack(payload)
            best = min(best, time.perf_counter() - started)
        return best

    small, large = cost(1_000), cost(RELAY_LIMIT - 1_000)
    assert large < 3 * small, (small, large)  # 1,000 times the body, same cost


async def test_a_flood_of_big_answers_on_another_process_leaves_this_one_answering(
    aiohttp_client, redis_url, tmp_path, loop_watchdog: LoopWatchdog
):
    """The attack of issue 29 item 3: the flooded worker is another process.

    A session client of the `wymcp serve` process POSTs big answers to ids
    nobody asked; this worker (its loop watched) was sent none of them and
    must go on answering its own client: it reads at most the head of each.
    """
    env = write_settings(tmp_path, redis_url)
    with (tmp_path / "brokered_settings.py").open("a", encoding="utf-8") as settings:
        settings.write("BODY_MEMORY_BUDGET = 64 * 1024 * 1024\n")
    port = free_port()
    process = _serve(Path(sys.executable).parent / "wymcp", port, env)
    try:
        for _ in range(3000):
            if _listening(port) or process.poll() is not None:
                break
            await asyncio.sleep(0.01)
        assert process.poll() is None, "wymcp serve exited"
        here = await aiohttp_client(app(redis_url))
        victim = await initialize(here)
        await initialized(here, victim)
        async with aiohttp.ClientSession(f"http://127.0.0.1:{port}") as there:
            flooder = await initialize(there)
            await initialized(there, flooder)
            bodies = [slow_to_decode(RELAY_LIMIT - 4096), slow_to_decode(4_000_000)]
            statuses: list[int] = []

            async def flood(body: bytes) -> None:
                for _ in range(4):
                    response = await post_big(there, flooder, body)
                    statuses.append(response.status)

            flooding = [asyncio.ensure_future(flood(b)) for b in bodies * 2]
            latencies: list[float] = []
            while not all(task.done() for task in flooding):
                started = time.monotonic()
                assert (await call(here, victim, 2 + len(latencies))).status == 200
                latencies.append(time.monotonic() - started)
                await asyncio.sleep(0.05)
            await asyncio.gather(*flooding)
        assert max(latencies) < 1.5, latencies
        assert set(statuses) == {202}  # answers to nothing: dropped, not relayed
    finally:
        process.terminate()
        process.wait(timeout=20)
