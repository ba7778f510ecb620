"""`engine.post` of the 2025-11-25 session path, in-process, for callgrind.

Run from benchmarks/: ``valgrind --tool=callgrind ../.venv/bin/python
session_posts.py --tool order N`` twice (N=1200 and N=200) and divide the
difference by 1,000: the instructions of one `tools/call` in a session
(session lookup, classify, gates, the tool and its result), on the bytes the
load client sends after `initialize` and `notifications/initialized`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from aiohttp.test_utils import make_mocked_request

import bench_load
from run import calls_for
from stages import split
from wymcp.conf import build_engine, load_settings
from wymcp.core.server import Exchange, Headers
from wymcp.transport.aiohttp._body_budget import COUNTED_FROM
from wymcp.transport.aiohttp._json_body import decode_json
from wymcp.transport.aiohttp._sse_stream import SseStream


def _exchange(body: bytes, headers: dict[str, str]) -> Exchange:
    """The exchange the endpoint builds for one POST of `body`."""
    wire = (
        b"POST /mcp HTTP/1.1\r\n"
        + "".join(f"{name}: {value}\r\n" for name, value in headers.items()).encode()
        + b"\r\n"
        + body
    )
    parsed, raw = split(wire)
    return Exchange(
        "POST",
        Headers.of(parsed.items()),
        decode_json(raw, depth_limit=64),
        json_bytes=len(raw) if len(raw) <= COUNTED_FROM else None,
    )


async def _posts(tool: str, number: int) -> None:
    engine = build_engine(load_settings("bench_wymcp_settings"))
    channel = bench_load.Channel(None, "", modern=False)  # type: ignore[arg-type]
    # the endpoint's stream (it can end early, so a session call runs in a task)
    sink = SseStream(make_mocked_request("POST", "/mcp"), keepalive=15.0)
    params: dict[str, Any] = {
        "protocolVersion": bench_load.SESSION,
        "capabilities": {},
        "clientInfo": {"name": "wymcp-bench", "version": "1"},
    }
    body, headers = channel.prepared("initialize", params)
    reply = await engine.post(_exchange(body, headers), sink)
    channel.session_id = dict(reply.headers)["Mcp-Session-Id"]
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    await engine.post(_exchange(note.encode(), channel.headers(None, None)), sink)
    call = calls_for("wymcp")[tool]
    body, headers = channel.prepared(
        "tools/call", {"name": call.name, "arguments": call.arguments}
    )
    exchange = _exchange(body, headers)
    reply = await engine.post(exchange, sink)
    if reply.status != 200 or "error" in (reply.body or {}):
        raise RuntimeError(f"the call answered {reply.status}: {reply.body}")
    for _ in range(number):
        await engine.post(exchange, sink)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", choices=("calc", "order"), default="order")
    parser.add_argument("number", type=int)
    args = parser.parse_args(argv)
    asyncio.run(_posts(args.tool, args.number))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
