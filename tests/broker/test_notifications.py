"""BROKER: change notifications and resumable streams across two workers.

Two apps (two workers) share one real Redis: a change made on one reaches the
GET or `subscriptions/listen` stream the other holds, and a GET stream resumes
with `Last-Event-ID` on the other worker. A stateless 2026 call sends Redis
nothing at all.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import redis.asyncio as aioredis

from broker.test_shared_sessions import (
    MODERN,
    Greeter,
    app,
    initialize,
    initialized,
    modern_call,
    post,
    session_headers,
)
from sse_events import next_event
from wymcp.core.schema import Action, Tool
from wymcp.transport.aiohttp._setup import get_endpoint

WATCHED = "test://watched-resource"


class Extra(Tool):
    name = "extra"
    description = "A tool added at runtime."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "noop": Action(description="Nothing", properties={}),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        return {}


def served(client) -> Any:
    """The core engine behind a worker's endpoint."""
    return get_endpoint(client.app).engine.engine


async def worker(aiohttp_client, redis_url: str):
    return await aiohttp_client(
        app(redis_url, RESOURCES=["wymcp_conformance.WatchedResource"])
    )


async def open_get(client, sid: str, last: str | None = None):
    headers = {**session_headers(sid), "Accept": "text/event-stream"}
    headers.pop("Content-Type")
    if last is not None:
        headers["Last-Event-ID"] = last
    response = await client.get("/mcp", headers=headers)
    assert response.status == 200
    return response


async def test_a_list_change_on_one_worker_reaches_the_get_stream_on_the_other(
    aiohttp_client, redis_url
):
    one = await worker(aiohttp_client, redis_url)
    two = await worker(aiohttp_client, redis_url)
    sid = await initialize(one)
    await initialized(one, sid)
    stream = await open_get(one, sid)
    assert (await next_event(stream))["data"] == ""
    await asyncio.sleep(0.2)  # worker one listens to Redis by now
    served(two).add_tool(Extra)
    event = await next_event(stream)
    assert json.loads(event["data"])["method"] == "notifications/tools/list_changed"
    assert event["id"].startswith("r-")
    stream.close()


async def test_a_resource_update_on_one_worker_reaches_a_subscriber_on_the_other(
    aiohttp_client, redis_url
):
    one = await worker(aiohttp_client, redis_url)
    two = await worker(aiohttp_client, redis_url)
    sid = await initialize(one)
    await initialized(one, sid)
    stream = await open_get(one, sid)
    await next_event(stream)
    # subscribed through worker two: worker one hears of it through Redis
    subscribe = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "resources/subscribe",
        "params": {"uri": WATCHED},
    }
    assert (await post(two, sid, subscribe)).status == 200
    await asyncio.sleep(0.2)
    served(two).resource_updated(WATCHED)
    event = await next_event(stream)
    message = json.loads(event["data"])
    assert message["method"] == "notifications/resources/updated"
    assert message["params"] == {"uri": WATCHED}
    stream.close()


