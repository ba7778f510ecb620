"""BROKER: each worker's copies of the shared sessions, and when Redis is asked.

A stateless 2026-07-28 call never asks Redis, whatever `Mcp-Session-Id` it
carries. A change to a session heard while a worker reads its record is
never undone by that older read (a subscription made on another worker
reaches the stream this worker holds).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from broker.test_notifications import WATCHED, open_get, served, worker
from broker.test_shared_sessions import (
    JSON_HEADERS,
    LEGACY,
    app,
    call,
    initialize,
    initialized,
    modern_call,
    post,
)
from redis_server import free_port, server_binary, start_server, stop_server
from sse_events import next_event
from wymcp.broker.redis._session_cache import SessionCache
from wymcp.broker.redis._sessions import CHANGED_CHANNEL
from wymcp.core.server import Session
from wymcp.transport.aiohttp._setup import get_endpoint

SESSION_SHAPED = "A" * 43


@pytest.fixture
def dead_broker() -> str:
    return f"redis://127.0.0.1:{free_port()}/0"


def modern_call_naming_a_session() -> tuple[str, dict[str, str]]:
    data, headers = modern_call()
    return data, {**headers, "Mcp-Session-Id": SESSION_SHAPED}


async def test_a_2026_call_naming_a_session_sends_redis_no_command(
    aiohttp_client, redis_url
):
    one = await worker(aiohttp_client, redis_url)
    data, headers = modern_call_naming_a_session()
    assert (await one.post("/mcp", data=data, headers=headers)).status == 200
    await asyncio.sleep(0.2)  # the listener's SUBSCRIBE is done by now
    probe = aioredis.Redis.from_url(redis_url)
    try:
        before = (await probe.info("stats"))["total_commands_processed"]
        for _ in range(5):
            response = await one.post("/mcp", data=data, headers=headers)
            assert response.status == 200
        after = (await probe.info("stats"))["total_commands_processed"]
    finally:
        await probe.aclose()
    assert after - before == 1  # the first INFO itself, and nothing else


async def test_a_2026_call_naming_a_session_is_served_with_redis_down(
    aiohttp_client, dead_broker
):
    one = await worker(aiohttp_client, dead_broker)
    data, headers = modern_call_naming_a_session()
    response = await one.post("/mcp", data=data, headers=headers)
    assert response.status == 200
    assert "Hello, Ada!" in json.dumps(await response.json())


async def test_a_subscription_heard_while_the_stream_fetches_the_session_counts(
    aiohttp_client, redis_url
):
    """The race of a lost resource update, forced step by step.

    Worker one fetches the session for a GET stream; before its read lands,
    the session subscribes on worker two and worker one hears the change
    (it has no copy to refresh yet). The read it then keeps predates the
    subscription: the update made on worker two must still arrive.
    """
    one = await worker(aiohttp_client, redis_url)
    two = await worker(aiohttp_client, redis_url)
    sid = await initialize(two)
    await initialized(two, sid)
    brokered = get_endpoint(one.app).engine
    fetched, release, heard = asyncio.Event(), asyncio.Event(), asyncio.Event()
    real_fetch, real_changed = brokered._sessions.fetch, brokered._changed

    async def held_fetch(session_id: str) -> Any:
        shared = await real_fetch(session_id)
        fetched.set()
        await release.wait()
        return shared

    async def noted_change(session_id: str) -> None:
        await real_changed(session_id)
        heard.set()

    brokered._sessions.fetch = held_fetch
    brokered._changed = noted_change
    opening = asyncio.ensure_future(open_get(one, sid))
    await asyncio.wait_for(fetched.wait(), 5)  # the GET's read is done, not landed
    subscribe = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "resources/subscribe",
        "params": {"uri": WATCHED},
    }
    assert (await post(two, sid, subscribe)).status == 200
    await asyncio.wait_for(heard.wait(), 5)  # worker one heard the change
    release.set()
    stream = await opening
    await next_event(stream)  # the priming event
    served(two).resource_updated(WATCHED)
    event = await asyncio.wait_for(next_event(stream), 5)
    message = json.loads(event["data"])
    assert message["method"] == "notifications/resources/updated"
    assert message["params"] == {"uri": WATCHED}
    stream.close()


@pytest.fixture
async def stalled_broker() -> AsyncIterator[str]:
    """A server that accepts connections and never answers (a stalled Redis)."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        del reader
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        for writer in held:
            writer.close()
        server.close()


async def test_initialize_during_a_redis_stall_answers_503_within_about_2_s(
    aiohttp_client, stalled_broker
):
    one = await worker(aiohttp_client, stalled_broker)
    started = time.monotonic()
    response = await one.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 4,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}},
        },
        headers=JSON_HEADERS,
    )
    waited = time.monotonic() - started
    assert response.status == 503
    assert response.headers["Retry-After"] == "5"
    assert (await response.json())["id"] == 4
    # the documented bound: the client's 2 s socket timeout, not two of them
    assert waited < 3.0, waited


async def test_initialize_during_a_paused_redis_answers_503_within_about_2_s(
    aiohttp_client, tmp_path
):
    """The same with a real server paused 6 s (its pooled connections kept)."""
    server = start_server(server_binary(), tmp_path)
    probe = aioredis.Redis.from_url(server.url)
    try:
        one = await worker(aiohttp_client, server.url)
        await initialized(one, await initialize(one))  # connections pooled
        await probe.execute_command("CLIENT", "PAUSE", "6000", "ALL")
        started = time.monotonic()
        response = await one.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 4,
                "method": "initialize",
                "params": {"protocolVersion": LEGACY, "capabilities": {}},
            },
            headers=JSON_HEADERS,
        )
        waited = time.monotonic() - started
        assert response.status == 503
        assert waited < 3.0, waited
    finally:
        await probe.aclose()
        stop_server(server)


