"""Function calls per ``tools/call`` over HTTP, METRICS off and on (deterministic).

Run: ``.venv/bin/python benchmarks/observe_calls.py [N] [--top K] [--opcodes]``.
The benchmark's settings are served in-process (aiohttp on 127.0.0.1) and a
raw keep-alive client sends N ``calc add`` calls at 2026-07-28 one after
another; `sys.setprofile` counts every Python and C function call the process
makes during them (server and client alike: the client is the same in both),
or with ``--opcodes`` `sys.settrace` counts the Python opcodes run. The
difference is what METRICS adds per call, by function. Counts, not time: a
busy machine does not move them.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from aiohttp import web

from wymcp.conf import load_settings
from wymcp.transport.aiohttp import create_app

_MODERN = "2026-07-28"
_PARAMS = {
    "name": "calc",
    "arguments": {"action": "add", "data": {"a": 1, "b": 2}},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": _MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "wymcp-bench", "version": "1"},
    },
}


def _request(port: int, number: int) -> bytes:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": _PARAMS},
        separators=(",", ":"),
    ).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {_MODERN}\r\nMcp-Method: tools/call\r\n"
        f"Mcp-Name: calc\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


async def _call(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
) -> None:
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    if head[9:12] != b"200":
        raise RuntimeError(head.decode("latin-1"))
    lowered = head.lower()
    marker = lowered.index(b"\r\ncontent-length:")
    end = lowered.index(b"\r\n", marker + 2)
    body = await reader.readexactly(int(lowered[marker + 17 : end]))
    if b'"isError":true' in body:
        raise RuntimeError(body.decode())


def _where(frame: Any, event: str, arg: Any) -> str:
    if event.startswith("c_"):
        owner = getattr(arg, "__self__", None)
        kind = type(owner).__name__ if owner is not None else ""
        return f"C {kind}.{getattr(arg, '__qualname__', arg)}"
    code = frame.f_code
    return f"{Path(code.co_filename).name}:{code.co_qualname}"


def _opcode_tracer(counts: collections.Counter[str]) -> Any:
    """A `sys.settrace` function counting each frame's opcodes by function."""

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        del event, arg
        frame.f_trace_opcodes = True
        key = _where(frame, "call", None)

        def local(frame: Any, event: str, arg: Any) -> Any:
            del frame, arg
            if event == "opcode":
                counts[key] += 1
            return local

        return local

    return tracer


async def _count(
    metrics: bool,  # noqa: FBT001 - a plain switch
    number: int,
    *,
    opcodes: bool,
) -> collections.Counter[str]:
    settings = load_settings("bench_wymcp_settings", METRICS=metrics)
    app = create_app(settings)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    requests = [_request(port, i) for i in range(2 * number)]
    for request in requests[:number]:  # warm-up: series and caches made
        await _call(reader, writer, request)
    counts: collections.Counter[str] = collections.Counter()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event in {"call", "c_call"}:
            counts[_where(frame, event, arg)] += 1

    if opcodes:
        sys.settrace(_opcode_tracer(counts))
    else:
        sys.setprofile(profile)
    try:
        for request in requests[number:]:
            await _call(reader, writer, request)
    finally:
        sys.settrace(None)
        sys.setprofile(None)
    writer.close()
    await runner.cleanup()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("number", nargs="?", type=int, default=200)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument(
        "--opcodes", action="store_true", help="count Python opcodes, not calls"
    )
    args = parser.parse_args()
    off = asyncio.run(_count(metrics=False, number=args.number, opcodes=args.opcodes))
    on = asyncio.run(_count(metrics=True, number=args.number, opcodes=args.opcodes))
    total_off, total_on = sum(off.values()), sum(on.values())
    what = "Python opcodes" if args.opcodes else "function calls"
    print(
        f"{what} per tools/call: METRICS off {total_off / args.number:.1f}, "
        f"on {total_on / args.number:.1f} "
        f"(+{(total_on - total_off) / args.number:.1f})"
    )
    diff = {k: (on[k] - off[k]) / args.number for k in on.keys() | off.keys()}
    shown = sorted(diff.items(), key=lambda item: -abs(item[1]))[: args.top]
    for name, extra in shown:
        if extra:
            print(f"{extra:+7.2f}  {name}")


if __name__ == "__main__":
    main()
