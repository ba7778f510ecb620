"""A stub engine and a client factory for the transport tests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from wymcp.conf import Settings
from wymcp.core.server import Exchange, Reply, Stream
from wymcp.transport.aiohttp._setup import mount


class StubEngine:
    """Answers by the JSON-RPC method it is sent; records what it saw."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self.cancelled = asyncio.Event()
        self.started = asyncio.Event()
        self.closed = False
        self.tool_specs: tuple[Any, ...] = ()

    async def post(self, exchange: Exchange, stream: Stream) -> Reply:
        self.exchanges.append(exchange)
        body = exchange.body
        method = body.get("method") if isinstance(body, dict) else None
        rid = body.get("id") if isinstance(body, dict) else None
        behaviour = {
            "notify": self._notify,
            "boom": self._boom,
            "stream": self._stream,
            "stream-boom": self._stream_boom,
            "hang": self._hang,
            "stream-hang": self._hang,
            "stream-loop": self._stream_loop,
            "unserialisable": self._unserialisable,
        }.get(method)
        if behaviour is not None:
            return await behaviour(method, rid, stream)
        return Reply(
            200,
            {"jsonrpc": "2.0", "id": rid, "result": {"echo": body}},
            {"X-Engine": "stub"},
        )

    async def _notify(self, method: Any, rid: Any, stream: Stream) -> Reply:
        return Reply(202)

    async def _boom(self, method: Any, rid: Any, stream: Stream) -> Reply:
        raise RuntimeError("a secret detail that must not leak")

    async def _stream(self, method: Any, rid: Any, stream: Stream) -> Reply:
        await stream.open({"Mcp-Session-Id": "abc"})
        await stream.send({"jsonrpc": "2.0", "method": "notifications/progress"})
        await stream.send(None, event_id="e1")
        return Reply(200, {"jsonrpc": "2.0", "id": rid, "result": {"done": True}})

    async def _stream_boom(self, method: Any, rid: Any, stream: Stream) -> Reply:
        await stream.send({"jsonrpc": "2.0", "method": "notifications/message"})
        raise RuntimeError("after the stream opened")

    async def _hang(self, method: Any, rid: Any, stream: Stream) -> Reply:
        if method == "stream-hang":
            await stream.open()
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError

    async def _stream_loop(self, method: Any, rid: Any, stream: Stream) -> Reply:
        await stream.open()
        try:
            while True:
                await stream.send({"jsonrpc": "2.0", "method": "notifications/message"})
                await asyncio.sleep(0.01)
        except BaseException:
            self.cancelled.set()
            raise

    async def _unserialisable(self, method: Any, rid: Any, stream: Stream) -> Reply:
        return Reply(200, {"value": float("nan")})

    async def get(self, exchange: Exchange, stream: Stream) -> Reply:
        self.exchanges.append(exchange)
        if exchange.headers.get("mcp-session-id") == "hang":
            await stream.open()
            self.started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        return Reply(405, None, {"Allow": "POST"})

    async def delete(self, exchange: Exchange) -> Reply:
        self.exchanges.append(exchange)
        return Reply(404, {"error": "Session not found"})

    async def aclose(self) -> None:
        self.closed = True


MakeClient = Callable[..., Awaitable[tuple[TestClient[Any, Any], StubEngine]]]


@pytest.fixture
def stub_client(aiohttp_client: Any) -> MakeClient:
    """Return a factory: settings overrides in, (client, stub engine) out."""

    async def make(**overrides: Any) -> tuple[TestClient[Any, Any], StubEngine]:
        engine = StubEngine()
        app = web.Application()
        mount(app, Settings().evolve(**overrides), engine)
        return await aiohttp_client(app), engine

    return make
