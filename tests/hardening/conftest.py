"""A real wymcp server on 127.0.0.1 with hostile-input tools, and a raw HTTP client.

The server is `create_app()` under the runner `wymcp serve` uses (handler
cancellation, HEADER_TIMEOUT, MAX_CONNECTIONS), in-process on the test's loop,
so the event-loop watchdog (autouse here) fails any test that blocks it. The
client writes exact bytes on a socket, so requests the aiohttp client would
refuse to send (CR/LF in a header, invalid UTF-8, a lying Content-Length) reach
the server as written.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, ClassVar, TypeVar

import attrs
import pytest
from aiohttp import web

from loop_watchdog import STALL_BOUND, LoopWatchdog
from wymcp.conf import load_settings
from wymcp.core.schema import Action, Tool, ToolError
from wymcp.transport.aiohttp import create_app
from wymcp.transport.aiohttp._runner import make_runner

MODERN = "2026-07-28"
SESSION_REVISION = "2025-11-25"
NO_ARGUMENTS: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}
BODY_LIMIT = 2 * 1024 * 1024
"""The served app's BODY_LIMIT: room for the 100,000-level bodies."""
ANSWER_WAIT = 30.0
"""Seconds the client waits for an answer before the test fails (no hang)."""
RESPONSE_CAP = 1 << 20
"""The most bytes the client reads of one response; a test fails past it."""
PING_BOUND = 2 * STALL_BOUND
"""Seconds a ping sent alongside a hostile request may take (connect included)."""
PING_EVERY = 0.01
"""Seconds between two pings while the hostile request is unanswered."""

T = TypeVar("T")


@attrs.define
class Probe:
    """What the hostile tools saw: calls started, cancelled and finished."""

    started: int = 0
    cancelled: int = 0
    finished: int = 0
    running: asyncio.Event = attrs.field(factory=asyncio.Event)


