"""List changes: subscriptions/listen at 2026, the session stream at 2025."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping
from typing import Any

import pytest

from wymcp.core.schema import Tool
from wymcp.core.server import Exchange, Headers, Prompt, Resource
from wymcp.core.server._stream_outbox import END, OUTBOX_LIMIT, Outbox
from wymcp.core.server._subscriptions import WATCH_BYTES, watch_cost


class Zero(Tool):
    name = "zero"
    description = "Nothing."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        return "ok"


class Trigger(Tool):
    name = "trigger"
    description = "Adds a tool while running."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        ctx.server.add_tool(Zero)
        return "added"


class Note(Prompt):
    name = "note"

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        return "n"


class Doc(Resource):
    name = "doc"
    uri = "test://doc"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        return "d"


class Anything(Resource):
    """Serves every x:// URI, so sessions may watch any of them."""

    name = "anything"
    uri_template = "x://{+rest}"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        return "a"


@pytest.fixture
def wire(make_wire):
    return make_wire(Trigger, prompts=(Note,), resources=(Doc, Anything))


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_session_cannot_watch_an_overlong_uri(wire):
    sid = await wire.initialize()
    uri = "x://" + "u" * 2044  # 2,048 characters: the longest watched
    reply, _ = await wire.session(sid, "resources/subscribe", {"uri": uri})
    assert reply.body["result"] == {}
    reply, _ = await wire.session(sid, "resources/subscribe", {"uri": uri + "u"})
    assert reply.body["error"]["code"] == -32602
    assert "2048 characters" in reply.body["error"]["data"]["reason"]
    assert len(json.dumps(reply.body)) < 512


async def test_listen_honours_no_overlong_uri(wire):
    stream = wire.Stream()
    watched = ["test://doc", "x://" + "u" * 100_000]
    listen = asyncio.create_task(
        wire.modern(
            "subscriptions/listen",
            {"notifications": {"resourceSubscriptions": watched}},
            rid="sub-1",
            stream=stream,
        )
    )
    await settle()
    ack = stream.messages[0]["params"]["notifications"]
    assert ack["resourceSubscriptions"] == ["test://doc"]
    await wire.engine.aclose()
    await listen


async def test_listen_acknowledges_first_and_tags_every_notification(wire):
    stream = wire.Stream()
    listen = asyncio.create_task(
        wire.modern(
            "subscriptions/listen",
            {
                "notifications": {
                    "toolsListChanged": True,
                    "resourceSubscriptions": ["test://doc"],
                }
            },
            rid="sub-1",
            stream=stream,
        )
    )
    await settle()
    assert stream.open_headers == {"X-Accel-Buffering": "no"}
    ack = stream.messages[0]
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {
        "toolsListChanged": True,
        "resourceSubscriptions": ["test://doc"],
    }
    assert ack["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "sub-1"}
    reply, _ = await wire.modern("tools/call", {"name": "trigger"}, rid=2)
    assert reply.body["result"]["content"][0]["text"] == "added"
    wire.engine.add_prompt(Note)  # not requested: never sent
    wire.engine.resource_updated("test://doc")
    wire.engine.resource_updated("test://other")
    await settle()
    methods = [m["method"] for m in stream.messages]
    assert methods == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
        "notifications/resources/updated",
    ]
    for message in stream.messages[1:]:
        assert message["params"]["_meta"] == {
            "io.modelcontextprotocol/subscriptionId": "sub-1"
        }
    await wire.engine.aclose()
    reply, _ = await listen
    result = reply.body["result"]
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"
    listed, _ = await wire.modern("tools/list", rid=3)
    assert [t["name"] for t in listed.body["result"]["tools"]] == [
        "trigger",
        "zero",
        "help",
    ]


async def test_listen_honours_only_what_exists(make_wire):
    wire = make_wire(Zero)
    stream = wire.Stream()
    listen = asyncio.create_task(
        wire.modern(
            "subscriptions/listen",
            {"notifications": {"promptsListChanged": True, "toolsListChanged": False}},
            stream=stream,
        )
    )
    await settle()
    assert stream.messages[0]["params"]["notifications"] == {}
    await wire.engine.aclose()
    await listen


async def test_listen_needs_a_notifications_object(wire):
    reply, _ = await wire.modern("subscriptions/listen", {})
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32602


async def test_a_gone_listener_is_forgotten(wire):
    reply, _ = await wire.modern(
        "subscriptions/listen",
        {"notifications": {"toolsListChanged": True}},
        stream=wire.Stream(fail=True),
    )
    assert reply.status == 200
    wire.engine.add_tool(Zero)


def get_exchange(sid: str) -> Exchange:
    return Exchange(method="GET", headers=Headers.of([("Mcp-Session-Id", sid)]))


