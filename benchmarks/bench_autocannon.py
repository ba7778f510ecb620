"""The second load client: autocannon (npm, locked in locks/node); nobody here wrote it.

It replays one pre-built request body from a file at a fixed concurrency over
keep-alive connections; the harness reads the server's /proc counters around it.
Every request carries the same body and id: on the 2026-07-28 path the stateless
envelope, on the 2025-11-25 path the `Mcp-Session-Id` of one session opened
first (all connections call on it; a stateless server gives none and gets none).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp

from bench_load import Call, Channel, Outcome, decode_message, is_success
from bench_servers import NODE, NODE_MODULES

AUTOCANNON = NODE_MODULES / "autocannon" / "autocannon.js"


def available() -> bool:
    """Whether the locked autocannon is installed in `.cache/node`."""
    return NODE.exists() and AUTOCANNON.exists()


def version() -> str:
    """The installed autocannon's version ('' if absent)."""
    manifest = AUTOCANNON.with_name("package.json")
    if not manifest.is_file():
        return ""
    return str(json.loads(manifest.read_text("utf-8")).get("version", ""))


async def _check(url: str, body: bytes, headers: dict[str, str]) -> str:
    """Send the body once: '' when the server answers it with a tool result."""
    async with (
        aiohttp.ClientSession() as http,
        http.post(url, data=body, headers=headers) as response,
    ):
        raw = await response.read()
        message = decode_message(response.headers.get("Content-Type", ""), raw)
        if response.status == 200 and is_success(message):
            return ""
        return f"HTTP {response.status}: {raw[:200]!r}"


def _run(
    url: str,
    body_file: Path,
    headers: dict[str, str],
    *,
    connections: int,
    limit: list[str],
) -> dict[str, Any]:
    command = [
        str(NODE),
        str(AUTOCANNON),
        "--json",
        "--connections",
        str(connections),
        *limit,
        "--method",
        "POST",
        "--input",
        str(body_file),
        "--timeout",
        "60",
    ]
    for name, value in headers.items():
        command += ["--headers", f"{name}={value}"]
    done = subprocess.run([*command, url], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"autocannon exited {done.returncode}: {done.stderr[-500:]}")
    if not done.stdout.strip():
        raise RuntimeError(f"autocannon printed no report: {done.stderr[-500:]}")
    return dict(json.loads(done.stdout))


async def _prepared(
    url: str, call: Call, *, modern: bool
) -> tuple[bytes, dict[str, str]]:
    """The body and headers every request carries (a session opened when 2025)."""
    params = {"name": call.name, "arguments": call.arguments}
    if modern:
        return Channel(None, url, modern=True).prepared("tools/call", params)  # type: ignore[arg-type]
    async with aiohttp.ClientSession() as http:
        channel = Channel(http, url, modern=False)
        await channel.open()  # the session stays open on the server
        return channel.prepared("tools/call", params)


async def drive(
    url: str,
    call: Call,
    *,
    modern: bool = True,
    concurrency: int,
    warmup: int,
    requests: int,
    checkpoint: Callable[[], None],
) -> tuple[Outcome, dict[str, float]]:
    """Check the body once, warm up, then a timed run through autocannon.

    The timed run lasts `requests` // 300 seconds (1 to 10): server CPU is divided
    by the calls autocannon counted, req/s by autocannon's own duration.

    Answers the outcome (no per-call latencies) and autocannon's own latency
    percentiles in ms (p50, p90, p99, p99_9). A
    call that was not 2xx, timed out or errored counts as failed. autocannon does
    not parse the JSON-RPC answer, so the body is checked once before the run.
    """
    body, headers = await _prepared(url, call, modern=modern)
    outcome = Outcome()
    problem = await _check(url, body, headers)
    if problem:
        outcome.failed = 1
        outcome.first_failure = problem
        return outcome, {}
    with tempfile.TemporaryDirectory(prefix="wymcp-autocannon-") as folder:
        body_file = Path(folder) / "body.json"
        body_file.write_bytes(body)
        warm = ["--amount", str(max(warmup, concurrency))]  # every connection used
        _run(url, body_file, headers, connections=concurrency, limit=warm)
        checkpoint()
        started = time.perf_counter()
        # A timed run: with --amount autocannon's clock runs to its next 1 s sample
        # tick, which would spoil req/s; a whole number of seconds does not.
        seconds = max(1, min(10, requests // 300))
        report = _run(
            url,
            body_file,
            headers,
            connections=concurrency,
            limit=["--duration", str(seconds)],
        )
        checkpoint()
        outcome.wall_s = float(report["duration"]) or time.perf_counter() - started
    total = int(report["requests"]["total"]) if "total" in report["requests"] else 0
    total = total or int(report["requests"].get("sent", 0))
    bad = int(report.get("non2xx", 0)) + int(report.get("errors", 0))
    bad += int(report.get("timeouts", 0))
    outcome.ok = max(total - bad, 0)
    outcome.failed = bad
    if bad:
        outcome.first_failure = f"autocannon: {bad} calls not 2xx or failed"
    latency = report["latency"]
    return outcome, {key: float(latency[key]) for key in ("p50", "p90", "p99", "p99_9")}
