"""`serve` in this process on os.pipe pairs: subscriptions and cancellation at
2026-07-28, questions on stdout at 2025, back-pressure, a reader that leaves.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import pytest
from stdio_fixture_tools import Slow, TwoQuestions
from stdio_harness import modern

from wymcp.conf import load_settings
from wymcp.core.schema import Tool
from wymcp.core.server import MemorySessionStore
from wymcp.transport.stdio import _connection, build_stdio_engine, serve
from wymcp_conformance import Calc, TriggerToolChange, WatchedResource


class Big(Tool):
    name = "big"
    description = "Answer a megabyte of text."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    runs = 0

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        type(self).runs += 1
        return "b" * 1_000_000


class Touch(Tool):
    name = "touch"
    description = "Say the watched resource changed."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        ctx.server.resource_updated("test://watched-resource")
        return "touched"


class Pipes:
    """Both ends the client holds, and the server task."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.engine = build_stdio_engine(settings)
        self.in_r, self.in_w = os.pipe()
        self.out_r, self.out_w = os.pipe()
        self.task: asyncio.Task[None] | None = None
        self.reader = asyncio.StreamReader(limit=8 * 1024 * 1024)
        self.read_transport: asyncio.ReadTransport | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(self.reader),
            os.fdopen(self.out_r, "rb", buffering=0),
        )
        self.task = asyncio.ensure_future(
            serve(self.engine, self.settings, input_fd=self.in_r, output_fd=self.out_w)
        )

    def send(self, message: Any) -> None:
        os.write(self.in_w, json.dumps(message).encode() + b"\n")

    async def receive(self) -> Any:
        line = await asyncio.wait_for(self.reader.readline(), 60)
        assert line.endswith(b"\n")
        return json.loads(line)

    async def finish(self) -> list[Any]:
        os.close(self.in_w)
        assert self.task is not None
        await asyncio.wait_for(self.task, 60)
        os.close(self.in_r)
        rest = await asyncio.wait_for(self.reader.read(), 60)
        return [json.loads(line) for line in rest.splitlines()]


@pytest.fixture
async def pipes() -> AsyncIterator[Pipes]:
    settings = load_settings(
        None,
        TOOLS=(Calc, Slow, TwoQuestions, TriggerToolChange, Big, Touch),
        RESOURCES=(WatchedResource,),
        STATE_SECRET="serve-test-state-key-not-a-secret-0123456789",
    )
    opened = Pipes(settings)
    await opened.start()
    yield opened
    if opened.task is not None and not opened.task.done():
        opened.task.cancel()
    if opened.read_transport is not None:
        opened.read_transport.close()


async def test_a_listener_hears_a_change_and_a_cancel_ends_it_silently(pipes):
    pipes.send(
        modern(
            "subscriptions/listen", {"notifications": {"toolsListChanged": True}}, "sub"
        )
    )
    ack = await pipes.receive()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub"
    pipes.send(modern("tools/call", {"name": "test_trigger_tool_change"}, 2))
    seen = [await pipes.receive(), await pipes.receive()]
    changed = next(m for m in seen if m.get("method"))
    assert changed["method"] == "notifications/tools/list_changed"
    assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub"
    assert next(m for m in seen if "id" in m)["id"] == 2
    pipes.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": "sub"},
        }
    )
    assert await pipes.finish() == []


async def test_a_listener_gets_its_result_when_the_input_ends(pipes):
    pipes.send(
        modern("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, 1)
    )
    await pipes.receive()
    [end] = await pipes.finish()
    assert end["id"] == 1
    assert end["result"]["resultType"] == "complete"


async def test_a_2025_question_goes_out_on_stdout_and_its_answer_comes_back(pipes):
    pipes.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
            },
        }
    )
    await pipes.receive()
    pipes.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    pipes.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "two_questions"},
        }
    )
    for name in ("Ada", "Lovelace"):
        question = await pipes.receive()
        assert question["method"] == "elicitation/create"
        pipes.send(
            {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"name": name}},
            }
        )
    answer = await pipes.receive()
    assert answer["result"]["content"][0]["text"] == "Hello, Ada Lovelace!"
    assert await pipes.finish() == []


async def test_a_2025_session_hears_list_changes(pipes):
    pipes.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25"},
        }
    )
    await pipes.receive()
    pipes.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    pipes.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "test_trigger_tool_change"},
        }
    )
    seen = [await pipes.receive(), await pipes.receive()]
    assert {m.get("method") for m in seen} == {None, "notifications/tools/list_changed"}
    await pipes.finish()