class Echo(Tool):
    """A multi-action tool that echoes what the gates let through."""

    name = "echo"
    description = "Echo the data it is given."
    actions: ClassVar[dict[str, Action]] = {
        "say": Action(
            description="Echo a short text",
            properties={
                "text": {"type": "string", "maxLength": 50},
                "count": {"type": "integer", "minimum": 0, "maximum": 100},
            },
            required=["text"],
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        """Return the data as read by the gates."""
        del action, ctx
        return {"said": data}


class Boom(Tool):
    """A tool that fails with an exception that must not leak."""

    name = "boom"
    description = "Raise an unexpected exception."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Raise a RuntimeError whose message is long and secret-looking."""
        del arguments, ctx
        raise RuntimeError("db password=hunter2 " * 500)


class Refuse(Tool):
    """A tool that fails the documented way, with ToolError."""

    name = "refuse"
    description = "Fail with a tool error."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Raise ToolError."""
        del arguments, ctx
        raise ToolError("cannot do that")


class Hang(Tool):
    """A tool that never returns unless cancelled."""

    name = "hang"
    description = "Wait forever."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    def __init__(self, probe: Probe) -> None:
        self.probe = probe

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Wait until cancelled, counting the call and its cancellation."""
        del arguments, ctx
        self.probe.started += 1
        self.probe.running.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.probe.cancelled += 1
            raise
        return "never"  # pragma: no cover


class Ticker(Tool):
    """A tool that streams progress for a long time."""

    name = "ticker"
    description = "Report progress many times, then answer."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    def __init__(self, probe: Probe) -> None:
        self.probe = probe

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Send up to 1,000 progress notifications 10 ms apart."""
        del arguments
        self.probe.started += 1
        try:
            for step in range(1, 1001):
                await ctx.report_progress(step, 1000)
                self.probe.running.set()
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            self.probe.cancelled += 1
            raise
        self.probe.finished += 1
        return "ticked"


class Region(Tool):
    """A tool whose string argument is mirrored in `Mcp-Param-Region`."""

    name = "region"
    description = "Echo the region."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Echo the region."""
        del ctx
        return {"region": arguments.get("region")}


class Count(Tool):
    """A tool whose integer argument is mirrored in `Mcp-Param-Count`."""

    name = "count"
    description = "Echo the count."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"count": {"type": "integer", "x-mcp-header": "Count"}},
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Echo the count."""
        del ctx
        return {"count": arguments.get("count")}


@attrs.frozen
class Answer:
    """One HTTP response as read off the socket."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    raw_size: int

    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.body)


def modern_body(
    method: str, params: Mapping[str, Any] | None = None, rid: Any = 1
) -> dict[str, Any]:
    """A 2026-07-28 request body with the `_meta` the revision needs."""
    sent = dict(params or {})
    sent["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        **sent.get("_meta", {}),
    }
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": sent}


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    """The mirrored headers of a 2026-07-28 request."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


@attrs.define
class Wire:
    """A raw HTTP/1.1 client of the server under test."""

    port: int
    probe: Probe
    body_limit: int
    path: str = "/mcp"

    def request_bytes(
        self,
        body: bytes,
        headers: Mapping[str, str] | None = None,
        *,
        method: str = "POST",
        length: bool = True,
    ) -> bytes:
        """Render one request; `headers` are written exactly as given."""
        lines = [f"{method} {self.path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        if length:
            lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape")
        return head + body

    async def send(self, data: bytes, *, source: str | None = None) -> Answer:
        """Write `data` on a new connection (from the address `source`) and read
        one response.
        """
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", self.port, local_addr=None if source is None else (source, 0)
        )
        try:
            writer.write(data)
            await writer.drain()
            return await asyncio.wait_for(read_answer(reader), ANSWER_WAIT)
        finally:
            writer.close()
            await writer.wait_closed()

    async def post(
        self, body: bytes | Any, headers: Mapping[str, str] | None = None
    ) -> Answer:
        """POST `body` (bytes as is, anything else as JSON)."""
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return await self.send(self.request_bytes(data, headers))

    async def call(
        self,
        name: str,
        arguments: Any = None,
        *,
        headers: Mapping[str, str] | None = None,
        rid: Any = 1,
    ) -> Answer:
        """A 2026-07-28 `tools/call` with its mirrored headers (plus `headers`)."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        sent = {**modern_headers("tools/call", name), **(headers or {})}
        return await self.post(modern_body("tools/call", params, rid), sent)

    @staticmethod
    def body(
        method: str, params: Mapping[str, Any] | None = None, rid: Any = 1
    ) -> dict[str, Any]:
        """A 2026-07-28 request body (see `modern_body`)."""
        return modern_body(method, params, rid)

    @staticmethod
    def headers(method: str, name: str | None = None) -> dict[str, str]:
        """The mirrored headers of a 2026-07-28 request (see `modern_headers`)."""
        return modern_headers(method, name)

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Open a raw connection to the server."""
        return await asyncio.open_connection("127.0.0.1", self.port)

    @staticmethod
    async def read(reader: asyncio.StreamReader) -> Answer:
        """Read one response off a raw connection (see `read_answer`)."""
        return await asyncio.wait_for(read_answer(reader), ANSWER_WAIT)

    async def ping(self, headers: Mapping[str, str] | None = None) -> float:
        """Send a valid `tools/list` on a new connection; return its round trip.

        (2026-07-28 has no `ping` method: the cheapest valid call stands in.)
        `headers` are added (an `Authorization` header when AUTH is on).
        """
        started = time.monotonic()
        answer = await self.post(
            modern_body("tools/list", rid="ping"),
            {**modern_headers("tools/list"), **(headers or {})},
        )
        took = time.monotonic() - started
        assert answer.status == 200, answer
        assert answer.json()["id"] == "ping"
        assert answer.json()["result"]["tools"], answer
        return took

    async def alongside(
        self, hostile: Awaitable[T], *, ping_headers: Mapping[str, str] | None = None
    ) -> T:
        """Await `hostile` while pinging on other connections; return its result.

        Pings go one after another until the hostile request is answered (at
        least one); each must answer within `PING_BOUND`: one request may not
        hold the server, whatever it sends. Works for a server in a subprocess
        too, where the in-process watchdog cannot look.
        """
        task = asyncio.ensure_future(hostile)
        slowest = 0.0
        try:
            while True:
                slowest = max(slowest, await self.ping(ping_headers))
                if task.done():
                    break
                await asyncio.wait({task}, timeout=PING_EVERY)
        finally:
            if not task.done():
                task.cancel()
        assert slowest <= PING_BOUND, (
            f"a ping sent alongside took {slowest * 1000:.0f} ms "
            f"(bound {PING_BOUND * 1000:.0f} ms)"
        )
        return await task

    async def open_session(self) -> dict[str, str]:
        """Open and initialize a 2025-11-25 session; its request headers."""
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": SESSION_REVISION,
                "capabilities": {},
                "clientInfo": {"name": "hostile", "version": "0"},
            },
        }
        answer = await self.post(init, {"Content-Type": "application/json"})
        assert answer.status == 200, answer
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": SESSION_REVISION,
            "Mcp-Session-Id": answer.headers["mcp-session-id"],
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.post(initialized, headers)).status == 202
        return headers

    async def healthy(self) -> None:
        """Assert the server still answers a valid call correctly."""
        answer = await self.call("echo", {"action": "say", "data": {"text": "ok"}})
        assert answer.status == 200, answer
        result = answer.json()["result"]
        assert result["isError"] is False
        assert json.loads(result["content"][0]["text"]) == {"said": {"text": "ok"}}