async def test_a_list_change_on_one_worker_reaches_a_listen_stream_on_the_other(
    aiohttp_client, redis_url
):
    one = await worker(aiohttp_client, redis_url)
    two = await worker(aiohttp_client, redis_url)
    # worker one starts listening to Redis on its first request
    data, headers = modern_call()
    assert (await one.post("/mcp", data=data, headers=headers)).status == 200
    body = {
        "jsonrpc": "2.0",
        "id": "sub-1",
        "method": "subscriptions/listen",
        "params": {
            "notifications": {"toolsListChanged": True},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    listen_headers = {**headers, "Mcp-Method": "subscriptions/listen"}
    listen_headers.pop("Mcp-Name")
    stream = await one.post("/mcp", json=body, headers=listen_headers)
    assert stream.status == 200
    ack = json.loads((await next_event(stream))["data"])
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    await asyncio.sleep(0.2)
    served(two).add_tool(Extra)
    event = json.loads((await next_event(stream))["data"])
    assert event["method"] == "notifications/tools/list_changed"
    assert event["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"
    stream.close()


async def test_a_get_stream_resumes_on_the_other_worker_with_last_event_id(
    aiohttp_client, redis_url
):
    one = await worker(aiohttp_client, redis_url)
    two = await worker(aiohttp_client, redis_url)
    sid = await initialize(one)
    await initialized(one, sid)
    stream = await open_get(one, sid)
    priming = await next_event(stream)
    served(one).add_tool(Extra)
    missed = await next_event(stream)
    listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    assert (await post(one, sid, listing)).status == 200  # owed no more: tell again
    served(one).remove_tool("extra")
    await next_event(stream)
    stream.close()  # the client saw only the priming event

    resumed = await open_get(two, sid, last=priming["id"])
    first = await next_event(resumed)
    assert first == missed  # same Redis id, same message, from the other worker
    second = await next_event(resumed)
    assert json.loads(second["data"])["method"] == "notifications/tools/list_changed"
    fresh = await next_event(resumed)
    assert fresh["data"] == ""  # then the resumed stream's own priming event
    resumed.close()


async def test_an_unknown_redis_event_id_replays_nothing(aiohttp_client, redis_url):
    one = await worker(aiohttp_client, redis_url)
    sid = await initialize(one)
    await initialized(one, sid)
    for last in ("r-1-0", "r-99999999999999-0", "r-" + "1" * 100):
        stream = await open_get(one, sid, last=last)
        assert (await next_event(stream))["data"] == ""
        stream.close()


async def test_redis_down_does_not_hold_up_a_change_or_local_streams(
    aiohttp_client, redis_url
):
    from redis_server import free_port

    dead = f"redis://127.0.0.1:{free_port()}/0"
    one = await aiohttp_client(app(dead))
    engine = served(one)
    bus = get_endpoint(one.app).engine._bus
    for _ in range(3):
        engine.add_tool(Extra)  # returns at once: publishing happens later
        engine.remove_tool("extra")
    await asyncio.sleep(0.5)
    assert bus.dropped >= 1  # nobody reached: dropped, never queued without end


async def test_a_stateless_2026_call_sends_redis_no_command(aiohttp_client, redis_url):
    one = await aiohttp_client(app(redis_url, (Greeter,)))
    data, headers = modern_call()
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


class Poller(Tool):
    name = "poller"
    description = "Close the stream mid-call."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "run": Action(description="Close, report, answer", properties={}),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        closed = await ctx.close_stream()
        await asyncio.sleep(0.1)
        await ctx.report_progress(2, 3)
        await asyncio.sleep(0.1)
        return {"closed": closed}


async def test_a_post_stream_closed_early_continues_on_the_other_worker(
    aiohttp_client, redis_url
):
    one = await aiohttp_client(app(redis_url, (Poller,)))
    two = await aiohttp_client(app(redis_url, (Poller,)))
    sid = await initialize(one)
    await initialized(one, sid)
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "poller",
            "arguments": {"action": "run", "data": {}},
            "_meta": {"progressToken": "p"},
        },
    }
    response = await post(one, sid, body)
    priming = await next_event(response)
    assert priming["data"] == ""
    assert priming["retry"] == "1000"
    assert priming["id"].startswith("r-")
    assert await response.content.read() == b""  # ended mid-call

    resumed = await open_get(two, sid, last=priming["id"])
    progress = json.loads((await next_event(resumed))["data"])
    assert progress["method"] == "notifications/progress"
    answer = json.loads((await next_event(resumed))["data"])
    assert answer["id"] == 7
    assert json.loads(answer["result"]["content"][0]["text"]) == {"closed": True}
    assert await asyncio.wait_for(resumed.content.read(), 10) == b""  # it ends


class Recorder:
    """Stands in for the engine: what the bus delivered to this worker."""

    def __init__(self) -> None:
        self.delivered: list[tuple[str, str]] = []

    def deliver_changed(self, kind: str) -> None:
        self.delivered.append(("list", kind))

    def deliver_updated(self, uri: str) -> None:
        self.delivered.append(("updated", uri))


def test_the_bus_delivers_only_well_formed_changes_from_other_workers():
    from wymcp.broker.redis._bus import NotificationBus

    recorder = Recorder()
    bus = NotificationBus(aioredis.Redis(), recorder)  # type: ignore[arg-type]
    other = b'{"o": "elsewhere", "k": "%s", "v": %s}'
    for payload in (
        b"not json",
        b"[]",
        b'{"o": "elsewhere"}',
        other % (b"list", b'"users"'),  # not a list kind
        other % (b"list", b"3"),
        other % (b"updated", b'"' + b"u" * 3000 + b'"'),  # past any URI bound
        other % (b"deleted", b'"x"'),
        b'{"o": "%s", "k": "list", "v": "tools"}' % bus._origin.encode(),  # ours
    ):
        bus.received(payload)
    assert recorder.delivered == []
    bus.received(other % (b"list", b'"tools"'))
    bus.received(other % (b"updated", b'"test://watched-resource"'))
    assert recorder.delivered == [
        ("list", "tools"),
        ("updated", "test://watched-resource"),
    ]
