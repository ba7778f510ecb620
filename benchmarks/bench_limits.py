"""Issue 26's part of the report: its targets by both load clients, and its tables.

A ratio target holds (PASS) only when the hand-written client and autocannon
both meet it and agree within `AGREE` (a row whose case one client cannot
drive says so, and the other client decides it). A p99/p50 ratio is judged on
the range its percentiles' resolution allows (autocannon's are whole ms).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench_report import (
    AGREE,
    GE,
    LE,
    MICRO,
    X,
    find,
    fmt,
    item,
    label,
    metric,
    verdict,
)

MODERN, SESSION = "2026-07-28", "2025-11-25"
CLIENTS = (("raw", "hand-written"), ("autocannon", "autocannon"))
LOOPS = (("asyncio", "wymcp", "ceiling"), ("uvloop", "wymcp-uvloop", "ceiling-uvloop"))
"""(loop, wymcp's key, the bare aiohttp ceiling's key on that loop)."""
STAGES = (
    ("parse", "HTTP parse (aiohttp's C parser, body read out)"),
    ("admission", "admission (Headers, Host/Origin/type/length checks)"),
    ("decode", "JSON decode"),
    ("classify", "classify (JSON-RPC, stateless ladder, `_meta`)"),
    ("gates", "gates (`wymcp.core.gates.check_fast`, as engine.post runs them)"),
    ("tool", "tool and its result (`engine.post` less classify and gates)"),
    ("encode", "encode (the JSON body and its `web.Response`)"),
    ("rest", "write, event loop, aiohttp dispatch (load total less the above)"),
)
"""The rows of the per-stage table, in request order."""
Figure = Callable[[list[dict[str, Any]]], "tuple[float | None, str]"]
Span = tuple[float, float]
"""The lowest and highest value a figure can have, given its readings' resolution."""
Spread = Callable[[list[dict[str, Any]]], "Span | None"]


