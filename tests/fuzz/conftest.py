"""A real wymcp server in a background thread, a blocking raw client, and profiles.

Hypothesis drives synchronous test functions, so the server (`create_app()`
under aiohttp's `AppRunner`, handler cancellation on) runs its own event loop
in a thread for the whole module, and requests go out as exact bytes on a
socket. Two settings profiles: `wymcp-fuzz` (the short run of the test
command) and `wymcp-fuzz-long` (`scripts/fuzz.py`), chosen by the
`WYMCP_FUZZ_PROFILE` environment variable (`WYMCP_FUZZ_EXAMPLES` sets the long
profile's examples per test). A thread watchdog watches the server's loop:
`Client.assert_healthy` also fails when it was blocked past the bound.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Self

import attrs
import pytest
from aiohttp import web
from hypothesis import HealthCheck, settings

from loop_watchdog import STALL_BOUND, ThreadLoopWatchdog, watching
from wymcp.conf import Settings, load_settings
from wymcp.core.schema import Action, Tool
from wymcp.core.server import Resource
from wymcp.transport.aiohttp import create_app
from wymcp.transport.aiohttp._runner import make_runner

_RELAXED = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
]
settings.register_profile(
    "wymcp-fuzz", max_examples=100, deadline=None, suppress_health_check=_RELAXED
)
settings.register_profile(
    "wymcp-fuzz-long",
    max_examples=int(os.environ.get("WYMCP_FUZZ_EXAMPLES", "3000")),
    deadline=None,
    suppress_health_check=_RELAXED,
)

MODERN = "2026-07-28"
RESPONSE_CAP = 64 * 1024
"""No answer to a fuzzed request may be larger (the inputs are a few KiB)."""
NO_ARGUMENTS: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}


class Echo(Tool):
    """A multi-action tool with nested data, so the gates see every shape."""

    name = "echo"
    description = "Echo the data it is given."
    actions: ClassVar[dict[str, Action]] = {
        "say": Action(
            description="Echo a short text",
            properties={
                "text": {"type": "string", "maxLength": 50},
                "count": {"type": "integer", "minimum": 0, "maximum": 100},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
                "when": {"type": "string", "format": "date"},
                "where": {
                    "type": "object",
                    "properties": {
                        "lat": {"type": "number"},
                        "lon": {"type": "number"},
                    },
                    "required": ["lat"],
                },
            },
            required=["text"],
            defaults={"count": 1},
        ),
        "pick": Action(
            description="Pick one of two",
            properties={"a": {"type": "string"}, "b": {"type": "string"}},
            required_one_of=[["a", "b"]],
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        """Return the data as the gates read it."""
        del ctx
        return {"action": action, "said": data}


class Region(Tool):
    """A plain tool whose arguments are mirrored in `Mcp-Param-*` headers."""

    name = "region"
    description = "Echo the region and the count."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "maxLength": 40, "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
        },
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Echo what arrived."""
        del ctx
        return arguments


class Steps(Tool):
    """Reports three progress steps, then answers (an SSE answer)."""

    name = "steps"
    description = "Report progress three times."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Send three progress notifications and a log line."""
        del arguments
        for step in (1, 2, 3):
            await ctx.report_progress(step, 3)
        await ctx.log("info", "stepped")
        return "stepped"


class Boom(Tool):
    """Fails with an unexpected exception."""

    name = "boom"
    description = "Raise."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Raise."""
        del arguments, ctx
        raise RuntimeError("boom")


TOOLS = (Echo, Region, Steps, Boom)


class Near(Resource):
    """A template of two reserved expressions (near-miss URIs, finding 8)."""

    name = "near"
    uri_template = "file:///{+a}/{+b}/end"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        """Read the two values."""
        del uri, ctx
        return f"{params['a']} {params['b']}"