async def read_answer(reader: asyncio.StreamReader) -> Answer:
    """Read one HTTP response (Content-Length, chunked or to close), capped."""
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    status = int(status_line.split(" ", 2)[1])
    headers: dict[str, str] = {}
    for line in header_lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        size = int(headers["content-length"])
        assert size <= RESPONSE_CAP, f"a response of {size} bytes"
        body = await reader.readexactly(size)
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(reader)
    else:
        body = await reader.read(RESPONSE_CAP + 1)
    assert len(body) <= RESPONSE_CAP, "the response grew past the cap"
    return Answer(status, headers, body, len(head) + len(body))


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return b"".join(parts)
        total += size
        assert total <= RESPONSE_CAP, "the streamed response grew past the cap"
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


@pytest.fixture(autouse=True)
def _watch_the_loop(loop_watchdog: LoopWatchdog) -> LoopWatchdog:
    """Every hardening test runs under the event-loop watchdog."""
    return loop_watchdog


@pytest.fixture
def probe() -> Probe:
    """The record of what the hanging and ticking tools saw."""
    return Probe()


Serve = Callable[..., Awaitable[Wire]]


@pytest.fixture
async def serve(probe: Probe) -> AsyncIterator[Serve]:
    """Return a factory: settings overrides in, a served app's raw client out.

    The app serves the hostile tools with BODY_LIMIT 2 MiB and BODY_TIMEOUT
    1 s unless overridden; every app is cleaned up after the test.
    """
    runners: list[web.AppRunner] = []

    async def start(**overrides: Any) -> Wire:
        settings: dict[str, Any] = {
            "TOOLS": [Echo, Boom, Refuse, Hang(probe), Ticker(probe), Region, Count],
            "BODY_LIMIT": BODY_LIMIT,
            "BODY_TIMEOUT": 1.0,
            **overrides,
        }
        chosen = load_settings(None, **settings)
        runner = make_runner(create_app(chosen), chosen)
        await runner.setup()
        runners.append(runner)
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return Wire(
            port=runner.addresses[0][1], probe=probe, body_limit=settings["BODY_LIMIT"]
        )

    try:
        yield start
    finally:
        for runner in runners:
            await runner.cleanup()


@pytest.fixture
def wire_to() -> Callable[[int], Wire]:
    """A factory of raw clients of a server on another port (`wymcp serve`)."""
    return lambda port: Wire(port=port, probe=Probe(), body_limit=BODY_LIMIT)


@pytest.fixture
async def wire(serve: Serve) -> Wire:
    """A served app (BODY_LIMIT 2 MiB, BODY_TIMEOUT 1 s) and its raw client."""
    return await serve()
