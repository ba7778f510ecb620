"""BROKER: the live sessions in Redis are capped, all clients' and each client's.

Issue 29: before, `MAX_SESSIONS` capped only each worker's copies, so one
anonymous client filled Redis with sessions and every other client's
`initialize` was refused until they idled out; and a fresh session was a fresh
relay budget, so one client's cancels reached every worker without bound.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from aiohttp import web

from broker.test_relay_bounds import _cancel
from broker.test_shared_sessions import (
    JSON_HEADERS,
    app,
    call,
    initialized,
    session_headers,
)
from legacy_initialize import LEGACY_INITIALIZE
from wymcp.broker.redis._relay_routes import MIN_CHARGE, RELAY_BUDGET
from wymcp.broker.redis._sessions import CLIENT_PREFIX, LIVE_KEY, client_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

PEER = "X-Test-Peer"
"""The peer address a test client claims (set by `as_peer`, as a socket would)."""


@web.middleware
async def as_peer(
    request: web.Request,
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
) -> web.StreamResponse:
    """Serve the request as if it came from the address in `PEER`."""
    peer = request.headers.get(PEER)
    return await handler(request if peer is None else request.clone(remote=peer))


async def fresh_db(redis_url: str, db: int) -> str:
    """A database of the test server of its own, emptied (the counts start at 0)."""
    url = f"{redis_url.rsplit('/', 1)[0]}/{db}"
    client = aioredis.Redis.from_url(url)
    try:
        await client.flushdb()
    finally:
        await client.aclose()
    return url


async def worker(aiohttp_client, url: str, **overrides: Any):
    application = app(url, **overrides)
    application.middlewares.append(as_peer)
    return await aiohttp_client(application)


async def initialize(client, peer: str):
    return await client.post(
        "/mcp",
        json=LEGACY_INITIALIZE,
        headers={**JSON_HEADERS, PEER: peer},
    )


async def post(client, sid: str, body: dict[str, Any], peer: str):
    headers = {**session_headers(sid), PEER: peer}
    return await client.post("/mcp", json=body, headers=headers)


async def opened(client, peer: str) -> str:
    response = await initialize(client, peer)
    assert response.status == 200, await response.text()
    sid = response.headers["Mcp-Session-Id"]
    await initialized(client, sid)
    return sid


async def refused(client, peer: str, setting: str) -> int:
    """The Retry-After of an `initialize` refused over `setting`."""
    response = await initialize(client, peer)
    assert response.status == 503
    assert "Mcp-Session-Id" not in response.headers
    message = (await response.json())["error"]["message"]
    assert f"({setting})" in message, message
    assert "idles out" in message
    return int(response.headers["Retry-After"])


async def test_one_client_holds_at_most_its_cap_of_sessions_on_all_workers(
    aiohttp_client, redis_url
):
    url = await fresh_db(redis_url, 5)
    caps = {"BROKER_MAX_SESSIONS": 100, "MAX_SESSIONS_PER_CLIENT": 4}
    one = await worker(aiohttp_client, url, **caps)
    two = await worker(aiohttp_client, url, **caps)
    mine = [await opened((one, two)[n % 2], "10.0.0.1") for n in range(4)]
    for client in (one, two):  # the cap is the fleet's, not each worker's
        assert await refused(client, "10.0.0.1", "MAX_SESSIONS_PER_CLIENT") >= 1_700
    # another client is served meanwhile, its sessions counted apart
    other = await opened(two, "10.0.0.2")
    assert (await call(one, other)).status == 200
    # a whole IPv6 /64 is one client; another /64 is another
    for n in range(4):
        await opened(one, f"2001:db8:0:1::{n + 1:x}")
    await refused(two, "2001:db8:0:1::ffff", "MAX_SESSIONS_PER_CLIENT")
    await opened(two, "2001:db8:0:2::1")
    # a session ended frees its place at once
    response = await one.delete("/mcp", headers=session_headers(mine[0]))
    assert response.status == 200
    await opened(two, "10.0.0.1")
    await refused(one, "10.0.0.1", "MAX_SESSIONS_PER_CLIENT")
    probe = aioredis.Redis.from_url(url)
    try:
        assert await probe.zcard(LIVE_KEY) == 4 + 1 + 4 + 1
        group = CLIENT_PREFIX + client_of(None, "10.0.0.1")
        assert await probe.zcard(group) == 4
        # the sessions still used are not counted as expired: each use
        # pushes its expiry on (as it does the record's)
        before = await probe.zscore(group, mine[1])
        assert (await call(two, mine[1])).status == 200
        assert await probe.zscore(group, mine[1]) >= before
    finally:
        await probe.aclose()


async def test_all_clients_together_hold_at_most_max_sessions_until_they_idle_out(
    aiohttp_client, redis_url
):
    url = await fresh_db(redis_url, 6)
    caps = {"BROKER_MAX_SESSIONS": 3, "SESSION_IDLE_TIMEOUT": 2.0}
    one = await worker(aiohttp_client, url, **caps)
    two = await worker(aiohttp_client, url, **caps)
    for n in range(3):
        await opened((one, two)[n % 2], f"10.0.1.{n}")
    started = time.monotonic()
    assert await refused(one, "10.0.1.9", "BROKER_MAX_SESSIONS") <= 2
    await refused(two, "10.0.1.9", "BROKER_MAX_SESSIONS")
    while time.monotonic() - started < 10:  # the idle ones drop out of the count
        response = await initialize(two, "10.0.1.9")
        if response.status == 200:
            break
        assert response.status == 503
        await asyncio.sleep(0.25)
    assert response.status == 200


async def test_a_client_s_sessions_share_one_budget_of_cancels(
    aiohttp_client, redis_url
):
    """Before: each fresh session relayed 2,048 more cancels to every worker.

    A valid client (another address) is answered and relays its cancel meanwhile.
    """
    url = await fresh_db(redis_url, 7)
    one = await worker(aiohttp_client, url)
    two = await worker(aiohttp_client, url)
    sessions = [await opened(one, "10.0.2.1") for _ in range(4)]
    valid = await opened(two, "10.0.2.2")
    accepted = RELAY_BUDGET // MIN_CHARGE
    statuses: list[int] = []

    async def flood(n: int) -> None:
        sid = sessions[n]
        for rid in range(n * 10_000, n * 10_000 + accepted // 4):
            sent = await post(one, sid, _cancel(rid), "10.0.2.1")
            statuses.append(sent.status)

    started = time.monotonic()
    flooding = [asyncio.ensure_future(flood(n)) for n in range(4)]
    latencies = []
    while not all(task.done() for task in flooding):
        began = time.monotonic()
        assert (await call(two, valid)).status == 200
        latencies.append(time.monotonic() - began)
        await asyncio.sleep(0.05)
    await asyncio.gather(*flooding)
    assert statuses.count(202) == accepted, statuses.count(202)
    # a fresh session of the same client brings no fresh budget
    extra = await opened(two, "10.0.2.1")
    late = await post(one, extra, _cancel(1), "10.0.2.1")
    if time.monotonic() - started < 9.5:  # still in the window counted
        assert late.status == 429
        assert "all one client's sessions" in (await late.json())["error"]["message"]
        assert int(late.headers["Retry-After"]) >= 1
    assert (await post(one, valid, _cancel(2), "10.0.2.2")).status == 202
    assert max(latencies) < 2.0, latencies
