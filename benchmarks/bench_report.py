"""The benchmark's report: progress lines, targets with PASS or MISS, performance.md.

Every figure is shown next to the same figure of the official SDK and of the bare
aiohttp ceiling measured in the same run.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import bench_png
import bench_servers

SERVER_ORDER = (
    "sdk",
    "fastmcp",
    "ts-sdk-1",
    "ts-sdk-2",
    "wymcp",
    "ceiling",
    "wymcp-uvloop",
    "ceiling-uvloop",
    "raw-uvloop",
)
AGREE = 0.15
"""Two clients' ratios agree when they differ by at most this share (issue 26)."""
PATH_LABEL = {
    "2026-07-28": "2026-07-28 (stateless; peers json_response)",
    "2025-11-25": "2025-11-25 session (peers default SSE)",
}
TOOL_LABEL = {"calc": "calc (a+b)", "order": "order (50 items)"}
KIB = 1024
X = "\u00d7"  # multiplication sign
GE = "\u2265"
LE = "\u2264"
MICRO = "\u00b5"
DIV = "\u00f7"


def label(key: str) -> str:
    return bench_servers.SERVERS[key].label if key in bench_servers.SERVERS else key


def fmt(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "—"
    return f"{value:,.{digits}f}"


def case_line(row: dict[str, Any]) -> str:
    head = f"{row['server']:8} {row['path']} {row['tool']:5} rep {row.get('rep', 0)}"
    if "rps" not in row:
        return f"{head}: FAILED {row.get('error', '')}"
    tail = f" ({row['error']})" if row.get("error") else ""
    return (
        f"{head}: {row['rps']:8.0f} req/s  p50 {row['p50_ms']:6.1f} ms  "
        f"p99 {row['p99_ms']:6.1f} ms  cpu {row['cpu_us']:6.0f} us/call  "
        f"client {row['client_cpu_us']:4.0f} us/call  "
        f"rss {row['peak_rss_mib']:5.1f} MiB  "
        f"runnable, not run {row.get('run_queue_wait_ms', 0.0):5.1f} ms{tail}"
    )


def bad_line(row: dict[str, Any]) -> str:
    head = f"{row['server']:8} {row['probe']:11} ({row['items']:,} items)"
    if "response_bytes" not in row:
        return f"{head}: FAILED {row.get('error', '')}"
    return (
        f"{head}: HTTP {row['status']} {row['response_bytes']:,} B, "
        f"wall {row['wall_s']:.2f} s, server cpu {row['server_cpu_s']:.2f} s, "
        f"rss +{row['rss_growth_mib']:.1f} MiB"
    )


def cold_line(row: dict[str, Any]) -> str:
    if "median_s" not in row:
        return f"{row['server']:8} cold start: FAILED {row.get('error', '')}"
    return f"{row['server']:8} cold start: median {row['median_s'] * 1000:.0f} ms"


def session_line(row: dict[str, Any]) -> str:
    return (
        f"{row['server']:8} {row['opened']} sessions: "
        f"{row['kib_per_session']:.1f} KiB/session, "
        f"{row['open_ms']:.1f} ms to open each"
    )


# -- lookups and ratios -----------------------------------------------------------


def find(rows: list[dict[str, Any]], **match: str) -> dict[str, Any] | None:
    for row in rows:
        if all(row.get(k) == v for k, v in match.items()):
            return row
    return None


def ratio(value: float | None, reference: float | None) -> float | None:
    if value is None or not reference:
        return None
    return value / reference


def metric(row: dict[str, Any] | None, key: str) -> float | None:
    if row is None or key not in row:
        return None
    value = row[key]
    return float(value) if isinstance(value, (int, float)) else None


# -- targets ------------------------------------------------------------------------


def verdict(
    figure: float | None,
    *,
    at_most: float | None = None,
    at_least: float | None = None,
    reference_missing: bool = False,
) -> str:
    """PASS or MISS against a bound; n/a when the reference was not measured."""
    if reference_missing:
        return "n/a"
    if figure is None:
        return "MISS"
    if at_most is not None and figure > at_most:
        return "MISS"
    if at_least is not None and figure < at_least:
        return "MISS"
    return "PASS"


def item(target: str, figure: str, status: str) -> dict[str, str]:
    return {"target": target, "figure": figure, "status": status}


def cpu_note(rows: list[dict[str, Any]], path: str, tool: str, other: str) -> str:
    """How the CPU per call compares: the figure that machine noise moves least."""
    ours = metric(find(rows, server="wymcp", path=path, tool=tool), "cpu_us")
    theirs = metric(find(rows, server=other, path=path, tool=tool), "cpu_us")
    if ours is None or theirs is None:
        return ""
    return (
        f"; CPU per call {fmt(ours)} vs {fmt(theirs)} {MICRO}s, {theirs / ours:.2f}{X}"
    )


def throughput_targets(rows: list[dict[str, Any]]) -> list[dict[str, str]]:
    out = []
    modern, session = "2026-07-28", "2025-11-25"
    for tool in ("calc", "order"):
        ours = metric(find(rows, server="wymcp", path=modern, tool=tool), "rps")
        sdk = metric(find(rows, server="sdk", path=modern, tool=tool), "rps")
        r = ratio(ours, sdk)
        note = cpu_note(rows, modern, tool, "sdk")
        out.append(
            item(
                f"tools/call {tool} at {modern} {GE} 2.5{X} the SDK",
                f"{fmt(r, 3)}{X} ({fmt(ours)} vs {fmt(sdk)} req/s{note})",
                verdict(r, at_least=2.5, reference_missing=sdk is None),
            )
        )
        out.append(ceiling_target(rows, tool, 0.5))
    for tool in ("calc", "order"):
        ours = metric(find(rows, server="wymcp", path=session, tool=tool), "rps")
        sdk = metric(find(rows, server="sdk", path=session, tool=tool), "rps")
        r = ratio(ours, sdk)
        note = cpu_note(rows, session, tool, "sdk")
        out.append(
            item(
                f"tools/call {tool}, {session} session path {GE} 3{X} "
                "the SDK's default stateful path",
                f"{fmt(r, 3)}{X} ({fmt(ours)} vs {fmt(sdk)} req/s{note})",
                verdict(r, at_least=3.0, reference_missing=sdk is None),
            )
        )
    return out


def ceiling_target(
    rows: list[dict[str, Any]], tool: str, share: float, suffix: str = ""
) -> dict[str, str]:
    """A target on wymcp's req/s at 2026-07-28 as a share of the bare ceiling's."""
    modern = "2026-07-28"
    ours = metric(find(rows, server="wymcp", path=modern, tool=tool), "rps")
    top = metric(find(rows, server="ceiling", path=modern, tool=tool), "rps")
    r = ratio(ours, top)
    percent = None if r is None else r * 100  # one decimal: 49.96 is not 50
    return item(
        f"tools/call {tool} at {modern} {GE} {share * 100:g}% of the bare aiohttp "
        f"ceiling{suffix}",
        f"{fmt(percent, 1)}% ({fmt(ours)} vs {fmt(top)} req/s)",
        verdict(r, at_least=share, reference_missing=top is None),
    )


def cpu_target(
    ours_row: dict[str, Any] | None,
    sdk_row: dict[str, Any] | None,
    target: str,
    at_least: float,
) -> dict[str, str]:
    """A target on the SDK's server CPU per call over wymcp's."""
    ours = metric(ours_row, "cpu_us")
    sdk = metric(sdk_row, "cpu_us")
    r = ratio(sdk, ours)
    return item(
        target,
        f"{fmt(r, 2)}{X} ({fmt(ours)} vs {fmt(sdk)} {MICRO}s per call)",
        verdict(r, at_least=at_least, reference_missing=sdk is None),
    )


def engine_targets(rows: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Issue 14 (one engine): calc per call against the SDK by CPU and the ceiling."""
    modern, session = "2026-07-28", "2025-11-25"
    goals = (
        (modern, 5.0, f"calc at {modern} {GE} 5{X} the SDK"),
        (session, 8.0, f"calc, {session} session path {GE} 8{X} the SDK's default "),
    )
    out = [
        cpu_target(
            find(rows, server="wymcp", path=path, tool="calc"),
            find(rows, server="sdk", path=path, tool="calc"),
            f"tools/call {text}"
            + ("stateful path" if path == session else "")
            + " by server CPU per call (issue 14)",
            factor,
        )
        for path, factor, text in goals
    ]
    out.append(ceiling_target(rows, "calc", 0.65, " by req/s (issue 14)"))
    return out


def stdio_targets(rows: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Issue 17: stdio round trips at least 3x cheaper than the SDK's, by server CPU."""
    return [
        cpu_target(
            find(rows, server="wymcp", path=path),
            find(rows, server="sdk", path=path),
            f"stdio tools/call calc at {path} {GE} 3{X} the SDK's stdio server "
            "(server CPU per call)",
            3.0,
        )
        for path in ("2026-07-28", "2025-11-25")
    ]


def stdio_rows(rows: list[dict[str, Any]]) -> list[str]:
    """The stdio section of performance.md."""
    lines = [
        "",
        "## stdio",
        "",
        (
            "`tools/call` `calc` round trips, one at a time, over the pipes of a "
            "fresh `wymcp stdio` and of the SDK's stdio server "
            "(`peer_sdk_server.py --stdio`), each pinned to its core "
            "(`benchmarks/bench_stdio.py`)."
        ),
        "",
        f"| server | path | server CPU {MICRO}s/call | p50 ms | calls/s |",
        "|---|---|---:|---:|---:|",
    ]
    for row in rows:
        if "error" in row:
            lines.append(
                f"| {label(row['server'])} | {row['path']} | {row['error']} | | |"
            )
            continue
        lines.append(
            f"| {label(row['server'])} | {row['path']} | {fmt(row['cpu_us'])} | "
            f"{fmt(row['p50_ms'], 3)} | {fmt(row['rps'])} |"
        )
    return lines


def targets(results: dict[str, Any]) -> list[dict[str, str]]:
    """Each target (issues 7, 14, 17) with its measured figure and PASS, MISS or n/a."""
    out = throughput_targets(results.get("throughput", []))
    out += engine_targets(results.get("throughput", []))
    out += stdio_targets(results.get("stdio", []))
    bad = results.get("bad_calls", [])
    ours = find(bad, server="wymcp", probe="100k")
    sdk = find(bad, server="sdk", probe="100k")
    size = metric(ours, "response_bytes")
    sdk_size = fmt(metric(sdk, "response_bytes"))
    out.append(
        item(
            f"100,000 bad items: response {LE} 8 KiB",
            f"{fmt(size)} B (SDK: {sdk_size} B)",
            verdict(size, at_most=8 * KIB),
        )
    )
    cpu = metric(ours, "server_cpu_s")
    wall = fmt(metric(ours, "wall_s"), 3)
    sdk_cpu = fmt(metric(sdk, "server_cpu_s"), 2)
    out.append(
        item(
            f"100,000 bad items: server time {LE} 0.3 s",
            f"{fmt(cpu, 3)} s CPU, {wall} s wall (SDK: {sdk_cpu} s CPU)",
            verdict(cpu, at_most=0.3),
        )
    )
    growth = metric(ours, "rss_growth_mib")
    sdk_growth = fmt(metric(sdk, "rss_growth_mib"), 1)
    out.append(
        item(
            f"100,000 bad items: peak RSS growth {LE} 50 MiB",
            f"{fmt(growth, 1)} MiB (SDK: {sdk_growth} MiB)",
            verdict(growth, at_most=50),
        )
    )
    cold = results.get("cold_start", [])
    ours_ms = metric(find(cold, server="wymcp"), "median_s")
    sdk_ms = metric(find(cold, server="sdk"), "median_s")
    r = ratio(ours_ms, sdk_ms)
    ours_text = fmt(None if ours_ms is None else ours_ms * 1000)
    sdk_text = fmt(None if sdk_ms is None else sdk_ms * 1000)
    out.append(
        item(
            f"cold start {LE} half the SDK's",
            f"{ours_text} ms vs {sdk_text} ms ({fmt(r, 2)}{X})",
            verdict(r, at_most=0.5, reference_missing=sdk_ms is None),
        )
    )
    sessions = results.get("sessions", [])
    per = metric(find(sessions, server="wymcp"), "kib_per_session")
    sdk_per = fmt(metric(find(sessions, server="sdk"), "kib_per_session"), 1)
    out.append(
        item(
            f"memory per live session {LE} 8 KiB",
            f"{fmt(per, 1)} KiB (SDK: {sdk_per} KiB)",
            verdict(per, at_most=8),
        )
    )
    gate = results.get("gate", {})
    us = metric(gate, "order_us") if gate.get("order_accepted") else None
    figure = f"{fmt(us, 1)} {MICRO}s" if us is not None else "no figure"
    out.append(
        item(
            f"value gate {LE} 30 {MICRO}s for the accepted 50-item order",
            figure,
            verdict(us, at_most=30),
        )
    )
    return out


def targets_text(items: list[dict[str, str]]) -> str:
    lines = ["targets (issues 7, 14, 17, 26):"]
    lines.extend(f"  [{t['status']:4}] {t['target']}: {t['figure']}" for t in items)
    return "\n".join(lines)


# -- performance.md --------------------------------------------------------------


def chart(results: dict[str, Any], path: Path) -> str:
    """Draw the throughput ratios; answers a sentence on what the bars are."""
    rows = results.get("throughput", [])
    servers = [k for k in SERVER_ORDER if find(rows, server=k)]
    reference = "sdk" if "sdk" in servers else "ceiling"
    groups = []
    series: dict[str, list[float]] = {label(k): [] for k in servers}
    for path_key in ("2026-07-28", "2025-11-25"):
        for tool in ("calc", "order"):
            ref = metric(find(rows, server=reference, path=path_key, tool=tool), "rps")
            groups.append(f"{path_key}\n{TOOL_LABEL[tool]}")
            for key in servers:
                value = metric(find(rows, server=key, path=path_key, tool=tool), "rps")
                series[label(key)].append(ratio(value, ref) or 0.0)
    spec = {
        "title": f"tools/call req/s relative to {label(reference)} (higher is better)",
        "ylabel": f"req/s {DIV} {label(reference)} req/s",
        "groups": groups,
        "series": series,
        "lines": [{"y": 1.0, "label": label(reference), "span": [0, 3]}]
        + (
            [
                {"y": 2.5, "label": f"target 2.5{X}", "span": [0, 1]},
                {"y": 3.0, "label": f"target 3{X}", "span": [2, 3]},
            ]
            if reference == "sdk"
            else []
        ),
        "out": str(path),
    }
    python = bench_servers.venv_python("plot")
    if python.exists():
        done = subprocess.run(
            [str(python), str(bench_servers.HERE / "bench_chart.py")],
            input=json.dumps(spec),
            text=True,
            capture_output=True,
            check=False,
            timeout=120,
        )
        if done.returncode == 0:
            return f"matplotlib; bars are req/s {DIV} {label(reference)} req/s"
    bench_png.bar_chart(spec, path)
    colors = ", ".join(
        f"{name} = {color}"
        for name, color in zip(series, bench_png.COLOR_NAMES, strict=False)
    )
    return (
        f"drawn without matplotlib (no labels): groups left to right "
        f"{'; '.join(g.replace(chr(10), ' ') for g in groups)}; bars {colors}; "
        f"grey line at 1.0 = {label(reference)}"
    )


def throughput_tables(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        (
            f"| server | path | tool | req/s | p50 ms | p99 ms | CPU {MICRO}s/call "
            f"| client CPU {MICRO}s/call | peak RSS MiB | req/s per rep |"
        ),
        "|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    both = f"{X}SDK / {X}ceiling"
    ratio_lines = [
        (
            f"| server | path | tool | req/s {both} | p50 {both} | p99 {both} "
            f"| CPU/call {both} | peak RSS {both} |"
        ),
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for path_key in ("2026-07-28", "2025-11-25"):
        for tool in ("calc", "order"):
            sdk = find(rows, server="sdk", path=path_key, tool=tool)
            ceiling = find(rows, server="ceiling", path=path_key, tool=tool)
            for key in SERVER_ORDER:
                row = find(rows, server=key, path=path_key, tool=tool)
                if row is None:
                    continue
                head = f"| {label(key)} | {path_key} | {tool} |"
                if "rps" not in row:
                    failed = cell(row.get("error", ""))
                    lines.append(f"{head} failed: {failed} | | | | | | |")
                    continue
                reps = ", ".join(str(v) for v in row.get("rps_reps", []))
                lines.append(
                    f"{head} **{fmt(row['rps'])}** | {fmt(row['p50_ms'], 1)} | "
                    f"{fmt(row['p99_ms'], 1)} | {fmt(row['cpu_us'])} | "
                    f"{fmt(row.get('client_cpu_us'))} | "
                    f"{fmt(row['peak_rss_mib'], 1)} | {reps} |"
                )
                cells = []
                for name in ("rps", "p50_ms", "p99_ms", "cpu_us", "peak_rss_mib"):
                    a = ratio(metric(row, name), metric(sdk, name))
                    b = ratio(metric(row, name), metric(ceiling, name))
                    cells.append(f"{fmt(a, 2)} / {fmt(b, 2)}")
                ratio_lines.append(f"{head} " + " | ".join(cells) + " |")
    return [
        *lines,
        "",
        (
            f"Ratios: each figure {DIV} the same figure of the SDK / of the ceiling, "
            "same path and tool (for req/s higher is better, for the rest lower is)."
        ),
        "",
        *ratio_lines,
    ]


def cell(text: str, limit: int = 160) -> str:
    """Text made safe for one markdown table cell."""
    return text.replace("|", "/").replace("\n", " ")[:limit]


def bad_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        (
            "| server | probe | items | request bytes | HTTP | response bytes "
            "| server CPU s | wall s | peak RSS growth MiB | still serving |"
        ),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        head = f"| {label(row['server'])} | {row['probe']} | {row['items']:,} |"
        if "response_bytes" not in row:
            failed = cell(row.get("error", ""))
            lines.append(f"{head} | failed: {failed} | | | | | |")
            continue
        lines.append(
            f"{head} {row['request_bytes']:,} | {row['status']} | "
            f"**{row['response_bytes']:,}** | {row['server_cpu_s']:.3f} | "
            f"{row['wall_s']:.3f} | {row['rss_growth_mib']:.1f} | "
            f"{'yes' if row.get('still_serving') else 'NO'} |"
        )
    return lines


def excerpt_lines(rows: list[dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    for row in rows:
        if row.get("probe") == "100k" and row.get("excerpt"):
            text = row["excerpt"].replace("```", "'''")
            name = label(row["server"])
            lines += [f"{name}, first 400 bytes of the answer:", ""]
            lines += ["```", text, "```", ""]
    return lines


HEADER = """\
# Performance: wymcp side by side with the peers

Generated by `benchmarks/run.py`{smoke}. Every figure below comes from one run on
one machine, all servers measured side by side; compare the ratios, not the absolute
numbers. The machine is shared with other work: with `--realtime` (the servers and
the client under SCHED_RR) repeated runs agree within a few percent; without it
they move by 10-50%, and the CPU per call figures move least.

## Command

```
{command}
```

(`{just}` runs the same.) The run took {elapsed:.0f} s; load average
{load_before} at the start and {load_after} at the end.

## Targets (issues 7, 14, 17, 26)

| target | measured | status |
|---|---|---|
"""

MACHINE = """
## Machine

- `nproc`: {nproc}; CPU: {cpu}; memory {memory}; kernel {kernel}
- Python {python}; wymcp measured at commit {tree}
- versions: {versions}
- server pinned to CPU {server_cpus}, load client to CPU {client_cpus}; both run
  at niceness delta {nice} (0: the default priority){realtime}

## Method

- Each case starts a fresh server process on 127.0.0.1, opens {concurrency}
  channels, makes {warmup} warm-up calls ({jit_warmup:,} for the TS SDK peers:
  Node's V8 compiles their hot path over the first thousands of calls, and with
  200 the TS SDK 2.x's calc cost 877 {micro}s per call by the hand-written
  client's 3,000 calls against 611 by autocannon's 10 s; after 5,000 both read
  461-563 {micro}s), then {requests:,} measured `tools/call` at
  concurrency {concurrency}; {reps} repetitions, medians reported. Within a
  repetition the servers run each case back to back (calc at 2026-07-28 on
  every server, then the order, ...), so a burst of load from the machine's
  neighbours falls on all the servers of a comparison, not on one of them.
- Under `--realtime` a server starts under the normal policy and gets SCHED_RR
  once it listens (the cold start excepted): the kernel lets real-time tasks run
  950 ms of every 1 s (`sched_rt_runtime_us`), and a start-up spent under SCHED_RR
  left the measured calls throttled on an idle core for up to 50 ms, the 20-50 ms
  p99 of the longer cases. Each case line prints how long the server sat runnable
  but not running (schedstat) during the measured calls.
- The load client is one process on its own core. Sessions are opened with the
  aiohttp client; the measured calls go {client_text}.
- 2026-07-28 path: headers `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method`,
  `Mcp-Name`, and `params._meta` with the protocol version, client capabilities and
  client info. The peers run with `json_response=True`, their fastest configuration.
- 2025-11-25 path: every channel opens its own session (initialize,
  notifications/initialized) and calls with `Mcp-Session-Id`. The peers run with
  their defaults (stateful, SSE responses).
- Server CPU per call: utime+stime of the server process from /proc over the
  measured calls (client CPU per call: the load client's own, to show whether
  the client was the limit). Peak RSS: VmHWM. A call counts only if it answered
  HTTP 200 with a result that is not `isError`.
- Tools: `calc` adds two numbers (wymcp: tool `calc`, action `add`); the order is
  the 50 nested items of peers.md (wymcp: tool `orders`, action `total`); the peers
  declare pydantic models in their own decorator style
  (`benchmarks/peer_*_server.py`), served by uvicorn.
- Peers are installed by pip into their own virtual environments under
  `{venvs}`, outside the repository.
- The TypeScript SDK peers (`benchmarks/peer_ts_sdk_server.mjs`) come from
  `locks/node` (`npm ci` into `.cache/node`) and run on its pinned Node 22,
  stateless with JSON responses, a server per request as their READMEs show:
  2.x (`@modelcontextprotocol/server`, `createMcpHandler` with
  `responseMode: 'json'`; 2025 traffic takes its stateless fallback, SSE) on both
  paths, 1.x (`@modelcontextprotocol/sdk`) on the 2025-11-25 path only (it
  answers 2026-07-28 with 400). zod schemas as strict as the pydantic models.
- `wymcp-uvloop` and `ceiling-uvloop`: the same servers with `LOOP = "uvloop"`
  and `ceiling_server.py --loop uvloop`.
- `raw-uvloop`, the limit: `raw_server.py`, an asyncio Protocol on uvloop that
  parses with httptools (C) and answers the ceiling's canned results, no
  framework (`locks/bench-raw.txt`). Not an HTTP server anyone should run.
- The second client, autocannon, drives every case again, for as many whole
  seconds as the requests take at 300 req/s (1 to 10). It replays one body: on
  the 2025-11-25 path every connection calls on one session opened first (the
  hand-written client opens one per channel), each request with a fresh
  JSON-RPC id (`--idReplacement`): MCP wants ids unique within a session, and
  the Python SDK (so fastmcp) answers a session's calls by id, so calls in
  flight with one id went unanswered and the warm-up never ended. Each
  autocannon process is killed 30 s past its planned length (each call: 10 s),
  and a case it could not finish is reported "could not run: <reason>".
- autocannon's latency percentiles are whole milliseconds, rounded down, in its
  JSON as on screen (its histogram's lowest discernible value is 1 ms; no
  option changes it): a reported v is a true value in [v, v + 1). So a p99/p50
  it reports lies between p99 / (p50 + 1) and (p99 + 1) / p50, and a p99/p50
  target counts its range: met when some value in it meets the bound, and the
  clients agree when the hand-written client's exact ratio is within 15% of
  that range. Ratios of server CPU and of req/s keep the plain rule: the two
  clients' figures within 15% of the larger.

## Throughput and latency

![throughput ratios]({png})

Chart: {chart}.

"""

CLIENT_CHECK = """
How much the load client bounds the figures: `calc` on the 2026-07-28 path, one run
each, the calls sent by the hand-written client, by aiohttp's client (as in
peers.md) and by autocannon (npm, locked in `locks/node`; nobody here wrote it; it
replays one pre-built body from a file). A server whose figure hardly moves is the
limit; one that gains with the lighter client was held back by the client.

| server | req/s, hand-written | req/s, aiohttp | req/s, autocannon \
| client CPU {micro}s/call, hand-written / aiohttp / autocannon |
|---|---:|---:|---:|---:|
"""

CLIENT_RATIOS = """
wymcp against each server by server CPU per call, as each client measured it
(the peer's {micro}s {div} wymcp's {micro}s). A ratio holds when the hand-written
client and autocannon agree within {agree:.0%}.

| wymcp against | hand-written | autocannon | agree within {agree:.0%} |
|---|---:|---:|---|
"""


def client_rows(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    clients = ("raw", "aiohttp", "autocannon")
    for key in SERVER_ORDER:
        found = [find(rows, server=key, client=client) for client in clients]
        if all(row is None for row in found):
            continue
        rps = " | ".join(fmt(metric(row, "rps")) if row else "" for row in found)
        cpu = " / ".join(
            fmt(metric(row, "client_cpu_us")) if row else "-" for row in found
        )
        lines.append(f"| {label(key)} | {rps} | {cpu} |")
    return lines


def client_ratio(rows: list[dict[str, Any]], key: str, client: str) -> float | None:
    """The server `key`'s CPU per call over wymcp's, both measured by `client`."""
    peer = metric(find(rows, server=key, client=client), "cpu_us")
    ours = metric(find(rows, server="wymcp", client=client), "cpu_us")
    if peer is None or not ours:
        return None
    return peer / ours


def clients_agree(first: float | None, second: float | None) -> bool | None:
    """Whether two clients' ratios differ by at most AGREE (None: one is missing)."""
    if first is None or second is None or not first or not second:
        return None
    return abs(first - second) / max(first, second) <= AGREE


def client_ratio_rows(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    for key in SERVER_ORDER:
        if key == "wymcp" or find(rows, server=key, client="raw") is None:
            continue
        raw = client_ratio(rows, key, "raw")
        other = client_ratio(rows, key, "autocannon")
        agree = clients_agree(raw, other)
        verdict = {True: "holds", False: "does not hold", None: "n/a"}[agree]
        lines.append(
            f"| {label(key)} | {fmt(raw, 2)}{X if raw else ''} | "
            f"{fmt(other, 2)}{X if other else ''} | {verdict} |"
        )
    return lines


BAD_CALLS = """
## What a bad call costs

One `tools/call` whose number array holds wrong-typed items (`"x"`), on the
2026-07-28 path: 100,000 items, and as many as fit just under the 4 MiB body limit.
Server CPU is from /proc; peak RSS growth is VmHWM after the call minus VmRSS
before it (the peak is reset first through /proc/PID/clear_refs). Each probe runs on
a fresh server, which must still answer a good call afterwards.

"""

COLD = """
## Cold start and memory per session

Cold start: process spawn to the first successful `tools/list` (after initialize
and initialized), median of {cold_reps}. Every server starts from cached
bytecode: the peers' wheels were byte-compiled by pip at install time, and the
harness byte-compiles wymcp's editable sources once before measuring, as a
wheel install would (without it, with `PYTHONDONTWRITEBYTECODE` set, each wymcp
start compiles its sources again, about 60 ms here).

| server | cold start ms (median) | min | max |
|---|---:|---:|---:|
"""

SESSIONS = """
Memory per live session: VmRSS before and after opening {sessions:,} sessions one
after another, each kept open.

| server | sessions opened | RSS before MiB | RSS after MiB | KiB per session \
| ms to open one |
|---|---:|---:|---:|---:|---:|
"""


def client_text(client: str) -> str:
    if client == "raw":
        return (
            "over one kept-alive socket per channel, HTTP/1.1 written and read by hand "
            "(aiohttp's client costs about 200 " + MICRO + "s of CPU per request on "
            "this machine, which would cap every server near 5,000 req/s and squeeze "
            "the ratios; `--client aiohttp` sends them through aiohttp instead)"
        )
    return "through the aiohttp client (`--client aiohttp`)"


def cold_rows(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    for row in rows:
        name = label(row["server"])
        if "median_s" in row:
            lines.append(
                f"| {name} | **{row['median_s'] * 1000:.0f}** | "
                f"{row['min_s'] * 1000:.0f} | {row['max_s'] * 1000:.0f} |"
            )
        else:
            lines.append(f"| {name} | failed: {cell(row.get('error', ''))} | | |")
    return lines


def session_rows(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    for row in rows:
        name = label(row["server"])
        if "kib_per_session" in row:
            lines.append(
                f"| {name} | {row['opened']:,} | {row['rss_before_mib']:.1f} | "
                f"{row['rss_after_mib']:.1f} | **{row['kib_per_session']:.1f}** | "
                f"{row['open_ms']:.2f} |"
            )
        else:
            lines.append(f"| {name} | failed: {cell(row.get('error', ''))} | | | | |")
    return lines


def gate_lines(results: dict[str, Any]) -> list[str]:
    gate = results.get("gate", {})
    lines = ["", "## The value gate in-process", ""]
    if "order_us" in gate:
        lines += [
            (
                "`wymcp.core.gates.check()` timed in-process by "
                "`benchmarks/bench_gate.py` (best of 5 rounds):"
            ),
            "",
            "| case | figure |",
            "|---|---:|",
            (
                f"| 50-item order, accepted ({gate['order_accepted']}) "
                f"| **{gate['order_us']:.1f} {MICRO}s** |"
            ),
            f"| calc add, accepted | {gate['calc_us']:.1f} {MICRO}s |",
            (
                f"| {gate['bad_items']:,} wrong-typed items, refused "
                f"({gate['bad_refused']}) | {gate['bad_ms']:.1f} ms, refusal "
                f"{gate['bad_refusal_bytes']:,} B |"
            ),
        ]
    else:
        lines.append(f"Not measured: {gate.get('error', 'skipped')}")
    micro = results.get("gates_micro", {})
    lines += [
        "",
        (
            "`benchmarks/gates_micro.py` (the gates' own micro-benchmark): "
            f"{micro.get('status', 'not run')}."
        ),
    ]
    if micro.get("text"):
        lines += ["", "```", micro["text"].replace("```", "'''"), "```"]
    return lines + typed_lines(results.get("typed_micro", {}))


TYPED_BUDGET_US = 10


def typed_lines(typed: dict[str, Any]) -> list[str]:
    """The typed `add` path against the dict one (issue 15: at most 10 us more)."""
    if "typed_extra_us" not in typed:
        return ["", f"`benchmarks/typed_micro.py`: {typed.get('status', 'not run')}."]
    verdict = "PASS" if typed["typed_extra_us"] <= TYPED_BUDGET_US else "FAIL"
    return [
        "",
        (
            "`benchmarks/typed_micro.py`: one `calc add` call through `call_tool`"
            " (gates, code, shaping), best of 40 alternating rounds of process CPU"
            f" time: dict style {typed['dict_us']:.2f} {MICRO}s, typed (@action,"
            f" attrs in and out, cattrs) {typed['typed_us']:.2f} {MICRO}s:"
            f" **+{typed['typed_extra_us']:.2f} {MICRO}s** per call"
            f" ({LE} {TYPED_BUDGET_US} {MICRO}s: {verdict})."
        ),
    ]


SOAK_RESULT = Path(__file__).resolve().parent / "results" / "soak.txt"
"""What the last `just soak` printed, saved by hand (`just soak | tee` this file)."""


def soak_section(saved: Path) -> str:
    """The soak run's figures (issue 8), quoted from its saved output."""
    if not saved.is_file():
        return "\n## Soak\n\nNo soak run saved (`benchmarks/results/soak.txt`).\n"
    quoted = saved.read_text(encoding="utf-8").strip().replace("```", "'''")
    return (
        "\n## Soak\n\n"
        "`scripts/soak.py` (`just soak`): 200 concurrent clients of mixed valid and "
        "invalid traffic against one `wymcp serve` process for 60 seconds after a "
        "warm-up; it passes only with no 5xx, no failed valid call, no wrong answer "
        "to an invalid request and RSS growth under 10%. Saved by hand in "
        "`benchmarks/results/soak.txt` (not re-run by this benchmark):\n\n"
        f"```\n{quoted}\n```\n"
    )


HISTORY = Path(__file__).resolve().parent / "results" / "history.md"
"""Earlier runs compared with later ones, written by hand after a full run."""


def history_section(saved: Path) -> str:
    """The hand-kept before/after comparisons, appended as they are."""
    if not saved.is_file():
        return ""
    return "\n" + saved.read_text(encoding="utf-8").strip() + "\n"


def write(results: dict[str, Any], out: Path, extra: str = "") -> Path:
    """Write performance.md and performance-throughput.png into `out`.

    `extra` (issue 26's sections, `bench_limits.sections`) follows the
    throughput tables.
    """
    png = out / "performance-throughput.png"
    how = chart(results, png)
    config = results["config"]
    mach = results["machine"]
    smoke = " in **smoke mode** (tiny counts: the figures mean nothing)"
    text = HEADER.format(
        smoke=smoke if results["smoke"] else "",
        command=results["command"],
        just=results["command"]
        .replace(".venv/bin/python benchmarks/run.py", "just bench", 1)
        .strip(),
        elapsed=results.get("elapsed_s", 0),
        load_before=results.get("load_before", "?"),
        load_after=results.get("load_after", "?"),
    )
    text += "".join(
        f"| {t['target']} | {t['figure']} | **{t['status']}** |\n"
        for t in results["targets"]
    )
    versions = ", ".join(
        f"{k} {v or 'not installed'}" for k, v in mach["versions"].items()
    )
    text += MACHINE.format(
        **mach | {"versions": versions, "tree": mach.get("tree", "unknown")},
        server_cpus=config["server_cpus"] or "(not pinned)",
        client_cpus=config["client_cpus"] or "(not pinned)",
        nice=config.get("nice", 0),
        realtime=", under SCHED_RR" if config.get("realtime") else "",
        concurrency=config["concurrency"],
        warmup=config["warmup"],
        jit_warmup=config.get("jit_warmup", config["warmup"]),
        micro=MICRO,
        requests=config["requests"],
        reps=config["reps"],
        client_text=client_text(config.get("client", "raw")),
        venvs=bench_servers.VENV_HOME,
        png=png.name,
        chart=how,
    )
    lines = throughput_tables(results.get("throughput", []))
    text += "\n".join(lines) + "\n"
    if results.get("client_check"):
        text += CLIENT_CHECK.format(micro=MICRO)
        text += "\n".join(client_rows(results["client_check"])) + "\n"
        text += CLIENT_RATIOS.format(micro=MICRO, div=DIV, agree=AGREE)
        text += "\n".join(client_ratio_rows(results["client_check"])) + "\n"
    text += extra
    text += BAD_CALLS
    text += "\n".join(bad_table(results.get("bad_calls", []))) + "\n\n"
    text += "\n".join(excerpt_lines(results.get("bad_calls", [])))
    text += COLD.format(cold_reps=config["cold_reps"])
    text += "\n".join(cold_rows(results.get("cold_start", []))) + "\n"
    text += SESSIONS.format(sessions=config["sessions"])
    text += "\n".join(session_rows(results.get("sessions", []))) + "\n"
    if results.get("stdio"):
        text += "\n".join(stdio_rows(results["stdio"])) + "\n"
    text += "\n".join(gate_lines(results)) + "\n"
    text += soak_section(SOAK_RESULT)
    text += history_section(HISTORY)
    report = out / "performance.md"
    report.write_text(text, encoding="utf-8")
    return report
