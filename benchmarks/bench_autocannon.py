"""The second load client: autocannon (npm, locked in locks/node); nobody here wrote it.

It replays one pre-built request body from a file at a fixed concurrency over
keep-alive connections; the harness reads the server's /proc counters around it.
Every request carries the same body: on the 2026-07-28 path the stateless
envelope, on the 2025-11-25 path the `Mcp-Session-Id` of one session opened
first (all connections call on it; a stateless server gives none and gets none)
and a fresh JSON-RPC id in each request (`ID_SLOT`). Every autocannon process
runs under a time bound: a case it cannot finish is reported, never waited on.
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
ID_SLOT = "[<id>]"
"""Where autocannon's `--idReplacement` writes a fresh id into each request.

Used on the 2025-11-25 session path: MCP wants request ids unique within a
session, and the Python SDK (so fastmcp) keys a session's answer streams by the
request id, so 32 calls in flight with one id left all but one unanswered and
autocannon's warm-up never finished.
"""
LATENCY_STEP_MS = 1.0
"""The resolution of autocannon's latency percentiles, CLI and JSON alike: its
HDR histogram (lowestDiscernibleValue 1) records each call's time in ms rounded
down to a whole number, so a reported v means a true value in [v, v + 1)."""
CALL_TIMEOUT_S = 10
"""autocannon's own per-request timeout (`--timeout`): a call unanswered this long
counts as a timeout."""
WARM_RATE = 100
"""The fewest calls a second a warm-up is allowed (its bound: SLACK_S + calls / 100)."""
SLACK_S = 30.0
"""How long past its planned length an autocannon process may run before it is
killed and the case reported as "could not run" (start-up, the last answers)."""


class CouldNotRunError(Exception):
    """autocannon could not drive the case; the message says why."""


def available() -> bool:
    """Whether the locked autocannon is installed in `.cache/node`."""
    return NODE.exists() and AUTOCANNON.exists()


def version() -> str:
    """The installed autocannon's version ('' if absent)."""
    manifest = AUTOCANNON.with_name("package.json")
    if not manifest.is_file():
        return ""
    return str(json.loads(manifest.read_text("utf-8")).get("version", ""))


async def _check(url: str, body: bytes, headers: dict[str, str], bound_s: float) -> str:
    """Send the body once: '' when the server answers it with a tool result."""
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=bound_s)) as http,
            http.post(url, data=body, headers=headers) as response,
        ):
            raw = await response.read()
    except (aiohttp.ClientError, TimeoutError) as exc:
        return f"the check call failed: {type(exc).__name__}: {exc}"
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
    fresh_ids: bool,
    bound_s: float,
    what: str,
) -> dict[str, Any]:
    """Run autocannon once; its JSON report, or CouldNotRunError after `bound_s`."""
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
        str(CALL_TIMEOUT_S),
        *(["--idReplacement"] if fresh_ids else []),
    ]
    for name, value in headers.items():
        command += ["--headers", f"{name}={value}"]
    try:
        done = subprocess.run(
            [*command, url],
            capture_output=True,
            text=True,
            check=False,
            timeout=bound_s,
        )
    except subprocess.TimeoutExpired as exc:  # subprocess.run killed it
        raise CouldNotRunError(
            f"autocannon's {what} did not finish within {bound_s:.0f} s "
            f"(killed; the server left calls unanswered)"
        ) from exc
    if done.returncode != 0:
        raise RuntimeError(f"autocannon exited {done.returncode}: {done.stderr[-500:]}")
    if not done.stdout.strip():
        raise RuntimeError(f"autocannon printed no report: {done.stderr[-500:]}")
    return dict(json.loads(done.stdout))


def _failures(report: dict[str, Any]) -> int:
    """The calls autocannon counted as not 2xx, errored or timed out."""
    bad = int(report.get("non2xx", 0)) + int(report.get("errors", 0))
    return bad + int(report.get("timeouts", 0))


