"""stdio `tools/call` round trips: `wymcp stdio` beside the SDK's stdio server.

Each case launches a fresh server on pipes (pinned to its own core, as in run.py),
opens the revision's way (2026-07-28: `server/discover`, then `_meta` on every
request; 2025-11-25: initialize + notifications/initialized), makes warm-up calls,
then measured `calc` calls one at a time. Server CPU per call is utime+stime from
/proc over the measured calls. Run alone: `python benchmarks/bench_stdio.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import bench_servers
from bench_servers import CLOCK_TICKS, HERE, ROOT, Placement

PATHS = ("2026-07-28", "2025-11-25")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}


def command(key: str) -> list[str]:
    """How each server is launched on stdio."""
    if key == "wymcp":
        wymcp = Path(sys.executable).with_name("wymcp")
        return [str(wymcp), "stdio", "--settings", "bench_wymcp_settings"]
    python = bench_servers.venv_python("mcp")
    if not python.exists():  # the project's dev group pins the same mcp==2.3.0
        python = Path(sys.executable)
    return [str(python), str(HERE / "peer_sdk_server.py"), "--stdio"]


def arguments(key: str) -> tuple[str, dict[str, Any]]:
    if key == "wymcp":
        return "calc", {"action": "add", "data": {"a": 1, "b": 2}}
    return "calc", {"a": 1, "b": 2}


def cpu_seconds(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class Pipe:
    """A server process on pipes and a sequential JSON-RPC client over them."""

    def __init__(self, process: asyncio.subprocess.Process, *, modern: bool) -> None:
        self.process = process
        self.modern = modern
        self.next_id = 0

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        if self.modern:
            params = {**params, "_meta": META}
        body = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": method,
            "params": params,
        }
        await self.notify_raw(body)
        stdout = self.process.stdout
        if stdout is None:
            raise RuntimeError("no stdout pipe")
        while True:
            line = await stdout.readline()
            if not line:
                raise RuntimeError("the server closed stdout")
            message = json.loads(line)
            if message.get("id") == self.next_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(str(message["error"])[:300])
                return message["result"]

    async def notify_raw(self, body: dict[str, Any]) -> None:
        stdin = self.process.stdin
        if stdin is None:
            raise RuntimeError("no stdin pipe")
        stdin.write(json.dumps(body, separators=(",", ":")).encode() + b"\n")
        await stdin.drain()

    async def open(self) -> None:
        if self.modern:
            await self.request("server/discover", {})
            return
        await self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        )
        await self.notify_raw({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def drive(
    key: str, path: str, calls: int, warmup: int, placement: Placement
) -> dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        *command(key),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=bench_servers.project_env(),
        cwd=str(ROOT),
        preexec_fn=placement.apply,
    )
    pipe = Pipe(process, modern=path == PATHS[0])
    name, args = arguments(key)
    try:
        await pipe.open()
        for _ in range(warmup):
            result = await pipe.request("tools/call", {"name": name, "arguments": args})
        latencies: list[float] = []
        cpu0, client0 = cpu_seconds(process.pid), time.process_time()
        began = time.perf_counter()
        for _ in range(calls):
            sent = time.perf_counter()
            result = await pipe.request("tools/call", {"name": name, "arguments": args})
            latencies.append((time.perf_counter() - sent) * 1000)
            if result.get("isError"):
                raise RuntimeError(f"the call failed: {str(result)[:200]}")
        wall = time.perf_counter() - began
        cpu1, client1 = cpu_seconds(process.pid), time.process_time()
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()
    return {
        "server": key,
        "path": path,
        "calls": calls,
        "cpu_us": (cpu1 - cpu0) / calls * 1e6,
        "client_cpu_us": (client1 - client0) / calls * 1e6,
        "p50_ms": statistics.median(latencies),
        "rps": calls / wall,
    }


def line(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"{row['server']:6} {row['path']}  error: {row['error']}"
    return (
        f"{row['server']:6} {row['path']}  {row['cpu_us']:8.1f} us server CPU/call  "
        f"p50 {row['p50_ms']:.3f} ms  {row['rps']:7.0f} calls/s"
    )


def run_all(
    keys: list[str], calls: int, warmup: int, reps: int, placement: Placement
) -> list[dict[str, Any]]:
    """Every (server, path) `reps` times, interleaved; the median row of each."""
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for _ in range(reps):
        for key in keys:
            for path in PATHS:
                try:
                    row = asyncio.run(drive(key, path, calls, warmup, placement))
                except Exception as exc:  # noqa: BLE001 - a failed case is reported
                    row = {
                        "server": key,
                        "path": path,
                        "error": f"{type(exc).__name__}: {exc}"[:300],
                    }
                print("  " + line(row), flush=True)
                rows.setdefault((key, path), []).append(row)
    merged = []
    for (key, path), group in rows.items():
        good = [r for r in group if "error" not in r]
        if not good:
            merged.append(group[0])
            continue
        out: dict[str, Any] = {"server": key, "path": path, "calls": good[0]["calls"]}
        for name in ("cpu_us", "client_cpu_us", "p50_ms", "rps"):
            out[name] = statistics.median(r[name] for r in good)
        merged.append(out)
    return merged


def ratios(rows: list[dict[str, Any]]) -> dict[str, float]:
    """SDK CPU per call over wymcp's, per path (the target is >= 3)."""
    found: dict[str, float] = {}
    for path in PATHS:
        ours = next(
            (r for r in rows if r["server"] == "wymcp" and r["path"] == path), None
        )
        sdk = next(
            (r for r in rows if r["server"] == "sdk" and r["path"] == path), None
        )
        if ours and sdk and "cpu_us" in ours and "cpu_us" in sdk and ours["cpu_us"]:
            found[path] = sdk["cpu_us"] / ours["cpu_us"]
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--servers", default="sdk,wymcp")
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="servers and client under SCHED_RR (root), as run.py --realtime",
    )
    args = parser.parse_args(argv)
    server_cpus, client_cpus = bench_servers.cpu_plan()
    Placement(client_cpus, realtime=args.realtime).apply()
    rows = run_all(
        args.servers.split(","),
        args.calls,
        args.warmup,
        args.reps,
        Placement(server_cpus, realtime=args.realtime),
    )
    print("medians:")
    for row in rows:
        print("  " + line(row))
    for path, value in ratios(rows).items():
        print(
            f"stdio calc at {path}: SDK/wymcp server CPU per call = {value:.2f}x "
            "(target >= 3x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
