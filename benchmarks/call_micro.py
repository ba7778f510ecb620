"""In-process micro-benchmark: one `tools/call` through `Engine.post`, both eras.

Run: ``.venv/bin/python benchmarks/call_micro.py [--profile ERA]``. The engine
is built from the benchmark's own settings (`bench_wymcp_settings`, so
CALL_TIMEOUT and RESULT_LIMIT at their defaults, as `wymcp serve` runs them);
`calc add` and the 50-item `orders total` are called at 2026-07-28 (with the
mirrored headers) and on an initialized 2025-11-25 session. Prints wall and
process CPU microseconds per call: best and median of alternating rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load import order_arguments
from wymcp.conf import build_engine, load_settings
from wymcp.core.server import MODERN, Engine, Exchange, Headers

SESSION = "2025-11-25"


class _Sink:
    """A stream nobody reads (the calls measured send nothing on it)."""

    opened = False

    async def open(self, headers: Any = None) -> None:
        del headers

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        del message, event_id


def _calls() -> dict[str, tuple[str, dict[str, Any]]]:
    return {
        "calc": ("calc", {"action": "add", "data": {"a": 1, "b": 2}}),
        "order": ("orders", {"action": "total", "data": order_arguments()}),
    }


def modern_exchange(name: str, arguments: dict[str, Any]) -> Exchange:
    """One 2026-07-28 `tools/call` with `_meta` and the mirrored headers."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {
                    "name": "bench",
                    "version": "1",
                },
            },
        },
    }
    headers = Headers.of(
        [
            ("Content-Type", "application/json"),
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", name),
        ]
    )
    return Exchange(method="POST", headers=headers, body=body)


async def open_session(engine: Engine, sink: _Sink) -> str:
    """Initialize a 2025-11-25 session and send notifications/initialized."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": SESSION,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    reply = await engine.post(Exchange("POST", Headers.of([]), init), sink)
    sid = reply.headers["Mcp-Session-Id"]
    headers = Headers.of([("Mcp-Session-Id", sid), ("MCP-Protocol-Version", SESSION)])
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await engine.post(Exchange("POST", headers, note), sink)
    return sid


def session_exchange(sid: str, name: str, arguments: dict[str, Any]) -> Exchange:
    """One 2025-11-25 `tools/call` on session `sid`."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    headers = Headers.of(
        [
            ("Content-Type", "application/json"),
            ("Mcp-Session-Id", sid),
            ("MCP-Protocol-Version", SESSION),
        ]
    )
    return Exchange(method="POST", headers=headers, body=body)


async def exchanges(engine: Engine, sink: _Sink) -> dict[str, Exchange]:
    """The four measured calls, by `era/tool`."""
    sid = await open_session(engine, sink)
    out = {}
    for tool, (name, arguments) in _calls().items():
        out[f"{MODERN}/{tool}"] = modern_exchange(name, arguments)
        out[f"{SESSION}/{tool}"] = session_exchange(sid, name, arguments)
    return out


async def call_once(engine: Engine, exchange: Exchange, sink: _Sink) -> None:
    """One call; it must succeed (a benchmark of refusals would measure nothing)."""
    reply = await engine.post(exchange, sink)
    result = reply.body["result"] if reply.body else None
    if reply.status != 200 or not result or result.get("isError"):
        raise SystemExit(f"the call failed: {reply.status} {reply.body!r}")


async def measure(
    engine: Engine, cases: dict[str, Exchange], *, rounds: int, number: int
) -> dict[str, dict[str, list[float]]]:
    """Alternating rounds of `number` calls per case: wall and CPU µs per call."""
    sink = _Sink()
    figures: dict[str, dict[str, list[float]]] = {
        key: {"wall": [], "cpu": []} for key in cases
    }
    for _ in range(rounds):
        for key, exchange in cases.items():
            wall0, cpu0 = time.perf_counter(), time.process_time()
            for _ in range(number):
                await call_once(engine, exchange, sink)
            wall1, cpu1 = time.perf_counter(), time.process_time()
            figures[key]["wall"].append((wall1 - wall0) / number * 1e6)
            figures[key]["cpu"].append((cpu1 - cpu0) / number * 1e6)
    return figures


async def profile(engine: Engine, exchange: Exchange, number: int) -> None:
    """cProfile over `number` calls of one case, top entries by own time."""
    sink = _Sink()
    for _ in range(200):
        await call_once(engine, exchange, sink)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(number):
        await call_once(engine, exchange, sink)
    profiler.disable()
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(35)
    stats.sort_stats("cumulative").print_stats(45)


async def main(args: argparse.Namespace) -> None:
    settings = load_settings("bench_wymcp_settings")
    engine = build_engine(
        settings, **({"call_timeout": None} if args.no_timeout else {})
    )
    cases = await exchanges(engine, _Sink())
    if args.profile:
        await profile(engine, cases[args.profile], args.number * 5)
        return
    await measure(engine, cases, rounds=2, number=200)  # warm-up
    figures = await measure(engine, cases, rounds=args.rounds, number=args.number)
    head = ("wall best", "wall med", "cpu best", "cpu med")
    print(f"{'case':22} " + " ".join(f"{h:>10}" for h in head))
    for key, got in figures.items():
        print(
            f"{key:22} {min(got['wall']):9.1f}µ {statistics.median(got['wall']):9.1f}µ"
            f" {min(got['cpu']):9.1f}µ {statistics.median(got['cpu']):8.1f}µ"
        )
    print(f"python {sys.version.split()[0]}; {args.rounds} rounds of {args.number}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--no-timeout", action="store_true", help="CALL_TIMEOUT None")
    parser.add_argument("--number", type=int, default=500)
    parser.add_argument(
        "--profile",
        metavar="CASE",
        help=f"cProfile one case instead ({MODERN}/calc, {SESSION}/order, ...)",
    )
    asyncio.run(main(parser.parse_args()))
