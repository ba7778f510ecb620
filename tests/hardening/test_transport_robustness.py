"""Issue 12, transport side: no single client freezes the server or pins its memory.

Scans of request bytes grow linearly (a doubling test per scan), a hostile body
leaves the loop free, slow readers are dropped (WRITE_TIMEOUT), compressed
bodies are refused or inflated under BODY_LIMIT, streams leave connections free
per client, and SIGTERM ends `wymcp serve` within SHUTDOWN_GRACE.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import gzip
import json
import os
import signal
import socket
import struct
import sys
import textwrap
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import jwt
import pytest

from wymcp.conf import Settings, run_checks
from wymcp.core.schema import Tool
from wymcp.core.server import InvalidToken
from wymcp.core.server._stream_cap import StreamCap
from wymcp.transport.aiohttp import CHECKS, JwtValidator
from wymcp.transport.aiohttp._admission import is_utf8_json as _is_utf8_json
from wymcp.transport.aiohttp._bearer_auth import _BEARER
from wymcp.transport.aiohttp._content_coding import (
    Inflater,
    InvalidCoding,
    TooLarge,
    body_codings,
)
from wymcp.transport.aiohttp._host_policy import HostPolicy
from wymcp.transport.aiohttp._json_body import BodyError, decode_json, nesting_depth

if TYPE_CHECKING:
    from conftest import Answer, Serve, Wire

SMALL = 512
ANSWER_WAIT = 30.0
"""Seconds a client waits for an answer before the test fails (no hang)."""
LINEAR = 10.0
"""Largest time ratio allowed between inputs of size 4n and n (linear: 4,
quadratic: 16): generous slack for a loaded machine, never a wall-clock limit."""


# -- every scan of request bytes is linear ------------------------------------


def growth(scan: Callable[[Any], object], make: Callable[[int], Any], n: int) -> float:
    """Time ratio of `scan` on `make(4n)` over `make(n)`, each repeated alike.

    The repetition count is set on the small input so a sample lasts about
    10 ms; samples of both sizes alternate (a load change hits both) and the
    best of seven of each is kept, with the garbage collector off. A scan
    slower than a second per sample is not linear anyway: one sample then.
    """
    small, large = make(n), make(4 * n)
    start = time.perf_counter()
    scan(small)
    once = time.perf_counter() - start
    repeat = max(1, int(0.01 / max(once, 1e-9)))

    def sample(value: Any) -> float:
        start = time.perf_counter()
        for _ in range(repeat):
            scan(value)
        return time.perf_counter() - start

    best_small = best_large = float("inf")
    gc.disable()
    try:
        for _ in range(7):
            best_small = min(best_small, sample(small))
            best_large = min(best_large, sample(large))
            if best_large > 1.0:
                break
    finally:
        gc.enable()
    return best_large / best_small


def assert_linear(
    scan: Callable[[Any], object], make: Callable[[int], Any], n: int
) -> None:
    """`growth` stays under `LINEAR` in one of three tries.

    Noise only slows samples, and the best sample of each size is kept, so
    a quadratic scan never measures under 16 while a linear one measures
    about 4; the tries absorb a burst of load on a shared machine.
    """
    ratios = []
    for _ in range(3):
        ratios.append(growth(scan, make, n))
        if ratios[-1] < LINEAR:
            return
    pytest.fail(f"time grew {ratios} times for a 4 times larger input")


def refused_depth(body: bytes) -> None:
    with contextlib.suppress(BodyError):
        decode_json(body, depth_limit=100)


def deep_string(k: int) -> bytes:
    """101 `[`, a quote, then `\\"` k times: an unterminated string (finding 1)."""
    return b"[" * 101 + b'"' + b'\\"' * k


BODY_SHAPES: dict[str, Callable[[int], bytes]] = {
    "deep-unterminated-string": deep_string,
    "quotes": lambda k: b"[" * 101 + b'"' * k,
    "backslash-quote-pairs": lambda k: b"[" * 101 + b'"\\' * k,
    "escaped-backslashes": lambda k: b"[" * 101 + b'"\\\\"x' * k,
    "brackets-in-strings": lambda k: b"[" * 101 + b'"[\\"' * k,
    "trailing-backslash": lambda k: b"[" * 101 + b'"a\\' * k,
    "surrogate-escapes": lambda k: b'["' + b"\\ud800" * k + b'"]',
}


@pytest.mark.parametrize("shape", sorted(BODY_SHAPES))
def test_the_body_checks_grow_linearly(shape: str) -> None:
    make = BODY_SHAPES[shape]
    assert_linear(refused_depth, make, 8000)
    assert_linear(nesting_depth, make, 8000)


def test_the_hostile_body_is_refused_for_its_depth() -> None:
    with pytest.raises(BodyError, match="deeper than 100"):
        decode_json(deep_string(32_000), depth_limit=100)
    # brackets inside an unterminated string are inside it for the parser too
    assert nesting_depth(b'["' + b"[" * 500) == 1


HEADER_SHAPES: dict[str, tuple[Callable[[str], object], Callable[[int], str]]] = {
    "content-type-semicolons": (_is_utf8_json, lambda k: "application/json" + ";" * k),
    "content-type-parameters": (
        _is_utf8_json,
        lambda k: "application/json" + ";a=b" * k,
    ),
    "content-type-comments": (_is_utf8_json, lambda k: "application/json (" * k),
    "content-encoding-commas": (lambda v: body_codings([v]), lambda k: "gzip," * k),
    "bearer-spaces": (_BEARER.fullmatch, lambda k: "Bearer " + " " * k + "x"),
    "bearer-near-miss": (_BEARER.fullmatch, lambda k: "Bearer " + "a=" * k),
    "host-near-miss": (
        lambda v: HostPolicy.build((), ()).host_allowed([v]),
        lambda k: "a" * k + ":",
    ),
    "host-brackets": (
        lambda v: HostPolicy.build((), ()).host_allowed([v]),
        lambda k: "[" + ":" * k,
    ),
    "origin-near-miss": (
        lambda v: HostPolicy.build((), ()).origin_allowed([v]),
        lambda k: "http://" + "a:" * k,
    ),
}


@pytest.mark.parametrize("shape", sorted(HEADER_SHAPES))
def test_the_header_checks_grow_linearly(shape: str) -> None:
    scan, make = HEADER_SHAPES[shape]
    assert_linear(scan, make, 2000)


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ("application/json", True),
        ("Application/JSON; charset=UTF-8", True),
        ('application/json; charset="utf8"', True),
        ("application/json; foo=bar", True),
        ("application/json; charset=latin-1", False),
        ("text/plain", False),
        ("application/json (" * 2000, False),
        ("application/json" + ";" * 8000, True),
    ],
)
def test_the_content_type_rule(value: str, accepted: bool) -> None:
    assert _is_utf8_json(value) is accepted


async def test_comments_in_content_type_get_415_not_a_traceback(
    wire: Wire, caplog: pytest.LogCaptureFixture
) -> None:
    # aiohttp's parser (the email package) recursed until RecursionError
    headers = {**wire.headers("tools/list"), "Content-Type": "application/json (" * 400}
    answer = await wire.post(wire.body("tools/list"), headers)
    assert answer.status == 415, answer
    assert_no_traceback(caplog)
    await wire.healthy()


# -- servers in a subprocess: the loop stays free, SIGTERM ends in time -------

SLOW_TOOLS = """
import asyncio
import time
from pathlib import Path
import os