async def test_a_list_change_goes_to_the_session_stream_once(wire):
    sid = await wire.initialize()
    stream = wire.Stream()
    get = asyncio.create_task(wire.engine.get(get_exchange(sid), stream))
    await settle()
    wire.engine.add_tool(Zero)
    wire.engine.remove_tool("zero")
    await settle()
    assert stream.messages == [
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    ]
    for message in stream.messages:
        wire.validate("2025-11-25", message, None)
    await wire.session(sid, "tools/list")
    wire.engine.add_prompt(Note)
    wire.engine.add_tool(Zero)
    await settle()
    assert [m["method"] for m in stream.messages] == [
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/tools/list_changed",
    ]
    await wire.engine.aclose()
    await get


async def test_a_change_owed_is_delivered_when_the_stream_attaches(wire):
    sid = await wire.initialize()
    wire.engine.add_tool(Zero)
    stream = wire.Stream()
    get = asyncio.create_task(wire.engine.get(get_exchange(sid), stream))
    await settle()
    assert stream.events[0] == (None, "evt-1")
    assert stream.events[1] == (
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
        "evt-2",
    )
    await wire.engine.aclose()
    await get


async def test_remove_returns_whether_something_was_removed(wire):
    assert wire.engine.remove_tool("nope") is False
    assert wire.engine.remove_prompt("note") is True
    assert wire.engine.remove_resource("test://doc") is True
    assert wire.engine.remove_resource("test://doc") is False
    wire.engine.add_resource(Doc)
    reply, _ = await wire.modern("resources/list")
    assert [r["uri"] for r in reply.body["result"]["resources"]] == ["test://doc"]


async def test_the_listener_cap_answers_503(make_wire):
    wire = make_wire(Zero, max_streams=1)
    first = asyncio.create_task(
        wire.modern(
            "subscriptions/listen",
            {"notifications": {"toolsListChanged": True}},
            stream=wire.Stream(),
        )
    )
    await settle()
    reply, _ = await wire.modern("subscriptions/listen", {"notifications": {}}, rid=2)
    assert reply.status == 503
    assert reply.headers["Retry-After"] == "5"
    await wire.engine.aclose()
    await first


async def test_a_session_watches_a_bounded_number_of_resources(wire):
    sid = await wire.initialize()
    for n in range(100):
        reply, _ = await wire.session(sid, "resources/subscribe", {"uri": f"x://{n}"})
        assert reply.body["result"] == {}
    reply, _ = await wire.session(sid, "resources/subscribe", {"uri": "x://one-more"})
    assert reply.body["error"]["code"] == -32602
    reply, _ = await wire.session(sid, "resources/subscribe", {"uri": "x://5"})
    assert reply.body["result"] == {}


# ------------------------------------------------- what a watch may cost


async def test_a_session_cannot_watch_a_uri_no_resource_serves(wire):
    sid = await wire.initialize()
    uri = "nothing://" + "n" * 1000
    reply, _ = await wire.session(sid, "resources/subscribe", {"uri": uri})
    error = reply.body["error"]
    assert (error["code"], error["message"]) == (-32002, "Resource not found")
    assert len(error["data"]["uri"]) <= 121  # cut, as every echo
    assert len(json.dumps(reply.body)) < 512
    session = wire.engine._store.get(sid)
    assert session.subscriptions == set()
    assert session.watched_bytes == 0


async def test_a_session_watches_uris_within_a_memory_budget(wire):
    """Watched URIs cost what Python keeps of them: 4-byte characters count 4."""
    sid = await wire.initialize()
    session = wire.engine._store.get(sid)
    taken = 0
    for n in range(100):
        uri = f"x://{n:03}/" + "\U0001f600" * 2000  # 2,009 characters, ~8 KB
        reply, _ = await wire.session(sid, "resources/subscribe", {"uri": uri})
        if "error" in reply.body:
            break
        taken += 1
    assert taken == WATCH_BYTES // watch_cost(uri)
    assert session.watched_bytes <= WATCH_BYTES
    error = reply.body["error"]
    assert error["code"] == -32602
    assert f"{WATCH_BYTES} bytes" in error["data"]["reason"]
    kept = sum(sys.getsizeof(u) for u in session.subscriptions)
    assert kept <= session.watched_bytes <= WATCH_BYTES
    # unsubscribing gives the budget back
    first = next(iter(session.subscriptions))
    reply, _ = await wire.session(sid, "resources/unsubscribe", {"uri": first})
    assert reply.body["result"] == {}
    reply, _ = await wire.session(sid, "resources/subscribe", {"uri": uri})
    assert reply.body["result"] == {}
    reply, _ = await wire.session(sid, "resources/subscribe", {"uri": uri})
    assert reply.body["result"] == {}  # watching twice costs nothing more
    assert session.watched_bytes == sum(watch_cost(u) for u in session.subscriptions)