class Labels(Resource):
    """A template of three label expressions (near-miss URIs, finding 8)."""

    name = "labels"
    uri_template = "file:///x{.a}{.b}{.c}/"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        """Read the three labels."""
        del uri, ctx
        return ".".join(params.values())


RESOURCES = (Near, Labels)


@attrs.frozen
class Answer:
    """One HTTP response as read off the socket."""

    status: int
    headers: Mapping[str, str]
    body: bytes


@attrs.define
class Client:
    """A blocking raw HTTP/1.1 client of the fuzzed server."""

    port: int
    session_id: str | None = None
    watchdog: ThreadLoopWatchdog | None = None

    def send(self, data: bytes) -> Answer:
        """Write one request on a new connection and read one answer."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as sock:
            sock.sendall(data)
            with sock.makefile("rb") as stream:
                return read_answer(stream)

    def post(self, body: bytes, headers: Mapping[str, str]) -> Answer:
        """POST `body` with `headers` written exactly as given."""
        lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape")
        return self.send(head + body)

    def assert_responsive(self) -> None:
        """The server's loop was never blocked past the bound since the last check."""
        if self.watchdog is not None:
            longest = self.watchdog.excuse()
            assert longest <= STALL_BOUND, (
                f"the server's event loop was blocked for {longest * 1000:.0f} ms "
                f"(bound {STALL_BOUND * 1000:.0f} ms)"
            )

    def assert_healthy(self) -> None:
        """A valid 2026-07-28 call still gets its correct answer, promptly."""
        body = {
            "jsonrpc": "2.0",
            "id": 99,
            "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"action": "say", "data": {"text": "ok"}},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        }
        headers = {
            "Content-Type": "application/json",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "echo",
        }
        answer = self.post(json.dumps(body).encode(), headers)
        assert answer.status == 200, answer
        result = json.loads(answer.body)["result"]
        assert json.loads(result["content"][0]["text"]) == {
            "action": "say",
            "said": {"text": "ok", "count": 1},
        }
        self.assert_responsive()


def read_answer(stream: Any) -> Answer:
    """Read one response (Content-Length, chunked or to close), capped."""
    status_line = stream.readline(65537).decode("latin-1")
    status = int(status_line.split(" ", 2)[1])
    headers: dict[str, str] = {}
    while (line := stream.readline(65537)) not in {b"\r\n", b"\n", b""}:
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        size = int(headers["content-length"])
        assert size <= RESPONSE_CAP, f"an answer of {size} bytes"
        body = stream.read(size)
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        parts: list[bytes] = []
        while size := int(stream.readline(100).split(b";")[0], 16):
            parts.append(stream.read(size))
            stream.read(2)
            assert sum(map(len, parts)) <= RESPONSE_CAP, "a stream past the cap"
        stream.readline(100)
        body = b"".join(parts)
    else:
        body = stream.read(RESPONSE_CAP + 1)
    assert len(body) <= RESPONSE_CAP
    return Answer(status, headers, body)


class ServerThread:
    """Serves an aiohttp application on 127.0.0.1 from a background event loop."""

    def __init__(self, app: web.Application, settings: Settings) -> None:
        self._app = app
        self._settings = settings
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The server's event loop (running in the background thread)."""
        return self._loop

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        # the runner `wymcp serve` uses: it, not aiohttp, handles compressed bodies
        self._runner = make_runner(self._app, self._settings)
        self._loop.run_until_complete(self._start())
        self._started.set()
        self._loop.run_forever()

    async def _start(self) -> None:
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def __enter__(self) -> Self:
        self._thread.start()
        assert self._started.wait(30), "the server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        done = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop)
        done.result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    """A client of a server running the fuzz tools, for the whole module."""
    chosen = load_settings(None, TOOLS=list(TOOLS), RESOURCES=list(RESOURCES))
    app = create_app(chosen)
    with ServerThread(app, chosen) as server, watching(server.loop) as watchdog:
        yield Client(port=server.port, watchdog=watchdog)
