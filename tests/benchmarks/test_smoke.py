"""The benchmark harness in smoke mode still measures every case and writes its report.

Smoke mode runs wymcp, the bare aiohttp ceiling and the TypeScript SDK peers with a
handful of requests; nothing here looks at a figure's size, only that each case
produced one. The TS SDK peers and autocannon come from locks/node (`npm ci`, once
per lock); where npm is missing the run skips them and says why.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PATHS = ("2026-07-28", "2025-11-25")
TOOLS = ("calc", "order")
TS_PATHS = {"ts-sdk-1": ("2025-11-25",), "ts-sdk-2": PATHS}
"""The paths each TS SDK peer serves (1.x predates 2026-07-28)."""


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str, Path]:
    out = tmp_path_factory.mktemp("bench")
    done = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [
            sys.executable,
            str(ROOT / "benchmarks" / "run.py"),
            "--smoke",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (out / "stdout.txt").write_text(done.stdout, encoding="utf-8")
    results = json.loads((out / "performance.json").read_text(encoding="utf-8"))
    report = (out / "performance.md").read_text(encoding="utf-8")
    return results, report, out


def test_every_throughput_case_measured_for_wymcp_and_the_ceiling(smoke) -> None:
    results, _, _ = smoke
    rows = {(r["server"], r["path"], r["tool"]): r for r in results["throughput"]}
    for server in ("wymcp", "ceiling"):
        for path in PATHS:
            for tool in TOOLS:
                row = rows[(server, path, tool)]
                assert "error" not in row, row
                assert row["calls"] > 0
                for key in ("rps", "p50_ms", "p99_ms", "cpu_us", "peak_rss_mib"):
                    assert key in row


def node_tools_installed(results: dict) -> bool:
    """Whether the run had the locked Node tools (else it said why it skipped)."""
    return "ts-sdk-2" in results["config"]["servers"]


def test_every_client_drives_every_server(smoke) -> None:
    results, _, _ = smoke
    seen = {(r["server"], r["client"]) for r in results["client_check"] if "rps" in r}
    servers = ["wymcp", "ceiling"]
    if "raw-uvloop" in results["config"]["servers"]:
        servers.append("raw-uvloop")
    clients = ["raw", "aiohttp"]
    if node_tools_installed(results):
        servers.append("ts-sdk-2")  # 1.x cannot serve the 2026 path checked here
        clients.append("autocannon")
    assert seen == {(server, client) for server in servers for client in clients}


def test_the_typescript_sdk_peers_are_measured_or_skipped_with_a_reason(
    smoke,
) -> None:
    results, report, out = smoke
    if not node_tools_installed(results):
        stdout = (out / "stdout.txt").read_text(encoding="utf-8")
        assert "TS SDK peers and autocannon skipped" in stdout
        assert "dropped: ts-sdk-1, ts-sdk-2" in stdout
        return
    rows = {(r["server"], r["path"], r["tool"]): r for r in results["throughput"]}
    for server, paths in TS_PATHS.items():
        for path in paths:
            for tool in TOOLS:
                row = rows[(server, path, tool)]
                assert "error" not in row, row
                assert row["calls"] > 0
    assert ("ts-sdk-1", PATHS[0], "calc") not in rows
    versions = results["machine"]["versions"]
    assert versions["@modelcontextprotocol/sdk (ts-sdk-1)"].startswith("1.")
    assert versions["@modelcontextprotocol/server (ts-sdk-2)"].startswith("2.")
    assert versions["autocannon (second client)"]
    assert "| wymcp against | hand-written | autocannon | agree within 15% |" in report
    assert "TS SDK 2.x (@modelcontextprotocol/server)" in report


def test_both_bad_call_probes_get_a_bounded_answer_and_the_server_survives(
    smoke,
) -> None:
    results, _, _ = smoke
    probes = {r["probe"]: r for r in results["bad_calls"] if r["server"] == "wymcp"}
    assert set(probes) == {"100k", "under-limit"}
    for probe in probes.values():
        assert "error" not in probe, probe
        assert probe["status"] == 200
        assert probe["still_serving"] is True
        for key in ("response_bytes", "server_cpu_s", "rss_growth_mib"):
            assert key in probe


def test_cold_start_sessions_and_gate_are_measured(smoke) -> None:
    results, _, _ = smoke
    cold = {r["server"]: r for r in results["cold_start"]}
    assert "median_s" in cold["wymcp"], cold
    assert "median_s" in cold["ceiling"], cold
    sessions = {r["server"]: r for r in results["sessions"]}
    assert sessions["wymcp"]["opened"] == results["config"]["sessions"]
    assert results["gate"]["order_accepted"] is True
    assert results["gate"]["bad_refused"] is True


def test_every_target_is_reported_with_a_status(smoke) -> None:
    results, report, _ = smoke
    targets = results["targets"]
    # 12 of issue 7, 3 of issue 14, 2 stdio of issue 17, 23 of issue 26
    assert len(targets) == 40
    assert {t["status"] for t in targets} <= {"PASS", "MISS", "n/a", "report"}
    for target in targets:
        if target["target"].startswith("26:") and "Redis" not in target["target"]:
            assert "hand-written:" in target["figure"]
            assert "autocannon:" in target["figure"]
    for target in targets:
        assert target["target"] in report


def test_the_report_names_the_command_and_the_machine_and_draws_the_chart(
    smoke,
) -> None:
    results, report, out = smoke
    assert "benchmarks/run.py --smoke" in report
    assert "smoke mode" in report
    assert f"`nproc`: {results['machine']['nproc']}" in report
    chart = out / "performance-throughput.png"
    assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "performance-throughput.png" in report


def test_stdio_round_trips_are_measured_for_wymcp(smoke) -> None:
    results, report, _ = smoke
    rows = {(r["server"], r["path"]): r for r in results["stdio"]}
    for path in PATHS:
        row = rows[("wymcp", path)]
        assert "error" not in row, row
        assert row["calls"] > 0
        for key in ("cpu_us", "p50_ms", "rps"):
            assert key in row
    assert "## stdio" in report


def test_every_case_has_its_tail_and_autocannon_drives_every_case(smoke) -> None:
    results, report, _ = smoke
    for row in results["throughput"]:
        assert row["p50_ms"] <= row["p99_ms"] <= row["p999_ms"], row
    assert "## Tail latency" in report
    if not node_tools_installed(results):
        assert results["throughput_autocannon"] == []
        return
    cases = {
        (r["server"], r["path"], r["tool"])
        for r in results["throughput_autocannon"]
        if "rps" in r and not r.get("error")
    }
    wanted = {(s, p, t) for s in ("wymcp", "ceiling") for p in PATHS for t in TOOLS}
    assert wanted <= cases
    # autocannon's percentiles are whole ms: its rows say so for the p99/p50 rule
    measured = [r for r in results["throughput_autocannon"] if "rps" in r]
    assert {r.get("latency_step_ms") for r in measured} == {1.0}
    assert all("latency_step_ms" not in r for r in results["throughput"])
    assert ("ts-sdk-1", PATHS[1], "calc") in cases  # stateless 2025: no session


def test_the_limit_runs_or_the_run_says_why_not(smoke) -> None:
    results, report, out = smoke
    if "raw-uvloop" not in results["config"]["servers"]:
        stdout = (out / "stdout.txt").read_text(encoding="utf-8")
        assert "raw-uvloop" in stdout
        return
    rows = [r for r in results["throughput"] if r["server"] == "raw-uvloop"]
    assert len(rows) == 4
    assert all("error" not in row and row["calls"] > 0 for row in rows), rows
    assert "## Same loop, and the limit" in report


def test_memory_after_many_calls_and_the_broker_processes_are_measured(smoke) -> None:
    results, report, _ = smoke
    (row,) = results["endurance"]
    assert row["server"] == "wymcp"
    assert "error" not in row, row
    assert row["ok"] == results["config"]["long_calls"]
    assert row["rss_after_mib"] > 0
    configs = {(r["config"], r["path"]) for r in results["broker"]}
    assert len(configs) == 6
    for broker in results["broker"]:
        assert "error" not in broker, broker
        assert broker["ok"] == results["config"]["broker_requests"]
    assert "## Across workers (BROKER)" in report
    assert "## Memory over time" in report