async def test_a_second_initialize_replaces_the_session(pipes):
    for rid in (0, 1):
        pipes.send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "initialize",
                "params": {"protocolVersion": "2025-11-25"},
            }
        )
        assert (await pipes.receive())["id"] == rid
    pipes.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    pipes.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert (await pipes.receive())["id"] == 2
    store = pipes.engine.options.session_store
    assert isinstance(store, MemorySessionStore)
    assert len(store.sessions()) == 1
    await pipes.finish()


async def test_a_full_pipe_holds_the_answer_until_the_client_reads(pipes):
    pipes.send(modern("tools/call", {"name": "big"}, 1))
    answer = await pipes.receive()
    assert len(answer["result"]["content"][0]["text"]) == 1_000_000
    await pipes.finish()


async def test_a_client_that_stops_reading_ends_the_server_quietly(pipes):
    pipes.send(modern("tools/call", {"name": "slow", "arguments": {"seconds": 0.1}}, 1))
    assert (await pipes.receive())["id"] == 1
    assert pipes.read_transport is not None
    pipes.read_transport.close()  # the client closes its end of stdout
    pipes.send(
        modern(
            "tools/call",
            {"name": "calc", "arguments": {"action": "add", "data": {"a": 1, "b": 1}}},
            2,
        )
    )
    assert pipes.task is not None
    await asyncio.wait_for(pipes.task, 60)  # stdin is still open: stdout ended it
    os.close(pipes.in_w)
    os.close(pipes.in_r)


async def test_stdin_waits_while_the_client_does_not_read_stdout(pipes):
    assert pipes.read_transport is not None
    pipes.read_transport.pause_reading()  # the client stops reading stdout
    runs_before = Big.runs
    for rid in range(10):
        pipes.send(modern("tools/call", {"name": "big"}, rid))
    await asyncio.sleep(0.5)  # time to read more lines, were it not waiting
    started = Big.runs - runs_before
    # reading stops once the first answers fill the pipe; a few more lines are
    # read while those calls' tasks reach their first write, never all ten
    assert started <= 5
    pipes.read_transport.resume_reading()
    answers = [await pipes.receive() for _ in range(10)]
    assert sorted(a["id"] for a in answers) == list(range(10))
    await pipes.finish()


async def test_one_request_over_the_in_flight_cap_is_answered_busy(pipes, monkeypatch):
    monkeypatch.setattr(_connection, "MAX_IN_FLIGHT", 2)
    for rid in (1, 2, 3):
        pipes.send(
            modern("tools/call", {"name": "slow", "arguments": {"seconds": 0.5}}, rid)
        )
    busy = await pipes.receive()
    assert busy["id"] == 3
    assert busy["error"]["code"] == -32603
    assert "2 requests are in flight" in busy["error"]["message"]
    done = [await pipes.receive(), await pipes.receive()]
    assert sorted(a["id"] for a in done) == [1, 2]
    await pipes.finish()


async def test_a_2025_subscriber_hears_its_resource_updated(pipes):
    init = {"protocolVersion": "2025-11-25"}
    pipes.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
    await pipes.receive()
    pipes.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    subscribe = {"uri": "test://watched-resource"}
    pipes.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "resources/subscribe",
            "params": subscribe,
        }
    )
    assert (await pipes.receive())["id"] == 1
    pipes.send(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "touch"}}
    )
    seen = [await pipes.receive(), await pipes.receive()]
    updated = next(m for m in seen if "method" in m)
    assert updated["method"] == "notifications/resources/updated"
    assert updated["params"]["uri"] == "test://watched-resource"
    await pipes.finish()


async def test_a_2026_listener_hears_its_resource_updated(pipes):
    watch = {"notifications": {"resourceSubscriptions": ["test://watched-resource"]}}
    pipes.send(modern("subscriptions/listen", watch, "w"))
    ack = await pipes.receive()
    assert ack["params"]["notifications"] == watch["notifications"]
    pipes.send(modern("tools/call", {"name": "touch"}, 2))
    seen = [await pipes.receive(), await pipes.receive()]
    updated = next(m for m in seen if "method" in m)
    assert updated["method"] == "notifications/resources/updated"
    assert updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "w"
    [end] = await pipes.finish()
    assert end["id"] == "w"
