"""The load client: MCP requests on the 2026-07-28 and 2025-11-25 paths over aiohttp.

Every server in the benchmark is driven by this one client, so the figures compare.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import aiohttp

MODERN = "2026-07-28"
SESSION = "2025-11-25"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "wymcp-bench", "version": "1"},
}
BASE_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
}


def order_arguments(items: int = 50) -> dict[str, Any]:
    """The 50-item order of peers.md (about 3 KB of arguments)."""
    return {
        "customer": "ACME Corporation",
        "items": [
            {"sku": f"SKU-{i:05d}", "qty": 1 + i % 7, "price": 9.99 + i}
            for i in range(items)
        ],
    }


@dataclass(frozen=True)
class Call:
    """One tool call as a given server spells it (tool name and arguments)."""

    name: str
    arguments: dict[str, Any]


@dataclass
class Outcome:
    """What one measured load run saw from the client's side."""

    ok: int = 0
    failed: int = 0
    wall_s: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    first_failure: str = ""


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered)) - 1))
    return ordered[rank]


def decode_message(content_type: str, body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC response in a JSON or an SSE body (None when there is none)."""
    if "text/event-stream" in content_type:
        for line in body.splitlines():
            if line.startswith(b"data:"):
                message = json.loads(line[5:])
                if isinstance(message, dict) and "id" in message:
                    return message
        return None
    if not body:
        return None
    message = json.loads(body)
    return message if isinstance(message, dict) else None


def is_success(message: dict[str, Any] | None) -> bool:
    """A JSON-RPC result that is not an isError tool result."""
    if message is None or not isinstance(message.get("result"), dict):
        return False
    return not message["result"].get("isError", False)


class Channel:
    """One logical client: either the stateless 2026 envelope or one 2025 session."""

    def __init__(self, http: aiohttp.ClientSession, url: str, *, modern: bool) -> None:
        self.http = http
        self.url = url
        self.modern = modern
        self.session_id: str | None = None
        self.ids = itertools.count(1)

    async def open(self) -> None:
        """Initialize a session (2025 path); nothing to do on the 2026 path."""
        if self.modern:
            return
        params = {
            "protocolVersion": SESSION,
            "capabilities": {},
            "clientInfo": {"name": "wymcp-bench", "version": "1"},
        }
        status, headers, message = await self.request("initialize", params)
        if status != 200 or message is None or "result" not in message:
            raise RuntimeError(f"initialize answered {status}: {str(message)[:200]}")
        self.session_id = headers.get("Mcp-Session-Id")
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with self.http.post(
            self.url, data=json.dumps(note), headers=self.headers(None, None)
        ) as response:
            await response.read()
            if response.status not in (200, 202):
                raise RuntimeError(f"initialized answered {response.status}")

    def headers(self, method: str | None, name: str | None) -> dict[str, str]:
        headers = dict(BASE_HEADERS)
        if self.modern:
            headers["MCP-Protocol-Version"] = MODERN
            if method is not None:
                headers["Mcp-Method"] = method
            if name is not None:
                headers["Mcp-Name"] = name
        elif self.session_id is not None:
            headers["MCP-Protocol-Version"] = SESSION
            headers["Mcp-Session-Id"] = self.session_id
        return headers

    def body(self, method: str, params: dict[str, Any]) -> bytes:
        """The JSON-RPC request body, with the 2026 envelope when modern."""
        if self.modern:
            params = {**params, "_meta": ENVELOPE}
        message = {
            "jsonrpc": "2.0",
            "id": next(self.ids),
            "method": method,
            "params": params,
        }
        return json.dumps(message, separators=(",", ":")).encode()

    def prepared(
        self, method: str, params: dict[str, Any]
    ) -> tuple[bytes, dict[str, str]]:
        """The body and the headers of one request, ready to send."""
        name = params.get("name") if method == "tools/call" else None
        return self.body(method, params), self.headers(method, name)

    async def request(
        self, method: str, params: dict[str, Any]
    ) -> tuple[int, Any, dict[str, Any] | None]:
        """Send one request; answer the status, the headers and the decoded message."""
        body, headers = self.prepared(method, params)
        async with self.http.post(self.url, data=body, headers=headers) as response:
            body = await response.read()
            message = decode_message(response.headers.get("Content-Type", ""), body)
            return response.status, response.headers, message

    async def call(self, call: Call) -> tuple[bool, str]:
        """One tools/call; answer whether it succeeded and, if not, why."""
        params = {"name": call.name, "arguments": call.arguments}
        status, _, message = await self.request("tools/call", params)
        if status == 200 and is_success(message):
            return True, ""
        return False, f"HTTP {status}: {json.dumps(message)[:300]}"


def connector(limit: int) -> aiohttp.TCPConnector:
    """A keep-alive connection pool of `limit` connections."""
    return aiohttp.TCPConnector(limit=limit, limit_per_host=limit)


class RawChannel:
    """A channel's calls over one kept-alive socket, HTTP/1.1 written by hand.

    aiohttp's client costs about 200 µs of CPU per request on this machine, which
    would cap every server near 5k req/s; this writer and reader cost a fraction of
    that, so the client core stops being the limit. The wire is the same.
    """

    def __init__(self, channel: Channel, url: str) -> None:
        self.channel = channel
        parsed = urlsplit(url)
        self.host = parsed.hostname or "127.0.0.1"
        self.port = parsed.port or 80
        self.path = parsed.path or "/"
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.verified = False
        self.cached: tuple[Call, bytes, bytes] | None = None

    async def connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()

    def template(self, call: Call) -> tuple[bytes, bytes]:
        """The encoded params and the request head of `call`, built once per call."""
        if self.cached is None or self.cached[0] is not call:
            params: dict[str, Any] = {"name": call.name, "arguments": call.arguments}
            if self.channel.modern:
                params["_meta"] = ENVELOPE
            encoded = json.dumps(params, separators=(",", ":")).encode()
            lines = [f"POST {self.path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
            headers = self.channel.headers("tools/call", call.name)
            lines += [f"{name}: {value}" for name, value in headers.items()]
            head = ("\r\n".join(lines) + "\r\n").encode("latin-1")
            self.cached = (call, encoded, head)
        return self.cached[1], self.cached[2]

    async def exchange(self, request: bytes) -> tuple[int, bytes, bytes]:
        """Send one request; answer the status, the header block and the body."""
        assert self.reader is not None  # noqa: S101 - connect() ran first
        assert self.writer is not None  # noqa: S101 - connect() ran first
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        lowered = head.lower()
        marker = lowered.find(b"\r\ncontent-length:")
        if marker >= 0:
            end = lowered.index(b"\r\n", marker + 2)
            length = int(lowered[marker + 17 : end])
            return status, head, await self.reader.readexactly(length)
        if b"\r\ntransfer-encoding: chunked" in lowered:
            chunks = []
            while True:
                size_line = await self.reader.readuntil(b"\r\n")
                size = int(size_line.split(b";", 1)[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                chunks.append(chunk[:-2])
            return status, head, b"".join(chunks)
        return status, head, b""

    async def call(self, call: Call) -> tuple[bool, str]:
        """One tools/call; the first is decoded in full, the rest checked by bytes."""
        params, head = self.template(call)
        body = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}' % (
            next(self.channel.ids),
            params,
        )
        request = head + b"Content-Length: %d\r\n\r\n" % len(body) + body
        status, head, body = await self.exchange(request)
        if not self.verified:
            content_type = (
                b"text/event-stream" if b"text/event-stream" in head.lower() else b""
            )
            message = decode_message(content_type.decode(), body)
            ok = status == 200 and is_success(message)
            self.verified = ok
            return ok, "" if ok else f"HTTP {status}: {body[:300]!r}"
        ok = (
            status == 200
            and b'"result"' in body
            and b'"isError":true' not in body
            and b'"isError": true' not in body
        )
        return ok, "" if ok else f"HTTP {status}: {body[:300]!r}"


async def _open_channels(
    http: aiohttp.ClientSession,
    urls: list[str],
    *,
    modern: bool,
    count: int,
    shift: int,
) -> tuple[list[Channel], list[RawChannel]]:
    """`count` channels, opened round-robin over `urls`, called `shift` further on."""
    channels = [Channel(http, urls[i % len(urls)], modern=modern) for i in range(count)]
    for channel in channels:
        await channel.open()
    raws = [
        RawChannel(channel, urls[(i + shift) % len(urls)])
        for i, channel in enumerate(channels)
    ]
    return channels, raws


async def drive(
    url: str,
    call: Call,
    *,
    modern: bool,
    concurrency: int,
    warmup: int,
    requests: int,
    checkpoint: Callable[[], None],
    client: str = "raw",
    urls: Sequence[str] = (),
    shift: int = 0,
) -> Outcome:
    """Open one channel per worker, warm up, then run `requests` calls and time them.

    With `urls` (several server processes; the hand-written client only),
    channel i opens on `urls[i % n]` and calls on `urls[(i + shift) % n]`:
    `shift=1` sends every call of a 2025-11-25 session to a process that did
    not open it, so its state travels through the broker.

    Sessions are opened with aiohttp; the calls go over `client` ("raw": one
    hand-written HTTP/1.1 keep-alive socket per worker, or "aiohttp").
    `checkpoint` is called between warm-up and measurement and again after it;
    the caller reads the server's /proc counters there.
    """
    if len(urls) > 1 and client != "raw":
        raise ValueError("several servers are driven by the hand-written client")
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(
        connector=connector(concurrency), timeout=timeout
    ) as http:
        channels, raws = await _open_channels(
            http, list(urls) or [url], modern=modern, count=concurrency, shift=shift
        )
        callers: list[Channel | RawChannel] = list(channels)
        if client == "raw":
            for raw in raws:
                await raw.connect()
            callers = list(raws)
        outcome = Outcome()

        async def worker(
            channel: Channel | RawChannel, budget: list[int], *, record: bool
        ) -> None:
            while budget[0] > 0:
                budget[0] -= 1
                started = time.perf_counter()
                ok, why = await channel.call(call)
                if not record:
                    if not ok and not outcome.first_failure:
                        outcome.first_failure = why
                    continue
                outcome.latencies_ms.append((time.perf_counter() - started) * 1000)
                if ok:
                    outcome.ok += 1
                else:
                    outcome.failed += 1
                    outcome.first_failure = outcome.first_failure or why

        try:
            warm = [max(warmup, len(callers))]
            await asyncio.gather(*(worker(c, warm, record=False) for c in callers))
            checkpoint()
            budget = [requests]
            started = time.perf_counter()
            await asyncio.gather(*(worker(c, budget, record=True) for c in callers))
            outcome.wall_s = time.perf_counter() - started
            checkpoint()
        finally:
            for raw in raws:
                await raw.close()
        return outcome


@dataclass
class Probe:
    """One large request: what came back and how long it took."""

    status: int = 0
    response_bytes: int = 0
    wall_s: float = 0.0
    excerpt: str = ""
    error: str = ""


async def send_raw(
    url: str, body: bytes, headers: dict[str, str], *, keep: int = 400
) -> Probe:
    """POST a prepared body and count the response bytes without keeping them."""
    probe = Probe()
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        started = time.perf_counter()
        try:
            async with http.post(url, data=body, headers=headers) as response:
                probe.status = response.status
                head = bytearray()
                async for chunk in response.content.iter_chunked(1 << 20):
                    probe.response_bytes += len(chunk)
                    if len(head) < keep:
                        head.extend(chunk[: keep - len(head)])
                probe.excerpt = head.decode("utf-8", "replace")
        except (aiohttp.ClientError, TimeoutError) as exc:
            probe.error = f"{type(exc).__name__}: {exc}"
        probe.wall_s = time.perf_counter() - started
    return probe


async def first_tools_list(
    url: str, *, deadline: float, alive: Callable[[], bool]
) -> float:
    """Poll until initialize, initialized and tools/list succeed; answer when.

    Answers the perf_counter() time of the successful tools/list, or raises
    TimeoutError after `deadline` (a perf_counter() time).
    """
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        while True:
            try:
                channel = Channel(http, url, modern=False)
                await channel.open()
                status, _, message = await channel.request("tools/list", {})
                if status == 200 and message is not None and "result" in message:
                    return time.perf_counter()
            except (aiohttp.ClientError, RuntimeError, ValueError):
                pass
            if not alive():
                raise RuntimeError("the server exited before answering tools/list")
            if time.perf_counter() > deadline:
                raise TimeoutError("the server never answered tools/list")
            await asyncio.sleep(0.005)


async def open_sessions(url: str, count: int) -> int:
    """Open `count` sessions one after another and keep them; answer how many opened."""
    opened = 0
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(connector=connector(1), timeout=timeout) as http:
        for _ in range(count):
            channel = Channel(http, url, modern=False)
            await channel.open()
            if channel.session_id:
                opened += 1
    return opened
