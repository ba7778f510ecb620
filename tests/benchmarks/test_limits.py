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


def tails(p50: float, p99: float, **extra: float) -> list[dict]:
    row = {"server": "wymcp", "path": MODERN, "tool": "calc", "p50_ms": p50}
    return [row | {"p99_ms": p99} | extra]


def tail_target(raw: list[dict], autocannon: list[dict]) -> dict:
    return bench_limits.both(
        "p99 <= 3x p50",
        {"raw": raw, "autocannon": autocannon},
        bench_limits.tail_ratio("wymcp", MODERN, "calc"),
        at_most=3.0,
        spread=bench_limits.tail_span("wymcp", MODERN, "calc"),
    )


def test_whole_millisecond_percentiles_agree_within_their_own_resolution() -> None:
    # 2.95 / 3.5 ms exactly (1.19x); autocannon rounds down to 2 / 4 ms (2.00x),
    # which allows anything from 4 / 3 = 1.33x to 5 / 2 = 2.50x: 11% from 1.19x
    found = tail_target(tails(2.95, 3.5), tails(2.0, 4.0, latency_step_ms=1.0))
    assert found["status"] == "PASS"
    assert "whole ms: 1.33x to 2.50x" in found["figure"].replace("\u00d7", "x")
    assert "clients agree (11% apart)" in found["figure"]


def test_the_resolution_does_not_hide_a_real_disagreement() -> None:
    # 1.20x exactly against 30 / 10 ms: at least 30 / 11 = 2.73x
    found = tail_target(tails(10.0, 12.0), tails(10.0, 30.0, latency_step_ms=1.0))
    assert found["status"] == "MISS"
    assert "DISAGREE (56% apart)" in found["figure"]


def test_a_tail_over_the_bound_at_every_reading_is_a_miss() -> None:
    # autocannon 40 / 10 ms: 40 / 11 = 3.64x at best, over 3x
    found = tail_target(tails(10.0, 36.0), tails(10.0, 40.0, latency_step_ms=1.0))
    assert found["status"] == "MISS"


def test_cpu_ratios_keep_the_plain_15_percent_rule() -> None:
    # rows carrying autocannon's latency resolution: CPU figures are exact
    autocannon = [row | {"latency_step_ms": 1.0} for row in rows(100, 700)]
    found = six_times(rows(100, 900), autocannon)  # 9x and 7x: 22% apart
    assert found["status"] == "MISS"
    assert "DISAGREE (22% apart)" in found["figure"]
