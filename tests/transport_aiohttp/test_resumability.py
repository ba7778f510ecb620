"""Resuming a 2025 session's SSE streams with `Last-Event-ID` (no BROKER).

The GET stream's missed events are replayed; a POST stream the server closed
early (SEP-1699 polling) goes on in the GET that names its last event, up to
the call's answer; an unknown id replays nothing and the stream starts afresh.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp

from legacy_initialize import LEGACY_INITIALIZE
from sse_events import next_event
from wymcp.core.schema import Action, Tool
from wymcp.core.server._call_detached import DetachedCalls
from wymcp.core.server._session_replay import Replay
from wymcp.transport.aiohttp import create_app
from wymcp.transport.aiohttp._setup import get_endpoint

LEGACY = "2025-11-25"
JSON_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
}


class Poller(Tool):
    name = "poller"
    description = "Close the stream mid-call."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "run": Action(description="Close, report, answer", properties={}),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        await ctx.report_progress(1, 3)
        closed = await ctx.close_stream()
        await asyncio.sleep(0.05)
        await ctx.report_progress(2, 3)
        await asyncio.sleep(0.05)
        return {"closed": closed}


class Extra(Tool):
    name = "extra"
    description = "A tool added at runtime."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "noop": Action(description="Nothing", properties={}),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        return {}


async def start(aiohttp_client, version: str = LEGACY):
    app = create_app(TOOLS=[Poller])
    client = await aiohttp_client(app)
    response = await client.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        headers=JSON_HEADERS,
    )
    sid = response.headers["Mcp-Session-Id"]
    headers = {**JSON_HEADERS, "Mcp-Session-Id": sid, "MCP-Protocol-Version": version}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await client.post("/mcp", json=note, headers=headers)).status == 202
    return app, client, headers


async def open_get(client, headers, last: str | None = None):
    get_headers = {k: v for k, v in headers.items() if k != "Content-Type"}
    get_headers["Accept"] = "text/event-stream"
    if last is not None:
        get_headers["Last-Event-ID"] = last
    response = await client.get("/mcp", headers=get_headers)
    assert response.status == 200
    return response


async def test_a_resumed_get_stream_replays_the_events_after_the_last_id(
    aiohttp_client,
):
    app, client, headers = await start(aiohttp_client)
    first = await open_get(client, headers)
    priming = await next_event(first)
    assert priming["data"] == ""
    get_endpoint(app).engine.add_tool(Extra)  # type: ignore[attr-defined]
    missed = await next_event(first)
    assert '"notifications/tools/list_changed"' in missed["data"]
    first.close()  # the client lost the stream: it saw only the priming event

    resumed = await open_get(client, headers, last=priming["id"])
    replayed = await next_event(resumed)
    assert replayed == missed  # same id, same message
    fresh = await next_event(resumed)
    assert fresh["data"] == ""  # then the new stream's own priming event
    assert int(fresh["id"].removeprefix("evt-")) > int(
        missed["id"].removeprefix("evt-")
    )
    resumed.close()


async def test_an_unknown_last_event_id_replays_nothing_and_starts_afresh(
    aiohttp_client,
):
    _app, client, headers = await start(aiohttp_client)
    for last in ("evt-999", "garbage", "evt-" + "9" * 5000, "evt-1 evt-2"):
        response = await open_get(client, headers, last=last[:8000])
        event = await next_event(response)
        assert event["data"] == ""  # the priming event comes first: nothing replayed
        response.close()


async def test_a_post_stream_closed_early_goes_on_in_the_get_naming_it(
    aiohttp_client,
):
    _app, client, headers = await start(aiohttp_client)
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "poller",
            "arguments": {"action": "run", "data": {}},
            "_meta": {"progressToken": "p"},
        },
    }
    post = await client.post("/mcp", json=call, headers=headers)
    assert post.headers["Content-Type"] == "text/event-stream"
    progress = await next_event(post)
    assert '"progress":1' in progress["data"]
    priming = await next_event(post)
    assert priming["data"] == ""
    assert priming["retry"] == "1000"
    assert await post.content.read() == b""  # the response ended mid-call

    resumed = await open_get(client, headers, last=priming["id"])
    later = await next_event(resumed)
    assert '"progress":2' in later["data"]
    answer = await next_event(resumed)
    assert '"id":7' in answer["data"]
    assert '\\"closed\\":true' in answer["data"].replace(" ", "")
    assert await asyncio.wait_for(resumed.content.read(), 10) == b""  # it ends


async def test_before_2025_11_25_a_call_cannot_close_its_stream(aiohttp_client):
    _app, client, headers = await start(aiohttp_client, version="2025-06-18")
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "poller", "arguments": {"action": "run", "data": {}}},
    }
    response = await client.post("/mcp", json=call, headers=headers)
    body = await response.json()
    assert '"closed":false' in body["result"]["content"][0]["text"].replace(" ", "")


def test_the_replay_keeps_at_most_its_count_and_bytes():
    replay = Replay(events=4, budget=100)
    for seq in range(1, 10):
        assert replay.record(seq, "get", {"n": seq})
    assert len(replay) == 4
    assert replay.find(5) is None
    assert [e.seq for e in replay.after("get", 6)] == [7, 8, 9]
    assert not replay.record(10, "get", {"big": "x" * 200})  # alone past the budget
    for seq in range(11, 20):
        replay.record(seq, "get", {"pad": "x" * 30})
    assert replay.size <= 100
    assert len(replay) < 4


class Lingerer(Tool):
    name = "lingerer"
    description = "Close the stream, then work on a while."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "run": Action(description="Close, wait, report, answer", properties={}),
    }
    finished = 0

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        await ctx.close_stream()
        await asyncio.sleep(0.3)  # meanwhile the client closes the POST's connection
        await ctx.report_progress(2, 3)
        Lingerer.finished += 1
        return {"done": True}


async def closed_then_hung_up(url: str, headers: dict[str, str], rid: int) -> str:
    """POST a lingering call on a connection of its own, read its priming
    event, then close that connection (SEP-1699: the response has ended)."""
    call = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {
            "name": "lingerer",
            "arguments": {"action": "run", "data": {}},
            "_meta": {"progressToken": "p"},
        },
    }
    async with aiohttp.ClientSession() as once:
        response = await once.post(url, json=call, headers=headers)
        priming = await next_event(response)
        assert priming["data"] == ""
        assert await response.content.read() == b""
    return priming["id"]  # the session is closed: so is the connection


async def test_a_call_that_ended_its_stream_outlives_its_connection(serve_app):
    """Issue 29 item 5: closing the finished POST's connection cancelled the call."""
    url = await serve_app(create_app(TOOLS=[Lingerer]))
    async with aiohttp.ClientSession() as http:
        response = await http.post(
            url,
            json=LEGACY_INITIALIZE,
            headers=JSON_HEADERS,
        )
        sid = response.headers["Mcp-Session-Id"]
        headers = {
            **JSON_HEADERS,
            "Mcp-Session-Id": sid,
            "MCP-Protocol-Version": LEGACY,
        }
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(url, json=note, headers=headers)).status == 202
        finished = Lingerer.finished
        priming = await closed_then_hung_up(url, headers, 9)

        get_headers = {k: v for k, v in headers.items() if k != "Content-Type"}
        get_headers["Accept"] = "text/event-stream"
        get_headers["Last-Event-ID"] = priming
        resumed = await http.get(url, headers=get_headers)
        assert resumed.status == 200
        progress = await next_event(resumed)
        assert '"progress":2' in progress["data"]
        answer = await next_event(resumed)
        assert '"id":9' in answer["data"]
        assert '\\"done\\":true' in answer["data"].replace(" ", "")
        assert await asyncio.wait_for(resumed.content.read(), 10) == b""
        assert Lingerer.finished == finished + 1


