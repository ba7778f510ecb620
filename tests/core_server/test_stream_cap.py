"""The engine's long-lived streams: MAX_STREAMS, per client, and token expiry."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from wymcp.core.schema import Action, Tool
from wymcp.core.server import (
    BearerChallenge,
    Engine,
    EngineOptions,
    Exchange,
    Headers,
    Principal,
    Reply,
)

from .conftest import FakeStream, modern_request

LISTEN = {"notifications": {"toolsListChanged": True}}
NOW = 1_000_000.0


class Zero(Tool):
    name = "zero"
    description = "Does nothing."
    actions = {"go": Action(description="Go", properties={})}  # noqa: RUF012 - the pinned declaration style

    async def run_action(self, action: str, data: Any, ctx: Any) -> object:
        return {}


def engine(**options: Any) -> Engine:
    return Engine(
        tools=[Zero], options=EngineOptions(wall_clock=lambda: NOW, **options)
    )


def listen(rid: int = 1, **fields: Any) -> Exchange:
    body, headers = modern_request("subscriptions/listen", LISTEN, rid)
    return Exchange("POST", Headers.of(headers), body, **fields)


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def hold(served: Engine, exchange: Exchange) -> asyncio.Task[Reply]:
    """Start a listen stream and let it open."""
    task = asyncio.create_task(served.post(exchange, FakeStream()))
    await settle()
    assert not task.done()
    return task


async def test_streams_past_max_streams_get_503_retry_after_naming_the_setting():
    served = engine(max_streams=1)
    first = await hold(served, listen())
    get = Exchange("GET", Headers.of([("Mcp-Session-Id", "x")]))
    busy = await served.get(get, FakeStream())
    assert busy.status == 503
    assert busy.headers == {"Retry-After": "5"}
    assert busy.body == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32603,
            "message": "Service unavailable: too many open streams (MAX_STREAMS). "
            "Retry later.",
        },
    }
    again = await served.post(listen(rid=9), FakeStream())
    assert again.status == 503
    assert again.body["id"] == 9
    body, headers = modern_request("tools/list")
    short = await served.post(Exchange("POST", Headers.of(headers), body), None)  # type: ignore[arg-type]
    assert short.status == 200  # short requests are not streams
    await served.aclose()
    assert (await first).status == 200
    assert (await served.get(get, FakeStream())).status == 404  # the slot is back


async def test_a_client_is_its_principal_else_its_peer_address():
    served = engine(max_streams_per_client=1)
    held = [
        await hold(served, listen(peer="10.0.0.1")),
        await hold(served, listen(principal=Principal("alice"), peer="10.0.0.2")),
    ]
    same_peer = await served.post(listen(peer="10.0.0.1"), FakeStream())
    assert same_peer.status == 503
    assert "(MAX_STREAMS_PER_CLIENT)" in same_peer.body["error"]["message"]
    alice_elsewhere = listen(principal=Principal("alice"), peer="10.0.0.3")
    assert (await served.post(alice_elsewhere, FakeStream())).status == 503
    held.append(await hold(served, listen(peer="10.0.0.2")))  # a new client
    held.append(await hold(served, listen(principal=Principal("bob"), peer="10.0.0.1")))
    await served.aclose()
    for task in held:
        assert (await task).status == 200


async def test_a_stream_ends_when_the_token_that_opened_it_expires():
    served = engine()
    stream = FakeStream()
    alice = Principal("alice", expires_at=NOW + 0.01)
    reply = await served.post(listen(principal=alice), stream)
    assert reply == Reply(200, None)  # ended: nothing more is sent
    assert [m["method"] for m in stream.messages] == [
        "notifications/subscriptions/acknowledged"
    ]
    body, headers = modern_request("tools/list")
    short = await served.post(Exchange("POST", Headers.of(headers), body), None)  # type: ignore[arg-type]
    assert short.status == 200
    await hold(served, listen(principal=Principal("alice")))  # its slot was freed
    await served.aclose()


class LateStream(FakeStream):
    """A stream whose opening takes a turn of the loop."""

    async def open(self, headers: Any = None) -> None:
        await asyncio.sleep(0)
        await super().open(headers)


@pytest.mark.parametrize("challenge", [None, BearerChallenge("https://m", ["mcp"])])
async def test_a_token_expired_before_the_stream_opened_is_401(challenge):
    served = engine()
    expired = Principal("alice", expires_at=NOW - 1)
    reply = await served.post(
        listen(principal=expired, challenge=challenge), LateStream()
    )
    assert reply.status == 401
    message = reply.body["error"]["message"]
    assert message.startswith("Unauthorized: The access token has expired.")
    if challenge is None:
        assert reply.headers == {}
    else:
        assert reply.headers["WWW-Authenticate"] == (
            'Bearer resource_metadata="https://m", error="invalid_token", '
            'error_description="The access token has expired.", scope="mcp"'
        )
