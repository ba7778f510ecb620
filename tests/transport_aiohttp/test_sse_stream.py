"""The SSE side: events, the final reply as last event, keep-alives, disconnects."""

from __future__ import annotations

import asyncio
import json

JSON = {"Content-Type": "application/json"}


def rpc(method: str, rid: object = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method}).encode()


def events(text: str) -> list[str]:
    return [block for block in text.split("\n\n") if block]


async def test_an_opened_stream_carries_the_events_then_the_reply(stub_client):
    client, _ = await stub_client()
    response = await client.post("/mcp", data=rpc("stream", rid=9), headers=JSON)
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-cache"
    assert response.headers["X-Accel-Buffering"] == "no"
    assert response.headers["Mcp-Session-Id"] == "abc"
    blocks = events(await response.text())
    assert blocks[0] == 'data: {"jsonrpc":"2.0","method":"notifications/progress"}'
    assert blocks[1] == "id: e1\ndata: "
    assert json.loads(blocks[2].removeprefix("data: ")) == {
        "jsonrpc": "2.0",
        "id": 9,
        "result": {"done": True},
    }
    assert len(blocks) == 3


async def test_a_failure_after_the_stream_opened_ends_it_with_an_internal_error(
    stub_client,
):
    client, _ = await stub_client()
    response = await client.post("/mcp", data=rpc("stream-boom", rid=4), headers=JSON)
    assert response.status == 200
    blocks = events(await response.text())
    last = json.loads(blocks[-1].removeprefix("data: "))
    assert last["id"] == 4
    assert last["error"]["code"] == -32603
    assert "after the stream opened" not in await response.text()


async def test_a_long_stream_gets_keepalive_comments(stub_client):
    client, engine = await stub_client(KEEPALIVE_INTERVAL=0.01)
    response = await client.post("/mcp", data=rpc("stream-hang"), headers=JSON)
    assert response.status == 200
    first = await response.content.readuntil(b"\n\n")
    assert first == b": keepalive\n\n"
    second = await response.content.readuntil(b"\n\n")
    assert second == b": keepalive\n\n"
    response.close()
    await asyncio.wait_for(engine.cancelled.wait(), 10)


async def test_closing_the_stream_cancels_the_call(stub_client):
    client, engine = await stub_client()
    response = await client.post("/mcp", data=rpc("stream-hang"), headers=JSON)
    assert response.status == 200
    await engine.started.wait()
    response.close()
    await asyncio.wait_for(engine.cancelled.wait(), 10)


async def test_a_client_leaving_a_json_call_cancels_it(stub_client):
    client, engine = await stub_client()
    call = asyncio.ensure_future(client.post("/mcp", data=rpc("hang"), headers=JSON))
    await engine.started.wait()
    call.cancel()
    await asyncio.wait_for(engine.cancelled.wait(), 10)


async def test_a_get_stream_is_served_as_sse(stub_client):
    client, engine = await stub_client()
    response = await client.get("/mcp", headers={"Mcp-Session-Id": "hang"})
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/event-stream"
    await engine.started.wait()
    response.close()
    await asyncio.wait_for(engine.cancelled.wait(), 10)


async def test_a_client_leaving_mid_stream_is_no_error(stub_client, caplog):
    client, engine = await stub_client()
    response = await client.post("/mcp", data=rpc("stream-loop"), headers=JSON)
    assert response.status == 200
    await response.content.readuntil(b"\n\n")
    response.close()
    await asyncio.wait_for(engine.cancelled.wait(), 10)
    await asyncio.sleep(0.05)
    assert not [r for r in caplog.records if "unexpected error" in r.getMessage()]
