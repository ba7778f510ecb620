"""BROKER: what the relay of client answers and cancels may take (issue 29, attack 4).

Relayed bodies of all sessions keep within a share of Redis's `maxmemory`
(503 past it), and Redis refusing a write for memory says so; a question's
record is deleted once it is answered or given up; each relayed message
costs its session `MIN_CHARGE` at least; an answer over the budget is
refused before it is sent to Redis.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import redis.asyncio as aioredis

from broker.test_relay import answer, ask_elsewhere, post_big
from broker.test_shared_sessions import (
    JSON_HEADERS,
    LEGACY,
    Asker,
    app,
    call,
    events,
    initialize,
    initialized,
    post,
)
from legacy_initialize import LEGACY_INITIALIZE
from wymcp.broker.redis._encoding import encode
from wymcp.broker.redis._relay import RELAY_LIMIT
from wymcp.broker.redis._relay_routes import (
    ASKED_PREFIX,
    BODY_PREFIX,
    MIN_CHARGE,
    RELAY_BUDGET,
    RELAY_SHARE,
    STORED_PREFIX,
    RelayRoutes,
)

MIB = 1024 * 1024


async def _forget_relayed(probe: aioredis.Redis) -> None:
    """Drop the bodies and counts earlier tests left (nobody took them)."""
    for pattern in (BODY_PREFIX + "*", STORED_PREFIX + "*"):
        for key in await probe.keys(pattern):
            await probe.delete(key)


async def test_relayed_bodies_of_all_sessions_keep_within_their_share_of_maxmemory(
    aiohttp_client, redis_url
):
    """Finding 1: before, each session had 8 MiB and sessions are not capped."""
    probe = aioredis.Redis.from_url(redis_url)
    await _forget_relayed(probe)
    before = (await probe.config_get("maxmemory"))["maxmemory"]
    used = (await probe.info("memory"))["used_memory"]
    maxmemory = max(32 * MIB, used + 24 * MIB)
    await probe.config_set("maxmemory", maxmemory)
    try:
        one = await aiohttp_client(app(redis_url))
        two = await aiohttp_client(app(redis_url))
        size = len(encode(answer("srv-Share000000", {"t": "x" * (RELAY_LIMIT - 4096)})))
        fits = (maxmemory // RELAY_SHARE) // size
        assert fits * size < RELAY_BUDGET  # one session alone would get them all
        sessions = []
        for _ in range(fits // 6 + 2):  # at most 6 answers per session
            sid = await initialize(one)
            await initialized(one, sid)
            sessions.append(sid)
        statuses = []
        for turn in range(fits + 2):
            sid = sessions[turn % len(sessions)]
            rid = f"srv-Share{turn:06d}"
            await ask_elsewhere(probe, sid, rid)
            body = answer(rid, {"t": "x" * (RELAY_LIMIT - 4096)})
            response = await post_big(one, sid, body)
            statuses.append(response.status)
            if response.status == 503:
                refused = response
        assert statuses == [202] * fits + [503] * 2, statuses
        assert 1 <= int(refused.headers["Retry-After"]) <= 20
        message = (await refused.json())["error"]["message"]
        assert "share of the session store" in message
        assert "cannot be reached" not in message
        kept = await probe.keys(BODY_PREFIX + "*")
        assert len(kept) == fits
        assert sum([await probe.strlen(key) for key in kept]) <= maxmemory // 8
        # a valid client of another worker is served meanwhile
        valid = await initialize(two)
        await initialized(two, valid)
        assert (await call(two, valid)).status == 200
        # a body taken by its worker makes room again
        assert await RelayRoutes(probe, "elsewhere", 60_000).take(kept[0].decode())
        rid = "srv-ShareAgain0"
        await ask_elsewhere(probe, sessions[0], rid)
        body = answer(rid, {"t": "x" * (RELAY_LIMIT - 4096)})
        assert (await post_big(one, sessions[-1], body)).status == 202
    finally:
        await probe.config_set("maxmemory", before)
        await _forget_relayed(probe)
        await probe.aclose()


async def test_redis_out_of_memory_answers_503_saying_so(aiohttp_client, redis_url):
    """Finding 1: before, the 503 said the store "cannot be reached"."""
    probe = aioredis.Redis.from_url(redis_url)
    before = (await probe.config_get("maxmemory"))["maxmemory"]
    one = await aiohttp_client(app(redis_url))
    await probe.config_set("maxmemory", 1)
    try:
        response = await one.post(
            "/mcp",
            json=LEGACY_INITIALIZE,
            headers=JSON_HEADERS,
        )
        assert response.status == 503
        assert response.headers["Retry-After"]
        message = (await response.json())["error"]["message"]
        assert "out of memory" in message
        assert "cannot be reached" not in message
    finally:
        await probe.config_set("maxmemory", before)
        await probe.aclose()
    assert await initialize(one)  # room again: served


def _asker_app(redis_url: str, **overrides: Any) -> Any:
    return app(redis_url, (Asker,), **overrides)


async def _asking_session(client) -> str:
    response = await client.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        headers=JSON_HEADERS,
    )
    sid = response.headers["Mcp-Session-Id"]
    await initialized(client, sid)
    return sid


def _ask(rid: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "asker", "arguments": {"action": "ask", "data": {}}},
    }


async def _records(probe: aioredis.Redis, sid: str) -> int:
    """The question records of `sid` left in Redis, once the deletes are done."""
    left = []
    for _ in range(50):
        left = await probe.keys(f"{ASKED_PREFIX}{{{sid}}}:*")
        if not left:
            break
        await asyncio.sleep(0.02)
    return len(left)


async def test_a_question_answered_on_its_worker_leaves_no_record(
    aiohttp_client, redis_url
):
    """Finding 2: before, each record stayed CLIENT_REQUEST_TIMEOUT + 5 s."""
    one = await aiohttp_client(_asker_app(redis_url))
    sid = await _asking_session(one)
    probe = aioredis.Redis.from_url(redis_url)
    try:
        reply = {"action": "accept", "content": {"name": "Ada"}}
        for rid in range(2, 22):
            stream = events(await post(one, sid, _ask(rid)))
            question = await anext(stream)
            answered = {"jsonrpc": "2.0", "id": question["id"], "result": reply}
            assert (await post(one, sid, answered)).status == 202
            assert (await anext(stream))["id"] == rid
        assert await _records(probe, sid) == 0
    finally:
        await probe.aclose()


async def test_a_question_timed_out_leaves_no_record(aiohttp_client, redis_url):
    one = await aiohttp_client(_asker_app(redis_url, CLIENT_REQUEST_TIMEOUT=0.2))
    sid = await _asking_session(one)
    probe = aioredis.Redis.from_url(redis_url)
    try:
        stream = events(await post(one, sid, _ask(2)))
        assert (await anext(stream))["method"] == "elicitation/create"
        final = await anext(stream)  # the tool's error: no answer in time
        assert final["id"] == 2
        assert await _records(probe, sid) == 0
    finally:
        await probe.aclose()


def _cancel(rid: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": rid},
    }


async def test_a_session_relays_at_most_budget_over_min_charge_cancels(
    aiohttp_client, redis_url
):
    """Finding 3: before, ~55,000 small cancels per window reached every worker.

    A valid client of another worker is answered meanwhile.
    """
    one = await aiohttp_client(app(redis_url))
    two = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    await initialized(one, sid)
    valid = await initialize(two)
    await initialized(two, valid)
    statuses: list[int] = []
    accepted = RELAY_BUDGET // MIN_CHARGE

    async def flood(first: int) -> None:
        rids = range(first, first + accepted // 4 + 8)
        statuses.extend([(await post(one, sid, _cancel(rid))).status for rid in rids])

    started = time.monotonic()
    flooding = [asyncio.ensure_future(flood(n * 10_000)) for n in range(4)]
    latencies = []
    while not all(task.done() for task in flooding):
        began = time.monotonic()
        assert (await call(two, valid)).status == 200
        latencies.append(time.monotonic() - began)
        await asyncio.sleep(0.05)
    await asyncio.gather(*flooding)
    if time.monotonic() - started < 9.5:
        assert statuses.count(202) == accepted, statuses.count(202)
    assert statuses.count(202) <= 2 * accepted
    assert set(statuses) == {202, 429}
    assert max(latencies) < 2.0, latencies


async def test_an_answer_over_the_budget_is_refused_before_it_is_sent_to_redis(
    aiohttp_client, redis_url
):
    """Finding 4: before, each refused 1 MiB answer was shipped to Redis first."""
    one = await aiohttp_client(app(redis_url))
    sid = await initialize(one)
    await initialized(one, sid)
    probe = aioredis.Redis.from_url(redis_url)
    try:
        rids = [f"srv-Before{n:05d}" for n in range(9)]
        await ask_elsewhere(probe, sid, *rids)
        big = RELAY_LIMIT - 4096
        for rid in rids[:8]:  # 8 MiB less 32 KiB: the budget is spent
            body = answer(rid, {"t": "x" * big})
            assert (await post_big(one, sid, body)).status == 202
        sent_before = (await probe.info("stats"))["total_net_input_bytes"]
        for _ in range(5):
            body = answer(rids[8], {"t": "x" * big})
            response = await post_big(one, sid, body)
            assert response.status == 429
            assert "x" * 100 not in json.dumps(await response.json())
        sent = (await probe.info("stats"))["total_net_input_bytes"] - sent_before
        assert sent < 64 * 1024, sent  # 5 x 1 MiB before the fix
        assert await probe.exists(f"{ASKED_PREFIX}{{{sid}}}:{rids[8]}")
    finally:
        await _forget_relayed(probe)
        await probe.aclose()