async def test_calls_kept_past_their_connection_are_bounded(serve_app):
    """Past the engine's bound a call goes with its connection, as before:
    its resumed stream ends without an answer instead of waiting."""
    app = create_app(TOOLS=[Lingerer])
    url = await serve_app(app)
    engine = get_endpoint(app).engine
    engine._detached = DetachedCalls(limit=1)  # type: ignore[attr-defined]
    async with aiohttp.ClientSession() as http:
        response = await http.post(
            url,
            json=LEGACY_INITIALIZE,
            headers=JSON_HEADERS,
        )
        sid = response.headers["Mcp-Session-Id"]
        headers = {
            **JSON_HEADERS,
            "Mcp-Session-Id": sid,
            "MCP-Protocol-Version": LEGACY,
        }
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(url, json=note, headers=headers)).status == 202
        first, second = await asyncio.gather(
            closed_then_hung_up(url, headers, 1), closed_then_hung_up(url, headers, 2)
        )
        get_headers = {k: v for k, v in headers.items() if k != "Content-Type"}
        get_headers["Accept"] = "text/event-stream"
        texts = []
        for priming in (first, second):
            resumed = await http.get(
                url, headers={**get_headers, "Last-Event-ID": priming}
            )
            texts.append(await asyncio.wait_for(resumed.text(), 10))
        answered = ['"done\\":true' in text.replace(" ", "") for text in texts]
        assert sorted(answered) == [False, True]  # one kept, one cancelled
        assert engine._detached.refused == 1  # type: ignore[attr-defined]
