"""The engine's side of issue 12: what a session and a stream may cost, and more.

Memory is measured with tracemalloc on an engine driven in-process (the
transport's share is measured elsewhere); each budget here is a row of the
"Memory budget" table in docs/security.md.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from wymcp.conf import ImproperlyConfigured, build_engine, load_settings
from wymcp.core.schema import Tool
from wymcp.core.server import Engine, EngineOptions, Exchange, Headers, Reply, Resource
from wymcp.core.server._session import DECLARATION_LIMIT
from wymcp.core.server._stream_outbox import OUTBOX_LIMIT
from wymcp.core.server._subscriptions import MAX_URIS, WATCH_BYTES

MODERN = "2026-07-28"
SESSION = "2025-11-25"
KIB = 1024

SESSION_BUDGET = 48 * KIB
"""Most memory one session keeps, at the worst its client can make it."""
STREAM_BUDGET = 96 * KIB
"""Most memory one listen stream keeps (its request aside), unread and full."""
SESSION_STREAM_BUDGET = 64 * KIB
"""Most memory a session's GET stream adds to its session, unread and full."""

WORST_CAPABILITIES = {"x": [[] for _ in range(2700)]}
"""8,107 bytes of JSON under DECLARATION_LIMIT; 151 KiB as Python lists."""


class Anything(Resource):
    """Serves every x:// URI, so every watch below is allowed."""

    name = "anything"
    uri_template = "x://{+rest}"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        """Return a constant."""
        del uri, params, ctx
        return "a"


class Zero(Tool):
    """A tool that answers at once."""

    name = "zero"
    description = "Answer at once."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Answer."""
        del arguments, ctx
        return "ok"


class Silent:
    """A stream whose client reads nothing after `writes` events."""

    def __init__(self, writes: int = 1_000_000) -> None:
        self.opened = False
        self.sent = 0
        self.writes = writes

    async def open(self, headers: Mapping[str, str] | None = None) -> None:
        """Commit the stream."""
        del headers
        self.opened = True

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        """Write, or block forever once the client's buffer is full."""
        del message, event_id
        self.sent += 1
        if self.sent > self.writes:
            await asyncio.Event().wait()


def engine(**options: Any) -> Engine:
    """An engine serving `zero` and every x:// URI."""
    return Engine(tools=[Zero], resources=[Anything], options=EngineOptions(**options))


async def post(
    served: Engine, body: dict[str, Any], headers: list[tuple[str, str]]
) -> Reply:
    """POST one JSON-RPC message and return the engine's reply."""
    exchange = Exchange("POST", Headers.of(headers), body)
    return await served.post(exchange, Silent())


async def worst_session(served: Engine, n: int) -> str:
    """A session with the costliest declaration and watches a client can send."""
    reply = await post(
        served,
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": SESSION,
                "capabilities": WORST_CAPABILITIES,
                "clientInfo": {"name": "c", "version": "1"},
            },
        },
        [],
    )
    sid = reply.headers["Mcp-Session-Id"]
    headers = [("Mcp-Session-Id", sid), ("MCP-Protocol-Version", SESSION)]
    await post(
        served, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers
    )
    for k in range(MAX_URIS + 1):
        # 2,009 four-byte characters: the costliest URI a watch may name
        uri = f"x://{n:04}/{k:03}/" + "\U0001f600" * 2000
        reply = await post(
            served,
            {
                "jsonrpc": "2.0",
                "id": k + 1,
                "method": "resources/subscribe",
                "params": {"uri": uri},
            },
            headers,
        )
        if "error" in reply.body:
            break
    return sid


MEASURING = pytest.mark.loop_stall_bound(10.0)
"""The measurement itself (gc.collect and tracemalloc, on the test's loop) is what
holds the loop here; no request is served alongside."""