def rows_by_client(results: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {
        "raw": results.get("throughput", []),
        "autocannon": results.get("throughput_autocannon", []),
    }


def cpu_ratio(server: str, path: str, tool: str, ours: str = "wymcp") -> Figure:
    """The peer's server CPU per call over wymcp's (higher: wymcp is cheaper)."""

    def figure(rows: list[dict[str, Any]]) -> tuple[float | None, str]:
        mine = metric(find(rows, server=ours, path=path, tool=tool), "cpu_us")
        theirs = metric(find(rows, server=server, path=path, tool=tool), "cpu_us")
        if mine is None or theirs is None or not mine:
            return None, "not measured"
        text = f"{theirs / mine:.2f}{X} ({fmt(mine)} vs {fmt(theirs)} {MICRO}s)"
        return theirs / mine, text

    return figure


def rps_share(ours: str, top: str, tool: str = "calc") -> Figure:
    """wymcp's req/s as a share of a reference's, 2026-07-28."""

    def figure(rows: list[dict[str, Any]]) -> tuple[float | None, str]:
        mine = metric(find(rows, server=ours, path=MODERN, tool=tool), "rps")
        theirs = metric(find(rows, server=top, path=MODERN, tool=tool), "rps")
        if mine is None or not theirs:
            return None, "not measured"
        text = f"{mine / theirs * 100:.1f}% ({fmt(mine)} vs {fmt(theirs)} req/s)"
        return mine / theirs, text

    return figure


def tail_ratio(server: str, path: str, tool: str) -> Figure:
    """p99 over p50 of one case."""

    def figure(rows: list[dict[str, Any]]) -> tuple[float | None, str]:
        row = find(rows, server=server, path=path, tool=tool)
        p50, p99 = metric(row, "p50_ms"), metric(row, "p99_ms")
        if p50 is None or p99 is None or not p50:
            return None, "not measured"
        text = f"{p99 / p50:.2f}{X} (p50 {p50:.2f}, p99 {p99:.2f} ms"
        span = tail_span(server, path, tool)(rows)
        if span is not None and span[0] != span[1]:
            text += f"; whole ms: {span[0]:.2f}{X} to {span[1]:.2f}{X}"
        return p99 / p50, text + ")"

    return figure


def tail_span(server: str, path: str, tool: str) -> Spread:
    """The p99/p50 ratios one case's percentiles allow, given their resolution.

    A client that reads latency in whole milliseconds (autocannon: its histogram
    records each call's time rounded down, `latency_step_ms` 1) reports a
    percentile v whose true value lies in [v, v + 1): the ratio lies between
    p99 / (p50 + 1) and (p99 + 1) / p50. Exact readings give a range of one point.
    """

    def spread(rows: list[dict[str, Any]]) -> Span | None:
        row = find(rows, server=server, path=path, tool=tool)
        p50, p99 = metric(row, "p50_ms"), metric(row, "p99_ms")
        if p50 is None or p99 is None or not p50:
            return None
        step = metric(row, "latency_step_ms") or 0.0
        return p99 / (p50 + step), (p99 + step) / p50

    return spread


def apart(first: Span, second: Span) -> float:
    """How far apart two ranges are, as a share of the higher: 0 when they overlap.

    For two exact figures a <= b (ranges of one point) it is (b - a) / b.
    """
    top_of_lower = min(first[1], second[1])
    bottom_of_higher = max(first[0], second[0])
    if bottom_of_higher <= top_of_lower or not bottom_of_higher:
        return 0.0
    return (bottom_of_higher - top_of_lower) / bottom_of_higher


def both(
    target: str,
    by_client: dict[str, list[dict[str, Any]]],
    figure: Figure,
    *,
    at_least: float | None = None,
    at_most: float | None = None,
    one_client: str = "",
    spread: Spread | None = None,
) -> dict[str, str]:
    """One target measured by each client; PASS needs both, agreeing within AGREE.

    `one_client` names why autocannon cannot measure it (then the hand-written
    client's figure decides alone, and the row says so). `spread` gives the range
    a client's figure can have at its readings' resolution (p99/p50 from whole
    ms): the client meets the bound when some value in its range does, and two
    clients are as far apart as their ranges (0 when they overlap), still
    within AGREE. Without it every figure is exact.
    """
    values: dict[str, float | None] = {}
    spans: dict[str, Span] = {}
    texts = []
    clients = CLIENTS[:1] if one_client else CLIENTS
    for key, name in clients:
        rows = by_client.get(key, [])
        value, text = figure(rows)
        values[key] = value
        if value is not None:
            spans[key] = (spread(rows) if spread else None) or (value, value)
        texts.append(f"{name}: {text}")
    if one_client:
        texts.append(f"autocannon: n/a ({one_client})")
    # the figure nearest the bound that each client's resolution allows
    best = [low if at_most is not None else high for low, high in spans.values()]
    statuses = [verdict(v, at_least=at_least, at_most=at_most) for v in best]
    if "MISS" in statuses:
        status = "MISS"  # a client that measured it saw it missed
    elif len(spans) < len(values):
        status = "n/a"  # a client could not measure it: the claim is not settled
    else:
        status = "PASS"
    if len(spans) == len(CLIENTS):
        distance = apart(*spans.values())
        agree = distance <= AGREE
        texts.append(
            f"clients {'agree' if agree else 'DISAGREE'} ({distance:.0%} apart)"
        )
        if not agree:
            status = "MISS"
    return item(target, "; ".join(texts), status)


def targets(results: dict[str, Any]) -> list[dict[str, str]]:
    """Issue 26's targets, each with both clients' figures."""
    by = rows_by_client(results)
    out = [
        both(
            f"26: calc at {MODERN} {GE} 6{X} the Python SDK by server CPU per call",
            by,
            cpu_ratio("sdk", MODERN, "calc"),
            at_least=6.0,
        )
    ]
    out += [
        both(
            f"26: calc at {MODERN} {GE} 85% of the bare aiohttp ceiling by req/s, "
            f"both on {loop}",
            by,
            rps_share(ours, top),
            at_least=0.85,
        )
        for loop, ours, top in LOOPS
    ]
    for peer in ("fastmcp", "ts-sdk-2"):
        out += [
            both(
                f"26: {tool} at {MODERN} {GE} 3{X} {label(peer)} by server CPU "
                "per call",
                by,
                cpu_ratio(peer, MODERN, tool),
                at_least=3.0,
            )
            for tool in ("calc", "order")
        ]
    out += [
        both(
            f"26: {tool}, wymcp's {SESSION} session path {GE} 3{X} "
            f"{label('ts-sdk-1')} (stateless, {SESSION} only) by server CPU per call",
            by,
            cpu_ratio("ts-sdk-1", SESSION, tool),
            at_least=3.0,
        )
        for tool in ("calc", "order")
    ]
    out += [
        both(
            f"26: {tool}, {SESSION} session path {GE} 10{X} the Python SDK's "
            "default stateful path by server CPU per call",
            by,
            cpu_ratio("sdk", SESSION, tool),
            at_least=10.0,
        )
        for tool in ("calc", "order")
    ]
    for ours in ("wymcp", "wymcp-uvloop"):
        for path in (MODERN, SESSION):
            out += [
                both(
                    f"26: {label(ours)} p99 {LE} 3{X} p50 at concurrency 32, "
                    f"{tool} at {path}",
                    by,
                    tail_ratio(ours, path, tool),
                    at_most=3.0,
                    spread=tail_span(ours, path, tool),
                )
                for tool in ("calc", "order")
            ]
    out.append(broker_target(results.get("broker", [])))
    out += limit_items(by)
    return out


def broker_target(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Through Redis (2 processes) against one process, session path, by server CPU."""
    alone = metric(find(rows, config="one process", path=SESSION), "cpu_us")
    spread = metric(find(rows, config="2 processes, BROKER", path=SESSION), "cpu_us")
    row = find(rows, config="2 processes, BROKER", path=SESSION)
    redis = metric(row, "redis_cpu_us")
    value = None if not alone or not spread else alone / spread
    text = (
        "not measured"
        if value is None
        else f"{value:.2f}{X} ({fmt(alone)} {MICRO}s in one process vs {fmt(spread)} "
        f"{MICRO}s summed over 2 processes, plus Valkey's {fmt(redis)} {MICRO}s; "
        "hand-written client)"
    )
    return item(
        f"26: calc, {SESSION} session path through Redis (2 processes, BROKER) "
        f"{GE} 0.8{X} in-process by server CPU per call",
        text,
        verdict(value, at_least=0.8),
    )


def limit_items(by: dict[str, list[dict[str, Any]]]) -> list[dict[str, str]]:
    """wymcp as a share of the no-framework limit: reported, no bound (issue 26)."""
    out = []
    for ours in ("wymcp", "wymcp-uvloop", "ceiling-uvloop"):
        texts = []
        for key, name in CLIENTS:
            _, text = rps_share(ours, "raw-uvloop")(by.get(key, []))
            texts.append(f"{name}: {text}")
        out.append(
            item(
                f"26: {label(ours)}, calc at {MODERN}, as a share of "
                f"{label('raw-uvloop')} by req/s",
                "; ".join(texts),
                "report",
            )
        )
    return out


# -- the tables of performance.md -------------------------------------------------


def tail_table(results: dict[str, Any]) -> list[str]:
    """p50, p99 and p99.9 of every case, by each client."""
    lines = [
        "",
        "## Tail latency",
        "",
        (
            "Latency of every measured call at concurrency 32 (the hand-written "
            "client times each call; autocannon reports its own percentiles in "
            "whole milliseconds), medians over the repetitions."
        ),
        "",
        "| server | path | tool | client | p50 ms | p99 ms | p99.9 ms | p99 / p50 |",
        "|---|---|---|---|---:|---:|---:|---:|",
    ]
    by = rows_by_client(results)
    for key, name in CLIENTS:
        for row in by.get(key, []):
            if "p50_ms" not in row:
                continue
            p50, p99 = row["p50_ms"], row["p99_ms"]
            lines.append(
                f"| {label(row['server'])} | {row['path']} | {row['tool']} | {name} | "
                f"{p50:.2f} | {p99:.2f} | {fmt(row.get('p999_ms'), 2)} | "
                f"{p99 / p50 if p50 else 0:.2f} |"
            )
    return lines


def autocannon_table(rows: list[dict[str, Any]]) -> list[str]:
    """The throughput cases as autocannon measured them."""
    if not rows:
        return ["", "autocannon: not run (locks/node not installed)."]
    lines = [
        "",
        "### The same cases by autocannon",
        "",
        (
            f"| server | path | tool | req/s | CPU {MICRO}s/call "
            f"| client CPU {MICRO}s/call | req/s per rep |"
        ),
        "|---|---|---|---:|---:|---:|---|",
    ]
    for row in rows:
        head = f"| {label(row['server'])} | {row['path']} | {row['tool']} |"
        if "rps" not in row:
            error = str(row.get("error", ""))
            why = error if error.startswith("could not run") else f"failed: {error}"
            lines.append(f"{head} {why[:160]} | | | |")
            continue
        reps = ", ".join(str(v) for v in row.get("rps_reps", []))
        lines.append(
            f"{head} **{fmt(row['rps'])}** | {fmt(row['cpu_us'])} | "
            f"{fmt(row.get('client_cpu_us'))} | {reps} |"
        )
    return lines


def loop_table(results: dict[str, Any]) -> list[str]:
    """wymcp against the ceiling on the same loop, and the no-framework limit."""
    lines = [
        "",
        "## Same loop, and the limit",
        "",
        (
            "wymcp's req/s and server CPU per call as a share of the bare aiohttp "
            "ceiling's on the same event loop, and of the limit "
            "(`raw_server.py`: an asyncio Protocol on uvloop with httptools' C "
            "parser, no framework, the same canned answers)."
        ),
        "",
        (
            f"| loop | tool | client | wymcp req/s | ceiling req/s | % of ceiling "
            f"| % of the limit | wymcp CPU {MICRO}s | ceiling CPU {MICRO}s "
            f"| limit CPU {MICRO}s |"
        ),
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    by = rows_by_client(results)
    for loop, ours, top in LOOPS:
        for tool in ("calc", "order"):
            for key, name in CLIENTS:
                rows = by.get(key, [])
                mine = find(rows, server=ours, path=MODERN, tool=tool)
                ceiling = find(rows, server=top, path=MODERN, tool=tool)
                limit = find(rows, server="raw-uvloop", path=MODERN, tool=tool)
                if mine is None:
                    continue
                share, _ = rps_share(ours, top, tool)(rows)
                of_limit, _ = rps_share(ours, "raw-uvloop", tool)(rows)
                lines.append(
                    f"| {loop} | {tool} | {name} | {fmt(metric(mine, 'rps'))} | "
                    f"{fmt(metric(ceiling, 'rps'))} | "
                    f"{fmt(None if share is None else share * 100, 1)} | "
                    f"{fmt(None if of_limit is None else of_limit * 100, 1)} | "
                    f"{fmt(metric(mine, 'cpu_us'))} | "
                    f"{fmt(metric(ceiling, 'cpu_us'))} | "
                    f"{fmt(metric(limit, 'cpu_us'))} |"
                )
    return lines


def memory_table(results: dict[str, Any]) -> list[str]:
    """RSS after 1,000 legacy sessions and after 100,000 calls."""
    lines = [
        "",
        "## Memory over time",
        "",
        "| server | reading | RSS before MiB | RSS after MiB |",
        "|---|---|---:|---:|",
    ]
    lines.extend(
        f"| {label(row['server'])} | after {row['opened']:,} {SESSION} "
        f"sessions, each kept open | {row['rss_before_mib']:.1f} | "
        f"{row['rss_after_mib']:.1f} |"
        for row in results.get("sessions", [])
        if "rss_after_mib" in row
    )
    for row in results.get("endurance", []):
        if "rss_after_mib" in row:
            lines.append(
                f"| {label(row['server'])} | after {row['ok']:,} calc calls at "
                f"{MODERN} (before: after the warm-up) | {row['rss_warm_mib']:.1f} | "
                f"{row['rss_after_mib']:.1f} |"
            )
        else:
            lines.append(f"| {label(row['server'])} | failed: {row.get('error')} | | |")
    return lines


def broker_table(rows: list[dict[str, Any]]) -> list[str]:
    """Server CPU per call over `wymcp serve` processes, with and without BROKER."""
    if not rows:
        return []
    lines = [
        "",
        "## Across workers (BROKER)",
        "",
        (
            "calc through the hand-written client at concurrency 32: one `wymcp "
            "serve` without BROKER, one with it, and two with it (every "
            f"{SESSION} call sent to the process that did not open its session, "
            "so the session's state comes through Valkey). The processes and "
            "Valkey share the server core; server CPU is summed over the "
            "processes, Valkey's is beside it."
        ),
        "",
        (
            f"| configuration | path | req/s | server CPU {MICRO}s/call "
            f"| Valkey CPU {MICRO}s/call | p50 ms | p99 ms | p99.9 ms |"
        ),
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        head = f"| {row['config']} | {row['path']} |"
        if "rps" not in row:
            lines.append(f"{head} failed: {row.get('error', '')[:120]} | | | | | |")
            continue
        lines.append(
            f"{head} {fmt(row['rps'])} | **{fmt(row['cpu_us'])}** | "
            f"{fmt(row.get('redis_cpu_us'))} | {row['p50_ms']:.2f} | "
            f"{row['p99_ms']:.2f} | {row['p999_ms']:.2f} |"
        )
    return lines


def instructions_table(found: dict[str, Any]) -> list[str]:
    """Instructions per call by stage (instructions.py --stages), calc and order."""
    lines = ["", "## Where the time goes (instructions per call)", ""]
    if "calc" not in found:
        return [*lines, f"Not measured: {found.get('status', 'not run')}."]
    lines += [
        (
            "Counted by callgrind, which does not move with the machine's load. "
            "Totals: each server under load (`instructions.py`, measured calls "
            "only). Stages: each stage's real function run alone in-process "
            "(`stages.py`); the last row is the load total less the stages."
        ),
        "",
    ]
    for tool in ("calc", "order"):
        figures = found.get(tool)
        if not figures:
            continue
        if figures.get("stages"):
            lines += [stage_table(figures["stages"], tool), ""]
        totals = ", ".join(
            f"{key} {value / 1000:,.1f}k" for key, value in figures["totals"].items()
        )
        lines += [f"Totals per {tool} call under load: {totals}.", ""]
    return lines


def stage_table(split_counts: dict[str, dict[str, float]], tool: str) -> str:
    """The per-stage table (markdown), thousands of instructions per call."""
    keys = list(split_counts)
    lines = [
        f"| stage ({tool}, 2026-07-28) | " + " | ".join(keys) + " |",
        "|---|" + "---:|" * len(keys),
    ]
    for name, text in (*STAGES, ("total", "**total under load**")):
        cells = []
        for key in keys:
            value = split_counts[key].get(name)
            cells.append("—" if value is None else f"{value / 1000:,.1f}k")
        lines.append(f"| {text} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def instructions_line(figures: dict[str, Any]) -> str:
    """One progress line: each server's instructions per call."""
    return ", ".join(
        f"{key} {value / 1000:,.1f}k" for key, value in figures["totals"].items()
    )


def sections(results: dict[str, Any]) -> str:
    """Issue 26's sections of performance.md."""
    lines = autocannon_table(results.get("throughput_autocannon", []))
    lines += loop_table(results)
    lines += tail_table(results)
    lines += memory_table(results)
    lines += broker_table(results.get("broker", []))
    lines += instructions_table(results.get("instructions", {}))
    return "\n".join(lines) + "\n"
