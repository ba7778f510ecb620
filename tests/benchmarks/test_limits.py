"""Issue 26's targets: a claim holds only when both load clients agree within 15%."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_limits

MODERN = "2026-07-28"


def rows(wymcp_us: float, sdk_us: float) -> list[dict]:
    return [
        {"server": "wymcp", "path": MODERN, "tool": "calc", "cpu_us": wymcp_us},
        {"server": "sdk", "path": MODERN, "tool": "calc", "cpu_us": sdk_us},
    ]


def six_times(raw: list[dict], autocannon: list[dict], **kwargs: str) -> dict:
    return bench_limits.both(
        "calc >= 6x the SDK",
        {"raw": raw, "autocannon": autocannon},
        bench_limits.cpu_ratio("sdk", MODERN, "calc"),
        at_least=6.0,
        **kwargs,
    )


def test_both_clients_meeting_it_and_agreeing_is_a_pass() -> None:
    found = six_times(rows(100, 700), rows(100, 650))
    assert found["status"] == "PASS"
    assert "hand-written: 7.00" in found["figure"]
    assert "autocannon: 6.50" in found["figure"]
    assert "clients agree (7% apart)" in found["figure"]


def test_clients_more_than_15_percent_apart_settle_nothing() -> None:
    found = six_times(rows(100, 900), rows(100, 700))  # 9x and 7x: 22% apart
    assert found["status"] == "MISS"
    assert "DISAGREE (22% apart)" in found["figure"]


def test_one_client_missing_it_is_a_miss() -> None:
    assert six_times(rows(100, 700), rows(100, 580))["status"] == "MISS"


def test_a_client_that_measured_nothing_leaves_it_unsettled() -> None:
    assert six_times(rows(100, 700), [])["status"] == "n/a"


def test_a_path_autocannon_cannot_drive_is_decided_by_the_other_client() -> None:
    found = six_times(rows(100, 700), [], one_client="no sessions")
    assert found["status"] == "PASS"
    assert "autocannon: n/a (no sessions)" in found["figure"]


def test_the_broker_target_sums_the_processes_against_one() -> None:
    broker = [
        {"config": "one process", "path": "2025-11-25", "cpu_us": 120.0},
        {
            "config": "2 processes, BROKER",
            "path": "2025-11-25",
            "cpu_us": 160.0,
            "redis_cpu_us": 30.0,
        },
    ]
    found = bench_limits.broker_target(broker)
    assert found["status"] == "MISS"  # 120 / 160 = 0.75 < 0.8
    assert found["figure"].startswith("0.75")
    broker[1]["cpu_us"] = 140.0
    assert bench_limits.broker_target(broker)["status"] == "PASS"