async def test_listen_keeps_served_uris_within_the_memory_budget(wire):
    big = ["x://" + f"{n:03}" + "\U0001f600" * 2000 for n in range(20)]
    watched = ["nothing://a", "test://doc", "test://doc", *big]
    task = asyncio.create_task(
        wire.modern(
            "subscriptions/listen",
            {"notifications": {"resourceSubscriptions": watched}},
            stream=(stream := wire.Stream()),
        )
    )
    await settle()
    ack = stream.messages[0]["params"]["notifications"]["resourceSubscriptions"]
    assert ack[0] == "test://doc"
    assert ack[1:] == big[: len(ack) - 1]
    assert sum(watch_cost(u) for u in ack) <= WATCH_BYTES
    assert len(ack) < len(big)
    await wire.engine.aclose()
    await task


# ------------------------------------------------- streams that are not read


class Stuck:
    """A client that never reads: the first write after the priming blocks."""

    messages: tuple[Any, ...] = ()

    def __init__(self, writes_before_blocking: int) -> None:
        self.opened = False
        self.sent = 0
        self.left = writes_before_blocking

    async def open(self, headers: Mapping[str, str] | None = None) -> None:
        self.opened = True

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        self.sent += 1
        if self.sent > self.left:
            await asyncio.Event().wait()  # the socket's buffer is full


async def test_an_unread_listen_stream_is_bounded_then_closed(wire):
    stream = Stuck(writes_before_blocking=1)  # the acknowledgement only
    task = asyncio.create_task(
        wire.modern(
            "subscriptions/listen",
            {"notifications": {"resourceSubscriptions": ["test://doc"]}},
            stream=stream,
        )
    )
    await settle()
    (listener,) = wire.engine._subscriptions._listeners
    wire.engine.resource_updated("test://doc")
    await settle()  # the reader took it and is stuck writing it
    assert stream.sent == 2
    longest = 0
    for _ in range(OUTBOX_LIMIT * 3):
        wire.engine.resource_updated("test://doc")
        longest = max(longest, len(listener.queue))
    assert longest <= OUTBOX_LIMIT
    await settle()
    assert task.done()
    assert task.cancelled()  # closed as if the client had left
    assert len(wire.engine._subscriptions) == 0


async def test_an_unread_session_stream_is_bounded_then_closed(wire):
    sid = await wire.initialize()
    await wire.session(sid, "resources/subscribe", {"uri": "test://doc"})
    stream = Stuck(writes_before_blocking=1)  # the priming event only
    exchange = Exchange(method="GET", headers=Headers.of([("Mcp-Session-Id", sid)]))
    task = asyncio.create_task(wire.engine.get(exchange, stream))
    await settle()
    session = wire.engine._store.get(sid)
    outbox = session.outbox
    wire.engine.resource_updated("test://doc")
    await settle()  # the reader took it and is stuck writing it
    assert stream.sent == 2
    longest = 0
    for _ in range(OUTBOX_LIMIT * 3):
        wire.engine.resource_updated("test://doc")
        longest = max(longest, len(outbox))
    assert longest <= OUTBOX_LIMIT
    await settle()
    assert task.cancelled()
    assert session.outbox is None  # a new GET opens a new stream
    reopened = wire.Stream()
    again = asyncio.create_task(wire.engine.get(exchange, reopened))
    await settle()
    wire.engine.resource_updated("test://doc")
    await settle()
    assert reopened.messages[-1]["method"] == "notifications/resources/updated"
    await wire.engine.delete(
        Exchange(method="DELETE", headers=Headers.of([("Mcp-Session-Id", sid)]))
    )
    assert (await again).status == 200


async def test_a_burst_to_a_reader_that_waits_is_merged_not_closed(wire):
    """A reader idle in its queue is not behind: repeats of a change merge."""
    stream = wire.Stream()
    task = asyncio.create_task(
        wire.modern(
            "subscriptions/listen",
            {"notifications": {"resourceSubscriptions": ["test://doc"]}},
            stream=stream,
        )
    )
    await settle()
    (listener,) = wire.engine._subscriptions._listeners
    for _ in range(OUTBOX_LIMIT * 3):
        wire.engine.resource_updated("test://doc")
        assert len(listener.queue) == 1
    await settle()
    assert [m["method"] for m in stream.messages] == [
        "notifications/subscriptions/acknowledged",
        "notifications/resources/updated",
    ]
    assert not task.done()
    await wire.engine.aclose()
    reply, _ = await task
    assert reply.status == 200


async def test_distinct_messages_waiting_are_bounded_too():
    """Messages without a key (none yet) still cannot pile up past the limit."""

    async def made_by_a_reader() -> Outbox:
        return Outbox(limit=10)

    outbox = await asyncio.create_task(made_by_a_reader())  # its reader has ended
    for n in range(25):
        outbox.put({"n": n})
        assert len(outbox) <= 10
    assert outbox.overflowed
    assert await outbox.get() is END


def test_an_outbox_made_outside_a_loop_has_no_reader_to_cancel():
    outbox = Outbox(limit=1)
    outbox.put({"n": 1})
    outbox.put({"n": 2})
    assert outbox.overflowed
    assert len(outbox) == 0
