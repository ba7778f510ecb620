"""Instructions of each stage of one `tools/call`, run alone in-process under callgrind.

`instructions.py --stages` runs this file under `valgrind --tool=callgrind
--collect-atstart=no --toggle-collect=_operator_call --dump-after=_operator_call`:
only the code inside `operator.call(...)` is counted, one dump per call. Each
stage runs `--number` times inside one `operator.call`, then an empty loop of
the same length (its count is subtracted); the stages are the real functions
wymcp's request path calls, on the bytes the load client sends. Prints one JSON
object: the stage names in the order of the dumps, and the loop length.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import operator
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from aiohttp import web
from aiohttp._http_parser import HttpRequestParser  # type: ignore[import-not-found]
from aiohttp.base_protocol import BaseProtocol
from aiohttp.test_utils import make_mocked_request
from multidict import CIMultiDict

import bench_load
from bench_wymcp_tools import Calc, Orders
from run import calls_for
from wymcp.conf import build_engine, load_settings
from wymcp.core.gates import check_fast
from wymcp.core.server import Exchange
from wymcp.core.server._jsonrpc import classify
from wymcp.core.server._stateless_ladder import open_stateless, takes_stateless_path
from wymcp.transport.aiohttp._admission import Admission
from wymcp.transport.aiohttp._answers import reply_response
from wymcp.transport.aiohttp._body_budget import COUNTED_FROM
from wymcp.transport.aiohttp._body_reader import BodyReader
from wymcp.transport.aiohttp._endpoint import request_headers
from wymcp.transport.aiohttp._json_body import decode_json

GATED = {"calc": (Calc, "add"), "order": (Orders, "total")}


class _Sink:
    """A stream nobody reads (a JSON-mode call sends nothing on it)."""

    opened = False

    async def open(self, headers: Any = None) -> None:
        del headers

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        del message, event_id


def request_bytes(key: str, tool: str) -> bytes:
    """The request the load client sends `key` for `tool` at 2026-07-28."""
    channel = bench_load.Channel(None, "", modern=True)  # type: ignore[arg-type]
    raw = bench_load.RawChannel(channel, "http://127.0.0.1:8000/mcp")
    params, head = raw.template(calls_for(key)[tool])
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":%s}' % params
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body


def repeat(function: Callable[[], object], number: int) -> Callable[[], None]:
    def loop() -> None:
        for _ in range(number):
            function()

    return loop


def empty(number: int) -> Callable[[], None]:
    def loop() -> None:
        for _ in range(number):
            pass

    return loop


def parse_stage(wire: bytes) -> Callable[[], object]:
    """aiohttp's C parser on one request, its body read out (as the server does)."""
    loop = asyncio.new_event_loop()
    protocol = BaseProtocol(loop)
    parser = HttpRequestParser(protocol, loop, 2**16)

    def parse() -> object:
        messages, _, _ = parser.feed_data(wire)
        (message, payload), *_ = messages
        return message, payload.read_nowait(-1)

    return parse


def split(wire: bytes) -> tuple[CIMultiDict[str], bytes]:
    """The headers and the body of a request as bytes."""
    head, body = wire.split(b"\r\n\r\n", 1)
    headers: CIMultiDict[str] = CIMultiDict()
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, value = line.split(": ", 1)
        headers.add(name, value)
    return headers, body


def wymcp_stages(tool: str) -> dict[str, Callable[[], object]]:
    """The stages of wymcp's request path, each the function the server calls."""
    settings = load_settings("bench_wymcp_settings")
    engine = build_engine(settings)
    admission = Admission(settings)
    depth = BodyReader(settings)._depth_limit  # noqa: SLF001 - the value it decodes at
    wire = request_bytes("wymcp", tool)
    headers, body = split(wire)
    request = make_mocked_request("POST", "/mcp", headers=headers)
    index = request_headers(request.headers).index
    message = decode_json(body, depth_limit=depth)
    # as the endpoint: a body read whole as sent tells its JSON text's length
    buffered = len(body) <= COUNTED_FROM
    exchange = Exchange(
        "POST",
        request_headers(request.headers),
        message,
        json_bytes=len(body) if buffered else None,
    )
    sink = _Sink()
    versions = engine.options.protocol_versions
    loop = asyncio.new_event_loop()
    gated, action = GATED[tool]
    data = calls_for("wymcp")[tool].arguments["data"]

    def admit() -> None:
        # as the endpoint: the checks read `request.headers`, the engine a view
        sent = request.headers
        admission.admit_anonymous(request, sent)
        request_headers(sent)

    def opened() -> object:
        incoming = classify(message)
        if not takes_stateless_path(incoming, index):
            raise RuntimeError("the call did not take the stateless path")
        return open_stateless(incoming, exchange, sink, versions)

    async def posts(number: int) -> None:
        for _ in range(number):
            await engine.post(exchange, sink)

    async def nothing(number: int) -> None:
        for _ in range(number):
            pass

    reply = loop.run_until_complete(engine.post(exchange, sink))
    if reply.status != 200:
        raise RuntimeError(f"the call answered {reply.status}: {reply.body}")
    return {
        "parse": parse_stage(wire),
        "admission": admit,
        "decode": lambda: decode_json(body, depth_limit=depth),
        "classify": opened,
        # what engine.post runs on the loop: `check` is the thread's path, whose
        # sliced engine calls cost the 50-item order ~650k more than this
        "gates": lambda: check_fast(
            gated, action, data, json_bytes=exchange.json_bytes
        ),
        "encode": lambda: reply_response(reply),
        # whole batches: engine.post (classify, gates, tool, result) in a task
        "@engine": lambda: loop.run_until_complete(posts(NUMBER[0])),
        "@engine-empty": lambda: loop.run_until_complete(nothing(NUMBER[0])),
    }


def ceiling_stages(tool: str) -> dict[str, Callable[[], object]]:
    """The same stages of `ceiling_server.py`'s handler (no admission, no gates)."""
    wire = request_bytes("ceiling", tool)
    _, body = split(wire)
    message = json.loads(body)
    result = {"content": [{"type": "text", "text": "3"}], "isError": False}

    def encode() -> web.Response:
        text = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        return web.Response(text=text, content_type="application/json", headers={})

    return {
        "parse": parse_stage(wire),
        "decode": lambda: json.loads(body),
        "classify": lambda: "id" in message and message.get("method"),
        "encode": encode,
    }


NUMBER = [0]
"""The loop length, read by the batch stages."""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=("wymcp", "ceiling"), default="wymcp")
    parser.add_argument("--tool", choices=tuple(GATED), default="calc")
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args(argv)
    NUMBER[0] = args.number
    build = wymcp_stages if args.server == "wymcp" else ceiling_stages
    stages = build(args.tool)
    for name, function in stages.items():  # warm: first-call caches are no stage
        if not name.startswith("@"):
            repeat(function, 10)()
    order: list[str] = []
    for name, function in stages.items():
        run = function if name.startswith("@") else repeat(function, args.number)
        operator.call(run)
        order.append(name)
    operator.call(empty(args.number))
    order.append("@empty")
    print(json.dumps({"dumps": order, "number": args.number}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