def with_id_slot(body: bytes) -> bytes:
    """The same JSON-RPC request with `ID_SLOT` as its id (a string id)."""
    message = json.loads(body)
    message["id"] = ID_SLOT
    return json.dumps(message, separators=(",", ":")).encode()


async def _prepared(
    url: str, call: Call, *, modern: bool, bound_s: float
) -> tuple[bytes, dict[str, str]]:
    """The body and headers every request carries (a session opened when 2025)."""
    params = {"name": call.name, "arguments": call.arguments}
    if modern:
        return Channel(None, url, modern=True).prepared("tools/call", params)  # type: ignore[arg-type]
    timeout = aiohttp.ClientTimeout(total=bound_s)
    async with aiohttp.ClientSession(timeout=timeout) as http:
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
    slack_s: float = SLACK_S,
) -> tuple[Outcome, dict[str, float]]:
    """Check the body once, warm up, then a timed run through autocannon.

    The timed run lasts `requests` // 300 seconds (1 to 10): server CPU is divided
    by the calls autocannon counted, req/s by autocannon's own duration.

    Answers the outcome (no per-call latencies) and autocannon's own latency
    percentiles in ms (p50, p90, p99, p99_9; whole milliseconds, rounded down). A
    call that was not 2xx, timed out or errored counts as failed. autocannon does
    not parse the JSON-RPC answer, so the body is checked once before the run.

    Each autocannon process is killed `slack_s` past its planned length (the
    warm-up's: its calls at WARM_RATE a second); a warm-up that was killed or
    had a failed call ends the case unmeasured, its outcome's `first_failure`
    saying why (the report: "could not run: <why>").
    """
    body, headers = await _prepared(url, call, modern=modern, bound_s=slack_s)
    outcome = Outcome()
    problem = await _check(url, body, headers, slack_s)
    if problem:
        outcome.failed = 1
        outcome.first_failure = problem
        return outcome, {}
    fresh_ids = not modern  # one session shared by every connection
    if fresh_ids:
        body = with_id_slot(body)
    with tempfile.TemporaryDirectory(prefix="wymcp-autocannon-") as folder:
        body_file = Path(folder) / "body.json"
        body_file.write_bytes(body)
        amount = max(warmup, concurrency)  # every connection used
        # A timed run: with --amount autocannon's clock runs to its next 1 s sample
        # tick, which would spoil req/s; a whole number of seconds does not.
        seconds = max(1, min(10, requests // 300))
        try:
            warm = _run(
                url,
                body_file,
                headers,
                connections=concurrency,
                limit=["--amount", str(amount)],
                fresh_ids=fresh_ids,
                bound_s=slack_s + amount / WARM_RATE,
                what="warm-up",
            )
            if _failures(warm):
                raise CouldNotRunError(  # noqa: TRY301 - reported below with the others
                    f"autocannon's warm-up: {_failures(warm)} of {amount} calls "
                    f"failed (not 2xx {warm.get('non2xx', 0)}, errors "
                    f"{warm.get('errors', 0)}, timeouts {warm.get('timeouts', 0)})"
                )
            checkpoint()
            started = time.perf_counter()
            report = _run(
                url,
                body_file,
                headers,
                connections=concurrency,
                limit=["--duration", str(seconds)],
                fresh_ids=fresh_ids,
                bound_s=seconds + slack_s,
                what=f"{seconds} s run",
            )
        except CouldNotRunError as exc:
            outcome.first_failure = str(exc)
            return outcome, {}
        checkpoint()
        outcome.wall_s = float(report["duration"]) or time.perf_counter() - started
    total = int(report["requests"]["total"]) if "total" in report["requests"] else 0
    total = total or int(report["requests"].get("sent", 0))
    bad = _failures(report)
    outcome.ok = max(total - bad, 0)
    outcome.failed = bad
    if bad:
        outcome.first_failure = f"autocannon: {bad} calls not 2xx or failed"
    latency = report["latency"]
    return outcome, {key: float(latency[key]) for key in ("p50", "p90", "p99", "p99_9")}