async def traced(work: Callable[[], Awaitable[object]]) -> int:
    """Bytes still allocated after `work` (the garbage collected first)."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        kept = await work()
        gc.collect()
        used = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    del kept
    return used


def test_the_worst_declaration_fits_the_limit_it_is_meant_to_test():
    size = len(json.dumps(WORST_CAPABILITIES, separators=(",", ":")))
    assert (
        DECLARATION_LIMIT - 200
        < size + len('{"name":"c","version":"1"}')
        <= (DECLARATION_LIMIT)
    )


@MEASURING
async def test_a_session_costs_at_most_its_budget_and_sessions_add_up_linearly():
    """The issue measured ~1.9 MB a session (1,000 sessions: +1.8 GB of RSS)."""
    served = engine()
    await worst_session(served, 9999)  # warm every cache first

    async def sessions(count: int, first: int) -> list[str]:
        return [await worst_session(served, first + n) for n in range(count)]

    small = await traced(lambda: sessions(20, 0))
    large = await traced(lambda: sessions(40, 100))
    print(f"per session: {small / 20:,.0f} B (20), {large / 40:,.0f} B (40)")  # noqa: T201 - the figure, with -s
    assert small / 20 <= SESSION_BUDGET, small / 20
    assert large / 40 <= SESSION_BUDGET, large / 40
    assert 1.6 < large / small < 2.5, (small, large)  # linear in the sessions
    session = served._store.sessions()[-1]
    assert session.watched_bytes <= WATCH_BYTES
    assert len(session.capabilities_json) <= DECLARATION_LIMIT


@MEASURING
async def test_a_listen_stream_costs_at_most_its_budget_unread_and_full():
    """Every watch at its cap, every watched URI changed, the client reads nothing."""
    served = engine()
    count = 30
    bodies = []
    for n in range(count):
        uris = [f"x://{n:04}/{k:03}" for k in range(MAX_URIS)]
        params = {
            "resourceSubscriptions": uris,
            "toolsListChanged": True,
        }
        bodies.append(listen_request(n, params))
    tasks: list[asyncio.Task[Reply]] = []

    async def streams() -> None:
        for body, headers in bodies:
            exchange = Exchange("POST", Headers.of(headers), body)
            tasks.append(asyncio.create_task(served.post(exchange, Silent(writes=1))))
        for _ in range(5):
            await asyncio.sleep(0)
        for n in range(count):  # the reader takes one, then its write blocks
            served.resource_updated(f"x://{n:04}/000")
        for _ in range(5):
            await asyncio.sleep(0)
        for n in range(count):
            for k in range(MAX_URIS):
                served.resource_updated(f"x://{n:04}/{k:03}")
        served.add_tool(type("Other", (Zero,), {"name": "other"}))

    used = await traced(streams)
    print(f"per listen stream: {used / count:,.0f} B")  # noqa: T201 - the figure, with -s
    assert used / count <= STREAM_BUDGET, used / count
    listeners = served._subscriptions._listeners
    assert len(listeners) == count
    assert all(len(listener.queue) <= MAX_URIS + 3 for listener in listeners)
    await served.aclose()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@MEASURING
async def test_a_session_stream_costs_at_most_its_budget_unread_and_full():
    served = engine()
    count = 20
    sids = []
    for n in range(count):
        reply = await post(
            served,
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": SESSION},
            },
            [],
        )
        sid = reply.headers["Mcp-Session-Id"]
        headers = [("Mcp-Session-Id", sid)]
        await post(
            served, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers
        )
        for k in range(MAX_URIS):
            uri = f"x://{n:04}/{k:03}"
            subscribe = {"uri": uri}
            await post(
                served,
                {
                    "jsonrpc": "2.0",
                    "id": k + 1,
                    "method": "resources/subscribe",
                    "params": subscribe,
                },
                headers,
            )
        sids.append(sid)
    uris = [[f"x://{n:04}/{k:03}" for k in range(MAX_URIS)] for n in range(count)]
    tasks: list[asyncio.Task[Reply]] = []

    async def streams() -> None:
        for sid in sids:
            exchange = Exchange("GET", Headers.of([("Mcp-Session-Id", sid)]))
            tasks.append(asyncio.create_task(served.get(exchange, Silent(writes=1))))
        for _ in range(5):
            await asyncio.sleep(0)
        for watched in uris:
            for uri in watched:
                served.resource_updated(uri)
        served.add_tool(type("Other", (Zero,), {"name": "other"}))

    used = await traced(streams)
    print(f"per session stream: {used / count:,.0f} B")  # noqa: T201 - the figure, with -s
    assert used / count <= SESSION_STREAM_BUDGET, used / count
    assert all(len(s.outbox or ()) <= MAX_URIS + 3 for s in served._store.sessions())
    await served.aclose()
    for task in tasks:
        task.cancel()  # each is stuck writing to a client that reads nothing
    await asyncio.gather(*tasks, return_exceptions=True)


def listen_request(
    rid: int, notifications: dict[str, Any]
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """A 2026-07-28 `subscriptions/listen` request and its headers."""
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "subscriptions/listen",
        "params": {
            "notifications": notifications,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", "subscriptions/listen")]
    return body, headers


async def test_an_unread_stream_under_a_flood_of_changes_is_closed():
    """1.2 million updates to an unread stream took +430 MB before."""
    served = engine()
    body, headers = listen_request(1, {"resourceSubscriptions": ["x://a", "x://b"]})
    stream = Silent(writes=1)  # the acknowledgement, then a full buffer
    task = asyncio.create_task(
        served.post(Exchange("POST", Headers.of(headers), body), stream)
    )
    for _ in range(5):
        await asyncio.sleep(0)
    served.resource_updated("x://a")
    for _ in range(5):
        await asyncio.sleep(0)
    (listener,) = served._subscriptions._listeners
    longest = 0
    for n in range(OUTBOX_LIMIT * 5):
        served.resource_updated("x://a" if n % 2 else "x://b")
        longest = max(longest, len(listener.queue))
    assert longest <= 2
    for _ in range(5):
        await asyncio.sleep(0)
    assert task.cancelled()
    assert len(served._subscriptions) == 0


def test_a_near_miss_uri_read_is_answered_in_linear_time():
    """A 40 KB URI against `x://{+a}/{+b}/z` froze the loop for 12 s before."""

    class TwoParts(Resource):
        name = "two"
        uri_template = "x://{+a}/{+b}/z"

        async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
            del uri, params, ctx
            return "a"

    served = Engine(tools=[Zero], resources=[TwoParts])

    def best(size: int) -> float:
        body, headers = read_request("x://" + "/" * size + "y")
        times = []
        for _ in range(3):
            start = time.perf_counter()
            reply = asyncio.run(post(served, body, headers))
            times.append(time.perf_counter() - start)
            assert reply.body["error"]["code"] == -32602
        return min(times)

    small, large = best(8_000), best(32_000)
    assert large / small < 9, (small, large)  # quadratic was 16


def read_request(uri: str) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """A 2026-07-28 `resources/read` request and its headers."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "resources/read",
        "params": {
            "uri": uri,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "resources/read"),
        ("Mcp-Name", uri),
    ]
    return body, headers


