"""List changes: subscriptions/listen at 2026, the session stream at 2025."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest

from wymcp.core.schema import Tool
from wymcp.core.server import Exchange, Headers, Prompt, Resource


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


@pytest.fixture
def wire(make_wire):
    return make_wire(Trigger, prompts=(Note,), resources=(Doc,))


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
    wire = make_wire(Zero, max_listeners=1)
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