# ------------------------------------------------ the cache of session copies


def cache(limit: int, clock: list[float]) -> SessionCache:
    return SessionCache(idle_timeout=60, max_sessions=limit, clock=lambda: clock[0])


def copy(sid: str) -> Session:
    return Session(id=sid, protocol_version=LEGACY)


def test_a_full_cache_evicts_the_copy_used_least_recently():
    now = [0.0]
    copies = cache(3, now)
    for sid in "abc":
        assert copies.add(copy(sid))
        now[0] += 1
    assert copies.get("a") is not None  # a is now the most recently used
    assert copies.add(copy("d"))
    assert {s.id for s in copies.sessions()} == {"a", "c", "d"}
    assert copies.evicted == 1


def test_busy_copies_are_never_evicted_and_a_cache_all_busy_refuses():
    now = [0.0]
    copies = cache(2, now)
    streaming, calling = copy("s"), copy("c")
    streaming.stream = object()  # type: ignore[assignment]
    calling.in_flight[1] = object()  # type: ignore[assignment]
    assert copies.add(streaming)
    assert copies.add(calling)
    assert not copies.add(copy("n"))
    assert {s.id for s in copies.sessions()} == {"s", "c"}
    del calling.in_flight[1]
    assert copies.add(copy("n"))
    assert {s.id for s in copies.sessions()} == {"s", "n"}


def test_the_cache_holds_at_most_its_limit_whatever_is_added():
    now = [0.0]
    for limit in (50, 100):
        copies = cache(limit, now)
        for n in range(limit * 20):
            assert copies.add(copy(str(n)))
            assert len(copies.sessions()) <= limit
        assert copies.evicted == limit * 19


async def test_a_worker_full_of_its_own_sessions_serves_one_made_elsewhere(
    aiohttp_client, redis_url
):
    one = await worker(aiohttp_client, redis_url)
    two = await aiohttp_client(app(redis_url, MAX_SESSIONS=3))
    for _ in range(3):  # anonymous initialize calls fill worker two
        await initialized(two, await initialize(two))
    made_elsewhere = await initialize(one)
    await initialized(one, made_elsewhere)
    assert (await call(two, made_elsewhere)).status == 200
    # and one more initialize on the full worker is served too
    fresh = await initialize(two)
    await initialized(two, fresh)
    assert (await call(two, fresh)).status == 200
    assert get_endpoint(two.app).engine._store.evicted >= 2


async def test_a_worker_whose_copies_all_hold_streams_answers_503_not_404(
    aiohttp_client, redis_url
):
    one = await worker(aiohttp_client, redis_url)
    two = await aiohttp_client(
        app(redis_url, RESOURCES=["wymcp_conformance.WatchedResource"], MAX_SESSIONS=1)
    )
    held = await initialize(two)
    await initialized(two, held)
    stream = await open_get(two, held)
    await next_event(stream)
    made_elsewhere = await initialize(one)
    await initialized(one, made_elsewhere)
    response = await call(two, made_elsewhere)
    assert response.status == 503
    assert response.headers["Retry-After"] == "5"
    assert "MAX_SESSIONS" in (await response.json())["error"]["message"]
    stream.close()


async def test_a_subscription_made_while_a_worker_was_deaf_reaches_its_stream(
    aiohttp_client, redis_url
):
    """The other race: the change is published while worker one is not subscribed.

    Worker one holds the GET stream. Redis drops its pub/sub connection;
    redis-py reconnects and subscribes again by itself, but before it does
    (held here) the session subscribes on worker two. Once worker one hears
    its channels again, the update made on worker two must reach its stream.
    """
    one = await worker(aiohttp_client, redis_url)
    brokered = get_endpoint(one.app).engine
    closed, held = asyncio.Event(), asyncio.Event()
    closed.set()  # open until the test closes it
    real_pubsub = brokered._sessions.client.pubsub

    def gated_pubsub() -> Any:
        pubsub = real_pubsub()
        real_subscribe = pubsub.subscribe

        async def subscribe(*args: Any, **kwargs: Any) -> Any:
            if not closed.is_set():
                held.set()
                await closed.wait()
            return await real_subscribe(*args, **kwargs)

        pubsub.subscribe = subscribe  # redis-py's reconnect calls it too
        return pubsub

    brokered._sessions.client.pubsub = gated_pubsub
    two = await worker(aiohttp_client, redis_url)
    sid = await initialize(two)
    await initialized(two, sid)
    stream = await open_get(one, sid)
    await next_event(stream)  # the priming event
    probe = aioredis.Redis.from_url(redis_url)
    try:
        closed.clear()
        await probe.client_kill_filter(_type="pubsub")
        await asyncio.wait_for(held.wait(), 5)  # worker one is deaf, held
        subscribe = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "resources/subscribe",
            "params": {"uri": WATCHED},
        }
        assert (await post(two, sid, subscribe)).status == 200
        closed.set()
        async with asyncio.timeout(5):  # both workers hear the channels again
            while (await probe.pubsub_numsub(CHANGED_CHANNEL))[0][1] < 2:  # noqa: ASYNC110 - another process changes it
                await asyncio.sleep(0.01)
    finally:
        await probe.aclose()
    served(two).resource_updated(WATCHED)
    event = await asyncio.wait_for(next_event(stream), 5)
    message = json.loads(event["data"])
    assert message["method"] == "notifications/resources/updated"
    stream.close()
