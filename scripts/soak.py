"""Soak one `wymcp serve` process with many concurrent clients (`just soak`).

Starts `wymcp serve` on 127.0.0.1 (the conformance fixture's tools, BODY_LIMIT
256 KiB) and runs `--clients` concurrent clients for `--seconds` seconds of
mixed traffic: valid 2026-07-28 calls (lists, calc, help, SSE progress),
2025-11-25 sessions (initialize, calls, DELETE, churn), clients that leave
mid-stream, and invalid requests (bad JSON, wrong content type, batches,
deep nesting, oversized bodies, header mismatches, unknown tools and
sessions, gate refusals), and the attack shapes of issue 12 (deep-string
bodies, capability bombs, unread streams, slow readers, compressed bodies,
near-miss URIs; `--no-attacks` leaves them out). Every answer is checked
against what that request must get. Reports requests served, 5xx answers
(must be 0), failed valid calls (must be 0), wrong answers to invalid
requests, the slowest valid call, and the server's RSS before traffic, after
`--warmup` seconds, and at the end (growth after warm-up must stay under
10%). Exits 1 if a criterion fails.

    .venv/bin/python scripts/soak.py [--clients 200] [--seconds 60] [--warmup 10]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gzip
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
WYMCP = ROOT / ".venv" / "bin" / "wymcp"
MODERN = "2026-07-28"
SESSION_REVISION = "2025-11-25"
BODY_LIMIT = 256 * 1024
RSS_GROWTH_LIMIT = 0.10
PROGRESS_STEPS = 3
"""The progress notifications the fixture's progress tool sends."""
HOLD_SECONDS = 3.0
"""How long an unread stream or a slow reader holds its connection."""
MAX_HOLDERS = 20
"""Most clients holding an unread stream or a slow read at once (under MAX_STREAMS)."""
SETTINGS = f"""
from wymcp_conformance.settings import *  # noqa: F403 - extends it
BODY_LIMIT = {BODY_LIMIT}
"""


class Wrong(Exception):  # noqa: N818 - a wrong answer, reported by kind
    """An answer that is not what the request must get."""


def free_port() -> int:
    """A port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_kib(pid: int) -> int:
    """The resident set size of `pid`, in KiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def modern(
    method: str, params: dict[str, Any] | None = None, rid: int = 1
) -> dict[str, Any]:
    """A 2026-07-28 request body."""
    sent = dict(params or {})
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    sent["_meta"] = {**meta, **sent.get("_meta", {})}
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


def sse_messages(text: str) -> list[Any]:
    """The JSON messages of an SSE body (lines end at LF or CRLF only)."""
    return [
        json.loads(line[5:])
        for line in text.replace("\r\n", "\n").split("\n")
        if line.startswith("data:") and line[5:].strip()
    ]


class Stats:
    """Counts by request kind and by HTTP status."""

    def __init__(self) -> None:
        self.sent: collections.Counter[str] = collections.Counter()
        self.wrong: collections.Counter[str] = collections.Counter()
        self.statuses: collections.Counter[int] = collections.Counter()
        self.examples: dict[str, str] = {}
        self.server_errors = 0
        self.requests = 0
        self.slowest = 0.0
        self.holders = 0

    def saw(self, status: int) -> None:
        """Count one HTTP answer."""
        self.requests += 1
        self.statuses[status] += 1
        if status >= HTTPStatus.INTERNAL_SERVER_ERROR:
            self.server_errors += 1