from wymcp.core.schema import Tool

NO_ARGUMENTS = {"type": "object", "properties": {}, "additionalProperties": False}


class Stubborn(Tool):
    name = "stubborn"
    description = "Ignore cancellation for a minute."
    input_schema = NO_ARGUMENTS

    async def run(self, arguments, ctx):
        Path(os.environ["ROBUST_DIR"], "stubborn").touch()
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                await asyncio.sleep(1)
            except asyncio.CancelledError:
                pass
        return "done"


class Blocking(Tool):
    name = "blocking"
    description = "Sleep a minute in a worker thread."
    input_schema = NO_ARGUMENTS

    async def run(self, arguments, ctx):
        Path(os.environ["ROBUST_DIR"], "blocking").touch()
        await asyncio.to_thread(time.sleep, 60)
        return "done"
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


Spawn = Callable[[str], Awaitable[tuple[asyncio.subprocess.Process, int]]]


@pytest.fixture
async def spawn(tmp_path: Path) -> AsyncIterator[Spawn]:
    """Start `wymcp serve` on a free port with the given settings text."""
    (tmp_path / "robust_tools.py").write_text(SLOW_TOOLS, encoding="utf-8")
    processes: list[asyncio.subprocess.Process] = []

    async def start(source: str) -> tuple[asyncio.subprocess.Process, int]:
        name = f"robust_settings_{len(processes)}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), "utf-8")
        port = free_port()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "from wymcp.cli import main; raise SystemExit(main())",
            "serve",
            "--settings",
            name,
            "--port",
            str(port),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
                "ROBUST_DIR": str(tmp_path),
            },
        )
        processes.append(process)
        assert process.stdout is not None
        banner = await asyncio.wait_for(process.stdout.readline(), ANSWER_WAIT)
        assert banner.startswith(b"wymcp serving"), banner
        return process, port

    try:
        yield start
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
                await process.wait()


MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def raw_post(port: int, body: bytes, method: str, name: str | None = None) -> bytes:
    head = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        f"MCP-Protocol-Version: {MODERN}",
        f"Mcp-Method: {method}",
        f"Content-Length: {len(body)}",
    ]
    if name is not None:
        head.append(f"Mcp-Name: {name}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def call_body(name: str, rid: int = 1) -> bytes:
    params = {"name": name, "_meta": META}
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    ).encode()


async def exchange(port: int, data: bytes) -> tuple[int, bytes]:
    """Send one request on a new connection; the status and the whole answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        return int(head.split(b" ")[1]), await reader.readexactly(length)
    finally:
        writer.close()


async def test_a_hostile_body_leaves_the_server_answering_others(spawn: Spawn) -> None:
    _, port = await spawn('STATE_SECRET = "k" * 32\n')
    discover = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "server/discover",
            "params": {"_meta": META},
        }
    ).encode()
    # 128 KB: the quadratic scan took about 160 s on it
    hostile = asyncio.ensure_future(
        exchange(port, raw_post(port, deep_string(64_000), "tools/list"))
    )
    await asyncio.sleep(0.3)  # the server is reading (or scanning) it
    status, _ = await asyncio.wait_for(
        exchange(port, raw_post(port, discover, "server/discover")), ANSWER_WAIT
    )
    assert status == 200
    status, body = await asyncio.wait_for(hostile, ANSWER_WAIT)
    assert status == 400
    assert json.loads(body)["error"]["code"] == -32700
    assert len(body) <= SMALL


async def test_sigterm_ends_serve_within_the_grace_whatever_the_tools_do(
    spawn: Spawn, tmp_path: Path
) -> None:
    grace = 1.0
    process, port = await spawn(
        'TOOLS = ["robust_tools.Stubborn", "robust_tools.Blocking"]\n'
        f'STATE_SECRET = "k" * 32\nSHUTDOWN_GRACE = {grace}\n'
    )
    calls = [
        asyncio.ensure_future(
            exchange(port, raw_post(port, call_body(name), "tools/call", name))
        )
        for name in ("stubborn", "blocking")
    ]
    for name in ("stubborn", "blocking"):
        for _ in range(600):
            if (tmp_path / name).exists():
                break
            await asyncio.sleep(0.05)
        assert (tmp_path / name).exists(), name
    loop = asyncio.get_running_loop()
    start = loop.time()
    process.send_signal(signal.SIGTERM)
    # A bound the product promises (grace + 1 s to unwind), with slack for
    # a loaded machine; before, the process waited for both tools (60 s).
    await asyncio.wait_for(process.wait(), 60)
    elapsed = loop.time() - start
    assert elapsed < grace + 1 + 8, elapsed
    assert process.returncode == 0
    for call in calls:
        call.cancel()
    await asyncio.gather(*calls, return_exceptions=True)


# -- slow readers are dropped (WRITE_TIMEOUT) ---------------------------------

ANSWER_SIZE = 16 * 1024 * 1024


class Big(Tool):
    """A tool whose answer is 16 MiB."""

    name = "big"
    description = "Answer 16 MiB of text."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Return 16 MiB."""
        del arguments, ctx
        return "x" * ANSWER_SIZE


def traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


# tracemalloc traces every allocation while the server encodes 16 MiB on its loop:
# the time is the tracing's, not a bound this test is about
@pytest.mark.loop_stall_bound(5.0)
async def test_a_client_that_never_reads_is_dropped_and_its_answer_freed(
    serve: Serve,
) -> None:
    wire = await serve(
        TOOLS=[Big], WRITE_TIMEOUT=0.5, BODY_TIMEOUT=30.0, RESULT_LIMIT=64 << 20
    )
    tracemalloc.start()
    try:
        baseline = traced()
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", wire.port))
        reader, writer = await asyncio.open_connection(sock=sock)
        writer.write(raw_post(wire.port, call_body("big"), "tools/call", "big"))
        await writer.drain()
        held = 0
        for _ in range(400):  # the answer is written and waits for the client
            held = traced() - baseline
            if held > ANSWER_SIZE // 2:
                break
            await asyncio.sleep(0.05)
        assert held > ANSWER_SIZE // 2, held
        for _ in range(400):  # dropped after 0.5 s without progress
            if traced() - baseline < ANSWER_SIZE // 4:
                break
            await asyncio.sleep(0.05)
        assert traced() - baseline < ANSWER_SIZE // 4
        received = 0
        with contextlib.suppress(ConnectionError):
            while chunk := await asyncio.wait_for(reader.read(1 << 20), ANSWER_WAIT):
                received += len(chunk)
        assert received < ANSWER_SIZE  # the rest was never sent: closed
        writer.close()
    finally:
        tracemalloc.stop()
    assert (
        await wire.post(wire.body("tools/list"), wire.headers("tools/list"))
    ).status == 200