# --------------------------------------------------------------- settings


def test_the_new_limits_are_settings_with_safe_defaults():
    settings = load_settings(None)
    assert settings.RESULT_LIMIT == 16 * 1024 * 1024
    assert settings.EXPOSE_EXCEPTION_MESSAGES is False
    options = build_engine(
        load_settings(None, RESULT_LIMIT=4096, EXPOSE_EXCEPTION_MESSAGES=True)
    ).options
    assert options.result_limit == 4096
    assert options.expose_exception_messages is True


@pytest.mark.parametrize(
    ("setting", "value", "expected"),
    [
        ("RESULT_LIMIT", 10, "at least 1024"),
        ("RESULT_LIMIT", "16M", "must be an integer, not str"),
        ("EXPOSE_EXCEPTION_MESSAGES", "yes", "must be True or False, not str"),
    ],
)
def test_a_bad_limit_names_the_setting(setting, value, expected):
    with pytest.raises(ImproperlyConfigured, match=expected) as exc:
        load_settings(None, **{setting: value})
    (problem,) = exc.value.problems
    assert problem.message.startswith(setting)


class Leaky(Tool):
    """A tool whose exception carries a database password."""

    name = "leaky"
    description = "Raise with a secret."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Raise."""
        del arguments, ctx
        raise ConnectionError("postgresql://admin:hunter2@db/prod from /home/alice")


async def test_a_served_tools_exception_message_stays_in_the_log(caplog):
    served = build_engine(load_settings(None, TOOLS=[Leaky]))
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "leaky",
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = [
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "leaky"),
    ]
    reply = await post(served, body, headers)
    sent = json.dumps(reply.body)
    assert "hunter2" not in sent
    assert "/home/alice" not in sent
    shown = json.loads(reply.body["result"]["content"][0]["text"])
    assert shown["exception"] == "ConnectionError"
    assert shown["reference"] in caplog.text
    assert "hunter2" in caplog.text


# ------------------------------------------------- the demo store's threads


async def test_the_demo_store_answers_while_stopped_tools_hold_every_default_thread(
    tmp_path: Path,
):
    """Abandoned `to_thread` calls starved every store query before."""
    from wymcp_tasks._store import TodoStore

    loop = asyncio.get_running_loop()
    release = threading.Event()
    # what tools stopped by CALL_TIMEOUT leave behind: threads still blocked
    blockers = [loop.run_in_executor(None, release.wait) for _ in range(64)]
    store = TodoStore(tmp_path / "tasks.sqlite3")
    try:
        query = asyncio.ensure_future(store.list_todos())
        done, _ = await asyncio.wait({query}, timeout=60)
        assert query in done, "the store waited for the default executor"
        assert query.result() == []
        assert not any(blocker.done() for blocker in blockers)
    finally:
        release.set()
        await asyncio.gather(*blockers)
        store.close()