class Client:
    """One soak client: a loop of weighted requests, each checked."""

    def __init__(self, http: aiohttp.ClientSession, url: str, stats: Stats) -> None:
        self.http = http
        self.url = url
        self.stats = stats
        self.rng = random.Random()  # noqa: S311 - traffic mix, not security
        self.session_id: str | None = None
        self.rid = 0

    async def post(
        self, body: bytes | Any, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], str]:
        """POST and read the whole answer."""
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        async with self.http.post(self.url, data=data, headers=headers) as response:
            text = await response.text()
            self.stats.saw(response.status)
            return response.status, dict(response.headers), text

    def next_id(self) -> int:
        """A fresh request id."""
        self.rid += 1
        return self.rid

    # ----- valid traffic: each must get exactly its correct answer -----

    async def list_tools(self) -> None:
        """tools/list lists calc."""
        status, _, text = await self.post(
            modern("tools/list"), modern_headers("tools/list")
        )
        tools = [tool["name"] for tool in json.loads(text)["result"]["tools"]]
        if status != HTTPStatus.OK or "calc" not in tools:
            raise Wrong(f"tools/list: {status}")

    async def calc(self) -> None:
        """Call calc add: the sum comes back."""
        a, b = self.rng.randint(-1000, 1000), self.rng.randint(-1000, 1000)
        rid = self.next_id()
        call = modern(
            "tools/call",
            {"name": "calc", "arguments": {"action": "add", "data": {"a": a, "b": b}}},
            rid,
        )
        status, _, text = await self.post(call, modern_headers("tools/call", "calc"))
        answer = json.loads(text)
        result = answer["result"]
        if (
            status != HTTPStatus.OK
            or answer["id"] != rid
            or result["structuredContent"] != {"result": a + b}
        ):
            raise Wrong(f"calc: {status} {text[:200]}")

    async def help(self) -> None:
        """Call help {tool: calc}: both actions are described."""
        call = modern("tools/call", {"name": "help", "arguments": {"tool": "calc"}})
        status, _, text = await self.post(call, modern_headers("tools/call", "help"))
        result = json.loads(text)["result"]
        described = json.loads(result["content"][0]["text"])
        if status != HTTPStatus.OK or sorted(described["actions"]) != [
            "add",
            "multiply",
        ]:
            raise Wrong(f"help: {status}")

    async def progress(self) -> None:
        """The progress tool streams three notifications, then its result."""
        params = {"name": "test_tool_with_progress", "_meta": {"progressToken": "p"}}
        headers = modern_headers("tools/call", "test_tool_with_progress")
        status, got, text = await self.post(modern("tools/call", params), headers)
        messages = sse_messages(text)
        progress = [m for m in messages if m.get("method") == "notifications/progress"]
        if (
            status != HTTPStatus.OK
            or not got.get("Content-Type", "").startswith("text/event-stream")
            or len(progress) != PROGRESS_STEPS
            or "result" not in messages[-1]
        ):
            raise Wrong(f"progress: {status} {text[:200]}")

    async def session_call(self) -> None:
        """A 2025-11-25 session call (opening the session if needed)."""
        if self.session_id is None:
            await self.open_session()
        a, b = self.rng.randint(1, 9), self.rng.randint(1, 9)
        call = {
            "jsonrpc": "2.0",
            "id": self.next_id(),
            "method": "tools/call",
            "params": {
                "name": "calc",
                "arguments": {"action": "multiply", "data": {"a": a, "b": b}},
            },
        }
        status, _, text = await self.post(call, self.session_headers())
        if status != HTTPStatus.OK or json.loads(text)["result"][
            "structuredContent"
        ] != {"result": a * b}:
            raise Wrong(f"session call: {status} {text[:200]}")

    async def churn_session(self) -> None:
        """End this client's session and open a new one."""
        await self.close_session()
        await self.open_session()

    async def open_session(self) -> None:
        """Send initialize, then notifications/initialized."""
        init = {
            "jsonrpc": "2.0",
            "id": self.next_id(),
            "method": "initialize",
            "params": {
                "protocolVersion": SESSION_REVISION,
                "capabilities": {},
                "clientInfo": {"name": "soak", "version": "0"},
            },
        }
        status, headers, text = await self.post(
            init,
            {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
        )
        if status != HTTPStatus.OK or "Mcp-Session-Id" not in headers:
            raise Wrong(f"initialize: {status} {text[:200]}")
        self.session_id = headers["Mcp-Session-Id"]
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        status, _, _ = await self.post(done, self.session_headers())
        if status != HTTPStatus.ACCEPTED:
            raise Wrong(f"initialized: {status}")

    async def close_session(self) -> None:
        """DELETE the session."""
        if self.session_id is None:
            return
        async with self.http.delete(
            self.url, headers=self.session_headers()
        ) as response:
            await response.read()
            self.stats.saw(response.status)
            if response.status != HTTPStatus.OK:
                raise Wrong(f"delete: {response.status}")
        self.session_id = None

    def session_headers(self) -> dict[str, str]:
        """The headers of a request in this client's session."""
        return {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": SESSION_REVISION,
            "Mcp-Session-Id": self.session_id or "",
        }

    # ----- traffic that walks away: no answer to check, the call is cancelled -----

    async def leave_mid_stream(self) -> None:
        """Start the progress stream and close the connection at its first event."""
        params = {"name": "test_tool_with_progress", "_meta": {"progressToken": "q"}}
        headers = modern_headers("tools/call", "test_tool_with_progress")
        data = json.dumps(modern("tools/call", params)).encode()
        async with self.http.post(self.url, data=data, headers=headers) as response:
            self.stats.saw(response.status)
            await response.content.readuntil(b"\n\n")
            response.close()

    # ----- invalid traffic: each must get its exact refusal -----

    async def expect(
        self, body: bytes | Any, headers: dict[str, str], status: int, code: int | None
    ) -> None:
        """Send `body` and require `status` and JSON-RPC `code`."""
        got, _, text = await self.post(body, headers)
        if got != status:
            raise Wrong(f"wanted {status}, got {got}: {text[:200]}")
        if code is not None and json.loads(text)["error"]["code"] != code:
            raise Wrong(f"wanted {code}: {text[:200]}")

    async def bad_json(self) -> None:
        """Truncated JSON: 400 / -32700."""
        await self.expect(
            b'{"jsonrpc": "2.0", "id": 1, "meth',
            modern_headers("tools/list"),
            400,
            -32700,
        )

    async def wrong_type(self) -> None:
        """text/plain: 415."""
        headers = {**modern_headers("tools/list"), "Content-Type": "text/plain"}
        await self.expect(modern("tools/list"), headers, 415, -32600)

    async def batch(self) -> None:
        """A batch: 400 / -32600."""
        await self.expect(
            [modern("tools/list")], modern_headers("tools/list"), 400, -32600
        )

    async def deep(self) -> None:
        """10,000 levels of nesting: 400 / -32700."""
        await self.expect(
            b"[" * 10_000 + b"]" * 10_000, modern_headers("tools/list"), 400, -32700
        )

    async def oversized(self) -> None:
        """A body over BODY_LIMIT: 413."""
        body = b'{"pad": "' + b"x" * BODY_LIMIT + b'"}'
        await self.expect(body, modern_headers("tools/list"), 413, -32600)

    async def mismatch(self) -> None:
        """Mcp-Name differs from the body: 400 / -32020."""
        call = modern("tools/call", {"name": "calc", "arguments": {}})
        await self.expect(call, modern_headers("tools/call", "help"), 400, -32020)

    async def unknown_tool(self) -> None:
        """An unknown tool: 400 / -32602."""
        call = modern("tools/call", {"name": "nope", "arguments": {}})
        await self.expect(call, modern_headers("tools/call", "nope"), 400, -32602)

    async def unknown_session(self) -> None:
        """A session nobody opened: 404."""
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {**self.session_headers(), "Mcp-Session-Id": "no-such-session"}
        await self.expect(body, headers, 404, None)

    async def refusal(self) -> None:
        """Call calc add with a string: 200, isError, invalid_values."""
        call = modern(
            "tools/call",
            {
                "name": "calc",
                "arguments": {"action": "add", "data": {"a": "x", "b": 1}},
            },
        )
        status, _, text = await self.post(call, modern_headers("tools/call", "calc"))
        result = json.loads(text)["result"]
        refusal = json.loads(result["content"][0]["text"])
        if (
            status != HTTPStatus.OK
            or not result["isError"]
            or refusal["error"] != "invalid_values"
        ):
            raise Wrong(f"refusal: {status} {text[:200]}")

    # ----- the attack shapes of issue 12: each bounded, none holds the server -----

    async def expect_json_4xx(
        self, body: bytes, headers: dict[str, str], statuses: set[int]
    ) -> None:
        """Send `body` and require one of `statuses` with a JSON-RPC error."""
        got, answer_headers, text = await self.post(body, headers)
        if got not in statuses or not answer_headers.get("Content-Type", "").startswith(
            "application/json"
        ):
            raise Wrong(f"wanted JSON {sorted(statuses)}, got {got}: {text[:200]}")
        if "error" not in json.loads(text):
            raise Wrong(f"no error: {text[:200]}")

    async def deep_string(self) -> None:
        """101 `[`, a quote, 1,000 escaped quotes: 400 / -32700 (finding 1)."""
        body = b"[" * 101 + b'"' + b'\\"' * 1000
        await self.expect(body, modern_headers("tools/list"), 400, -32700)

    async def capability_bomb(self) -> None:
        """`initialize` with ~8 KB of `[[],[],...]` capabilities (finding 2)."""
        init = {
            "jsonrpc": "2.0",
            "id": self.next_id(),
            "method": "initialize",
            "params": {
                "protocolVersion": SESSION_REVISION,
                "capabilities": {"experimental": {"bomb": [[]] * 2700}},
                "clientInfo": {"name": "bomb", "version": "0"},
            },
        }
        status, headers, text = await self.post(
            init, {"Content-Type": "application/json"}
        )
        if status == HTTPStatus.BAD_REQUEST and "error" in json.loads(text):
            return  # refused as too costly: fine
        if status != HTTPStatus.OK or "Mcp-Session-Id" not in headers:
            raise Wrong(f"capability bomb: {status} {text[:200]}")
        delete = {**self.session_headers(), "Mcp-Session-Id": headers["Mcp-Session-Id"]}
        async with self.http.delete(self.url, headers=delete) as response:
            await response.read()
            self.stats.saw(response.status)

    async def unread_stream(self) -> None:
        """Open a `subscriptions/listen` stream and never read it for a while."""
        if self.stats.holders >= MAX_HOLDERS:
            return await self.calc()
        self.stats.holders += 1
        try:
            params = {"notifications": {"toolsListChanged": True}}
            data = json.dumps(modern("subscriptions/listen", params)).encode()
            headers = modern_headers("subscriptions/listen")
            async with self.http.post(self.url, data=data, headers=headers) as response:
                self.stats.saw(response.status)
                if response.status != HTTPStatus.OK:
                    raise Wrong(f"listen: {response.status}")
                await asyncio.sleep(HOLD_SECONDS)
                response.close()
        finally:
            self.stats.holders -= 1
        return None

    async def slow_reader(self) -> None:
        """Ask for tools/list with a tiny receive window and never read the answer."""
        if self.stats.holders >= MAX_HOLDERS:
            return await self.calc()
        self.stats.holders += 1
        sock = socket.socket()
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            sock.settimeout(0.0)
            loop = asyncio.get_running_loop()
            host, port = self.url.split("//")[1].split("/")[0].split(":")
            await loop.sock_connect(sock, (host, int(port)))
            body = json.dumps(modern("tools/list")).encode()
            head = "".join(
                f"{name}: {value}\r\n"
                for name, value in modern_headers("tools/list").items()
            )
            request = (
                f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n{head}"
                f"Content-Length: {len(body)}\r\n\r\n"
            ).encode() + body
            await loop.sock_sendall(sock, request)
            await asyncio.sleep(HOLD_SECONDS)
        finally:
            sock.close()
            self.stats.holders -= 1
        return None

    async def gzip_bomb(self) -> None:
        """1 MiB of spaces gzipped to ~1 KB: 415 by default, 413 when gzip is allowed.

        Finding 5: by default every Content-Encoding is refused before the body
        is read (ACCEPT_CONTENT_ENCODING empty); with gzip allowed, the bomb is
        inflated no further than BODY_LIMIT.
        """
        headers = {**modern_headers("tools/list"), "Content-Encoding": "gzip"}
        await self.expect_json_4xx(GZIP_BOMB, headers, {413, 415})

    async def bad_gzip(self) -> None:
        """A broken gzip or deflate body: a JSON 4xx (finding 5: 200 / -32603)."""
        encoding, body = self.rng.choice(BAD_COMPRESSED)
        headers = {**modern_headers("tools/list"), "Content-Encoding": encoding}
        await self.expect_json_4xx(body, headers, {400, 415})

    async def brotli(self) -> None:
        """`Content-Encoding: br` (or zstd): a JSON 4xx, never aiohttp's text."""
        encoding = self.rng.choice(["br", "zstd"])
        headers = {**modern_headers("tools/list"), "Content-Encoding": encoding}
        body = json.dumps(modern("tools/list")).encode()
        await self.expect_json_4xx(body, headers, {400, 415})

    async def near_miss_uri(self) -> None:
        """resources/read of a URI that almost matches the template (finding 8)."""
        uri = "test://template/" + "a/" * 500 + "x"
        read = modern("resources/read", {"uri": uri})
        headers = modern_headers("resources/read", uri)
        await self.expect_json_4xx(json.dumps(read).encode(), headers, {400, 404})


GZIP_BOMB = gzip.compress(b" " * (1 << 20), compresslevel=9)
_LISTING = json.dumps(modern("tools/list")).encode()
BAD_COMPRESSED = (
    ("gzip", b"\x1f\x8b\x08\x00broken"),
    ("gzip", gzip.compress(_LISTING)[:15] + b"\xff" * 20),
    ("deflate", zlib.compress(_LISTING)[:4] + b"\xff" * 20),
)
VALID = ("list_tools", "calc", "help", "progress", "session_call", "churn_session")
INVALID = (
    "bad_json",
    "wrong_type",
    "batch",
    "deep",
    "oversized",
    "mismatch",
    "unknown_tool",
    "unknown_session",
    "refusal",
)
ATTACKS = (
    "deep_string",
    "capability_bomb",
    "gzip_bomb",
    "bad_gzip",
    "brotli",
    "near_miss_uri",
)
"""Attack shapes checked like invalid requests (`unread_stream` and
`slow_reader` hold a connection and are not checked beyond their status)."""
ATTACK_WEIGHTS = {
    "deep_string": 1,
    "capability_bomb": 1,
    "unread_stream": 1,
    "slow_reader": 1,
    "gzip_bomb": 1,
    "bad_gzip": 1,
    "brotli": 1,
    "near_miss_uri": 1,
}
WEIGHTS = {
    "list_tools": 6,
    "calc": 20,
    "help": 4,
    "progress": 6,
    "session_call": 12,
    "churn_session": 1,
    "leave_mid_stream": 2,
    "bad_json": 4,
    "wrong_type": 3,
    "batch": 3,
    "deep": 2,
    "oversized": 1,
    "mismatch": 4,
    "unknown_tool": 4,
    "unknown_session": 3,
    "refusal": 6,
}


async def run_client(client: Client, until: float, weights: dict[str, int]) -> None:
    """Send weighted requests until `until`, counting wrong answers by kind."""
    kinds = list(weights)
    chances = list(weights.values())
    stats = client.stats
    while time.monotonic() < until:
        kind = client.rng.choices(kinds, chances)[0]
        stats.sent[kind] += 1
        action: Callable[[], Awaitable[None]] = getattr(client, kind)
        started = time.monotonic()
        try:
            await action()
            if kind in VALID:
                stats.slowest = max(stats.slowest, time.monotonic() - started)
        except (
            Wrong,
            aiohttp.ClientError,
            TimeoutError,
            KeyError,
            ValueError,
            TypeError,
        ) as error:
            if kind == "leave_mid_stream" and isinstance(error, aiohttp.ClientError):
                continue
            stats.wrong[kind] += 1
            stats.examples.setdefault(kind, f"{type(error).__name__}: {error}"[:300])
            if kind in {"session_call", "churn_session"}:
                client.session_id = None  # start the next one afresh
    with contextlib.suppress(Exception):
        await client.close_session()


async def wait_until_serving(url: str, process: subprocess.Popen[bytes]) -> None:
    """Poll the endpoint until it answers tools/list."""
    async with aiohttp.ClientSession() as http:
        for _ in range(300):
            if process.poll() is not None:
                raise RuntimeError("wymcp serve exited before serving")
            with contextlib.suppress(aiohttp.ClientError):
                data = json.dumps(modern("tools/list")).encode()
                async with http.post(
                    url, data=data, headers=modern_headers("tools/list")
                ) as response:
                    if response.status == HTTPStatus.OK:
                        return
            await asyncio.sleep(0.1)
    raise RuntimeError("wymcp serve did not start serving")


async def soak(
    args: argparse.Namespace, url: str, pid: int
) -> tuple[Stats, dict[str, int]]:
    """Run the clients; return the stats and the RSS samples."""
    stats = Stats()
    rss = {"before": rss_kib(pid)}
    timeout = aiohttp.ClientTimeout(total=60)
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as http:
        clients = [Client(http, url, stats) for _ in range(args.clients)]
        start = time.monotonic()
        warm = start + args.warmup
        until = warm + args.seconds
        weights = {**WEIGHTS, **(ATTACK_WEIGHTS if args.attacks else {})}
        tasks = [
            asyncio.ensure_future(run_client(client, until, weights))
            for client in clients
        ]
        await asyncio.sleep(args.warmup)
        rss["after_warmup"] = rss_kib(pid)
        rss["peak"] = rss["after_warmup"]
        requests_at_warm = stats.requests
        while not all(task.done() for task in tasks):
            await asyncio.sleep(1)
            rss["peak"] = max(rss["peak"], rss_kib(pid))
        await asyncio.gather(*tasks)
        rss["requests_measured"] = stats.requests - requests_at_warm
    rss["end"] = rss_kib(pid)
    return stats, rss


def report(
    args: argparse.Namespace, stats: Stats, rss: dict[str, int], log_errors: int
) -> bool:
    """Print the figures; return whether every criterion holds."""
    valid_failed = sum(stats.wrong[kind] for kind in VALID)
    invalid_wrong = sum(stats.wrong[kind] for kind in (*INVALID, *ATTACKS))
    held_wrong = stats.wrong["unread_stream"] + stats.wrong["slow_reader"]
    growth = (rss["end"] - rss["after_warmup"]) / rss["after_warmup"]
    seconds = args.seconds + args.warmup
    print(
        f"soak: {args.clients} clients, {args.warmup:g} s warm-up + {args.seconds:g} s"
        f", attack shapes {'on' if args.attacks else 'off'}"
    )
    print(f"  requests served: {stats.requests} ({stats.requests / seconds:.0f}/s)")
    print(f"  statuses: {dict(sorted(stats.statuses.items()))}")
    print(f"  calls by kind: {dict(sorted(stats.sent.items()))}")
    print(f"  5xx answers: {stats.server_errors}")
    print(f"  failed valid calls: {valid_failed}")
    print(f"  wrong answers to invalid requests and attacks: {invalid_wrong}")
    print(f"  unread streams and slow readers refused or cut: {held_wrong}")
    print(f"  slowest valid call: {stats.slowest * 1000:.0f} ms")
    for kind, example in sorted(stats.examples.items()):
        print(f"    {kind} ({stats.wrong[kind]}): {example}")
    print(f"  server log lines at ERROR or worse: {log_errors}")
    print(
        f"  RSS: {rss['before']} KiB before traffic, {rss['after_warmup']} KiB after "
        f"warm-up, {rss['peak']} KiB peak, {rss['end']} KiB at the end: "
        f"growth after warm-up {growth:+.1%} (limit {RSS_GROWTH_LIMIT:.0%})"
    )
    return (
        stats.server_errors == 0
        and valid_failed == 0
        and invalid_wrong == 0
        and held_wrong == 0
        and growth < RSS_GROWTH_LIMIT
    )


def main(argv: list[str] | None = None) -> int:
    """Start the server, soak it, stop it, report; 1 if a criterion fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument(
        "--attacks",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="mix in the attack shapes of issue 12 (default on)",
    )
    args = parser.parse_args(argv)
    port = free_port()
    with tempfile.TemporaryDirectory() as scratch:
        Path(scratch, "wymcp_soak_settings.py").write_text(SETTINGS)
        environment = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                filter(None, [scratch, os.environ.get("PYTHONPATH")])
            ),
        }
        log_path = Path(scratch, "server.log")
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [
                    str(WYMCP),
                    "serve",
                    "--settings",
                    "wymcp_soak_settings",
                    "--port",
                    str(port),
                ],
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            try:
                url = f"http://127.0.0.1:{port}/mcp"
                asyncio.run(wait_until_serving(url, process))
                stats, rss = asyncio.run(soak(args, url, process.pid))
            finally:
                process.terminate()
                process.wait(30)
        lines = log_path.read_text(errors="replace").splitlines()
        log_errors = sum(" ERROR " in line or " CRITICAL " in line for line in lines)
        for line in [line for line in lines if " ERROR " in line][:5]:
            print(f"  server: {line[:300]}")
    return 0 if report(args, stats, rss, log_errors) else 1


if __name__ == "__main__":
    sys.exit(main())