class Flood(Tool):
    """A tool that streams 4 KB progress notifications until it is stopped."""

    name = "flood"
    description = "Report progress with long messages, forever."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    seen: ClassVar[dict[str, int]] = {"sent": 0, "stopped": 0}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Send progress until cancelled (a write that never drains waits)."""
        del arguments
        try:
            while True:
                self.seen["sent"] += 1
                await ctx.report_progress(self.seen["sent"], None, "x" * 4096)
        finally:
            self.seen["stopped"] += 1


async def test_an_sse_stream_nobody_reads_is_dropped_and_its_call_stopped(
    serve: Serve,
) -> None:
    wire = await serve(TOOLS=[Flood], WRITE_TIMEOUT=0.5)
    Flood.seen.update(sent=0, stopped=0)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", wire.port))
    _, writer = await asyncio.open_connection(sock=sock)
    body = json.loads(call_body("flood"))
    body["params"]["_meta"]["progressToken"] = "p"
    writer.write(raw_post(wire.port, json.dumps(body).encode(), "tools/call", "flood"))
    await writer.drain()
    for _ in range(400):  # stalled, then dropped 0.5 s later: the call stops
        if Flood.seen["stopped"]:
            break
        await asyncio.sleep(0.05)
    assert Flood.seen["stopped"] == 1, Flood.seen
    assert Flood.seen["sent"] > 10  # it did stream, then stalled
    writer.close()


# -- compressed bodies ---------------------------------------------------------


def assert_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        assert record.exc_info is None, record.getMessage()[:200]
        assert len(record.getMessage()) < 1000


def gzipped(value: Any) -> bytes:
    return gzip.compress(json.dumps(value).encode())


async def post_coded(
    wire: Wire, body: bytes, coding: str
) -> tuple[Answer, asyncio.StreamReader]:
    headers = {**wire.headers("tools/list"), "Content-Encoding": coding}
    reader, writer = await wire.connect()
    writer.write(wire.request_bytes(body, headers))
    await writer.drain()
    answer = await wire.read(reader)
    writer.close()
    return answer, reader


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd", "x-unknown"])
async def test_compressed_bodies_are_refused_by_default(
    wire: Wire, coding: str, caplog: pytest.LogCaptureFixture
) -> None:
    answer, _ = await post_coded(wire, gzipped(wire.body("tools/list")), coding)
    assert answer.status == 415, answer
    assert answer.json()["error"]["code"] == -32600
    assert "ACCEPT_CONTENT_ENCODING" in answer.json()["error"]["message"]
    assert answer.headers["connection"].lower() == "close"
    assert len(answer.body) <= SMALL
    assert_no_traceback(caplog)
    await wire.healthy()


async def test_identity_is_always_accepted(wire: Wire) -> None:
    headers = {**wire.headers("tools/list"), "Content-Encoding": "identity"}
    assert (await wire.post(wire.body("tools/list"), headers)).status == 200


@pytest.mark.parametrize(
    "coding",
    ["gzip", "deflate", "deflate-raw"],
)
async def test_allowed_codings_are_inflated(serve: Serve, coding: str) -> None:
    wire = await serve(ACCEPT_CONTENT_ENCODING=("gzip", "deflate"))
    text = json.dumps(wire.body("tools/list")).encode()
    if coding == "gzip":
        body = gzip.compress(text)
    elif coding == "deflate":
        body = zlib.compress(text)
    else:
        packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        body = packer.compress(text) + packer.flush()
    answer, _ = await post_coded(wire, body, coding.removesuffix("-raw"))
    assert answer.status == 200, answer
    assert "tools" in answer.json()["result"]


@pytest.mark.parametrize(
    ("body", "coding"),
    [
        (b"\x1f\x8b\x08\x00garbage-not-gzip-at-all", "gzip"),
        (b"not deflate", "deflate"),
        (gzip.compress(b'{"a": 1}')[:-6], "gzip"),  # truncated
        (gzip.compress(b"{}") + b"trailing", "gzip"),
        (b"", "gzip"),
    ],
    ids=["bad-gzip", "bad-deflate", "truncated", "trailing-bytes", "empty"],
)
async def test_invalid_compressed_bodies_get_a_bounded_400(
    serve: Serve, body: bytes, coding: str, caplog: pytest.LogCaptureFixture
) -> None:
    wire = await serve(ACCEPT_CONTENT_ENCODING=("gzip", "deflate"))
    answer, _ = await post_coded(wire, body, coding)
    assert answer.status == 400, answer
    assert answer.json()["error"]["code"] == -32600
    assert answer.headers["connection"].lower() == "close"
    assert len(answer.body) <= SMALL
    assert_no_traceback(caplog)
    await wire.healthy()


async def test_stacked_codings_are_refused(serve: Serve) -> None:
    wire = await serve(ACCEPT_CONTENT_ENCODING=("gzip",))
    body = gzip.compress(gzipped(wire.body("tools/list")))
    answer, _ = await post_coded(wire, body, "gzip, gzip")
    assert answer.status == 415, answer


@functools.cache
def bomb(size: int) -> bytes:
    """Gzip of zeros, at least `size` bytes long: it inflates about 1,000-fold.

    Each MiB of zeros is packed on its own (a full flush forgets the history),
    so every MiB after the first packs to the same bytes: they are repeated, not
    deflated again (2 MiB of bomb took 6-27 s of zlib), and the trailer is the
    CRC and length of all the zeros, as zlib would have written them.
    """
    zeros = bytes(1 << 20)
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    head = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    last = packer.flush()[:-8]  # the final (empty) block; its trailer is redone
    blocks = max(1, -(-(size - len(head) - len(last)) // len(block)))
    crc = 0
    for _ in range(1 + blocks):
        crc = zlib.crc32(zeros, crc)
    trailer = struct.pack("<II", crc, ((1 + blocks) << 20) & 0xFFFFFFFF)
    return head + block * blocks + last + trailer


async def test_a_gzip_bomb_is_refused_at_body_limit(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    wire = await serve(ACCEPT_CONTENT_ENCODING=("gzip",), BODY_LIMIT=64 * 1024)
    answer, _ = await post_coded(wire, await asyncio.to_thread(bomb, 60 * 1024), "gzip")
    assert answer.status == 413, answer
    assert answer.headers["connection"].lower() == "close"
    assert_no_traceback(caplog)
    await wire.healthy()


async def sent_and_refused(wire: Wire, body: bytes) -> float:
    """CPU seconds of this process while `body` (gzip) is sent and refused."""
    headers = {**wire.headers("tools/list"), "Content-Encoding": "gzip"}
    start = time.process_time()
    reader, writer = await wire.connect()
    writer.write(wire.request_bytes(body, headers))
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    answer = await wire.read(reader)
    assert answer.status in {400, 413, 415}, answer
    with contextlib.suppress(ConnectionError):  # until the server closes
        while await asyncio.wait_for(reader.read(1 << 16), ANSWER_WAIT):
            pass
    writer.close()
    return time.process_time() - start


@pytest.mark.parametrize("accepted", [(), ("gzip",)], ids=["refused", "accepted"])
async def test_nothing_is_inflated_after_a_refusal(
    serve: Serve, accepted: tuple[str, ...]
) -> None:
    # aiohttp used to inflate all a client sent after the answer (4 MB of
    # bomb: 10 s of CPU); the same bytes that do not inflate are the yardstick
    wire = await serve(ACCEPT_CONTENT_ENCODING=accepted, BODY_LIMIT=4 << 20)
    payload = await asyncio.to_thread(bomb, 2 << 20)  # seconds of zlib: off the loop
    plain = os.urandom(len(payload))
    yardstick = await sent_and_refused(wire, b"\x1f\x8b" + plain[2:])
    spent = await sent_and_refused(wire, payload)
    assert spent < 3 * yardstick + 0.5, (spent, yardstick)
    await wire.healthy()


def test_the_inflater_never_makes_more_than_the_limit() -> None:
    inflater = Inflater("gzip", 100_000)
    payload = bomb(200_000)
    made = 0

    def feed_all() -> None:
        nonlocal made
        for start in range(0, len(payload), 65_536):
            made += len(inflater.feed(payload[start : start + 65_536]))

    with pytest.raises(TooLarge):
        feed_all()
    assert made <= 100_000
    with pytest.raises(InvalidCoding):
        Inflater("gzip", 100).finish()


# -- malformed HTTP gets a bounded answer --------------------------------------


async def test_garbage_after_a_valid_post_is_answered_without_quoting_it(
    wire: Wire, caplog: pytest.LogCaptureFixture
) -> None:
    body = wire.body("tools/list")
    body["params"]["pad"] = "p" * 60_000
    valid = wire.request_bytes(json.dumps(body).encode(), wire.headers("tools/list"))
    reader, writer = await wire.connect()
    writer.write(valid + b"\x00\x01garbage \xff\r\n\r\n")
    await writer.drain()
    received = b""
    with contextlib.suppress(ConnectionError):
        while chunk := await asyncio.wait_for(reader.read(1 << 16), ANSWER_WAIT):
            received += chunk
    writer.close()
    assert b"p" * 100 not in received
    assert b" 400 " in received
    assert len(received) < 8 * 1024
    assert_no_traceback(caplog)
    await wire.healthy()


async def test_an_absolute_target_is_checked_like_host(wire: Wire) -> None:
    body = json.dumps(wire.body("tools/list")).encode()
    request = wire.request_bytes(body, wire.headers("tools/list"))
    foreign = request.replace(b"POST /mcp ", b"POST http://evil.example/mcp ", 1)
    answer = await wire.send(foreign)
    assert answer.status == 403, answer
    assert b"evil" not in answer.body
    local = request.replace(
        b"POST /mcp ", f"POST http://127.0.0.1:{wire.port}/mcp ".encode(), 1
    )
    assert (await wire.send(local)).status == 200


# -- streams never take every connection ---------------------------------------


def test_the_default_stream_cap_leaves_connections_free() -> None:
    defaults = Settings()
    assert defaults.MAX_STREAMS <= defaults.MAX_CONNECTIONS // 2
    assert defaults.MAX_STREAMS_PER_CLIENT < defaults.MAX_STREAMS
    assert "wymcp.W012" not in {p.id for p in run_checks(defaults, checks=CHECKS)}
    equal = defaults.evolve(MAX_STREAMS=1000, MAX_CONNECTIONS=1000)
    assert "wymcp.W012" in {p.id for p in run_checks(equal, checks=CHECKS)}


def test_the_stream_cap_counts_per_client() -> None:
    cap = StreamCap(total=3, per_client=2)
    alice, bob = ("subject", "alice"), ("peer", "alice")
    assert cap.acquire(alice) is None
    assert cap.acquire(alice) is None
    assert cap.acquire(alice) == "MAX_STREAMS_PER_CLIENT"
    assert cap.acquire(bob) is None
    assert cap.acquire(("peer", "carol")) == "MAX_STREAMS"
    cap.release(alice)
    cap.release(alice)
    assert cap.acquire(("peer", "carol")) is None
    assert cap.open == 2


async def open_listen(
    wire: Wire, source: str
) -> tuple[bytes, asyncio.StreamReader, asyncio.StreamWriter]:
    """Open a `subscriptions/listen` stream from `source`; its head and socket."""
    body = wire.body(
        "subscriptions/listen", {"notifications": {"toolsListChanged": True}}
    )
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", wire.port, local_addr=(source, 0)
    )
    writer.write(
        wire.request_bytes(
            json.dumps(body).encode(), wire.headers("subscriptions/listen")
        )
    )
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), ANSWER_WAIT)
    return head, reader, writer


async def test_a_client_at_its_stream_cap_leaves_room_for_others(serve: Serve) -> None:
    wire = await serve(MAX_STREAMS_PER_CLIENT=2)
    held = []
    try:
        for _ in range(2):
            head, _, writer = await open_listen(wire, "127.0.0.1")
            assert b" 200 " in head.split(b"\r\n")[0], head
            held.append(writer)
        head, reader, writer = await open_listen(wire, "127.0.0.1")
        held.append(writer)
        assert head.startswith(b"HTTP/1.1 503 "), head
        assert b"Retry-After: 5" in head
        assert b"MAX_STREAMS_PER_CLIENT" in await reader.read(SMALL)
        head, _, writer = await open_listen(wire, "127.0.0.2")  # another client
        held.append(writer)
        assert b" 200 " in head.split(b"\r\n")[0], head
        await wire.healthy()  # and calls are served
    finally:
        for writer in held:
            writer.close()


# -- tokens with time claims that are not numbers ------------------------------

SECRET = "s" * 32
ISSUER = "https://issuer.example"
AUDIENCE = "http://127.0.0.1/mcp"


@pytest.mark.parametrize("claim", ["exp", "nbf", "iat"])
@pytest.mark.parametrize("shape", [str, lambda when: [when]], ids=["string", "list"])
async def test_a_time_claim_that_is_not_a_number_is_refused(
    claim: str, shape: Callable[[int], object]
) -> None:
    # each claim's value is valid as a number: only its type is wrong
    now = int(time.time())
    claims: dict[str, object] = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "mallory",
        "exp": now + 3600,
        "nbf": now - 60,
        "iat": now - 60,
    }
    number = claims[claim]
    assert isinstance(number, int)
    claims[claim] = shape(number)
    token = jwt.encode(claims, SECRET, algorithm="HS256")
    validator = JwtValidator(
        issuer=ISSUER, audience=AUDIENCE, key=SECRET, algorithms=["HS256"]
    )
    with pytest.raises(InvalidToken):
        await validator.validate(token)
    claims[claim] = number
    principal = await validator.validate(jwt.encode(claims, SECRET, algorithm="HS256"))
    assert principal.expires_at is not None


@pytest.mark.parametrize(
    "chunks",
    [b"zz\r\n{}\r\n0\r\n\r\n", b"2\r\n{}XX0\r\n\r\n", b"ffffffffffffffffff\r\n{}"],
    ids=["bad-size", "bad-terminator", "huge-size"],
)
async def test_malformed_chunked_bodies_get_a_bounded_400(
    wire: Wire, chunks: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    headers = {**wire.headers("tools/list"), "Transfer-Encoding": "chunked"}
    answer = await wire.send(wire.request_bytes(chunks, headers, length=False))
    assert answer.status == 400, answer
    assert answer.json()["error"]["code"] == -32600
    assert len(answer.body) <= SMALL
    assert_no_traceback(caplog)
    await wire.healthy()
